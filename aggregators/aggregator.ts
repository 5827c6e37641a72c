// The aggregator role: consumes spot.swaps.v1 and spot.token-events.v1 in merge order, keeps the
// derived state, writes the store (sinks first), publishes trades, conflated tokens and candles,
// then snapshots the state with the offsets it covers. A restart loads the snapshot and seeks
// there, so nothing is lost or counted twice (sinks are idempotent for re-processed messages).
import type { Chain } from '../core/chains.ts';
import { normalizeAddress, tokenKey } from '../core/chains.ts';
import type { Context } from '../core/context.ts';
import type { Batch, Consumer, EventLog, ProduceMessage } from '../core/eventlog/types.ts';
import type { Token } from '../core/schemas.ts';
import { ALL_TOPICS, TOPICS, assertTopicValue, isTopicValue, type RawSwap, type TokenEvent } from '../core/topics.ts';
import type { SpotStore } from '../clickhouse/types.ts';
import { candleMessage, dirtyBaseRows } from './candles.ts';
import { createMerger, type MergeItem } from './merge.ts';
import { createProcessor, newBatchOutput, type BatchOutput, type Processor } from './process.ts';
import { readSnapshot, snapshotPath, writeSnapshot } from './snapshot.ts';
import { newState, type AggregatorState } from './state.ts';
import { buildToken } from './view.ts';

export interface AggregatorOptions {
  log: EventLog;
  store: SpotStore;
  /** Names the snapshot file and the consumer group (default 'default'). */
  name?: string;
  /** Publish to spot.tokens.v1 and spot.candles.v1 (default true). */
  publish?: boolean;
  /** Publish priced trades to spot.trades.v1 (default: same as publish; replay turns it off). */
  publishTrades?: boolean;
  /** Messages handed over per consumer batch (default 5000). */
  maxBatch?: number;
  /** Processed messages that trigger a sink flush (default 20000). */
  flushEvery?: number;
  /** Longest wait before buffered results are flushed, ms (default 100). */
  flushAfterMs?: number;
  /** Snapshot after this many messages (default 200000) or this much wall time (default 30 s). */
  snapshotEveryMessages?: number;
  snapshotEveryMs?: number;
  /** Called after every flush (tests and progress reporting). */
  onFlush?: (info: { processed: number; snapshot: boolean }) => void;
}

export interface Aggregator {
  start(): Promise<void>;
  /** Flushes, snapshots and leaves the group. */
  stop(): Promise<void>;
  /** Resolves once every message in the input topics at the time of the call is processed and sunk. */
  drain(): Promise<void>;
  tokens(): Token[];
  token(chain: Chain, address: string): Token | undefined;
  /** Messages processed since the state began (snapshots included). */
  processed(): number;
  /** Event time the token's windowed stats are computed at (its latest trade or a later decay tick). */
  statsTime(chain: Chain, address: string): number | undefined;
}

