// The aggregator's store writes, off the processing path. Results handed over after each batch
// accumulate into one write set (tokens, candle rows, balances and labels conflated by key, the
// latest kept) that is written when enough messages are behind it or after a delay, every table
// at once. One set is in flight at a time, so the rows of one key reach the store in processing
// order; a caller handing over more than a set's worth waits for the set in flight (backpressure).
import { tokenKey } from '../core/chains.ts';
import type { Context } from '../core/context.ts';
import type { Token } from '../core/schemas.ts';
import type { BalanceRow, CandleRow, SpotStore, TokenEventRow, TradeRow, WalletLabelRow } from '../clickhouse/types.ts';

/** What one processed batch asks the store to hold. */
export interface SinkPart {
  trades: readonly TradeRow[];
  candleRows: readonly CandleRow[];
  tokens: readonly Token[];
  tokenEvents: readonly TokenEventRow[];
  labels: ReadonlyMap<string, WalletLabelRow>;
  balances: ReadonlyMap<string, BalanceRow>;
}

export interface SinkWriterOptions {
  store: SpotStore;
  /** Messages behind the pending rows that start a write (default 20000). */
  flushEvery: number;
  /** Longest wait before pending rows are written, ms. */
  flushAfterMs: number;
  /** Attempts per table write before the writer fails (default 4). */
  attempts?: number;
  /** Called once when a write failed for good; later calls reject with the same error. */
  onFailure(error: Error): void;
}

export interface SinkWriter {
  /** Hands over the rows of `messages` processed messages; resolves when the caller may go on. */
  add(part: SinkPart, messages: number): Promise<void>;
  /** Resolves once the store acknowledged everything handed over so far. */
  drain(): Promise<void>;
  /**
   * Resolves once the store acknowledged everything handed over before the call, while later
   * rows go on being handed over (a snapshot's file waits for it, processing does not).
   */
  acknowledged(): Promise<void>;
  /** Rows handed over and not yet acknowledged, counted in the messages behind them. */
  pending(): number;
  /** No more retries or timed writes (the aggregator is stopping or failed). */
  stop(): void;
}

interface WriteSet {
  trades: TradeRow[];
  candles: Map<string, CandleRow>;
  tokens: Map<string, Token>;
  tokenEvents: TokenEventRow[];
  labels: Map<string, WalletLabelRow>;
  balances: Map<string, BalanceRow>;
  messages: number;
  /** True once anything was handed over (views come with zero messages). */
  used: boolean;
}

const emptySet = (): WriteSet => ({
  trades: [],
  candles: new Map(),
  tokens: new Map(),
  tokenEvents: [],
  labels: new Map(),
  balances: new Map(),
  messages: 0,
  used: false,
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createSinkWriter(ctx: Context, options: SinkWriterOptions): SinkWriter {
  const { store, flushEvery, flushAfterMs } = options;
  const attempts = options.attempts ?? 4;
  const logger = ctx.logger.child({ component: 'aggregator-sinks' });
  let filling = emptySet();
  let inFlight: Promise<void> | null = null;
  let inFlightMessages = 0;
  let timer: NodeJS.Timeout | null = null;
  let failure: Error | null = null;
  let stopped = false;

  function merge(part: SinkPart, messages: number): void {
    const set = filling;
    for (const row of part.trades) set.trades.push(row);
    for (const row of part.tokenEvents) set.tokenEvents.push(row);
    // ReplacingMergeTree keeps the highest seq, and the last inserted among equal ones.
    for (const row of part.candleRows) {
      const key = `${row.chain}:${row.token}:${row.granularity}:${row.time}`;
      const held = set.candles.get(key);
      if (!held || row.seq >= held.seq) set.candles.set(key, row);
    }
    for (const token of part.tokens) set.tokens.set(tokenKey(token.chain, token.address), token);
    for (const [key, row] of part.labels) set.labels.set(key, row);
    for (const [key, row] of part.balances) set.balances.set(key, row);
    set.messages += messages;
    set.used = true;
  }

  /** Sinks are idempotent, so a failed write is retried a few times before the writer fails. */
  async function retry(what: string, write: () => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await write();
      } catch (error) {
        if (attempt >= attempts || stopped) throw error;
        ctx.metrics.inc('aggregator.sink_retries');
        logger.warn({ err: (error as Error).message, sink: what, attempt }, 'sink write failed; retrying');
        await sleep(200 * 4 ** (attempt - 1));
      }
    }
  }

  async function write(set: WriteSet): Promise<void> {
    const jobs: Promise<void>[] = [];
    const trades = set.trades;
    if (trades.length > 0) jobs.push(retry('trades', () => store.insertTrades(trades)));
    if (set.candles.size > 0) {
      const rows = [...set.candles.values()];
      jobs.push(retry('candles', () => store.upsertCandles(rows)));
    }
    if (set.tokens.size > 0) {
      const tokens = [...set.tokens.values()];
      jobs.push(retry('tokens', () => store.upsertTokens(tokens)));
    }
    if (set.tokenEvents.length > 0) jobs.push(retry('token events', () => store.insertTokenEvents(set.tokenEvents)));
    if (set.labels.size > 0) {
      const rows = [...set.labels.values()];
      jobs.push(retry('wallet labels', () => store.upsertWalletLabels(rows)));
    }
    if (set.balances.size > 0) {
      const rows = [...set.balances.values()];
      jobs.push(retry('balances', () => store.upsertBalances(rows)));
    }
    // Every table settles before the next set starts, even when one of them failed.
    const results = await Promise.allSettled(jobs);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason instanceof Error ? failed.reason : new Error(String(failed.reason));
    ctx.metrics.inc('aggregator.trades', trades.length);
  }

  function clearTimer(): void {
    if (timer) clearTimeout(timer);
    timer = null;
  }

  /** Starts writing the filling set once the set in flight is done; resolves when it started. */
  async function start(): Promise<void> {
    while (inFlight) await inFlight;
    if (failure) throw failure;
    clearTimer();
    if (!filling.used) return;
    const set = filling;
    filling = emptySet();
    inFlightMessages = set.messages;
    inFlight = write(set).then(
      () => {
        inFlight = null;
        inFlightMessages = 0;
      },
      (error: unknown) => {
        inFlight = null;
        inFlightMessages = 0;
        if (!failure) {
          failure = error instanceof Error ? error : new Error(String(error));
          clearTimer();
          options.onFailure(failure);
        }
      },
    );
  }

  function schedule(): void {
    if (timer || stopped || !filling.used) return;
    timer = setTimeout(() => {
      timer = null;
      start().catch(() => undefined); // a failure already reached onFailure
    }, flushAfterMs);
  }

  return {
    async add(part, messages) {
      if (failure) throw failure;
      merge(part, messages);
      if (filling.messages >= flushEvery) return start();
      schedule();
    },

    async drain() {
      for (;;) {
        await start();
        while (inFlight) await inFlight;
        if (failure) throw failure;
        if (!filling.used) return;
      }
    },

    async acknowledged() {
      // Sets are written one at a time in order: once the set holding the rows handed over so far
      // has started, its write is the one in flight (it may have taken later rows too).
      await start();
      if (inFlight) await inFlight;
      if (failure) throw failure;
    },

    pending: () => filling.messages + inFlightMessages,

    stop() {
      stopped = true;
      clearTimer();
    },
  };
}
