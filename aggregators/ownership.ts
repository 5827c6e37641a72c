// Distributed aggregation on Kafka. Every `spot aggregate` instance runs the whole deterministic
// merge (all input partitions, all token state: marks and wallet facts are chain-wide), but
// writes the sinks and publishes only for the tokens of the partitions it owns. Ownership comes
// from a consumer group on a dedicated, empty topic (its assignment is all it is used for).
//
// Positions are counts of processed input messages (the same point of the merge on every
// instance). Handover: outputs of partitions an instance does not own are journaled, tagged with
// the count they were computed at, until the owner's durable position (spot.aggregator_progress,
// written at the owner's snapshots, i.e. after its sinks acknowledged) covers them. A new owner
// waits a grace period (a live previous owner's last writes land first), reads the durable
// position, re-emits its journal past it and from then on writes directly. Outputs a durable
// position covers are skipped, so a replaying instance never republishes older objects.
import type { ClickHouseClient } from '../clickhouse/client.ts';
import type { SpotStore } from '../clickhouse/types.ts';
import type { Context } from '../core/context.ts';
import { partitionFor } from '../core/eventlog/partitioner.ts';
import type { Consumer, EventLog, ProduceMessage } from '../core/eventlog/types.ts';
import { TOPICS } from '../core/topics.ts';
import { createJournal, type Outputs, type SinkKind } from './journal.ts';
import { createJournalFile } from './journal-file.ts';
import { createProgressStore } from './progress.ts';

export const OWNERS_GROUP = 'spot-aggregate-owners';
export const OWNERS_TOPIC = 'spot.aggregate-owners.v1';

export interface OwnershipOptions {
  /** The event log the aggregator reads and publishes through. */
  log: EventLog;
  /** Log for the ownership group (its session timeout decides how fast a dead member's partitions move). */
  ownersLog: EventLog;
  store: SpotStore;
  client: ClickHouseClient;
  instance: string;
  /** The aggregator's snapshot file: the journal is saved beside it and checked against it at start. */
  snapshotFile: string;
  /** Wait after an assignment before writing, ms (default 2000). */
  handoverGraceMs?: number;
  /** How often the owners' progress is read to trim the journal, ms (default 1000). */
  progressPollMs?: number;
  /**
   * Messages of slack in every "already durable" decision (default 20,000): instances that caught
   * up with a live log may order the newest messages differently, so counts near the edge can name
   * slightly different sets; re-emitting a little more is harmless, skipping too much is not.
   */
  handoverMargin?: number;
  /** Messages an instance may run ahead of a partition owner's durable position before it waits (default 1,000,000). */
  aheadLimit?: number;
}

export interface Ownership {
  /** Store and log to hand the aggregator: they write owned partitions and journal the others. */
  store: SpotStore;
  log: EventLog;
  /** Joins the ownership group; `processed` is the aggregator's count of processed messages. */
  start(processed: () => number): Promise<void>;
  /**
   * Waits until the group has given this instance partitions: 'timeout' after `timeoutMs`
   * without any (more instances than partitions, or the group not forming), 'stopped' if stop() came first.
   */
  firstAssignment(timeoutMs: number): Promise<'assigned' | 'timeout' | 'stopped'>;
  /** The aggregator's onFlush: after a snapshot, everything up to `processed` is acknowledged. */
  onFlush(info: { processed: number; snapshot: boolean }): void;
  /** After the aggregator stopped (drained and snapshotted at `processed`): saves the journal beside that snapshot. */
  stopped(processed: number): void;
  stop(): Promise<void>;
  owned(): number[];
}

