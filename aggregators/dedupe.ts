// Redelivered swaps: per token, the ids of its recent trades (id → event time, in arrival order).
// A swap redelivered (a source re-reading blocks after a restart, a producer retry) is recognised
// while its id is among its token's last RECENT_IDS_CAP trades and within DEDUPE_HORIZON_MS of
// event time of the newest one, or among its last RECENT_IDS_FLOOR trades whatever their age.
// Ids are not kept for 24 h: their memory is bounded per token. Past FORGET_EVERY ids, old ones
// are forgotten every FORGET_EVERY trades, so up to that many more are remembered (recognised
// longer, never shorter).
//
// An id is remembered by a 96-bit digest of it (idKey), not its text: a trade id (chain,
// transaction hash, event index) is a 75-100 character string, about 100-120 B of heap each, and
// the ids of the live rate were the main thread's second largest growth after a mainnet start
// (9 MB over minutes 2-6). Two ids of one token share a digest with a chance of about 2^-84 a swap.
// Maps written before the digest (snapshots, parked, evicted or stored tokens) are converted as
// they are read (upgrade.ts, digestIds), so a lookup is one digest.

export const DEDUPE_HORIZON_MS = 10 * 60_000;
export const RECENT_IDS_CAP = 4096;
export const RECENT_IDS_FLOOR = 16;
/**
 * Trades between passes over the oldest ids. A Map keeps deleted entries as holes that iteration
 * walks until V8 rehashes it, so a pass per trade walked ~2,000 holes on a busy token: 1.7 against
 * 0.3 µs a trade with a pass every 64 (4,096 ids, one in, one out).
 */
export const FORGET_EVERY = 64;

/** Seven UTF-16 units of 15 bits above U+1000 (no surrogates, no control characters). */
const KEY_UNIT_BASE = 0x1000;

function finalMix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The key an id is remembered by: three independent 32-bit hashes of its text, 96 bits in 7 units. */
export function idKey(id: string): string {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  let c = 0x2c1b3c6d;
  for (let i = 0; i < id.length; i++) {
    const unit = id.charCodeAt(i);
    a = Math.imul(a ^ unit, 0x01000193);
    b = Math.imul(b ^ unit, 0x5bd1e995);
    b ^= b >>> 15;
    c = Math.imul(c + unit, 0xcc9e2d51);
    c = (c << 13) | (c >>> 19);
  }
  a = finalMix(a ^ id.length);
  b = finalMix(b + Math.imul(id.length, 0x27d4eb2f));
  c = finalMix(c ^ 0x165667b1);
  return String.fromCharCode(
    KEY_UNIT_BASE + (a & 0x7fff),
    KEY_UNIT_BASE + ((a >>> 15) & 0x7fff),
    KEY_UNIT_BASE + ((a >>> 30) | ((b & 0x1fff) << 2)),
    KEY_UNIT_BASE + ((b >>> 13) & 0x7fff),
    KEY_UNIT_BASE + ((b >>> 28) | ((c & 0x7ff) << 4)),
    KEY_UNIT_BASE + ((c >>> 11) & 0x7fff),
    KEY_UNIT_BASE + (c >>> 26),
  );
}

const isIdKey = (key: string) => key.length === 7 && key.charCodeAt(0) >= KEY_UNIT_BASE;

/**
 * `ids` with every key a digest, in the same order: full ids (written before the digest) converted.
 * Full ids only ever precede digests in a map's order, so its first key tells (every unpark reads it).
 */
export function digestIds(ids: Map<string, number>): Map<string, number> {
  const first = ids.keys().next();
  if (first.done || isIdKey(first.value)) return ids;
  const digested = new Map<string, number>();
  for (const [id, time] of ids) digested.set(isIdKey(id) ? id : idKey(id), time);
  return digested;
}

/** True when `id` was seen; otherwise records it (by idKey) at `time`. */
export function seenBefore(ids: Map<string, number>, id: string, time: number): boolean {
  const key = idKey(id);
  if (ids.has(key)) return true;
  ids.set(key, time);
  return false;
}

/** Forgets the ids past the dedupe horizon of `now` (the token's newest trade); see FORGET_EVERY. */
export function forgetOldIds(ids: Map<string, number>, now: number): void {
  // Small maps (most tokens) pass every trade: few holes, and they stay small. Above that the size
  // steps by one per trade between passes, a deterministic cadence kept across snapshots; past the
  // cap by FORGET_EVERY a pass runs whatever the size, so the bound holds regardless.
  const size = ids.size;
  if (size > FORGET_EVERY && size % FORGET_EVERY !== 0 && size < RECENT_IDS_CAP + FORGET_EVERY) return;
  const horizon = now - DEDUPE_HORIZON_MS;
  for (const [id, time] of ids) {
    if (ids.size <= RECENT_IDS_FLOOR || (time > horizon && ids.size <= RECENT_IDS_CAP)) break;
    ids.delete(id);
  }
}
