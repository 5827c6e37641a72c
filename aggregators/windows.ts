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
 * Those times are ms after b. The window holds its buckets in columns (TradeWindow); this object
 * form is a bucket read out of them, or one of an older snapshot's.
 */
export interface TimeBucket extends Sums {
  b: number;
  fo: number;
  fs: number;
  lo: number;
  ls: number;
  fp: Dec;
  lp: Dec;
}

// A bucket's numbers in TradeWindow.nums, NUMS per bucket: its start, the first and last trade's
// offset and seq, the buy and sell counts. All are integers well inside a double's exact range.
const NUMS = 7;
const B = 0;
const FO = 1;
const FS = 2;
const LO = 3;
const LS = 4;
const BC = 5;
const SC = 6;
// Its decimals, DECS per bucket: first and last USD price, buy and sell volumes (native, USD).
const DECS = 6;
const FP = 0;
const LP = 1;
const BN = 2;
const BU = 3;
const SN = 4;
const SU = 5;
/** Limbs of 64 bits per decimal in TradeWindow.limbs: values below 2^128 (3.4e8 at 30 decimals). */
const LIMBS = 2;
const LIMB_BITS = 64n;
const LIMB_MAX = 1n << (LIMB_BITS * BigInt(LIMBS));

/**
 * Incremental windows of one token: plain data (snapshots serialise it as is). Its buckets are
 * columns in typed arrays: a bucket as an object with its bigints took about 290 B of heap, most
 * of a live token's memory on a market trading across thousands of tokens (docs/memory.md).
 */
export interface TradeWindow {
  /** Buckets held, by start ascending (one before the 24h window is kept: its reference). */
  n: number;
  /** NUMS numbers per bucket; its length is the capacity. */
  nums: Float64Array;
  /** The decimals as LIMBS limbs each, low first; null once one is negative or too large for them. */
  limbs: BigUint64Array | null;
  /** The decimals as bigints, DECS per bucket, when `limbs` cannot hold one. */
  wide: Dec[] | null;
  /** Index of each window's first bucket inside it. */
  heads: number[];
  sums: Sums[];
  /** Level cuts at the stats time (cutsAt): they only move forward, merging buckets. */
  cuts: number[];
  /** Stats time: only moves forward. */
  t: number;
}

const INITIAL_CAPACITY = 4;

export function newTradeWindow(): TradeWindow {
  return {
    n: 0,
    nums: new Float64Array(INITIAL_CAPACITY * NUMS),
    limbs: new BigUint64Array(INITIAL_CAPACITY * DECS * LIMBS),
    wide: null,
    heads: SIZES.map(() => 0),
    sums: SIZES.map(emptySums),
    cuts: cutsAt(0),
    t: 0,
  };
}

const capacityOf = (win: TradeWindow) => win.nums.length / NUMS;

function decAt(win: TradeWindow, i: number, d: number): Dec {
  const { limbs } = win;
  if (!limbs) return win.wide![i * DECS + d]!;
  const j = (i * DECS + d) * LIMBS;
  const high = limbs[j + 1]!;
  return high === 0n ? limbs[j]! : (high << LIMB_BITS) | limbs[j]!;
}

function setDec(win: TradeWindow, i: number, d: number, value: Dec): void {
  if (win.limbs && (value < 0n || value >= LIMB_MAX)) widen(win);
  const { limbs } = win;
  if (!limbs) {
    win.wide![i * DECS + d] = value;
    return;
  }
  const j = (i * DECS + d) * LIMBS;
  // A BigUint64Array keeps the low 64 bits of what it is given.
  limbs[j] = value;
  limbs[j + 1] = value >> LIMB_BITS;
}

/** The decimals as bigints from now on: a value the limbs cannot hold (exactness first). */
function widen(win: TradeWindow): void {
  const wide: Dec[] = new Array(capacityOf(win) * DECS).fill(ZERO);
  for (let i = 0; i < win.n; i++) for (let d = 0; d < DECS; d++) wide[i * DECS + d] = decAt(win, i, d);
  win.wide = wide;
  win.limbs = null;
}

