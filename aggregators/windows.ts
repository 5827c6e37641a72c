// Trailing-window stats (5m, 30m, 1h, 6h, 24h) by event time. statsAt is the pure definition over
// trade records; TradeWindow keeps the same numbers incrementally from per-token buckets whose
// granularity grows with their age (1 s for the last 5 min, then 5 s, 15 s and 60 s), so a token
// holds a few thousand buckets at most whatever its trade count (docs/numbers.md, "Stats").
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
const SECOND = 1000;

/** Bucket granularities by age: level k holds granules of GRANULES[k] ms (each divides the next). */
const GRANULES = [1_000, 5_000, 15_000, 60_000];
/** The granularity each window's start is aligned to (that of the bucket region holding it). */
const WINDOW_GRANULE: Record<StatsWindow, number> = {
  '5m': 1_000,
  '30m': 5_000,
  '1h': 5_000,
  '6h': 15_000,
  '24h': 60_000,
};
const STEPS = STATS_WINDOWS.map((w) => WINDOW_GRANULE[w]);

const floorTo = (x: number, g: number) => Math.floor(x / g) * g;

/** The whole second of an event time: trades are bucketed and windowed by it. */
export const tradeSecond = (t: number) => floorTo(t, SECOND);

/**
 * Aligned start of window i at stats time t: the start of the window's granule that holds the
 * first whole second after t − w. The window is every trade whose second is at or after it (exact
 * for 5m; up to one granule minus a second more than w for the others, never less).
 */
function alignedStart(t: number, i: number): number {
  return floorTo(tradeSecond(t - SIZES[i]!) + SECOND, STEPS[i]!);
}

/**
 * Cut of level k ≥ 1 at stats time t: seconds before it are in granules of level k or coarser.
 * It is at or before the aligned start of every window with a finer granularity, so no bucket
 * straddles a window's start.
 */
function cutsAt(t: number): number[] {
  return GRANULES.map((g, k) => {
    if (k === 0) return Number.POSITIVE_INFINITY;
    let from = Number.POSITIVE_INFINITY;
    for (let i = 0; i < SIZES.length; i++) if (STEPS[i]! < g) from = Math.min(from, alignedStart(t, i));
    return floorTo(from, g);
  });
}

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

/**
 * Stats of every window at stats time t, from records sorted by (t, seq): the trades at or
 * before t whose second is at or after the window's aligned start. priceChangePct compares the
 * USD price of the last trade at or before t with the reference: the last trade before the
 * aligned start, or, when none is that old, the first trade inside the window; zero when the
 * reference USD price is zero.
 */
