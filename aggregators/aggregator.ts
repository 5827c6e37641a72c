// The aggregator role: consumes spot.swaps.v1 and spot.token-events.v1 in merge order, keeps the
// derived state, writes the store (sinks first), publishes trades, conflated tokens and candles,
// then snapshots the state with the offsets it covers. A restart loads the snapshot and seeks
// there, so nothing is lost or counted twice (sinks are idempotent for re-processed messages).
import type { Chain } from '../core/chains.ts';
import { chainOfKey, normalizeAddress, tokenKey } from '../core/chains.ts';
import type { Context } from '../core/context.ts';
import type { Batch, Consumer, EventLog, ProduceMessage } from '../core/eventlog/types.ts';
import type { Token } from '../core/schemas.ts';
import { createSlicer, type Slicer } from '../core/slices.ts';
import {
  ALL_TOPICS,
  TOPICS,
  assertTopicValue,
  isChainMark,
  isTopicValue,
  type RawSwap,
  type TokenEvent,
} from '../core/topics.ts';
import type { CandleRow, SpotStore } from '../clickhouse/types.ts';
import type { EvictedTokenStore } from '../clickhouse/aggregator-state.ts';
import { candleMessage, dirtyBaseRows } from './candles.ts';
import { createMerger, type MergeItem } from './merge.ts';
import { processedBelow, recordProcessed } from './positions.ts';
import { newBatchOutput, type BatchOutput, type PartitionedHooks, type Processor } from './contracts.ts';
import { createProcessor } from './process.ts';
import { PARK_IDLE_MS, parkedState, tokenIn, tokensInMemory, unparkAll } from './parking.ts';
import { createSinkWriter } from './sink-writer.ts';
import { createEviction } from './eviction.ts';
import {
  readSnapshot,
  captureState,
  snapshotBytes,
  snapshotPath,
  walletStorePath,
  writeSnapshotFile,
  type StateCapture,
} from './snapshot.ts';
import { newState, type AggregatorState, type UnbuiltViews } from './state.ts';
import {
  joinedMarker,
  processedBeforeStop,
  reachedStop,
  readStopMarker,
  removeStopMarker,
  stopMarkerPath,
  writeStopMarker,
  type StopMarker,
} from './stop-marker.ts';
import { buildToken } from './view.ts';
import { WALLET_PARK_IDLE_MS } from './wallet-facts.ts';
import { openWalletStore, type WalletStore } from './wallet-store.ts';

