// Trailing-window stats (5m, 30m, 1h, 6h, 24h) by event time. statsAt is the pure definition over
// trade records; TradeWindow keeps the same numbers incrementally from one bucket per distinct
// event time (block times are whole seconds, so at most one bucket per second of the last 24 h,
// whatever the number of trades), with running sums and one head index per window for a stats
// time that only moves forward.
import { STATS_WINDOWS, type StatsWindow, type StatsWindowObject } from '../core/schemas.ts';
import { ZERO, pctChange, type Dec } from '../core/decimal.ts';
import { decText } from './format.ts';

export const WINDOW_MS: Record<StatsWindow, number> = {
  '5m': 5 * 60_000,
  '30m': 30 * 60_000,
  '1h': 3_600_000,
  '6h': 6 * 3_600_000,
  '24h': 24 * 3_600_000,
};
const SIZES = STATS_WINDOWS.map((w) => WINDOW_MS[w]);
const LONGEST = 24 * 3_600_000;

/** One trade as the windows and candles need it (transient: never kept). */
export interface TradeRec {
  t: number;
  seq: number;
  buy: boolean;
  pn: Dec; // price native
  pu: Dec; // price usd
  mn: Dec; // market cap native
  mu: Dec; // market cap usd
  vn: Dec; // volume native
  vu: Dec; // volume usd
}

export const before = (a: TradeRec, b: TradeRec) => a.t < b.t || (a.t === b.t && a.seq < b.seq);

/**
 * Stats of the window (t − w, t] for every window, from records sorted by (t, seq).
 * priceChangePct compares the USD price of the last trade at or before t with the reference:
 * the last trade at or before t − w, or, when no trade is that old, the first trade inside the
 * window; zero when the reference USD price is zero.
 */
export function statsAt(trades: readonly TradeRec[], t: number): Record<StatsWindow, StatsWindowObject> {
  let end = trades.length; // first index with time > t
  while (end > 0 && trades[end - 1]!.t > t) end--;
  const out = {} as Record<StatsWindow, StatsWindowObject>;
  STATS_WINDOWS.forEach((w, i) => {
    const from = t - SIZES[i]!;
    let head = end;
    while (head > 0 && trades[head - 1]!.t > from) head--;
    const sums = emptySums();
    for (let k = head; k < end; k++) addTo(sums, trades[k]!);
    const last = end > 0 ? trades[end - 1]! : undefined;
    const ref = head > 0 ? trades[head - 1] : trades[head];
    const refRec = ref && head < end ? ref : last;
    out[w] = windowObject(sums, refRec?.pu, last?.pu);
  });
  return out;
}

interface Sums {
  bn: Dec;
  bu: Dec;
  sn: Dec;
  su: Dec;
  bc: number;
  sc: number;
}

const emptySums = (): Sums => ({ bn: ZERO, bu: ZERO, sn: ZERO, su: ZERO, bc: 0, sc: 0 });

function addTo(s: Sums, r: TradeRec): void {
  if (r.buy) {
    s.bn += r.vn;
    s.bu += r.vu;
    s.bc += 1;
  } else {
    s.sn += r.vn;
    s.su += r.vu;
    s.sc += 1;
  }
}

function windowObject(s: Sums, ref: Dec | undefined, last: Dec | undefined): StatsWindowObject {
  const change = ref !== undefined && last !== undefined ? pctChange(ref, last) : ZERO;
  return {
    priceChangePct: decText(change),
    volume: { native: decText(s.bn + s.sn), usd: decText(s.bu + s.su) },
    buyCount: s.bc,
    sellCount: s.sc,
    buyVolume: { native: decText(s.bn), usd: decText(s.bu) },
    sellVolume: { native: decText(s.sn), usd: decText(s.su) },
  };
}

/**
 * The trades of one event time, summed: the sums the windows add and remove, and the USD price of
 * its first and last trade by seq (the windows' price references).
 */
export interface TimeBucket {
  t: number;
  /** Seq and USD price of its first and last trade. */
  fs: number;
  fp: Dec;
  ls: number;
  lp: Dec;
  bc: number;
  sc: number;
  bn: Dec;
  bu: Dec;
  sn: Dec;
  su: Dec;
}

function bucketOf(r: TradeRec): TimeBucket {
  return r.buy
    ? { t: r.t, fs: r.seq, fp: r.pu, ls: r.seq, lp: r.pu, bc: 1, sc: 0, bn: r.vn, bu: r.vu, sn: ZERO, su: ZERO }
    : { t: r.t, fs: r.seq, fp: r.pu, ls: r.seq, lp: r.pu, bc: 0, sc: 1, bn: ZERO, bu: ZERO, sn: r.vn, su: r.vu };
}