/** Room for `capacity` buckets (at least those held). */
function resize(win: TradeWindow, capacity: number): void {
  const nums = new Float64Array(capacity * NUMS);
  nums.set(win.nums.subarray(0, win.n * NUMS));
  win.nums = nums;
  if (win.limbs) {
    const limbs = new BigUint64Array(capacity * DECS * LIMBS);
    limbs.set(win.limbs.subarray(0, win.n * DECS * LIMBS));
    win.limbs = limbs;
  } else win.wide!.length = capacity * DECS;
}

/** Opens an empty slot at index pos (the buckets from pos move up one). */
function openSlot(win: TradeWindow, pos: number): void {
  if (win.n === capacityOf(win)) resize(win, win.n + (win.n >> 1) + INITIAL_CAPACITY);
  const { nums, limbs } = win;
  nums.copyWithin((pos + 1) * NUMS, pos * NUMS, win.n * NUMS);
  if (limbs) limbs.copyWithin((pos + 1) * DECS * LIMBS, pos * DECS * LIMBS, win.n * DECS * LIMBS);
  else win.wide!.copyWithin((pos + 1) * DECS, pos * DECS, win.n * DECS);
  win.n++;
}

/** Removes the buckets at indexes [from, to); the array shrinks when it holds a quarter of its room. */
function removeSlots(win: TradeWindow, from: number, to: number): void {
  const { nums, limbs } = win;
  nums.copyWithin(from * NUMS, to * NUMS, win.n * NUMS);
  if (limbs) limbs.copyWithin(from * DECS * LIMBS, to * DECS * LIMBS, win.n * DECS * LIMBS);
  else win.wide!.copyWithin(from * DECS, to * DECS, win.n * DECS);
  win.n -= to - from;
  if (limbs) limbs.fill(0n, win.n * DECS * LIMBS, (win.n + to - from) * DECS * LIMBS);
  else win.wide!.fill(ZERO, win.n * DECS, (win.n + to - from) * DECS);
  nums.fill(0, win.n * NUMS, (win.n + to - from) * NUMS);
  const capacity = capacityOf(win);
  if (capacity > 4 * INITIAL_CAPACITY && win.n * 4 < capacity) resize(win, win.n + (win.n >> 1) + INITIAL_CAPACITY);
}

const startOf = (win: TradeWindow, i: number) => win.nums[i * NUMS + B]!;

/** Bucket i as an object (tools, tests and the conversions below). */
export function bucketAt(win: TradeWindow, i: number): TimeBucket {
  const k = i * NUMS;
  const { nums } = win;
  return {
    b: nums[k + B]!,
    fo: nums[k + FO]!,
    fs: nums[k + FS]!,
    lo: nums[k + LO]!,
    ls: nums[k + LS]!,
    fp: decAt(win, i, FP),
    lp: decAt(win, i, LP),
    bn: decAt(win, i, BN),
    bu: decAt(win, i, BU),
    sn: decAt(win, i, SN),
    su: decAt(win, i, SU),
    bc: nums[k + BC]!,
    sc: nums[k + SC]!,
  };
}

/** Buckets held. */
export const bucketCount = (win: TradeWindow): number => win.n;

/** Every bucket as an object, oldest first. */
export const bucketsOf = (win: TradeWindow): TimeBucket[] => Array.from({ length: win.n }, (_, i) => bucketAt(win, i));

function writeBucket(win: TradeWindow, i: number, m: TimeBucket): void {
  const k = i * NUMS;
  const { nums } = win;
  nums[k + B] = m.b;
  nums[k + FO] = m.fo;
  nums[k + FS] = m.fs;
  nums[k + LO] = m.lo;
  nums[k + LS] = m.ls;
  nums[k + BC] = m.bc;
  nums[k + SC] = m.sc;
  setDec(win, i, FP, m.fp);
  setDec(win, i, LP, m.lp);
  setDec(win, i, BN, m.bn);
  setDec(win, i, BU, m.bu);
  setDec(win, i, SN, m.sn);
  setDec(win, i, SU, m.su);
}