export interface AggregatorOptions {
  log: EventLog;
  store: SpotStore;
  /** Names the snapshot file and the consumer group (default 'default'). */
  name?: string;
  /** Publish to spot.tokens.v1 and spot.candles.v1 (default true). */
  publish?: boolean;
  /** Publish priced trades to spot.trades.v1 (default: same as publish; replay turns it off). */
  publishTrades?: boolean;
  /** The most messages processed per emit (default 5000). */
  maxBatch?: number;
  /**
   * Messages of one input partition per fetch, and what the merge may hold of a partition before
   * it is fetched again (default 1000, at most maxBatch): the merge holds about twice this per
   * partition, ~1 KB a message parsed. At 5,000 it held 29–56k messages (8 partitions) at minute 5
   * of the spread mainnet market.
   */
  fetchBatch?: number;
  /** Processed messages whose rows start a store write (default 20000). */
  flushEvery?: number;
  /** Longest wait before buffered rows are written to the store, ms (default 100). */
  flushAfterMs?: number;
  /** Pipelined and caught up: longest wait before changed tokens and open candles are published, ms (default 100). */
  viewsEveryMs?: number;
  /** Live views are built in slices of about this much work, ms, each yielding to waiting input (default 1). */
  viewsSliceMs?: number;
  /**
   * Tokens of a chain whose event time is over a minute behind the clock (a warm start, a backfill):
   * longest wait between the live passes that publish their views, ms (default 2000).
   */
  catchUpViewsEveryMs?: number;
  /** Publishing trades: longest processing (a backlog) runs before its trades are published, ms (default 4). */
  tradesEveryMs?: number;
  /** The same bound while catching up (more than a short backlog), ms (default 25). */
  catchUpTradesEveryMs?: number;
  /** Snapshot after this many messages (default 200000) or this much wall time (default 30 s). */
  snapshotEveryMessages?: number;
  snapshotEveryMs?: number;
  /**
   * Embedded: a stop at most this many messages past the snapshot on disk writes a marker for the
   * next start to replay to quietly, not a final snapshot (default snapshotEveryMessages; 0: never).
   */
  stopReplayMost?: number;
  /** Called after every flush, once the batch's topics are published and its rows handed to the store writer. */
  onFlush?: (info: { processed: number; snapshot: boolean }) => void;
  /** Called once a snapshot's file is on disk (it is written while processing goes on). */
  onSnapshot?: (info: { processed: number }) => void;
  /** Called once when the aggregator stops on an error (it processes nothing further). */
  onFailure?: (error: Error) => void;
  /** Distributed: token state partitioned by input partition (aggregators/ownership.ts). */
  partitioned?: PartitionedHooks;
  /** Embedded: where idle tokens go when they leave memory (aggregators/eviction.ts); none keeps every token. */
  evictedStore?: EvictedTokenStore;
  /** Event time without input after which a token leaves memory (default 24 h). */
  evictIdleMs?: number;
  /** Embedded: event time without input after which a token is kept serialised (default 10 min; aggregators/parking.ts). */
  parkIdleMs?: number;
  /** Embedded: event time without activity after which a wallet moves to disk (default 2 min; wallet-facts.ts). */
  walletParkIdleMs?: number;
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
/** Unprocessed input messages up to which the aggregator counts as live (tradesEveryMs, not catchUpTradesEveryMs). */
const LIVE_BACKLOG = 2000;
/** A chain whose newest event time is further behind the clock than this is catching up: its views wait longer. */
const CATCHING_UP_LAG_MS = 60_000;

/** The tokens whose views one pass builds (taken when it began), and its messages so far. */
interface ViewsPass {
  changed: string[];
  traded: string[];
  nextChanged: number;
  nextTraded: number;
  tokenMessages: ProduceMessage[];
  candleMessages: ProduceMessage[];
}

/** Work done a slice at a time in the processing chain (inSlices). */
interface BackgroundTask {
  /** performance.now() from which its next slice may run (its rest after the last one). */
  readyAt: number;
  /** Runs one slice (in the processing chain). */
  run(): Promise<void>;
}

/** A chain's changed tokens waiting for its next turn while it catches up. */
interface WaitingViews {
  changed: Set<string>;
  traded: Set<string>;
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Main-thread time a slice of background work (a snapshot capture, the wallet park) takes before input batches get their turn. */
const BACKGROUND_SLICE_MS = 2;
const never = () => false;
/**
 * The wallet and holder park passes rest twice their slice between slices (a third of the thread
 * at most): they have until the next snapshot, 30 s, and at once they took up to a fifth of the
 * main thread's seconds around each snapshot, with the capture, while input queued behind them.
 */
const PARK_REST_FACTOR = 2;

/** Holder records in the memory of the live tokens (parked tokens keep theirs serialised). */
function holdersInMemory(state: AggregatorState): number {
  let records = 0;
  for (const token of state.tokens.values()) records += token.holders.size;
  return records;
}

export function createAggregator(ctx: Context, options: AggregatorOptions): Aggregator {
  const { log, store } = options;
  const name = options.name ?? 'default';
  const publish = options.publish ?? true;
  const publishTrades = options.publishTrades ?? publish;
  const maxBatch = options.maxBatch ?? 5000;
  const flushEvery = options.flushEvery ?? 20_000;
  const flushAfterMs = options.flushAfterMs ?? 100;
  const snapshotEveryMessages = options.snapshotEveryMessages ?? 200_000;
  const snapshotEveryMs = options.snapshotEveryMs ?? 30_000;
  // A stop further past the snapshot on disk writes a final snapshot rather than a marker: the next
  // start replays what the marker covers before its first trade (141k messages in 14.1 s at minute
  // 25 of the spread mainnet market, a capture and file about a minute apart from the last).
  const stopReplayMost = options.stopReplayMost ?? snapshotEveryMessages;
  // Pipelined: each processed batch is published at once and its rows are written to the store
  // behind it; snapshots wait until the store acknowledged everything they cover.
  const perFlush = maxBatch;
  const fetchBatch = Math.min(maxBatch, options.fetchBatch ?? 1000);
  // A backlog's first trades do not wait for all of it: live (a short one, a stall) they go out
  // every 4 ms of processing; catching up every 25 ms, fewer flushes as each costs a produce.
  const publishing = publish && publishTrades;
  const tradesEveryMs = publishing ? (options.tradesEveryMs ?? 4) : Number.POSITIVE_INFINITY;
  const catchUpTradesEveryMs = publishing ? (options.catchUpTradesEveryMs ?? 25) : Number.POSITIVE_INFINITY;
  const viewsEveryMs = options.viewsEveryMs ?? 100;
  // A one-day warm start published each token's view about three times (a pass every 100 ms spans
  // 90 s of its event time); every version costs the views pass, the serving thread and the store.
  const catchUpViewsEveryMs = options.catchUpViewsEveryMs ?? 2000;
  const logger = ctx.logger.child({ component: 'aggregator', name });
  const file = snapshotPath(ctx, name);
  const markerFile = stopMarkerPath(ctx, name);

  let state: AggregatorState = newState();
  let processor: Processor | null = null;
  const merger = createMerger<RawSwap | TokenEvent>();
  let forcedSeen = 0;
  let consumer: Consumer | null = null;
  let running: Promise<void> | null = null;
  let failure: Error | null = null;
  let pending: BatchOutput = newBatchOutput();
  let pendingCount = 0;
  /** When the first pending message was processed (performance.now()). */
  let pendingSince = 0;
  /** Processing after which pending trades are due: tradesEveryMs or catchUpTradesEveryMs, by the backlog at the last refreshEnds(). */
  let tradesDueMs = tradesEveryMs;
  /** Tokens whose views (token object; open candles when traded) are not yet published. */
  let viewsChanged = new Set<string>();
  let viewsTraded = new Set<string>();
  let lastViewsAt = 0;
  /** Changed tokens of chains catching up, by chain, until the chain's turn (catchUpViewsEveryMs). */
  const viewsWaiting = new Map<string, WaitingViews>();
  /** When a live pass last took each waiting chain's tokens (Date.now()). */
  const catchUpViewsAt = new Map<string, number>();
  let viewsMessages = 0;
  let cancelViews: (() => void) | null = null;
  /** The views pass being built in slices (live), if any. */
  let viewsPass: ViewsPass | null = null;
  const viewsSliceMs = options.viewsSliceMs ?? 1;
  /** Cancels the scheduled flush, when one is scheduled. */
  let cancelFlush: (() => void) | null = null;
  let lastSnapshotAt = Date.now();
  let lastSnapshotProcessed = 0;
  /** The processed count of the snapshot on disk; null before the first. */
  let onDisk: number | null = null;
  /** Embedded, after a stop that wrote a marker: the replay to it publishes nothing (stop-marker.ts). */
  let replayTo: StopMarker | null = null;
  /** The pending messages were processed before the stop (their outputs are out). */
  let pendingQuiet = false;
  /** Processing stopped where the replay's quiet messages and the others meet: a flush is due. */
  let quietBoundary = false;
  /** Sliced work waiting for its next slice (inSlices), in turn order. */
  const backgroundTasks = new Set<BackgroundTask>();
  /** The next snapshot's interval, in time and messages, counts from here. */
  const snapshotEnded = () => {
    lastSnapshotAt = Date.now();
    lastSnapshotProcessed = state.processed;
  };
  let chain: Promise<unknown> = Promise.resolve();
  let stopped = false;
  // A snapshot's file (state + offsets) is written only once the store acknowledged every row
  // handed over before its state was taken, so it never covers a message whose rows are not stored.
  const sinks = createSinkWriter(ctx, { store, flushEvery, flushAfterMs, onFailure: fail });
  const eviction =
    options.evictedStore && !options.partitioned
      ? createEviction(ctx, {
          store: options.evictedStore,
          state: () => state,
          processor: () => processor!,
          idleMs: options.evictIdleMs,
        })
      : null;
  const walletParkIdleMs = options.walletParkIdleMs ?? WALLET_PARK_IDLE_MS;
  /** Embedded: parked wallet facts, beside the snapshot (opened at start). */
  let walletStore: WalletStore | null = null;
  /** The snapshot file being written, if any. */
  let snapshotWrite: Promise<void> = Promise.resolve();
  /** True from a snapshot's state being taken until its file is on disk (or failed). */
  let snapshotWriting = false;
  /** Completes the snapshot capture under way at once, if one is. */
  let finishCapture: (() => void) | null = null;
  /** Drops the snapshot under way, capture and file (stop(): the final snapshot supersedes it). */
  let abandonSnapshot: (() => void) | null = null;
  /** A merged message whose evicted tokens are being brought back; applied first once they are. */
  let held: MergeItem<RawSwap | TokenEvent> | null = null;

  /** Runs fn after every earlier call finished: processing, flushes and snapshots never overlap. */
  function serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = chain.then(fn);
    chain = run.catch(() => undefined);
    return run;
  }

