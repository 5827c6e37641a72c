// Distributed aggregation on Kafka: token state partitioned by key. The group
// `spot-aggregate-owners` (on a dedicated, empty topic: its assignment is all it is used for)
// gives each `spot aggregate` instance input partitions; a token lives in the partition its
// messages are keyed to. An instance keeps full state, writes the sinks and publishes only for
// the tokens of the partitions it owns. Of the others it keeps what is chain-wide (native marks,
// wallet facts, a token's price as a quote asset) and journals their inputs, each swap with the
// context it read, until their owner's durable state covers them.
//
// Durable state: at every snapshot, after its sinks acknowledged, an owner writes the changed
// token states of each partition it owns and then the partition's offsets (a mark) to ClickHouse
// (clickhouse/aggregator-state.ts), before its local snapshot. Taking a partition over (after a
// grace period, so a live previous owner's last write lands first): load the durable states,
// replay the journal past them (aggregators/partitioned.ts), write from then on. Giving one up
// (a rebalance): write its state, keep shadows, journal from then on. Sinks are idempotent on
// trade id, candle seq and token version, so outputs written twice resolve to the same rows.
import type { ClickHouseClient } from '../clickhouse/client.ts';
import { createAggregatorStateStore, type PartitionMark } from '../clickhouse/aggregator-state.ts';
import { chainOfKey } from '../core/chains.ts';
import type { Context } from '../core/context.ts';
import { partitionFor } from '../core/eventlog/partitioner.ts';
import type { Consumer, EventLog } from '../core/eventlog/types.ts';
import { TOPICS } from '../core/topics.ts';
import { journaling, partitionOffsets, uncovered } from './partition-journal.ts';
import { adoptPartition, durableRows, releaseAll, releasePartition } from './partitioned.ts';
import { chainReached } from './positions.ts';
import { decodeToken } from './snapshot.ts';
import type { AggregatorControls, PartitionedHooks } from './contracts.ts';
import type { AggregatorState } from './state.ts';

export const OWNERS_GROUP = 'spot-aggregate-owners';
export const OWNERS_TOPIC = 'spot.aggregate-owners.v1';

// bench/ imports this from here (kept while bench/ is rewritten in parallel).
export type { PartitionedHooks } from './contracts.ts';

export interface OwnershipOptions {
  /** The aggregator's event log (its input topics' partition counts). */
  log: EventLog;
  /** Log for the ownership group (its session timeout decides how fast a dead member's partitions move). */
  ownersLog: EventLog;
  client: ClickHouseClient;
  instance: string;
  /** Wait after an assignment before taking over, ms (default 2000). */
  handoverGraceMs?: number;
  /** How often other owners' marks are read to trim the journals, ms (default 1000). */
  pollMs?: number;
}