function bucketOf(r: TradeRec, b: number): TimeBucket {
  const o = r.t - b;
  return {
    b,
    fo: o,
    fs: r.seq,
    lo: o,
    ls: r.seq,
    fp: r.pu,
    lp: r.pu,
    bn: r.buy ? r.vn : ZERO,
    bu: r.buy ? r.vu : ZERO,
    sn: r.buy ? ZERO : r.vn,
    su: r.buy ? ZERO : r.vu,
    bc: r.buy ? 1 : 0,
    sc: r.buy ? 0 : 1,
  };
}

/** Moves bucket i's start back to the granule start b (its trades' times stay). */
function rebaseAt(win: TradeWindow, i: number, b: number): void {
  const k = i * NUMS;
  const { nums } = win;
  const shift = nums[k + B]! - b;
  nums[k + FO]! += shift;
  nums[k + LO]! += shift;
  nums[k + B] = b;
}

/** Adds bucket m's trades to bucket i (an exact merge: sums add, the first and last trades kept). */
function mergeInto(win: TradeWindow, i: number, m: TimeBucket): void {
  const k = i * NUMS;
  const { nums } = win;
  const b = nums[k + B]!;
  if (m.bc > 0) {
    setDec(win, i, BN, decAt(win, i, BN) + m.bn);
    setDec(win, i, BU, decAt(win, i, BU) + m.bu);
    nums[k + BC]! += m.bc;
  }
  if (m.sc > 0) {
    setDec(win, i, SN, decAt(win, i, SN) + m.sn);
    setDec(win, i, SU, decAt(win, i, SU) + m.su);
    nums[k + SC]! += m.sc;
  }
  const af = b + nums[k + FO]!,
    mf = m.b + m.fo;
  if (mf < af || (mf === af && m.fs < nums[k + FS]!)) {
    nums[k + FO] = mf - b;
    nums[k + FS] = m.fs;
    setDec(win, i, FP, m.fp);
  }
  const al = b + nums[k + LO]!,
    ml = m.b + m.lo;
  if (ml > al || (ml === al && m.ls > nums[k + LS]!)) {
    nums[k + LO] = ml - b;
    nums[k + LS] = m.ls;
    setDec(win, i, LP, m.lp);
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

/** Takes bucket i's trades out of a window's sums. */
function removeBucketAt(s: Sums, win: TradeWindow, i: number): void {
  const k = i * NUMS;
  const bc = win.nums[k + BC]!,
    sc = win.nums[k + SC]!;
  if (bc > 0) {
    s.bn -= decAt(win, i, BN);
    s.bu -= decAt(win, i, BU);
    s.bc -= bc;
  }
  if (sc > 0) {
    s.sn -= decAt(win, i, SN);
    s.su -= decAt(win, i, SU);
    s.sc -= sc;
  }
}

/** First index whose bucket starts at or after b. */
function lowerBound(win: TradeWindow, b: number): number {
  let lo = 0,
    hi = win.n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (startOf(win, mid) < b) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Merges the buckets starting in [from, to) (both multiples of g) into granules of g; true when any merged. */
function coarsen(win: TradeWindow, from: number, to: number, g: number): boolean {
  const first = lowerBound(win, from);
  const end = lowerBound(win, to);
  let kept = first;
  for (let k = first; k < end; k++) {
    const start = floorTo(startOf(win, k), g);
    if (kept > first && startOf(win, kept - 1) === start) mergeInto(win, kept - 1, bucketAt(win, k));
    else {
      if (kept !== k) writeBucket(win, kept, bucketAt(win, k));
      rebaseAt(win, kept++, start);
    }
  }
  if (kept === end) return false;
  removeSlots(win, kept, end);
  return true;
}

/** Buckets dropped at once when this many lie before the 24h reference (one short splice per ~64 min). */
const TRIM_AT = 64;

/** Moves the stats time forward to t: windows lose the buckets before their start, aged buckets merge. */
export function advance(win: TradeWindow, t: number): void {
  if (t <= win.t) return;
  win.t = t;
  for (let i = 0; i < SIZES.length; i++) {
    const from = alignedStart(t, i);
    let head = win.heads[i]!;
    const sums = win.sums[i]!;
    while (head < win.n && startOf(win, head) < from) removeBucketAt(sums, win, head++);
    win.heads[i] = head;
  }
  // Coarsest level first: what it takes is not merged again at a finer one. No merged bucket
  // straddles a window start, so the sums stand; only the heads move.
  const cuts = cutsAt(t);
  let merged = false;
  for (let k = GRANULES.length - 1; k >= 1; k--) {
    const from = k === GRANULES.length - 1 ? win.cuts[k]! : Math.max(win.cuts[k]!, cuts[k + 1]!);
    if (cuts[k]! > from) merged = coarsen(win, from, cuts[k]!, GRANULES[k]!) || merged;
  }
  win.cuts = cuts;
  if (merged) for (let i = 0; i < SIZES.length; i++) win.heads[i] = lowerBound(win, alignedStart(t, i));
  // Keep one bucket before the longest window: the 24h reference price.
  const keepFrom = win.heads[SIZES.length - 1]! - 1;
  if (keepFrom >= TRIM_AT) {
    removeSlots(win, 0, keepFrom);
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
  const b = floorTo(bucket.b, GRANULES[level]!);
  bucket.fo += bucket.b - b;
  bucket.lo += bucket.b - b;
  bucket.b = b;
  const pos = lowerBound(win, b);
  const same = pos < win.n && startOf(win, pos) === b;
  if (same) mergeInto(win, pos, bucket);
  else {
    openSlot(win, pos);
    writeBucket(win, pos, bucket);
  }
  for (let i = 0; i < SIZES.length; i++) {
    // Before the window's start: its bucket sorts before the head (a new one moves the head past it).
    if (b < alignedStart(win.t, i)) {
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

/** Windows whose buckets were objects (before 2026-12-03) in columns, unchanged otherwise. */
export function windowFromBucketObjects(
  old: Omit<TradeWindow, 'n' | 'nums' | 'limbs' | 'wide'> & { buckets: TimeBucket[] },
): TradeWindow {
  const { buckets, heads, sums, cuts, t } = old;
  const win: TradeWindow = { ...newTradeWindow(), heads, sums, cuts, t };
  resize(win, buckets.length + INITIAL_CAPACITY);
  win.n = buckets.length;
  buckets.forEach((bucket, i) => writeBucket(win, i, bucket));
  return win;
}

/** Stats at the window's current time; equals statsAt over every trade inserted. */
export function windowStats(win: TradeWindow): Record<StatsWindow, StatsWindowObject> {
  const n = win.n;
  const last = n > 0 ? decAt(win, n - 1, LP) : undefined;
  const out = {} as Record<StatsWindow, StatsWindowObject>;
  STATS_WINDOWS.forEach((w, i) => {
    const head = win.heads[i]!;
    const ref = head < n ? (head > 0 ? decAt(win, head - 1, LP) : decAt(win, head, FP)) : last;
    out[w] = windowObject(win.sums[i]!, ref, last);
  });
  return out;
}

/** Event time of the newest trade (-Infinity before the first). */
export function lastTradeTime(win: TradeWindow): number {
  if (win.n === 0) return Number.NEGATIVE_INFINITY;
  const k = (win.n - 1) * NUMS;
  return win.nums[k + B]! + win.nums[k + LO]!;
}

/** The earliest event time at which some window loses a bucket (Infinity when none can). */
export function nextExpiry(win: TradeWindow): number {
  let next = Infinity;
  for (let i = 0; i < SIZES.length; i++) {
    const head = win.heads[i]!;
    if (head >= win.n) continue;
    // alignedStart passes the head's granule g once t − w reaches its end minus a second.
    const g = STEPS[i]!;
    next = Math.min(next, floorTo(startOf(win, head), g) + g - SECOND + SIZES[i]!);
  }
  return next;
}

/** True when the 24h window still holds a trade (the token's stats can still decay). */
export function hasWindowTrades(win: TradeWindow): boolean {
  return win.heads[SIZES.length - 1]! < win.n;
}