  async function refreshEnds(): Promise<void> {
    let behind = 0;
    for (const topic of INPUTS) {
      for (const [partition, end] of await log.endOffsets(topic)) {
        merger.setEnd(topic, partition, end);
        behind += Math.max(0, end - (state.offsets[`${topic}:${partition}`] ?? 0));
      }
    }
    tradesDueMs = behind <= LIVE_BACKLOG ? tradesEveryMs : catchUpTradesEveryMs;
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
      if (isChainMark(value)) {
        // A mark changes nothing; it gives its chain a head on this partition (merge.ts).
        items.push({
          topic: batch.topic,
          partition: batch.partition,
          offset: m.offset,
          chain: value.chain,
          time: value.blockTime,
          rank: -1,
          value: null as unknown as RawSwap,
          raw: '',
        });
        continue;
      }
      const valid = isSwap ? isTopicValue(TOPICS.swaps, value) : isTopicValue(TOPICS.tokenEvents, value);
      // An invalid message still takes its place (its offset is consumed); it changes nothing.
      const time = valid ? (value as RawSwap).blockTime : -1;
      if (!valid) {
        ctx.metrics.inc('aggregator.invalid_messages');
        logger.warn(
          { topic: batch.topic, partition: batch.partition, offset: m.offset },
          'skipping a message that breaks its topic schema',
        );
      }
      // Only token events keep their text (it is their stored body).
      items.push({
        topic: batch.topic,
        partition: batch.partition,
        offset: m.offset,
        chain: valid ? (value as RawSwap).chain : '',
        time,
        rank: isSwap ? 1 : 0,
        value: (valid ? value : null) as RawSwap,
        raw: isSwap ? '' : m.value,
      });
    }
    return items;
  }

  /** True once the pending messages' trades have waited tradesDueMs for more processing. */
  const overdue = () => pendingCount > 0 && performance.now() - pendingSince >= tradesDueMs;

  /**
   * Processes what the merge allows until perFlush messages are pending or their trades are
   * overdue, or until a message needs an evicted token back (it is held: see processReady).
   */
  function processAvailable(): void {
    const p = processor!;
    const partitioned = options.partitioned !== undefined;
    while (pendingCount < perFlush) {
      if ((pendingCount & 31) === 31 && overdue()) return;
      const item = held ?? merger.next();
      if (!item) return;
      held = null;
      if (eviction && item.value !== null && eviction.wanted(item.value).length > 0) {
        held = item;
        return;
      }
      const quiet =
        replayTo !== null && processedBeforeStop(replayTo, item.topic, item.partition, item.chain, item.offset);
      if (pendingCount === 0) {
        pendingSince = performance.now();
        pendingQuiet = quiet;
      } else if (quiet !== pendingQuiet) {
        // One batch's outputs are published or dropped whole.
        held = item;
        quietBoundary = true;
        return;
      }
      if (item.value !== null) {
        const at = partitioned ? { partition: item.partition, offset: item.offset } : undefined;
        if (item.rank === 1) p.swap(item.value as RawSwap, pending, at);
        else p.event(item.value as TokenEvent, item.raw, pending, at);
      }
      recordProcessed(
        state,
        item.topic,
        item.partition,
        item.chain,
        item.offset,
        merger.low(item.topic, item.partition),
      );
      state.processed += 1;
      pendingCount += 1;
    }
  }

  /** processAvailable, bringing evicted tokens back as messages need them. */
  async function processReady(): Promise<void> {
    for (;;) {
      processAvailable();
      if (!held || held.value === null || !eviction) return;
      const keys = eviction.wanted(held.value);
      // Back already: processAvailable stopped for a flush (pending full or overdue), not for them.
      if (keys.length === 0) return;
      await eviction.reload(keys);
    }
  }

  /** The state is where the stop left it: the views it had not published are built next. */
  function endQuietReplay(): void {
    const marker = replayTo!;
    replayTo = null;
    for (const key of marker.views.changed) viewsChanged.add(key);
    for (const key of marker.views.traded) viewsTraded.add(key);
    logger.info(
      { processed: state.processed, views: marker.views.changed.length },
      'replayed to where the stop left, publishing nothing',
    );
    scheduleViews();
  }