export function statsAt(trades: readonly TradeRec[], t: number): Record<StatsWindow, StatsWindowObject> {
  let end = trades.length; // first index with time > t
  while (end > 0 && trades[end - 1]!.t > t) end--;
  const out = {} as Record<StatsWindow, StatsWindowObject>;
  STATS_WINDOWS.forEach((w, i) => {
    const from = alignedStart(t, i);
    let head = end;
    while (head > 0 && tradeSecond(trades[head - 1]!.t) >= from) head--;
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
 * The trades of one granule [b, b + granularity), summed: the sums the windows add and remove,
 * and the time, seq and USD price of its first and last trade by (t, seq) (the price references).
 * Those times are kept as ms after b: small integers, not one heap number more per bucket.
 */
export interface TimeBucket extends Sums {
  b: number;
  fo: number;
  fs: number;
  fp: Dec;
  lo: number;
  ls: number;
  lp: Dec;
}

function bucketOf(r: TradeRec, b: number): TimeBucket {
  // One literal with every field (no spread): one compact object shape for every bucket.
  const o = r.t - b;
  return r.buy
    ? {
        b,
        fo: o,
        fs: r.seq,
        fp: r.pu,
        lo: o,
        ls: r.seq,
        lp: r.pu,
        bn: r.vn,
        bu: r.vu,
        sn: ZERO,
        su: ZERO,
        bc: 1,
        sc: 0,
      }
    : {
        b,
        fo: o,
        fs: r.seq,
        fp: r.pu,
        lo: o,
        ls: r.seq,
        lp: r.pu,
        bn: ZERO,
        bu: ZERO,
        sn: r.vn,
        su: r.vu,
        bc: 0,
        sc: 1,
      };
}

/** Moves a bucket's start back to the granule start b (its trades' times stay). */
function rebase(bucket: TimeBucket, b: number): void {
  bucket.fo += bucket.b - b;
  bucket.lo += bucket.b - b;
  bucket.b = b;
}

/** Adds bucket m's trades to a (an exact merge: sums add, the first and last trades kept). */
function mergeBucket(a: TimeBucket, m: TimeBucket): void {
  addSums(a, m);
  const af = a.b + a.fo,
    mf = m.b + m.fo;
  if (mf < af || (mf === af && m.fs < a.fs)) {
    a.fo = mf - a.b;
    a.fs = m.fs;
    a.fp = m.fp;
  }
  const al = a.b + a.lo,
    ml = m.b + m.lo;
  if (ml > al || (ml === al && m.ls > a.ls)) {
    a.lo = ml - a.b;
    a.ls = m.ls;
    a.lp = m.lp;
  }
}

function addSums(s: Sums, b: Sums): void {
  s.bn += b.bn;
  s.bu += b.bu;
  s.sn += b.sn;
  s.su += b.su;
  s.bc += b.bc;
  s.sc += b.sc;
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
  /** Buckets by start, ascending; one bucket before the 24h window is kept (its reference). */
  buckets: TimeBucket[];
  /** Absolute index into buckets of each window's first bucket inside it. */
  heads: number[];
  sums: Sums[];
  /** Level cuts at the stats time (cutsAt): they only move forward, merging buckets. */
  cuts: number[];
  /** Stats time: only moves forward. */
  t: number;
}

export function newTradeWindow(): TradeWindow {
  return { buckets: [], heads: SIZES.map(() => 0), sums: SIZES.map(emptySums), cuts: cutsAt(0), t: 0 };
}

/** First index whose bucket starts at or after b. */
function lowerBound(buckets: readonly TimeBucket[], b: number): number {
  let lo = 0,
    hi = buckets.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (buckets[mid]!.b < b) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Merges the buckets starting in [from, to) (both multiples of g) into granules of g; true when any merged. */
function coarsen(buckets: TimeBucket[], from: number, to: number, g: number): boolean {
  const first = lowerBound(buckets, from);
  const end = lowerBound(buckets, to);
  let kept = first;
  for (let k = first; k < end; k++) {
    const bucket = buckets[k]!;
    const start = floorTo(bucket.b, g);
    if (kept > first && buckets[kept - 1]!.b === start) mergeBucket(buckets[kept - 1]!, bucket);
    else {
      rebase(bucket, start);
      buckets[kept++] = bucket;
    }
  }
  if (kept === end) return false;
  buckets.splice(kept, end - kept);
  return true;
}

/** Buckets dropped at once when this many lie before the 24h reference (one short splice per ~64 min). */
const TRIM_AT = 64;

/** Moves the stats time forward to t: windows lose the buckets before their start, aged buckets merge. */
export function advance(win: TradeWindow, t: number): void {
  if (t <= win.t) return;
  win.t = t;
  const { buckets } = win;
  for (let i = 0; i < SIZES.length; i++) {
    const from = alignedStart(t, i);
    let head = win.heads[i]!;
    const sums = win.sums[i]!;
    while (head < buckets.length && buckets[head]!.b < from) removeBucket(sums, buckets[head++]!);
    win.heads[i] = head;
  }
  // Coarsest level first: what it takes is not merged again at a finer one. No merged bucket
  // straddles a window start, so the sums stand; only the heads move.
  const cuts = cutsAt(t);
  let merged = false;
  for (let k = GRANULES.length - 1; k >= 1; k--) {
    const from = k === GRANULES.length - 1 ? win.cuts[k]! : Math.max(win.cuts[k]!, cuts[k + 1]!);
    if (cuts[k]! > from) merged = coarsen(buckets, from, cuts[k]!, GRANULES[k]!) || merged;
  }
  win.cuts = cuts;
  if (merged) for (let i = 0; i < SIZES.length; i++) win.heads[i] = lowerBound(buckets, alignedStart(t, i));
  // Keep one bucket before the longest window: the 24h reference price.
  const keepFrom = win.heads[SIZES.length - 1]! - 1;
  if (keepFrom >= TRIM_AT) {
    buckets.splice(0, keepFrom);
    for (let i = 0; i < win.heads.length; i++) win.heads[i]! -= keepFrom;
  }
}

/** Adds a trade (stats time moves to its time when later); a late trade joins its granule's bucket. */
export function insert(win: TradeWindow, rec: TradeRec): void {
  advance(win, rec.t);
  addBucket(win, bucketOf(rec, tradeSecond(rec.t)));
}

/** Adds a bucket of trades of one second at or before the stats time, into the granule its age calls for. */
function addBucket(win: TradeWindow, bucket: TimeBucket): void {
  let level = 0;
  while (level + 1 < GRANULES.length && bucket.b < win.cuts[level + 1]!) level++;
  rebase(bucket, floorTo(bucket.b, GRANULES[level]!));
  const { buckets } = win;
  const pos = lowerBound(buckets, bucket.b);
  const same = pos < buckets.length && buckets[pos]!.b === bucket.b;
  if (same) mergeBucket(buckets[pos]!, bucket);
  else if (pos === buckets.length) buckets.push(bucket);
  else buckets.splice(pos, 0, bucket);
  for (let i = 0; i < SIZES.length; i++) {
    // Before the window's start: its bucket sorts before the head (a new one moves the head past it).
    if (bucket.b < alignedStart(win.t, i)) {
      if (!same) win.heads[i]! += 1;
    } else addSums(win.sums[i]!, bucket);
  }
}

/**
 * Windows of the previous format (one bucket per distinct event time, before the 5-second and
 * coarser granules) rebuilt in this one, at that window's stats time.
 */
export function windowFromTimeBuckets(old: {
  buckets: Array<Sums & { t: number; fs: number; fp: Dec; ls: number; lp: Dec }>;
  t: number;
}): TradeWindow {
  const win = newTradeWindow();
  advance(win, old.t);
  for (const o of old.buckets) {
    const { t, fs, fp, ls, lp, bn, bu, sn, su, bc, sc } = o;
    const b = tradeSecond(t);
    addBucket(win, { b, fo: t - b, fs, fp, lo: t - b, ls, lp, bn, bu, sn, su, bc, sc });
  }
  return win;
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
  const newest = buckets[buckets.length - 1];
  return newest ? newest.b + newest.lo : Number.NEGATIVE_INFINITY;
}

/** The earliest event time at which some window loses a bucket (Infinity when none can). */
export function nextExpiry(win: TradeWindow): number {
  let next = Infinity;
  for (let i = 0; i < SIZES.length; i++) {
    const head = win.heads[i]!;
    if (head >= win.buckets.length) continue;
    // alignedStart passes the head's granule g once t − w reaches its end minus a second.
    const g = STEPS[i]!;
    next = Math.min(next, floorTo(win.buckets[head]!.b, g) + g - SECOND + SIZES[i]!);
  }
  return next;
}

/** True when the 24h window still holds a trade (the token's stats can still decay). */
export function hasWindowTrades(win: TradeWindow): boolean {
  return win.heads[SIZES.length - 1]! < win.buckets.length;
}