const OUTPUT_TOPICS = [TOPICS.trades.name, TOPICS.tokens.name, TOPICS.candles.name];
const COMPACTED = new Set<string>([TOPICS.tokens.name, TOPICS.candles.name]);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The ownership key of each row kind: its token, or its wallet for wallet-level rows. */
const KEY_OF: Record<SinkKind, (row: never) => string> = {
  trades: (r: { chain: string; token: string }) => `${r.chain}:${r.token}`,
  candles: (r: { chain: string; token: string }) => `${r.chain}:${r.token}`,
  tokens: (r: { chain: string; address: string }) => `${r.chain}:${r.address}`,
  tokenEvents: (r: { chain: string; token: string }) => `${r.chain}:${r.token}`,
  labels: (r: { chain: string; wallet: string }) => `${r.chain}:${r.wallet}`,
  balances: (r: { chain: string; token: string }) => `${r.chain}:${r.token}`,
};

const WRITERS: Record<SinkKind, (store: SpotStore, rows: never[]) => Promise<void>> = {
  trades: (store, rows) => store.insertTrades(rows),
  candles: (store, rows) => store.upsertCandles(rows),
  tokens: (store, rows) => store.upsertTokens(rows),
  tokenEvents: (store, rows) => store.insertTokenEvents(rows),
  labels: (store, rows) => store.upsertWalletLabels(rows),
  balances: (store, rows) => store.upsertBalances(rows),
};

const STORE_METHODS: Record<string, SinkKind> = {
  insertTrades: 'trades', upsertCandles: 'candles', upsertTokens: 'tokens',
  insertTokenEvents: 'tokenEvents', upsertWalletLabels: 'labels', upsertBalances: 'balances',
};

