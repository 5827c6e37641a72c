// Candle buckets: the running OHLC of the open bucket of every timeframe of a token, the base
// buckets closed within the late-trade horizon (a late trade joins its bucket there), the base
// rows written to the store (1s, 1m, 1h, 1d) and the open-bucket message of spot.candles.v1.
import type { Chain } from '../core/chains.ts';
import { TIMEFRAMES, type Candle } from '../core/schemas.ts';
import type { CandleUpdateMessage } from '../core/topics.ts';
import type { Dec } from '../core/decimal.ts';
import type { BaseGranularity, CandleRow, Ohlc } from '../clickhouse/types.ts';
import type { TradeRec } from './windows.ts';
import { decNumber, decText } from './format.ts';
import { bucketStart, TIMEFRAME_MS } from '../core/timeframes.ts';

/** Index of each base granularity in TIMEFRAMES (the store rolls every timeframe up from one). */
export const BASE_INDEX: Record<BaseGranularity, number> = {
  '1s': TIMEFRAMES.indexOf('1s'),
  '1m': TIMEFRAMES.indexOf('1m'),
  '1h': TIMEFRAMES.indexOf('1h'),
  '1d': TIMEFRAMES.indexOf('1d'),
};
const BASES = Object.keys(BASE_INDEX) as BaseGranularity[];
const SIZE_AT: number[] = TIMEFRAMES.map((tf) => TIMEFRAME_MS[tf]);
const BASE_AT: Array<BaseGranularity | undefined> = TIMEFRAMES.map((_, i) => BASES.find((g) => BASE_INDEX[g] === i));

// Metric slots: price native, price usd, market cap native, market cap usd.
const METRIC_COUNT = 4;

/** Running OHLC of one bucket; first/last are (time, seq) of its first and last trade. */
export interface Bucket {
  time: number;
  ft: number;
  fs: number;
  lt: number;
  ls: number;
  o: Dec[];
  h: Dec[];
  l: Dec[];
  c: Dec[];
  vn: Dec;
  vu: Dec;
  n: number;
  /** Highest per-token seq in the bucket: the version of its row. */
  seq: number;
  dirty: boolean;
  /**
   * Which of h (1) and l (2) are this bucket's own arrays. Until a trade moves them they are the
   * opening trade's value array, shared by the buckets it opened (most buckets of most tokens
   * never see a second price). Absent in older snapshots: their arrays are copied once, harmlessly.
   */
  own?: number;
}

const values = (r: TradeRec): Dec[] => [r.pn, r.pu, r.mn, r.mu];

// `v` (a trade's four values) is shared by the buckets it opens or closes and is never written
// into: o and c are replaced; h and l are copied the first time a trade moves them (Bucket.own).
function openBucket(time: number, r: TradeRec, v: Dec[]): Bucket {
  return {
    time,
    ft: r.t,
    fs: r.seq,
    lt: r.t,
    ls: r.seq,
    o: v,
    h: v,
    l: v,
    c: v,
    vn: r.vn,
    vu: r.vu,
    n: 1,
    seq: r.seq,
    dirty: true,
    own: 0,
  };
}

function addToBucket(b: Bucket, r: TradeRec, v: Dec[]): void {
  for (let m = 0; m < METRIC_COUNT; m++) {
    const x = v[m]!;
    if (x > b.h[m]!) {
      if (!(b.own! & 1)) {
        b.h = b.h.slice();
        b.own = b.own! | 1;
      }
      b.h[m] = x;
    }
    if (x < b.l[m]!) {
      if (!(b.own! & 2)) {
        b.l = b.l.slice();
        b.own = b.own! | 2;
      }
      b.l[m] = x;
    }
  }
  if (r.t < b.ft || (r.t === b.ft && r.seq < b.fs)) {
    b.o = v;
    b.ft = r.t;
    b.fs = r.seq;
  }
  if (!(r.t < b.lt || (r.t === b.lt && r.seq < b.ls))) {
    b.c = v;
    b.lt = r.t;
    b.ls = r.seq;
  }
  b.vn += r.vn;
  b.vu += r.vu;
  b.n += 1;
  if (r.seq > b.seq) b.seq = r.seq;
  b.dirty = true;
}

/** Open buckets of one token, one per timeframe (TIMEFRAMES order); null before its first trade. */
export type OpenBuckets = Array<Bucket | null>;

export function newOpenBuckets(): OpenBuckets {
  return TIMEFRAMES.map(() => null);
}

/**
 * A late trade older than this (event time) behind the token's stats time no longer changes its
 * closed base candles: closed buckets are kept only while they end inside this horizon.
 */
export const LATE_TRADE_HORIZON_MS = 120_000;

/** A base bucket closed within the late-trade horizon, oldest end first. */
export interface ClosedBucket {
  g: BaseGranularity;
  b: Bucket;
}

/**
 * Adds a trade to the open buckets. Every base bucket that closes goes to `closed` (the caller
 * writes the dirty ones and keeps them for late trades); a trade older than the open bucket of a
 * base granularity is returned in `late` with that granularity.
 */