  /**
   * Publishes the pending messages' trades and hands their rows to the store writer. Token and
   * candle views (conflated per token) are built whole when a snapshot is due or every flushEvery
   * messages while catching up; once caught up, a pass starts viewsEveryMs apart and is built in
   * slices between input batches, so a trade never waits behind a whole pass.
   */
  async function flush(force = false): Promise<void> {
    cancelScheduledFlush();
    if (pendingCount === 0 && !force) return;
    const endTimer = ctx.metrics.families.aggregatorBatchSeconds.startTimer();
    const out = pending;
    const count = pendingCount;
    const quiet = pendingQuiet;
    pending = newBatchOutput();
    pendingCount = 0;
    quietBoundary = false;
    let snapshotDue = false;
    // A quiet replay's trades, rows and views went out before the stop.
    if (!quiet) {
      options.partitioned?.changed(out.changed);
      for (const key of out.changed) viewsChanged.add(key);
      for (const key of out.traded) viewsTraded.add(key);
      viewsMessages += count;
      // The topics are sinks too: published first, so a priced trade does not wait for the store.
      if (publish && publishTrades && out.tradeMessages.length > 0) {
        const messages = out.tradeMessages.map((m) => {
          assertTopicValue(TOPICS.trades, m);
          return {
            key: tokenKey(m.trade.chain, m.trade.token),
            value: JSON.stringify(m),
            timestamp: m.trade.timestamp,
          };
        });
        await log.produce(TOPICS.trades.name, messages);
      }
      await sinks.add(
        {
          trades: out.trades,
          candleRows: out.candleRows,
          tokens: [],
          tokenEvents: out.tokenEvents,
          labels: out.labels,
          balances: out.balances,
        },
        count,
      );
      // Never while the last one is being captured or written: the interval runs from its file on
      // disk. None during a quiet replay: a restart from it would publish again what the stop had.
      snapshotDue =
        !snapshotWriting &&
        replayTo === null &&
        (state.processed - lastSnapshotProcessed >= snapshotEveryMessages ||
          Date.now() - lastSnapshotAt >= snapshotEveryMs);
      if (snapshotDue || viewsMessages >= flushEvery) await flushViews();
      else if (merger.caughtUp() && Date.now() - lastViewsAt >= viewsEveryMs) startViewsPass();
      else scheduleViews();
    }
    ctx.metrics.set('aggregator.processed', state.processed);
    ctx.metrics.set('aggregator.tokens_in_memory', tokensInMemory(state));
    ctx.metrics.set('aggregator.tokens_parked', state.parked?.size ?? 0);
    ctx.metrics.set('aggregator.wallets_in_memory', state.wallets.size);
    reportForced();
    ctx.metrics.families.aggregatorMessages.inc(count);
    ctx.metrics.consumerPositions(`spot-aggregator-${name}`, state.offsets);
    endTimer();
    if (replayTo && reachedStop(replayTo, state.chainOffsets)) endQuietReplay();
    if (snapshotDue) await snapshot();
    options.onFlush?.({ processed: state.processed, snapshot: snapshotDue });
  }

  /** Messages the merge took early because its buffer was full (their chain's order may then vary). */
  function reportForced(): void {
    const forced = merger.forced();
    if (forced === forcedSeen) return;
    ctx.metrics.inc('aggregator.merge_forced', forced - forcedSeen);
    logger.warn(
      { forced: forced - forcedSeen, buffered: merger.buffered() },
      'merge buffer full: messages taken before a partition that may still hold earlier ones of their chain',
    );
    forcedSeen = forced;
  }

  const viewsPending = () => viewsChanged.size > 0 || viewsTraded.size > 0 || viewsWaiting.size > 0;

  /** Every view changed so far, whole: the pass in progress is finished, then one more for the rest. */
  async function flushViews(): Promise<void> {
    if (viewsPass) await buildViews(viewsPass, never);
    if (!viewsPending()) {
      cancelViews?.();
      cancelViews = null;
      lastViewsAt = Date.now();
      viewsMessages = 0;
      return;
    }
    await buildViews(beginViewsPass(false)!, never);
  }

  /**
   * Every token whose views are not published yet, for the final snapshot. A pass under way counts
   * whole (its messages go out only once it completes) and ends here: no slice of it runs after.
   */
  function takeUnbuiltViews(): UnbuiltViews {
    const changed = new Set([...(viewsPass?.changed ?? []), ...viewsChanged]);
    const traded = new Set([...(viewsPass?.traded ?? []), ...viewsTraded]);
    for (const waiting of viewsWaiting.values()) {
      for (const key of waiting.changed) changed.add(key);
      for (const key of waiting.traded) traded.add(key);
    }
    viewsPass = null;
    return { changed: [...changed], traded: [...traded] };
  }

  /** Chains catching up, each with whether its tokens wait (a live pass took some under catchUpViewsEveryMs ago). */
  function catchingUp(now: number): Map<string, boolean> {
    const chains = new Map<string, boolean>();
    for (const [chainName, time] of Object.entries(state.watermarks)) {
      if (now - time <= CATCHING_UP_LAG_MS) continue;
      chains.set(chainName, now - (catchUpViewsAt.get(chainName) ?? Number.NEGATIVE_INFINITY) < catchUpViewsEveryMs);
    }
    return chains;
  }