export function createOwnership(ctx: Context, options: OwnershipOptions): Ownership {
  const logger = ctx.logger.child({ component: 'aggregator-ownership', instance: options.instance });
  const { log, store, instance } = options;
  const graceMs = options.handoverGraceMs ?? 2000;
  const pollMs = options.progressPollMs ?? 1000;
  const aheadLimit = options.aheadLimit ?? 1_000_000;
  const margin = options.handoverMargin ?? 20_000;
  const progress = createProgressStore(options.client);
  const journal = createJournal();
  const journalFile = createJournalFile(options.snapshotFile);
  let partitions = 0;
  let processed: () => number = () => 0;

  const assigned = new Set<number>();
  /** Assigned partitions whose journal was re-emitted: their outputs are written directly. */
  const active = new Set<number>();
  /** Partitions whose journal is being re-emitted; resolves when done. */
  const activating = new Map<number, Promise<void>>();
  const graceTimers = new Map<number, NodeJS.Timeout>();
  /** Highest durable position known per partition (ours or another owner's). */
  const durable = new Map<number, number>();
  let consumer: Consumer | null = null;
  let running: Promise<void> | null = null;
  let poller: NodeJS.Timeout | null = null;
  let closing = false;
  let settleFirstAssignment!: (outcome: 'assigned' | 'stopped') => void;
  const firstOutcome = new Promise<'assigned' | 'stopped'>((resolve) => (settleFirstAssignment = resolve));

  const partitionOf = (key: string) => partitionFor(key, partitions);

  /** Durable position of a partition less the margin: outputs at or before it are in the sinks. */
  const safe = (p: number) => Math.max(0, (durable.get(p) ?? 0) - margin);

  function learn(p: number, position: number): void {
    if (position <= (durable.get(p) ?? 0)) return;
    durable.set(p, position);
    journal.trim(p, safe(p));
  }

  async function refreshProgress(): Promise<void> {
    for (const [p, position] of await progress.read()) learn(p, position);
  }

  /** Bounds the journal: waits while this instance runs too far ahead of a partition's owner. */
  async function backpressure(parts: Iterable<number>): Promise<void> {
    for (const p of parts) {
      let warned = false;
      while (!closing && !assigned.has(p) && processed() - (durable.get(p) ?? 0) > aheadLimit && journal.size(p) > 0) {
        if (!warned) logger.warn({ partition: p, durable: durable.get(p) ?? 0, processed: processed() }, 'far ahead of a partition owner; waiting for its progress');
        warned = true;
        await sleep(pollMs);
        await refreshProgress().catch((error) => logger.warn({ err: error }, 'reading aggregator progress failed'));
      }
    }
  }

  /**
   * Writes the rows of owned, taken-over partitions through `write` and journals the others.
   * Rows come from messages processed so far, so processed() bounds the position they stand for.
   */
  async function route<T>(rows: readonly T[], keyOf: (row: T) => string, add: (p: number, position: number, rows: T[]) => void, write: (rows: T[]) => Promise<void>): Promise<void> {
    const position = processed();
    const now: T[] = [];
    const later = new Map<number, T[]>();
    const held = new Map<number, T[]>();
    const push = (map: Map<number, T[]>, p: number, row: T) => {
      let list = map.get(p);
      if (!list) map.set(p, (list = []));
      list.push(row);
    };
    for (const row of rows) {
      const p = partitionOf(keyOf(row));
      if (position <= safe(p)) continue; // an owner already wrote it
      if (active.has(p)) now.push(row);
      else if (activating.has(p)) push(held, p, row);
      else push(later, p, row);
    }
    for (const [p, list] of later) add(p, position, list);
    if (held.size > 0) {
      // A partition being taken over: its journal is written first, then these rows directly.
      await Promise.all([...held.keys()].map((p) => activating.get(p)));
      for (const [p, list] of held) {
        if (active.has(p)) now.push(...list);
        else add(p, position, list);
      }
    }
    if (now.length > 0) await write(now);
    await backpressure(later.keys());
  }

  async function writeOutputs(o: Outputs): Promise<void> {
    for (const kind of Object.keys(WRITERS) as SinkKind[]) {
      if (o[kind].length > 0) await WRITERS[kind](store, o[kind] as never[]);
    }
    for (const topic of OUTPUT_TOPICS) {
      const messages = o.messages.get(topic);
      if (messages && messages.length > 0) await log.produce(topic, messages);
    }
  }

  /**
   * Takes a partition over: re-emits the journal past the durable position, then writes directly.
   * Rows of the partition that arrive meanwhile wait (route), so newer rows never land before older ones.
   */
  async function activate(p: number): Promise<void> {
    let release!: () => void;
    activating.set(p, new Promise<void>((resolve) => (release = resolve)));
    try {
      await refreshProgress();
      if (!assigned.has(p) || closing) return;
      const outputs = journal.collect(p, COMPACTED);
      if (outputs) await writeOutputs(outputs);
      journal.clear(p);
      active.add(p);
      logger.info({ partition: p, durable: durable.get(p) ?? 0, processed: processed(), reEmittedTrades: outputs?.trades.length ?? 0 }, 'took partition over');
    } finally {
      activating.delete(p);
      release();
    }
  }

  function scheduleActivation(p: number, delay: number): void {
    clearTimeout(graceTimers.get(p));
    graceTimers.set(p, setTimeout(() => {
      graceTimers.delete(p);
      activate(p).catch((error) => {
        logger.error({ err: error, partition: p }, 'taking a partition over failed; retrying');
        if (!closing && assigned.has(p)) scheduleActivation(p, pollMs);
      });
    }, delay));
  }

  function onAssign(gained: number[]): void {
    for (const p of gained) {
      assigned.add(p);
      scheduleActivation(p, graceMs);
    }
    if (gained.length > 0) settleFirstAssignment('assigned');
    logger.info({ gained, assigned: [...assigned].sort((a, b) => a - b) }, 'partitions assigned');
  }

  function onRevoke(lost: number[]): void {
    for (const p of lost) {
      assigned.delete(p);
      active.delete(p);
      clearTimeout(graceTimers.get(p));
      graceTimers.delete(p);
    }
    logger.info({ lost, assigned: [...assigned].sort((a, b) => a - b) }, 'partitions revoked');
  }

  /**
   * Joins the ownership group; the topic carries no messages, the assignment is its only use. A
   * member that fails (a broker error ends a kafkajs consumer) gives its partitions up and rejoins.
   */
  function join(): void {
    const member = options.ownersLog.consumer({
      group: OWNERS_GROUP,
      topics: [OWNERS_TOPIC],
      start: 'latest',
      onAssign: (tps) => onAssign(tps.map((tp) => tp.partition)),
      onRevoke: (tps) => onRevoke(tps.map((tp) => tp.partition)),
    });
    consumer = member;
    running = member.run(async () => {}).catch(async (error) => {
      if (closing) return;
      logger.warn({ err: (error as Error).message }, 'ownership group member failed; giving its partitions up and rejoining');
      onRevoke([...assigned]);
      await member.stop().catch(() => undefined);
      await sleep(pollMs);
      if (!closing) join();
    });
  }

  /** After a snapshot the sinks acknowledged everything up to `position`: record it for active partitions. */
  async function recordProgress(position: number): Promise<void> {
    const settled = [...active].filter((p) => position > (durable.get(p) ?? 0));
    if (settled.length === 0) return;
    await progress.write(settled, position, instance);
    for (const p of settled) learn(p, position);
    logger.info({ partitions: settled, processed: position }, 'progress recorded');
  }

  const wrappedStore = new Proxy(store, {
    get(target, prop, receiver) {
      const kind = typeof prop === 'string' ? STORE_METHODS[prop] : undefined;
      if (kind) {
        const keyOf = KEY_OF[kind] as (row: unknown) => string;
        return (rows: unknown[]) => route(rows, keyOf, (p, position, list) => journal.add(p, position, kind, list), (list) => WRITERS[kind](target, list as never[]));
      }
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });

  const wrappedLog = new Proxy(log, {
    get(target, prop, receiver) {
      if (prop === 'produce') {
        return (topic: string, messages: ProduceMessage[]) => (OUTPUT_TOPICS.includes(topic)
          ? route(messages, (m) => m.key, (p, position, list) => journal.addMessages(p, position, topic, list), (list) => target.produce(topic, list))
          : target.produce(topic, messages));
      }
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });

  return {
    store: wrappedStore,
    log: wrappedLog,

    async start(processedCount) {
      processed = processedCount;
      await progress.ensure();
      const wanted = (await log.endOffsets(TOPICS.swaps.name)).size || TOPICS.swaps.partitions;
      await options.ownersLog.ensureTopics([{ name: OWNERS_TOPIC, partitions: wanted, compacted: true }]);
      // Tokens map onto the ownership partitions that exist (a broker that refused createTopics auto-creates them).
      partitions = (await options.ownersLog.endOffsets(OWNERS_TOPIC)).size;
      if (partitions === 0) throw new Error(`${OWNERS_TOPIC} has no partitions`);
      if (partitions !== wanted) logger.warn({ partitions, wanted }, `${OWNERS_TOPIC} has a different partition count than ${TOPICS.swaps.name}; ownership follows ${OWNERS_TOPIC}`);
      await refreshProgress();
      journalFile.restore(journal, new Map([...durable.keys()].map((p) => [p, safe(p)])), partitions, logger);
      join();
      poller = setInterval(() => {
        refreshProgress().catch((error) => logger.warn({ err: error }, 'reading aggregator progress failed'));
      }, pollMs);
      logger.info({ partitions, group: OWNERS_GROUP }, 'joining the aggregator ownership group');
    },

    async firstAssignment(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
      try {
        return await Promise.race([firstOutcome, timedOut]);
      } finally {
        clearTimeout(timer);
      }
    },

    onFlush(info) {
      if (!info.snapshot) return;
      journalFile.save(journal, info.processed);
      recordProgress(info.processed).catch((error) => logger.warn({ err: error }, 'writing aggregator progress failed; the next snapshot retries'));
    },

    stopped(position) {
      // No progress row here: whether the final flush succeeded is not known; the next owner
      // re-emits from the last snapshot's progress, which is safe.
      journalFile.save(journal, position);
    },

    async stop() {
      closing = true;
      settleFirstAssignment('stopped');
      if (poller) clearInterval(poller);
      for (const timer of graceTimers.values()) clearTimeout(timer);
      await consumer?.stop();
      await running;
      await consumer?.stop();
      await options.ownersLog.close();
    },

    owned: () => [...active].sort((a, b) => a - b),
  };
}