function mergeInto(b: TimeBucket, r: TradeRec): void {
  if (r.buy) {
    b.bn += r.vn;
    b.bu += r.vu;
    b.bc += 1;
  } else {
    b.sn += r.vn;
    b.su += r.vu;
    b.sc += 1;
  }
  if (r.seq < b.fs) {
    b.fs = r.seq;
    b.fp = r.pu;
  }
  if (r.seq > b.ls) {
    b.ls = r.seq;
    b.lp = r.pu;
  }
}

function removeBucket(s: Sums, b: TimeBucket): void {
  s.bn -= b.bn;
  s.bu -= b.bu;
  s.sn -= b.sn;
  s.su -= b.su;
  s.bc -= b.bc;
  s.sc -= b.sc;
}

/** Incremental windows of one token: plain data (snapshots serialise it as is). */
export interface TradeWindow {
  /** One bucket per distinct event time, ascending; one bucket older than the 24h window is kept (its reference). */
  buckets: TimeBucket[];
  /** Absolute index into buckets of each window's first bucket inside it. */
  heads: number[];
  sums: Sums[];
  /** Stats time: only moves forward. */
  t: number;
}

export function newTradeWindow(): TradeWindow {
  return { buckets: [], heads: SIZES.map(() => 0), sums: SIZES.map(emptySums), t: 0 };
}

/** Buckets dropped at once when at least this many lie before the 24h reference (amortises the splice). */
const TRIM_AT = 64;

/** Moves the stats time forward to t, expiring buckets out of each window. */
export function advance(win: TradeWindow, t: number): void {
  if (t <= win.t) return;
  win.t = t;
  const { buckets } = win;
  for (let i = 0; i < SIZES.length; i++) {
    const from = t - SIZES[i]!;
    let head = win.heads[i]!;
    const sums = win.sums[i]!;
    while (head < buckets.length && buckets[head]!.t <= from) removeBucket(sums, buckets[head++]!);
    win.heads[i] = head;
  }
  // Keep one bucket before the longest window: the 24h reference price.
  const keepFrom = win.heads[SIZES.length - 1]! - 1;
  if (keepFrom >= TRIM_AT && keepFrom * 2 >= buckets.length) {
    buckets.splice(0, keepFrom);
    for (let i = 0; i < win.heads.length; i++) win.heads[i]! -= keepFrom;
  }
}

/** Adds a trade (stats time moves to its time when later); a late trade joins its time's bucket. */
export function insert(win: TradeWindow, rec: TradeRec): void {
  advance(win, rec.t);
  const { buckets } = win;
  let pos = buckets.length;
  while (pos > 0 && buckets[pos - 1]!.t > rec.t) pos--;
  const same = pos > 0 && buckets[pos - 1]!.t === rec.t;
  if (same) mergeInto(buckets[pos - 1]!, rec);
  else if (pos === buckets.length) buckets.push(bucketOf(rec));
  else buckets.splice(pos, 0, bucketOf(rec));
  for (let i = 0; i < SIZES.length; i++) {
    // Not inside (t − w, t]: its bucket sorts before the head (a new one moves the head past it).
    if (rec.t <= win.t - SIZES[i]!) {
      if (!same) win.heads[i]! += 1;
    } else addTo(win.sums[i]!, rec);
  }
}

/** Stats at the window's current time; equals statsAt over every trade inserted. */
export function windowStats(win: TradeWindow): Record<StatsWindow, StatsWindowObject> {
  const { buckets } = win;
  const last = buckets.length > 0 ? buckets[buckets.length - 1]!.lp : undefined;
  const out = {} as Record<StatsWindow, StatsWindowObject>;
  STATS_WINDOWS.forEach((w, i) => {
    const head = win.heads[i]!;
    const ref = head < buckets.length ? (head > 0 ? buckets[head - 1]!.lp : buckets[head]!.fp) : last;
    out[w] = windowObject(win.sums[i]!, ref, last);
  });
  return out;
}

/** Event time of the newest trade (-Infinity before the first). */
export function lastTradeTime(win: TradeWindow): number {
  const { buckets } = win;
  return buckets.length > 0 ? buckets[buckets.length - 1]!.t : Number.NEGATIVE_INFINITY;
}

/** The earliest event time at which some window loses a bucket (Infinity when none can). */
export function nextExpiry(win: TradeWindow): number {
  let next = Infinity;
  for (let i = 0; i < SIZES.length; i++) {
    const head = win.heads[i]!;
    if (head < win.buckets.length) next = Math.min(next, win.buckets[head]!.t + SIZES[i]!);
  }
  return next;
}

/** True when the 24h window still holds a trade (the token's stats can still decay). */
export function hasWindowTrades(win: TradeWindow): boolean {
  return win.heads[SIZES.length - 1]! < win.buckets.length;
}

export const LONGEST_WINDOW_MS = LONGEST;