const INPUTS = [TOPICS.tokenEvents.name, TOPICS.swaps.name];
const SINK_ATTEMPTS = 4;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createAggregator(ctx: Context, options: AggregatorOptions): Aggregator {
  const { log, store } = options;
  const name = options.name ?? 'default';
  const publish = options.publish ?? true;
  const publishTrades = options.publishTrades ?? publish;
  const flushEvery = options.flushEvery ?? 20_000;
  const flushAfterMs = options.flushAfterMs ?? 100;
  const snapshotEveryMessages = options.snapshotEveryMessages ?? 200_000;
  const snapshotEveryMs = options.snapshotEveryMs ?? 30_000;
  const logger = ctx.logger.child({ component: 'aggregator', name });
  const file = snapshotPath(ctx, name);

  let state: AggregatorState = newState();
  let processor: Processor | null = null;
  const merger = createMerger<RawSwap | TokenEvent>();
  let consumer: Consumer | null = null;
  let running: Promise<void> | null = null;
  let failure: Error | null = null;
  let pending: BatchOutput = newBatchOutput();
  let pendingCount = 0;
  let flushTimer: NodeJS.Timeout | null = null;
  let lastSnapshotAt = Date.now();
  let lastSnapshotProcessed = 0;
  let chain: Promise<unknown> = Promise.resolve();
  let stopped = false;

  /** Runs fn after every earlier call finished: processing, flushes and snapshots never overlap. */
  function serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = chain.then(fn);
    chain = run.catch(() => undefined);
    return run;
  }

  async function refreshEnds(): Promise<void> {
    for (const topic of INPUTS) {
      for (const [partition, end] of await log.endOffsets(topic)) merger.setEnd(topic, partition, end);
    }
  }

  function parse(batch: Batch): MergeItem<RawSwap | TokenEvent>[] {
    const isSwap = batch.topic === TOPICS.swaps.name;
    const items: MergeItem<RawSwap | TokenEvent>[] = [];
    for (const m of batch.messages) {
      let value: unknown;
      try {
        value = JSON.parse(m.value);
      } catch {
        value = undefined;
      }
      const valid = isSwap ? isTopicValue(TOPICS.swaps, value) : isTopicValue(TOPICS.tokenEvents, value);
      // An invalid message still takes its place (its offset is consumed); it changes nothing.
      const time = valid ? (value as RawSwap).blockTime : -1;
      if (!valid) {
        ctx.metrics.inc('aggregator.invalid_messages');
        logger.warn({ topic: batch.topic, partition: batch.partition, offset: m.offset }, 'skipping a message that breaks its topic schema');
      }
      items.push({ topic: batch.topic, partition: batch.partition, offset: m.offset, time, rank: isSwap ? 1 : 0, value: (valid ? value : null) as RawSwap, raw: m.value });
    }
    return items;
  }

  function processAvailable(): void {
    const p = processor!;
    for (;;) {
      const item = merger.next();
      if (!item) return;
      if (item.value !== null) {
        if (item.rank === 1) p.swap(item.value as RawSwap, pending);
        else p.event(item.value as TokenEvent, item.raw, pending);
      }
      state.offsets[`${item.topic}:${item.partition}`] = item.offset + 1;
      state.processed += 1;
      pendingCount += 1;
      if (pendingCount >= flushEvery) return;
    }
  }

  async function flush(): Promise<void> {
    if (flushTimer) {
      clearTimeout(flushTimer);
      flushTimer = null;
    }
    if (pendingCount === 0) return;
    const out = pending;
    pending = newBatchOutput();
    pendingCount = 0;
    const tokens: Token[] = [];
    const candleRows = out.candleRows;
    const candleMessages: ProduceMessage[] = [];
    for (const key of out.changed) {
      const t = state.tokens.get(key);
      if (t) tokens.push(buildToken(t, state.wallets));
    }
    for (const key of out.traded) {
      const t = state.tokens.get(key)!;
      for (const row of dirtyBaseRows(t.chain, t.address, t.candles)) candleRows.push(row);
      const message = candleMessage(t.chain, t.address, t.updatedAt, t.candles);
      if (message) {
        assertTopicValue(TOPICS.candles, message);
        candleMessages.push({ key, value: JSON.stringify(message), timestamp: message.updatedAt });
      }
    }
    // Sinks first: offsets (the snapshot) move only after the store acknowledged.
    if (out.trades.length > 0) await retry('trades', () => store.insertTrades(out.trades));
    if (candleRows.length > 0) await retry('candles', () => store.upsertCandles(candleRows));
    if (tokens.length > 0) await retry('tokens', () => store.upsertTokens(tokens));
    if (out.tokenEvents.length > 0) await retry('token events', () => store.insertTokenEvents(out.tokenEvents));
    if (out.labels.size > 0) await retry('wallet labels', () => store.upsertWalletLabels([...out.labels.values()]));
    if (out.balances.size > 0) await retry('balances', () => store.upsertBalances([...out.balances.values()]));
    if (publish) {
      if (publishTrades && out.tradeMessages.length > 0) {
        const messages = out.tradeMessages.map((m) => {
          assertTopicValue(TOPICS.trades, m);
          return { key: tokenKey(m.trade.chain, m.trade.token), value: JSON.stringify(m), timestamp: m.trade.timestamp };
        });
        await log.produce(TOPICS.trades.name, messages);
      }
      if (tokens.length > 0) {
        await log.produce(TOPICS.tokens.name, tokens.map((t) => {
          assertTopicValue(TOPICS.tokens, t);
          return { key: tokenKey(t.chain, t.address), value: JSON.stringify(t), timestamp: t.updatedAt };
        }));
      }
      if (candleMessages.length > 0) await log.produce(TOPICS.candles.name, candleMessages);
    }
    ctx.metrics.inc('aggregator.trades', out.trades.length);
    ctx.metrics.set('aggregator.processed', state.processed);
    let snapshotted = false;
    if (state.processed - lastSnapshotProcessed >= snapshotEveryMessages || Date.now() - lastSnapshotAt >= snapshotEveryMs) {
      snapshot();
      snapshotted = true;
    }
    options.onFlush?.({ processed: state.processed, snapshot: snapshotted });
  }

  /** Sinks are idempotent, so a failed write is retried a few times before the aggregator stops. */
  async function retry(what: string, write: () => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await write();
      } catch (error) {
        if (attempt >= SINK_ATTEMPTS || stopped) throw error;
        ctx.metrics.inc('aggregator.sink_retries');
        logger.warn({ err: (error as Error).message, sink: what, attempt }, 'sink write failed; retrying');
        await sleep(200 * 4 ** (attempt - 1));
      }
    }
  }

  function snapshot(): void {
    const started = Date.now();
    const bytes = writeSnapshot(file, state);
    lastSnapshotAt = Date.now();
    lastSnapshotProcessed = state.processed;
    if (logger.isLevelEnabled('debug')) logger.debug({ bytes, ms: lastSnapshotAt - started, processed: state.processed }, 'snapshot written');
  }

  function scheduleFlush(): void {
    if (flushTimer || pendingCount === 0) return;
    flushTimer = setTimeout(() => {
      flushTimer = null;
      void serial(async () => {
        processAvailable();
        await flush();
      }).catch(fail);
    }, flushAfterMs);
  }

  function fail(error: unknown): void {
    failure ??= error instanceof Error ? error : new Error(String(error));
    logger.error({ err: failure }, 'aggregator failed');
  }

  /** Processes what the merge allows; flushes when enough is pending or nothing more is coming. */
  async function pump(): Promise<void> {
    await refreshEnds();
    for (;;) {
      processAvailable();
      if (pendingCount >= flushEvery || (pendingCount > 0 && merger.caughtUp())) {
        await flush();
        continue;
      }
      break;
    }
    scheduleFlush();
  }

  async function eachBatch(batch: Batch): Promise<void> {
    if (failure) throw failure;
    const items = parse(batch);
    await serial(async () => {
      merger.push(items);
      await pump();
    });
  }

  return {
    async start() {
      await log.ensureTopics(ALL_TOPICS);
      const loaded = readSnapshot(file);
      state = loaded ?? newState();
      lastSnapshotProcessed = state.processed;
      processor = createProcessor(ctx, state);
      consumer = log.consumer({ group: `spot-aggregator-${name}`, topics: INPUTS, maxBatchSize: options.maxBatch ?? 5000 });
      for (const topic of INPUTS) {
        const ends = await log.endOffsets(topic);
        for (const [partition, end] of ends) {
          // The snapshot's offsets override the group's; without a snapshot the state is empty, so start at 0.
          const offset = Math.min(state.offsets[`${topic}:${partition}`] ?? 0, end);
          merger.init(topic, partition, offset);
          merger.setEnd(topic, partition, end);
          await consumer.seek(topic, partition, offset);
        }
      }
      logger.info({ resumedFrom: loaded ? state.processed : null, tokens: state.tokens.size }, 'aggregator starting');
      running = consumer.run(eachBatch).catch(fail);
    },

    async stop() {
      if (stopped) return;
      stopped = true;
      await consumer?.stop();
      await running;
      await serial(async () => {
        if (failure || !processor) return;
        processAvailable();
        await flush();
        snapshot();
      });
      if (flushTimer) clearTimeout(flushTimer);
    },

    async drain() {
      const targets: Array<[string, number]> = [];
      for (const topic of INPUTS) for (const [partition, end] of await log.endOffsets(topic)) targets.push([`${topic}:${partition}`, end]);
      for (;;) {
        if (failure) throw failure;
        const done = targets.every(([key, end]) => (state.offsets[key] ?? 0) >= end);
        if (done) {
          await serial(flush);
          if (failure) throw failure;
          return;
        }
        await sleep(10);
      }
    },

    tokens() {
      return [...state.tokens.values()].map((t) => buildToken(t, state.wallets));
    },

    token(chainName, address) {
      const t = state.tokens.get(tokenKey(chainName, normalizeAddress(chainName, address)));
      return t ? buildToken(t, state.wallets) : undefined;
    },

    processed: () => state.processed,

    statsTime(chainName, address) {
      return state.tokens.get(tokenKey(chainName, normalizeAddress(chainName, address)))?.win.t;
    },
  };
}