export interface Ownership {
  hooks: PartitionedHooks;
  /** Joins the ownership group. */
  start(): Promise<void>;
  /**
   * Waits until the group has given this instance partitions: 'timeout' after `timeoutMs`
   * without any (more instances than partitions, or the group not forming), 'stopped' if stop() came first.
   */
  firstAssignment(timeoutMs: number): Promise<'assigned' | 'timeout' | 'stopped'>;
  stop(): Promise<void>;
  /** Partitions whose token state this instance holds. */
  owned(): number[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createOwnership(ctx: Context, options: OwnershipOptions): Ownership {
  const logger = ctx.logger.child({ component: 'aggregator-ownership', instance: options.instance });
  const graceMs = options.handoverGraceMs ?? 2000;
  const pollMs = options.pollMs ?? 1000;
  const store = createAggregatorStateStore(options.client);
  let partitions = 0;
  let controls: AggregatorControls | null = null;
  let state: AggregatorState | null = null;

  /** Assigned by the group (owned once taken over). */
  const assigned = new Set<number>();
  const owned = new Set<number>();
  const adopting = new Set<number>();
  const timers = new Map<number, NodeJS.Timeout>();
  /** Latest durable mark known per partition. */
  const marks = new Map<number, PartitionMark>();
  /** Owned tokens changed since their partition was last made durable. */
  const dirty = new Set<string>();
  let consumer: Consumer | null = null;
  let running: Promise<void> | null = null;
  let poller: NodeJS.Timeout | null = null;
  let closing = false;
  let settleFirstAssignment!: (outcome: 'assigned' | 'stopped') => void;
  const firstOutcome = new Promise<'assigned' | 'stopped'>((resolve) => (settleFirstAssignment = resolve));

  const offsetsOf = (p: number): PartitionMark => partitionOffsets(state?.offsets ?? {}, p);

  function learn(p: number, mark: PartitionMark): void {
    const known = marks.get(p);
    if (known && known.swaps + known.events >= mark.swaps + mark.events) return;
    marks.set(p, mark);
    if (!owned.has(p) && !adopting.has(p)) trim(p, mark);
  }

  /** Drops the journaled inputs of a partition that its durable mark covers. */
  function trim(p: number, mark: PartitionMark): void {
    const journal = state?.journals?.get(p);
    if (journal) state!.journals!.set(p, uncovered(journal, mark));
  }

  async function refreshMarks(): Promise<void> {
    for (const [p, mark] of await store.readMarks()) learn(p, mark);
  }

  /** Writes the changed tokens, then the mark, of each partition (inside the processing order). */
  async function persist(parts: number[]): Promise<void> {
    if (!state) return;
    let written = 0;
    for (const p of parts) {
      const keys = [...dirty].filter((key) => partitionFor(key, partitions) === p);
      const mark = offsetsOf(p);
      const rows = durableRows(state, p, keys);
      await store.write(p, mark, rows, options.instance);
      for (const key of keys) dirty.delete(key);
      learn(p, mark);
      written += rows.length;
    }
    if (parts.length > 0)
      logger.info({ partitions: parts, tokens: written, processed: state.processed }, 'state made durable');
  }

  /** Takes a partition over once this instance's merge has reached its owner's durable mark. */
  async function adopt(p: number): Promise<void> {
    if (!controls || !state) return schedule(p, pollMs);
    let retry = false;
    await controls.exclusive(async (out) => {
      if (!assigned.has(p) || owned.has(p) || closing) return;
      adopting.add(p);
      try {
        let mark: PartitionMark;
        let rows: Awaited<ReturnType<typeof store.readTokens>>;
        try {
          mark = (await store.readMarks()).get(p) ?? { swaps: 0, events: 0 };
          const at = offsetsOf(p);
          if (at.swaps < mark.swaps || at.events < mark.events) {
            retry = true; // this instance's merge is behind the durable state
            return;
          }
          rows = await store.readTokens(p);
          // Messages of a partition are processed in offset order per chain: every token's chain
          // must have reached what its durable state covers (past the watermarks above).
          const behind = rows.find((row) => {
            const reached = chainReached(state!, p, chainOfKey(row.token));
            return reached.swaps < row.covered.swaps || reached.events < row.covered.events;
          });
          if (behind) {
            retry = true;
            return;
          }
        } catch (error) {
          logger.warn(
            { err: (error as Error).message, partition: p },
            'reading the durable state of a partition failed; retrying',
          );
          retry = true;
          return;
        }
        const tokens = rows.map((row) => ({ key: row.token, covered: row.covered, token: decodeToken(row.state) }));
        const result = adoptPartition(state!, controls!.processor(), p, partitions, { mark, tokens }, out);
        owned.add(p);
        marks.set(p, mark);
        logger.info(
          {
            partition: p,
            mark,
            at: offsetsOf(p),
            processed: state!.processed,
            durableTokens: tokens.length,
            tokens: result.tokens,
            replayed: result.replayed,
          },
          'took partition over',
        );
      } finally {
        adopting.delete(p);
      }
    });
    if (retry) schedule(p, pollMs);
  }

  function schedule(p: number, delay: number): void {
    clearTimeout(timers.get(p));
    timers.set(
      p,
      setTimeout(() => {
        timers.delete(p);
        if (closing || !assigned.has(p) || owned.has(p)) return;
        adopt(p).catch((error) => logger.error({ err: error, partition: p }, 'taking a partition over failed'));
      }, delay),
    );
  }

  function release(lost: number[]): void {
    if (!controls || closing) return; // stopping: the aggregator's final snapshot made them durable
    void controls
      .exclusive(async () => {
        for (const p of lost) {
          if (!owned.has(p) || assigned.has(p)) continue;
          try {
            await persist([p]);
          } catch (error) {
            logger.warn(
              { err: (error as Error).message, partition: p },
              'writing the state of a partition given up failed; its next owner replays from the previous one',
            );
          }
          const tokens = releasePartition(state!, controls!.processor(), p, partitions);
          owned.delete(p);
          logger.info({ partition: p, tokens, at: offsetsOf(p) }, 'gave partition up');
        }
      })
      .catch((error) => logger.error({ err: error }, 'giving partitions up failed'));
  }

  function onAssign(gained: number[]): void {
    for (const p of gained) {
      assigned.add(p);
      schedule(p, graceMs);
    }
    if (gained.length > 0) settleFirstAssignment('assigned');
    logger.info({ gained, assigned: [...assigned].sort((a, b) => a - b) }, 'partitions assigned');
  }

  function onRevoke(lost: number[]): void {
    for (const p of lost) {
      assigned.delete(p);
      clearTimeout(timers.get(p));
      timers.delete(p);
    }
    release(lost.filter((p) => owned.has(p)));
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
    running = member
      .run(async () => {})
      .catch(async (error) => {
        if (closing) return;
        logger.warn(
          { err: (error as Error).message },
          'ownership group member failed; giving its partitions up and rejoining',
        );
        onRevoke([...assigned]);
        await member.stop().catch(() => undefined);
        await sleep(pollMs);
        if (!closing) join();
      });
  }

  const hooks: PartitionedHooks = {
    attach(loaded, aggregatorControls) {
      if (partitions === 0) throw new Error('ownership.start() must run before the aggregator starts');
      state = loaded;
      controls = aggregatorControls;
      releaseAll(loaded); // nothing is owned yet: partitions are taken over through their durable state
      const partitioning = journaling(
        loaded,
        partitions,
        (p) => owned.has(p),
        (p) => marks.get(p),
      );
      for (const [p, mark] of marks) trim(p, mark);
      return partitioning;
    },
    changed(keys) {
      for (const key of keys) dirty.add(key);
    },
    async beforeSnapshot() {
      await persist([...owned].sort((a, b) => a - b));
    },
  };

  return {
    hooks,

    async start() {
      const counts = new Map<string, number>();
      for (const topic of [TOPICS.swaps.name, TOPICS.tokenEvents.name])
        counts.set(topic, (await options.log.endOffsets(topic)).size || TOPICS.swaps.partitions);
      const wanted = Math.max(...counts.values());
      await options.ownersLog.ensureTopics([{ name: OWNERS_TOPIC, partitions: wanted, compacted: true }]);
      partitions = (await options.ownersLog.endOffsets(OWNERS_TOPIC)).size;
      counts.set(OWNERS_TOPIC, partitions);
      // A token's state moves with its input partition, so every partitioning must agree.
      if (new Set(counts.values()).size !== 1) {
        throw new Error(
          `distributed aggregation needs one partition count for ${[...counts.keys()].join(', ')}; found ${[...counts].map(([t, n]) => `${t}: ${n}`).join(', ')} (docs/distributed.md)`,
        );
      }
      await refreshMarks();
      join();
      poller = setInterval(() => {
        refreshMarks().catch((error) =>
          logger.warn({ err: (error as Error).message }, 'reading partition marks failed'),
        );
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

    async stop() {
      closing = true;
      settleFirstAssignment('stopped');
      if (poller) clearInterval(poller);
      for (const timer of timers.values()) clearTimeout(timer);
      await consumer?.stop();
      await running;
      await consumer?.stop();
      await options.ownersLog.close();
    },

    owned: () => [...owned].sort((a, b) => a - b),
  };
}