  /**
   * Takes the tokens changed so far into a new pass; later changes wait for the next one. A live
   * pass leaves the tokens of a chain catching up until its turn; null when it takes none.
   */
  function beginViewsPass(live: boolean): ViewsPass | null {
    const now = Date.now();
    let changed: string[];
    let traded: string[];
    const chains = live ? catchingUp(now) : null;
    if (chains === null || (chains.size === 0 && viewsWaiting.size === 0)) {
      const changedKeys = viewsChanged;
      const tradedKeys = viewsTraded;
      for (const waiting of viewsWaiting.values()) {
        for (const key of waiting.changed) changedKeys.add(key);
        for (const key of waiting.traded) tradedKeys.add(key);
      }
      viewsWaiting.clear();
      changed = [...changedKeys];
      traded = [...tradedKeys];
    } else {
      // A chain catching up collects its tokens until its turn; a chain's turn takes all it collected.
      const waitingOf = (chainName: string) => {
        let waiting = viewsWaiting.get(chainName);
        if (!waiting) viewsWaiting.set(chainName, (waiting = { changed: new Set(), traded: new Set() }));
        return waiting;
      };
      // A chain that collects (or collected) keeps its keys in one set, so none is taken twice.
      const sortOut = (keys: Set<string>, kind: keyof WaitingViews): string[] => {
        const taken: string[] = [];
        for (const key of keys) {
          const chainName = chainOfKey(key);
          if (chains.has(chainName) || viewsWaiting.has(chainName)) waitingOf(chainName)[kind].add(key);
          else taken.push(key);
        }
        return taken;
      };
      changed = sortOut(viewsChanged, 'changed');
      traded = sortOut(viewsTraded, 'traded');
      for (const [chainName, waiting] of viewsWaiting) {
        if (chains.get(chainName) === true) continue;
        // Its turn, or live again.
        for (const key of waiting.changed) changed.push(key);
        for (const key of waiting.traded) traded.push(key);
        viewsWaiting.delete(chainName);
        if (chains.has(chainName)) catchUpViewsAt.set(chainName, now);
      }
    }
    viewsChanged = new Set();
    viewsTraded = new Set();
    if (changed.length === 0 && traded.length === 0 && live) return null;
    cancelViews?.();
    cancelViews = null;
    lastViewsAt = now;
    viewsMessages = 0;
    const pass: ViewsPass = { changed, traded, nextChanged: 0, nextTraded: 0, tokenMessages: [], candleMessages: [] };
    viewsPass = pass;
    return pass;
  }

  /** Live: a pass built one slice per event-loop turn; input that arrived meanwhile goes first (serial order). */
  function startViewsPass(): void {
    if (viewsPass || !viewsPending()) return;
    const pass = beginViewsPass(true);
    // Every changed token belongs to a chain waiting for its turn.
    if (!pass) return scheduleViews();
    inSlices(
      async (due) => {
        await buildViews(pass, due);
        if (viewsPass === pass) return false;
        scheduleViews(); // tokens changed while this pass was built
        return true;
      },
      () => viewsPass === pass, // not when a whole flushViews finished it meanwhile
      viewsSliceMs,
    );
  }

  /**
   * Builds the pass's token objects and open candles until `due()` (at least one token), hands
   * their rows to the store writer at once (the dirty flags they clear are then covered), and
   * publishes the pass's messages once it is complete.
   */
  async function buildViews(pass: ViewsPass, due: () => boolean): Promise<void> {
    // Holder facts of an evicted token's wallets changed: it comes back for its view.
    if (eviction && pass.nextChanged === 0) await eviction.reload(eviction.evictedIn(pass.changed));
    const tokens: Token[] = [];
    const candleRows: CandleRow[] = [];
    let built = 0;
    const more = () => built === 0 || !due();
    while (pass.nextChanged < pass.changed.length && more()) {
      const key = pass.changed[pass.nextChanged++]!;
      const t = tokenIn(state, key);
      if (!t) continue;
      const token = buildToken(t, processor!.wallets.reader);
      tokens.push(token);
      if (publish) {
        assertTopicValue(TOPICS.tokens, token);
        pass.tokenMessages.push({
          key: tokenKey(token.chain, token.address),
          value: JSON.stringify(token),
          timestamp: token.updatedAt,
        });
      }
      built++;
    }
    while (pass.nextTraded < pass.traded.length && more()) {
      const key = pass.traded[pass.nextTraded++]!;
      const t = tokenIn(state, key);
      if (!t) continue; // its partition was given up
      for (const row of dirtyBaseRows(t.chain, t.address, t.candles)) candleRows.push(row);
      built++;
      if (!publish) continue;
      const message = candleMessage(t.chain, t.address, t.updatedAt, t.candles);
      if (message) {
        assertTopicValue(TOPICS.candles, message);
        pass.candleMessages.push({ key, value: JSON.stringify(message), timestamp: message.updatedAt });
      }
    }
    const complete = pass.nextChanged >= pass.changed.length && pass.nextTraded >= pass.traded.length;
    if (complete && viewsPass === pass) viewsPass = null;
    if (tokens.length > 0 || candleRows.length > 0) {
      await sinks.add({ trades: [], candleRows, tokens, tokenEvents: [], labels: new Map(), balances: new Map() }, 0);
    }
    if (!complete) return;
    if (pass.tokenMessages.length > 0) await log.produce(TOPICS.tokens.name, pass.tokenMessages);
    if (pass.candleMessages.length > 0) await log.produce(TOPICS.candles.name, pass.candleMessages);
  }

  /** The next live pass: viewsEveryMs after the last one began, or the first waiting chain's turn. */
  function scheduleViews(): void {
    if (cancelViews || viewsPass || !viewsPending()) return;
    let at = viewsChanged.size > 0 || viewsTraded.size > 0 ? lastViewsAt + viewsEveryMs : Number.POSITIVE_INFINITY;
    for (const chainName of viewsWaiting.keys())
      at = Math.min(at, (catchUpViewsAt.get(chainName) ?? 0) + catchUpViewsEveryMs);
    const timer = setTimeout(
      () => {
        cancelViews = null;
        // While catching up, views wait for flushEvery messages (intermediate ones are wasted work).
        if (merger.caughtUp()) startViewsPass();
      },
      Math.max(0, at - Date.now()),
    );
    cancelViews = () => clearTimeout(timer);
  }

