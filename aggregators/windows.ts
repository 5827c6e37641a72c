// Trailing-window stats (5m, 30m, 1h, 6h, 24h) by event time over compact trade records.
// statsAt is the pure definition; TradeWindow keeps the same numbers incrementally (running sums
// and one head index per window) for a stats time that only moves forward.
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

/** One trade as the windows and late candle rebuilds need it; kept sorted by (t, seq). */
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
    out[w] = windowObject(sums, ref && head < end ? ref : last, last);
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

// Separate add and remove (no bigint multiplication by ±1n: each one allocates).
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

function removeFrom(s: Sums, r: TradeRec): void {
  if (r.buy) {
    s.bn -= r.vn;
    s.bu -= r.vu;
    s.bc -= 1;
  } else {
    s.sn -= r.vn;
    s.su -= r.vu;
    s.sc -= 1;
  }
}

function windowObject(s: Sums, ref: TradeRec | undefined, last: TradeRec | undefined): StatsWindowObject {
  const change = ref && last ? pctChange(ref.pu, last.pu) : ZERO;
  return {
    priceChangePct: decText(change),
    volume: { native: decText(s.bn + s.sn), usd: decText(s.bu + s.su) },
    buyCount: s.bc,
    sellCount: s.sc,
    buyVolume: { native: decText(s.bn), usd: decText(s.bu) },
    sellVolume: { native: decText(s.sn), usd: decText(s.su) },
  };
}

/** Incremental windows of one token: plain data (snapshots serialise it as is). */
export interface TradeWindow {
  recs: TradeRec[];
  /** Absolute index into recs of each window's first record inside it. */
  heads: number[];
  sums: Sums[];
  /** Stats time: only moves forward. */
  t: number;
  /** True once records older than the kept ones were dropped. */
  trimmed: boolean;
}

export function newTradeWindow(): TradeWindow {
  return { recs: [], heads: SIZES.map(() => 0), sums: SIZES.map(emptySums), t: 0, trimmed: false };
}

/** Moves the stats time forward to t, expiring records out of each window. */
export function advance(win: TradeWindow, t: number): void {
  if (t <= win.t) return;
  win.t = t;
  const { recs } = win;
  for (let i = 0; i < SIZES.length; i++) {
    const from = t - SIZES[i]!;
    let head = win.heads[i]!;
    const sums = win.sums[i]!;
    while (head < recs.length && recs[head]!.t <= from) removeFrom(sums, recs[head++]!);
    win.heads[i] = head;
  }
  // Keep one record before the longest window: the 24h reference price.
  const keepFrom = win.heads[SIZES.length - 1]! - 1;
  if (keepFrom > 256 && keepFrom * 2 > recs.length) {
    recs.splice(0, keepFrom);
    for (let i = 0; i < win.heads.length; i++) win.heads[i]! -= keepFrom;
    win.trimmed = true;
  }
}

/** Adds a trade (stats time moves to its time when later); late trades go to their sorted place. */
export function insert(win: TradeWindow, rec: TradeRec): void {
  advance(win, rec.t);
  const { recs } = win;
  let pos = recs.length;
  while (pos > 0 && before(rec, recs[pos - 1]!)) pos--;
  if (pos === recs.length) recs.push(rec);
  else recs.splice(pos, 0, rec);
  for (let i = 0; i < SIZES.length; i++) {
    // Not inside (t − w, t]: it sorts at or before the head, so the head moves past it.
    if (rec.t <= win.t - SIZES[i]!) win.heads[i]! += 1;
    else addTo(win.sums[i]!, rec);
  }
}

/** Stats at the window's current time; equals statsAt(recs, t) for the records kept. */
export function windowStats(win: TradeWindow): Record<StatsWindow, StatsWindowObject> {
  const { recs } = win;
  const last = recs.length > 0 ? recs[recs.length - 1] : undefined;
  const out = {} as Record<StatsWindow, StatsWindowObject>;
  STATS_WINDOWS.forEach((w, i) => {
    const head = win.heads[i]!;
    const ref = head < recs.length ? (head > 0 ? recs[head - 1] : recs[head]) : last;
    out[w] = windowObject(win.sums[i]!, ref, last);
  });
  return out;
}

/** The earliest event time at which some window loses a record (Infinity when none can). */
export function nextExpiry(win: TradeWindow): number {
  let next = Infinity;
  for (let i = 0; i < SIZES.length; i++) {
    const head = win.heads[i]!;
    if (head < win.recs.length) next = Math.min(next, win.recs[head]!.t + SIZES[i]!);
  }
  return next;
}

/** True when the 24h window still holds a trade (the token's stats can still decay). */
export function hasWindowTrades(win: TradeWindow): boolean {
  return win.heads[SIZES.length - 1]! < win.recs.length;
}

export const LONGEST_WINDOW_MS = LONGEST;
