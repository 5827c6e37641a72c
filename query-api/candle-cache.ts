// OHLCV responses: ClickHouse's answer merged with the live open bucket of spot.candles.v1.
// A ClickHouse query costs milliseconds, so its answer is kept per query (token, timeframe,
// metric, denomination, window, limit) while it cannot differ from a fresh one: the stored rows
// a query returns change only when (a) the open bucket of its timeframe moves on (the previous
// one closes with its final values), (b) a late trade lands in an older bucket, which the trades
// stream shows, or (c) the store is written by something outside the stream; (a) and (b) end the
// entry at once, and an entry lives at most `ttlMs` to bound (c). The open bucket itself is always
// the one the views hold now. Tokens the views hold no candles for are always read from ClickHouse.
import type { CandleQuery, SpotStore } from '../clickhouse/types.ts';
import type { Candle } from '../core/schemas.ts';
import type { HotViews } from './hot-views.ts';

export interface CandleCacheOptions {
  store: SpotStore;
  views: HotViews;
  now: () => number;
  /** Longest time an answer is reused without asking ClickHouse again. */
  ttlMs?: number;
  /** Bound on the bytes of the response bodies kept. */
  maxBytes?: number;
}

export interface CandleCache {
  /** The `{candles}` response body of a query. */
  body(query: CandleQuery): Promise<Buffer>;
  /** Entries held (tests). */
  size(): number;
}

interface Entry {
  /** The views' candle generation of the token and the open bucket time of the timeframe at fetch. */
  generation: number;
  openTime: number;
  fetchedAt: number;
  stored: Candle[];
  /** The body for `bodyOpen` (the open candle it was built with, compared by value). */
  bodyOpen: Candle | undefined;
  body: Buffer;
}

const sameCandle = (a: Candle | undefined, b: Candle | undefined) =>
  a === b ||
  (a !== undefined &&
    b !== undefined &&
    a.time === b.time &&
    a.open === b.open &&
    a.high === b.high &&
    a.low === b.low &&
    a.close === b.close &&
    a.volume === b.volume);

/** Replaces the bucket with the same time or appends a newer one, keeping the newest `limit`. */
export function mergeOpen(candles: Candle[], open: Candle, limit: number): Candle[] {
  const last = candles[candles.length - 1];
  if (last && last.time === open.time) return [...candles.slice(0, -1), open];
  if (!last || open.time > last.time) {
    const merged = [...candles, open];
    return merged.length > limit ? merged.slice(merged.length - limit) : merged;
  }
  return candles;
}

/** The live open candle of the query when it falls in the window. */
function openInWindow(views: HotViews, query: CandleQuery): Candle | undefined {
  const open = views.openCandle(query.chain, query.token, query.timeframe, query.metric, query.denomination);
  if (!open) return undefined;
  if (query.from !== undefined && open.time < query.from) return undefined;
  if (query.to !== undefined && open.time >= query.to) return undefined;
  return open;
}

const render = (candles: Candle[]) => Buffer.from(JSON.stringify({ candles }));

export function createCandleCache(options: CandleCacheOptions): CandleCache {
  const { store, views, now } = options;
  const ttlMs = options.ttlMs ?? 2000;
  const maxBytes = options.maxBytes ?? 32 * 1024 * 1024;
  // Insertion order = least recently used first.
  const entries = new Map<string, Entry>();
  const inFlight = new Map<string, Promise<Entry | null>>();
  let bytes = 0;

  const keyOf = (q: CandleQuery) =>
    `${q.chain}:${q.token}|${q.timeframe}|${q.metric}|${q.denomination}|${q.from ?? ''}|${q.to ?? ''}|${q.limit}`;

  /** The token's candle generation and the timeframe's open bucket time, or null when the views hold no candles for it. */
  function stamp(query: CandleQuery): { generation: number; openTime: number } | null {
    const generation = views.candleGeneration(query.chain, query.token);
    if (generation === undefined) return null;
    const open = views.openCandle(query.chain, query.token, query.timeframe, query.metric, query.denomination);
    return { generation, openTime: open?.time ?? -1 };
  }

  function drop(key: string, entry: Entry): void {
    entries.delete(key);
    bytes -= entry.body.length;
  }

  function keep(key: string, entry: Entry): void {
    const old = entries.get(key);
    if (old) drop(key, old);
    entries.set(key, entry);
    bytes += entry.body.length;
    for (const [k, e] of entries) {
      if (bytes <= maxBytes) break;
      drop(k, e);
    }
  }

  async function fetch(key: string, query: CandleQuery): Promise<Entry | null> {
    const before = stamp(query);
    const fetchedAt = now();
    const stored = await store.queryCandles(query);
    if (before === null) return null;
    const open = openInWindow(views, query);
    const entry: Entry = {
      ...before,
      fetchedAt,
      stored,
      bodyOpen: open,
      body: render(open ? mergeOpen(stored, open, query.limit) : stored),
    };
    keep(key, entry);
    return entry;
  }

  async function uncached(query: CandleQuery): Promise<Buffer> {
    const stored = await store.queryCandles(query);
    const open = openInWindow(views, query);
    return render(open ? mergeOpen(stored, open, query.limit) : stored);
  }

  /** The entry's body with the open candle the views hold now. */
  function serve(key: string, entry: Entry, query: CandleQuery): Buffer {
    const open = openInWindow(views, query);
    if (!sameCandle(open, entry.bodyOpen)) {
      const held = entries.get(key) === entry;
      if (held) bytes -= entry.body.length;
      entry.body = render(open ? mergeOpen(entry.stored, open, query.limit) : entry.stored);
      entry.bodyOpen = open;
      if (held) bytes += entry.body.length;
    }
    return entry.body;
  }

  return {
    async body(query) {
      const key = keyOf(query);
      const current = stamp(query);
      let entry = entries.get(key);
      if (
        entry &&
        (current === null ||
          entry.generation !== current.generation ||
          entry.openTime !== current.openTime ||
          now() - entry.fetchedAt >= ttlMs)
      ) {
        drop(key, entry);
        entry = undefined;
      }
      if (!entry) {
        if (current === null) return uncached(query);
        let pending = inFlight.get(key);
        if (!pending) {
          pending = fetch(key, query).finally(() => inFlight.delete(key));
          inFlight.set(key, pending);
        }
        const fetched = await pending;
        if (fetched) return serve(key, fetched, query);
        return uncached(query);
      }
      // Most recently used goes last.
      entries.delete(key);
      entries.set(key, entry);
      return serve(key, entry, query);
    },
    size: () => entries.size,
  };
}