  /**
   * Takes the state and its offsets at once; the file is written once the store acknowledged every
   * row they cover, while processing goes on; embedded, its tokens are serialised in slices between
   * input batches (snapshot.ts captureState), unless `final`. Distributed, the store holds every row
   * first and owned partitions are made durable: a local snapshot never runs ahead of them. The
   * final one (a stop) is captured at once and evicts nothing, while the store takes the last rows.
   */
  async function snapshot(final = false): Promise<void> {
    if (options.partitioned) {
      await sinks.drain();
      try {
        await options.partitioned.beforeSnapshot();
      } catch (error) {
        lastSnapshotAt = Date.now();
        logger.warn(
          { err: (error as Error).message },
          'making owned partitions durable failed; snapshot skipped, the next one retries',
        );
        return;
      }
    }
    // Idle tokens leave memory here, once their views are published and the store holds their rows.
    if (eviction && !final) await eviction.evictIdle(() => sinks.drain());
    // Counted here, not at each flush: a pass over the live tokens (0.7 % of a warm start's thread).
    ctx.metrics.set('aggregator.holders_in_memory', holdersInMemory(state));
    // The previous file waits for its capture: that completes now if it has not yet.
    finishCapture?.();
    await snapshotWrite;
    const started = Date.now();
    const capture = captureState(state);
    // Distributed, owned partitions' tokens are read outside tokenIn (partitioned.ts): taken at once.
    let captured: Promise<void> | undefined;
    let abandoned = false;
    if (final || options.partitioned) capture.step(never);
    else {
      const slices = captureInSlices(capture);
      captured = slices.done;
      abandonSnapshot = () => {
        abandoned = true;
        abandonSnapshot = null;
        slices.abandon();
        ctx.metrics.inc('aggregator.snapshots_abandoned');
      };
    }
    const processed = state.processed;
    const offsets = { ...state.offsets };
    // The file is written while processing goes on; the next snapshot waits for it (and its interval
    // counts from it), stop() too. Back to back, a capture slowed by busy input left the wallet park
    // no turn between snapshots, and each next snapshot held processing until the file was written.
    snapshotWriting = true;
    let bytes = 0;
    snapshotWrite = Promise.all([captured, sinks.acknowledged()])
      .then(() => {
        abandonSnapshot = null;
        if (abandoned) return false;
        const pieces = capture.pieces();
        bytes = snapshotBytes(pieces);
        return writeSnapshotFile(file, pieces).then(() => true);
      })
      .then(
        (written) => {
          snapshotWriting = false;
          snapshotEnded();
          if (!written) return;
          ctx.metrics.inc('aggregator.snapshots_written');
          onDisk = processed;
          // A stop's marker follows an older snapshot: void now.
          removeStopMarker(markerFile);
          if (logger.isLevelEnabled('debug'))
            logger.debug({ bytes, ms: Date.now() - started, processed }, 'snapshot written');
          walletStore?.confirm(processed);
          commitOffsets(offsets);
          options.onSnapshot?.({ processed });
          parkWallets();
        },
        (error: Error) => {
          snapshotWriting = false;
          snapshotEnded();
          logger.error(
            { err: error.message },
            'writing the snapshot failed; the previous one stands, the next retries',
          );
        },
      );
  }

  /**
   * Runs `step` a slice at a time in the processing chain until it returns true (done), `go()` says
   * no or the aggregator failed; a step that throws fails it. Live views passes, snapshot captures
   * and the wallet park run so. A slice runs between input batches, or inside a backlog's turns
   * (yieldIfDue): queued only for the gaps between batches, a capture took 28–78 s behind the
   * mainnet profile's input at 2,000 swaps/s, and the wallet park waited for it. With `restFactor`, the
   * next slice waits that many times the last one's length: work that is not due soon takes at most
   * 1 / (1 + restFactor) of the thread while input is busy too.
   */
  function inSlices(
    step: (due: () => boolean) => boolean | Promise<boolean>,
    go: () => boolean = () => true,
    sliceMs = BACKGROUND_SLICE_MS,
    restFactor = 0,
  ): void {
    let ended = false;
    let queued = false;
    const task: BackgroundTask = {
      readyAt: 0,
      async run() {
        if (ended) return;
        if (failure || !go()) return end();
        const started = performance.now();
        if (await step(createSlicer(sliceMs).due)) return end();
        const now = performance.now();
        task.readyAt = now + (now - started) * restFactor;
        queue();
      },
    };
    const end = () => {
      ended = true;
      backgroundTasks.delete(task);
    };
    // Its next slice between input batches (one may run inside an input turn before that).
    const queue = () => {
      if (queued || ended) return;
      queued = true;
      const turn = () => {
        queued = false;
        if (failure || !go()) return end();
        void serial(async () => {
          if (performance.now() >= task.readyAt) await task.run();
          else queue();
        }).catch(fail);
      };
      const wait = task.readyAt - performance.now();
      if (wait > 0) setTimeout(turn, wait);
      else setImmediate(turn);
    };
    backgroundTasks.add(task);
    queue();
  }

  /** One slice of background work whose rest is over, in turn (called in the processing chain). */
  async function backgroundSlice(): Promise<void> {
    const now = performance.now();
    for (const task of backgroundTasks) {
      if (task.readyAt > now) continue;
      // To the back of the line: the next turn goes to the next task.
      backgroundTasks.delete(task);
      backgroundTasks.add(task);
      await task.run();
      return;
    }
  }

  /**
   * Serialises the rest of a capture's tokens and wallets in slices; resolves once all are in.
   * finishCapture() does the rest at once (the next snapshot, stop()).
   */
  function captureInSlices(capture: StateCapture): { done: Promise<void>; abandon(): void } {
    let abandon = () => {};
    const done = new Promise<void>((resolve) => {
      const complete = (due: () => boolean) => {
        if (!capture.step(due)) return false;
        if (finishCapture === finish) finishCapture = null;
        resolve();
        return true;
      };
      const finish = () => void complete(never);
      finishCapture = finish;
      abandon = () => {
        if (finishCapture === finish) finishCapture = null;
        capture.abandon();
        resolve();
      };
      // Once finished or abandoned at once, the slices have nothing left.
      inSlices((due) => finishCapture !== finish || complete(due));
    });
    return { done, abandon };
  }