export function addTrade(open: OpenBuckets, r: TradeRec, closed: ClosedBucket[], late: BaseGranularity[]): void {
  const v = values(r);
  for (let i = 0; i < TIMEFRAMES.length; i++) {
    const b = open[i];
    // Most trades fall in the open bucket: two comparisons instead of the alignment arithmetic.
    if (b && r.t >= b.time && r.t < b.time + SIZE_AT[i]!) {
      addToBucket(b, r, v);
      continue;
    }
    const time = bucketStart(TIMEFRAMES[i]!, r.t);
    if (!b || time > b.time) {
      const base = BASE_AT[i];
      if (b && base) closed.push({ g: base, b });
      open[i] = openBucket(time, r, v);
    } else if (time === b.time) {
      addToBucket(b, r, v);
    } else {
      const base = BASE_AT[i];
      if (base) late.push(base);
    }
  }
}

/**
 * A late trade added to its closed base bucket of `g` (kept in `recent`, or new when none traded
 * then); null when the bucket may have left the horizon (`now` is the token's stats time).
 */
export function addLateTrade(recent: ClosedBucket[], g: BaseGranularity, r: TradeRec, now: number): Bucket | null {
  if (r.t <= now - LATE_TRADE_HORIZON_MS) return null;
  const time = bucketStart(g, r.t);
  for (const c of recent) {
    if (c.g === g && c.b.time === time) {
      addToBucket(c.b, r, values(r));
      return c.b;
    }
  }
  const b = openBucket(time, r, values(r));
  // Ends are nondecreasing along `recent`: the new bucket goes where its end sorts.
  const end = time + TIMEFRAME_MS[g];
  let at = recent.length;
  while (at > 0 && recent[at - 1]!.b.time + TIMEFRAME_MS[recent[at - 1]!.g] > end) at--;
  recent.splice(at, 0, { g, b });
  return b;
}

/** Drops the closed buckets that ended at or before the late-trade horizon of `now`. */
export function forgetClosed(recent: ClosedBucket[], now: number): void {
  const floor = now - LATE_TRADE_HORIZON_MS;
  let drop = 0;
  while (drop < recent.length && recent[drop]!.b.time + TIMEFRAME_MS[recent[drop]!.g] <= floor) drop++;
  if (drop > 0) recent.splice(0, drop);
}

// Open, high, low and close are often the same value (a bucket of one trade): printed once.
function ohlc(b: Bucket, m: number, print: (d: Dec) => string): Ohlc {
  const o = b.o[m]!,
    h = b.h[m]!,
    l = b.l[m]!,
    c = b.c[m]!;
  const open = print(o);
  const high = h === o ? open : print(h);
  const low = l === o ? open : l === h ? high : print(l);
  const close = c === o ? open : c === h ? high : c === l ? low : print(c);
  return { open, high, low, close };
}

/** A base row of the bucket; `print` is decTextOnce for a bucket printed once (closed, rebuilt). */
export function candleRow(
  chain: Chain,
  token: string,
  granularity: BaseGranularity,
  b: Bucket,
  print: (d: Dec) => string = decText,
): CandleRow {
  return {
    chain,
    token,
    granularity,
    time: b.time,
    seq: b.seq,
    priceNative: ohlc(b, 0, print),
    priceUsd: ohlc(b, 1, print),
    marketCapNative: ohlc(b, 2, print),
    marketCapUsd: ohlc(b, 3, print),
    volumeNative: print(b.vn),
    volumeUsd: print(b.vu),
    trades: b.n,
  };
}

/** Rows of the dirty open base buckets; clears their dirty marks. */
export function dirtyBaseRows(chain: Chain, token: string, open: OpenBuckets): CandleRow[] {
  const rows: CandleRow[] = [];
  for (const g of BASES) {
    const b = open[BASE_INDEX[g]];
    if (b?.dirty) {
      rows.push(candleRow(chain, token, g, b));
      b.dirty = false;
    }
  }
  return rows;
}

const num = decNumber;

// Equal values (a bucket of one trade, a close at the high) are converted once.
function candle(b: Bucket, m: number, volume: number): Candle {
  const o = b.o[m]!,
    h = b.h[m]!,
    l = b.l[m]!,
    c = b.c[m]!;
  const open = num(o);
  const high = h === o ? open : num(h);
  const low = l === o ? open : l === h ? high : num(l);
  const close = c === o ? open : c === h ? high : c === l ? low : num(c);
  return { time: b.time, open, high, low, close, volume };
}

/** spot.candles.v1 value: the open bucket of every timeframe × metric × denomination. */
export function candleMessage(
  chain: Chain,
  token: string,
  updatedAt: number,
  open: OpenBuckets,
): CandleUpdateMessage | null {
  const out: CandleUpdateMessage['open'] = {};
  TIMEFRAMES.forEach((tf, i) => {
    const b = open[i];
    if (!b) return;
    const vn = num(b.vn),
      vu = num(b.vu);
    out[tf] = {
      price: { native: candle(b, 0, vn), usd: candle(b, 1, vu) },
      marketCap: { native: candle(b, 2, vn), usd: candle(b, 3, vu) },
    };
  });
  if (Object.keys(out).length === 0) return null;
  return { chain, token, updatedAt, open: out };
}