  /**
   * Moves the idle wallets due (their chains' idle queues), then holder records (parkHolders), to
   * the store until `due()`; true once no wallet is due and the holder pass reached its last token.
   * Each slice goes on to the records once it wrote its most wallets: with wallets coming due
   * faster than the slices took them, the records got no turn (2 holder passes in 25 minutes).
   */
  function parkWalletSlice(due: () => boolean): boolean {
    const idleBefore = (chainName: string) => (state.watermarks[chainName] ?? 0) - walletParkIdleMs;
    const wallets = processor!.wallets.park(idleBefore, state.processed, due);
    if (wallets.parked > 0) ctx.metrics.inc('aggregator.wallets_parked', wallets.parked);
    if (due()) return false;
    if (!processor!.parkHolders(state.processed, idleBefore, due).done) return false;
    // Against the snapshots' count it shows whether the passes keep up (they run between snapshots).
    ctx.metrics.inc('aggregator.wallet_park_passes');
    return wallets.done;
  }

  /**
   * Idle wallets and their holder records leave memory in slices between input batches, from a
   * snapshot's confirmation to the next snapshot (wallet-store.ts: versions). Whole, at the
   * snapshot, a pass held the main thread 50–270 ms on the mainnet profile, and every trade behind
   * it waited.
   */
  function parkWallets(): void {
    if (walletStore)
      inSlices(parkWalletSlice, () => !stopped && !snapshotWriting, BACKGROUND_SLICE_MS, PARK_REST_FACTOR);
  }

  /**
   * The group's offsets follow the snapshot on disk (a restart seeks to the snapshot's own): they
   * never name a message whose rows the store has not acknowledged, and they show the lag.
   */
  function commitOffsets(offsets: Record<string, number>): void {
    if (!consumer || stopped) return;
    const positions = Object.entries(offsets).map(([key, offset]) => {
      const at = key.lastIndexOf(':');
      return { topic: key.slice(0, at), partition: Number(key.slice(at + 1)), offset };
    });
    consumer
      .commit(positions)
      .catch((error) =>
        logger.warn(
          { err: (error as Error).message },
          'committing the input offsets failed; the next snapshot retries',
        ),
      );
  }

  function fail(error: unknown): void {
    if (failure) return;
    failure = error instanceof Error ? error : new Error(String(error));
    sinks.stop();
    logger.error({ err: failure }, 'aggregator failed');
    options.onFailure?.(failure);
  }

  function cancelScheduledFlush(): void {
    cancelFlush?.();
    cancelFlush = null;
  }

  /**
   * A partial flush waits one event-loop turn, so the batches of one consumer poll go out together.
   */
  function scheduleFlush(): void {
    if (cancelFlush || pendingCount === 0) return;
    const run = () => {
      cancelFlush = null;
      void serial(async () => {
        const turn = createSlicer();
        for (;;) {
          await processReady();
          if (pendingCount === 0) return;
          await flush();
          await yieldIfDue(turn);
        }
      }).catch(fail);
    };
    const immediate = setImmediate(run);
    cancelFlush = () => clearImmediate(immediate);
  }

  /** Processes what the merge allows; flushes every perFlush messages or tradesEveryMs, and the rest once caught up or soon after. */
  async function pump(): Promise<void> {
    await refreshEnds();
    const turn = createSlicer();
    for (;;) {
      await processReady();
      if (pendingCount === 0) return;
      if (pendingCount < perFlush && !merger.caughtUp() && !overdue() && !quietBoundary) break;
      await flush();
      // A stop ends the backlog here: what the merge still holds is past the committed offsets,
      // read again after the restart (a SIGTERM behind input waited 2.8–5 s for it).
      if (stopped) return;
      await yieldIfDue(turn);
    }
    scheduleFlush();
  }

  /**
   * Between flushes, lets the thread's timers and I/O run once the turn's slice is spent. On the
   * embedded log a flush's awaits resolve at once, so a backlog was worked off in one turn: the
   * main thread's loop delay reached 0.2–1.2 s a few times a minute in the soak, and its timers,
   * the views pass, the SQL endpoint and the ops answers waited that long.
   */
  async function yieldIfDue(turn: Slicer): Promise<void> {
    if (!turn.due()) return;
    await backgroundSlice();
    await turn.pause();
  }

  async function eachBatch(batch: Batch): Promise<void> {
    if (failure) throw failure;
    const items = parse(batch);
    await serial(async () => {
      merger.push(items);
      // What the merge holds waiting for the partition furthest behind (bounded by the fetch gate).
      if (merger.buffered() > ctx.metrics.get('aggregator.merge_buffered_peak'))
        ctx.metrics.set('aggregator.merge_buffered_peak', merger.buffered());
      await pump();
    });
  }

  return {
    async start() {
      await log.ensureTopics(ALL_TOPICS);
      const loaded = readSnapshot(file);
      state = loaded ?? newState();
      if (options.partitioned) unparkAll(state);
      else {
        walletStore = openWalletStore(walletStorePath(ctx, name), !loaded);
        // Rows a later snapshot would have named are undone: the loaded state expects the ones before.
        walletStore.rollback(loaded ? state.processed : 0);
      }
      lastSnapshotProcessed = state.processed;
      onDisk = loaded ? state.processed : null;
      if (!options.partitioned) {
        replayTo = loaded ? readStopMarker(markerFile, state.processed) : null;
        if (!replayTo) removeStopMarker(markerFile);
      }
      // A marker's views supersede the snapshot's: the run that wrote it started from this snapshot
      // and built those, or named them again.
      if (state.views && !replayTo) {
        for (const key of state.views.changed) viewsChanged.add(key);
        for (const key of state.views.traded) viewsTraded.add(key);
      }
      delete state.views;
      const partitioning = options.partitioned?.attach(state, {
        state: () => state,
        processor: () => processor!,
        exclusive: (fn) =>
          serial(async () => {
            if (failure) throw failure;
            await flush();
            await sinks.drain();
            await fn(pending);
            await flush(true);
          }),
      });
      processor = createProcessor(ctx, state, partitioning, {
        parkIdleMs: options.parkIdleMs ?? PARK_IDLE_MS,
        walletStore: walletStore ?? undefined,
        viewPending: (key) => {
          if (viewsChanged.has(key) || viewsTraded.has(key)) return true;
          const waiting = viewsWaiting.size > 0 ? viewsWaiting.get(chainOfKey(key)) : undefined;
          return waiting !== undefined && (waiting.changed.has(key) || waiting.traded.has(key));
        },
      });
      consumer = log.consumer({
        group: `spot-aggregator-${name}`,
        topics: INPUTS,
        maxBatchSize: fetchBatch,
        commit: 'manual',
        // A partition holding a batch is not fetched further (catching up on the mainnet profile the
        // merge held ~210 MB of parsed messages without this), unless a chain waits for it.
        ready: (topic, partition) =>
          merger.bufferedIn(topic, partition) < fetchBatch || merger.awaited(topic, partition),
      });
      for (const topic of INPUTS) {
        const ends = await log.endOffsets(topic);
        for (const [partition, end] of ends) {
          // The snapshot's offsets override the group's; without a snapshot the state is empty, so start at 0.
          const offset = Math.min(state.offsets[`${topic}:${partition}`] ?? 0, end);
          merger.init(topic, partition, offset, processedBelow(state, topic, partition));
          merger.setEnd(topic, partition, end);
          await consumer.seek(topic, partition, offset);
          // The lag shows from the start, before the partition's first message is processed.
          ctx.metrics.consumerPositions(`spot-aggregator-${name}`, { [`${topic}:${partition}`]: offset });
        }
      }
      logger.info(
        {
          resumedFrom: loaded ? state.processed : null,
          tokens: tokensInMemory(state),
          quietTo: replayTo ? replayTo.processed : undefined,
        },
        'aggregator starting',
      );
      if (replayTo && reachedStop(replayTo, state.chainOffsets)) endQuietReplay();
      running = consumer.run(eachBatch).catch(fail);
      // The views a stop left unbuilt, with no input needed.
      scheduleViews();
    },

    async stop() {
      if (stopped) return;
      stopped = true;
      // Each step's time is logged: what a SIGTERM under load waits for.
      const phases: Record<string, number> = {};
      let mark = performance.now();
      const phase = (name: string) => {
        const now = performance.now();
        phases[name] = Math.round(now - mark);
        mark = now;
      };
      await consumer?.stop();
      await running;
      await serial(async () => {
        phase('running');
        if (failure || !processor) return;
        const pendingAtStop = pendingCount;
        // Only what is processed already is flushed; the rest of the input stays on the log.
        await flush();
        phase('input');
        if (options.partitioned) {
          // Another instance may take the partitions over from the store: their views go out now.
          await flushViews();
          await sinks.drain();
        }
        // The views not built yet are named in the stop's marker or final snapshot; the next start
        // builds them first (1–2.7 s of a SIGTERM on the spread market when built here).
        const unbuilt = options.partitioned ? undefined : takeUnbuiltViews();
        // Tokens gone idle since the last park tick are left in memory too (parking deflates each:
        // 2.9 s of one SIGTERM); the next start parks them at its first tick.
        phase('views');
        // The final snapshot below supersedes one under way: its capture is dropped, not finished
        // (3.9 s of a SIGTERM on the spread market), and a file already being written completes.
        abandonSnapshot?.();
        await snapshotWrite;
        phase('earlierSnapshot');
        const marked =
          unbuilt !== undefined && onDisk !== null && stopReplayMost > 0 && state.processed - onDisk <= stopReplayMost;
        if (marked) {
          // A marker, not a capture (which grows with the live state): the next start replays to it.
          let marker: StopMarker = {
            base: onDisk!,
            processed: state.processed,
            chainOffsets: structuredClone(state.chainOffsets),
            views: unbuilt,
          };
          if (replayTo) marker = joinedMarker(replayTo, marker);
          // Every row of what it covers is stored first, drained meanwhile.
          await sinks.acknowledged();
          phase('store');
          await writeStopMarker(markerFile, marker);
          phase('marker');
        } else {
          if (unbuilt && (unbuilt.changed.length > 0 || unbuilt.traded.length > 0)) state.views = unbuilt;
          // Idle wallets still in memory go into the file rather than to the wallet store (a whole
          // park pass took 1.4–2.8 s of a SIGTERM); the next start parks them.
          await snapshot(true);
          phase('capture');
          // The file waits for the store's acknowledgement of the last rows, drained meanwhile.
          await snapshotWrite;
          phase('snapshot');
        }
        logger.info({ pendingAtStop, phasesMs: phases }, 'aggregator stop phases');
      });
      cancelScheduledFlush();
      cancelViews?.();
      sinks.stop();
      walletStore?.close();
    },

    async drain() {
      const targets: Array<[string, number]> = [];
      for (const topic of INPUTS)
        for (const [partition, end] of await log.endOffsets(topic)) targets.push([`${topic}:${partition}`, end]);
      for (;;) {
        if (failure) throw failure;
        const done = targets.every(([key, end]) => (state.offsets[key] ?? 0) >= end);
        if (done) {
          await serial(async () => {
            await flush();
            await flushViews();
            await sinks.drain();
          });
          if (failure) throw failure;
          return;
        }
        await sleep(10);
      }
    },

    tokens() {
      const parked = [...(state.parked?.values() ?? [])].map(parkedState);
      const wallets = processor?.wallets.reader ?? state.wallets;
      return [...state.tokens.values(), ...parked].map((t) => buildToken(t, wallets));
    },

    token(chainName, address) {
      const t = tokenIn(state, tokenKey(chainName, normalizeAddress(chainName, address)));
      return t ? buildToken(t, processor?.wallets.reader ?? state.wallets) : undefined;
    },

    processed: () => state.processed,

    statsTime(chainName, address) {
      return tokenIn(state, tokenKey(chainName, normalizeAddress(chainName, address)))?.win.t;
    },
  };
}
