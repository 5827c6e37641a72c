// Redelivered swaps: per token, the ids of its recent trades (with their event times, in arrival
// order). A swap redelivered (a source re-reading blocks after a restart, a producer retry) is
// recognised while its id is among its token's last RECENT_IDS_CAP trades and within
// DEDUPE_HORIZON_MS of event time of the newest one, or among its last RECENT_IDS_FLOOR trades
// whatever their age. Ids are not kept for 24 h: their memory is bounded per token. Past
// FORGET_EVERY ids, old ones are forgotten every FORGET_EVERY trades, so up to that many more are
// remembered (recognised longer, never shorter).
//
// An id is remembered by a 96-bit digest of it (three 32-bit hashes of its text), not its text: a
// trade id (chain, transaction hash, event index) is a 75-100 character string. Two ids of one
// token share a digest with a chance of about 2^-84 a swap. The digests and times sit in typed
// arrays per token (a ring in arrival order, 20 B a slot, and an open-addressing index into it,
// 8-16 B a slot): outside the JS heap, where a Map of digest strings took about 120 B of heap an id.
// Older states (a Map of ids in full or of 7-unit digest strings) are converted as they are read
// (upgrade.ts, recentIdsOf), so a lookup is one digest.

export const DEDUPE_HORIZON_MS = 10 * 60_000;
export const RECENT_IDS_CAP = 4096;
export const RECENT_IDS_FLOOR = 16;
/**
 * Trades between passes over the oldest ids, once a token holds more than this many: a pass at
 * a fixed cadence of the id count, kept across snapshots, so the ids a token remembers depend only
 * on its trades.
 */
export const FORGET_EVERY = 64;

/**
 * Where a token's index of its ids sits: a non-enumerable symbol key, which v8.serialize and deep
 * comparisons of states leave out.
 */
const INDEX = Symbol('recent ids index');

/**
 * A token's recent ids: plain data (a snapshot serialises it as it is). `words` holds three digest
 * words per slot of a ring of `times.length` slots, oldest at `head`, `size` of them held. The
 * index beside it is derived: a power of two of cells, at least twice the slots, each a slot + 1
 * or 0 (empty), probed linearly from the digest's first word. It is not serialised (its bytes
 * would not deflate in a parked token) and is built again on first use.
 */
export interface RecentIds {
  words: Uint32Array;
  times: Float64Array;
  head: number;
  size: number;
  [INDEX]?: Uint32Array;
}

const WORDS = 3;
const FIRST_SLOTS = 4;
/** The most a token holds when it is forgotten after every trade (forgetOldIds). */
const BOUNDED_SLOTS = RECENT_IDS_CAP + FORGET_EVERY;

/** Empty: a token that never traded keeps two empty arrays (and builds no index). */
export function newRecentIds(): RecentIds {
  return { words: new Uint32Array(0), times: new Float64Array(0), head: 0, size: 0 };
}

/** The index of `ids`, built from its ring when it has none yet (a new or read-back state). */
function indexOf(ids: RecentIds): Uint32Array {
  const built = ids[INDEX];
  if (built) return built;
  let cells = 8;
  while (cells < ids.times.length * 2) cells *= 2;
  const index = new Uint32Array(cells);
  Object.defineProperty(ids, INDEX, { value: index, writable: true, configurable: true });
  const slots = ids.times.length;
  for (let i = 0; i < ids.size; i++) {
    const slot = (ids.head + i) % slots;
    index[~find(ids, ids.words, slot * WORDS)] = slot + 1;
  }
  return index;
}

function finalMix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The last digest computed (idDigest): three words, reused so a lookup allocates nothing. */
const digest = new Uint32Array(WORDS);

/** The 96-bit digest of an id, in `digest`: three independent 32-bit hashes of its text. */
function idDigest(id: string): Uint32Array {
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
  digest[0] = finalMix(a ^ id.length);
  digest[1] = finalMix(b + Math.imul(id.length, 0x27d4eb2f));
  digest[2] = finalMix(c ^ 0x165667b1);
  return digest;
}

/** Seven UTF-16 units of 15 bits above U+1000: how a Map of an older state spelled a digest. */
const KEY_UNIT_BASE = 0x1000;
const isDigestKey = (key: string) => key.length === 7 && key.charCodeAt(0) >= KEY_UNIT_BASE;

/** The digest an older state's 7-unit key spelled (the inverse of its encoding), in `digest`. */
function keyDigest(key: string): Uint32Array {
  const u = (i: number) => key.charCodeAt(i) - KEY_UNIT_BASE;
  digest[0] = (u(0) | (u(1) << 15) | ((u(2) & 3) << 30)) >>> 0;
  digest[1] = ((u(2) >>> 2) | (u(3) << 13) | ((u(4) & 0xf) << 28)) >>> 0;
  digest[2] = ((u(4) >>> 4) | (u(5) << 11) | (u(6) << 26)) >>> 0;
  return digest;
}

/**
 * The index cell holding the digest at `d[from..]`, or the bitwise complement of the empty cell it
 * would take.
 */
function find(ids: RecentIds, d: Uint32Array, from = 0): number {
  const index = indexOf(ids);
  const words = ids.words;
  const mask = index.length - 1;
  const a = d[from]!;
  const b = d[from + 1]!;
  const c = d[from + 2]!;
  for (let cell = a & mask; ; cell = (cell + 1) & mask) {
    const held = index[cell]!;
    if (held === 0) return ~cell;
    const at = (held - 1) * WORDS;
    if (words[at] === a && words[at + 1] === b && words[at + 2] === c) return cell;
  }
}

/** Appends the digest at `d[from..]` at `time` into index cell `cell` (not held; a slot free). */
function append(ids: RecentIds, d: Uint32Array, from: number, time: number, cell: number): void {
  const slot = (ids.head + ids.size) % ids.times.length;
  const at = slot * WORDS;
  ids.words[at] = d[from]!;
  ids.words[at + 1] = d[from + 1]!;
  ids.words[at + 2] = d[from + 2]!;
  ids.times[slot] = time;
  indexOf(ids)[cell] = slot + 1;
  ids.size++;
}

/** The same ids, oldest first, in a ring of `slots` slots (its arrays replaced in place). */
function relayout(ids: RecentIds, slots: number): void {
  const held = ids.times.length;
  const words = new Uint32Array(slots * WORDS);
  const times = new Float64Array(slots);
  for (let i = 0; i < ids.size; i++) {
    const slot = (ids.head + i) % held;
    words.set(ids.words.subarray(slot * WORDS, slot * WORDS + WORDS), i * WORDS);
    times[i] = ids.times[slot]!;
  }
  ids.words = words;
  ids.times = times;
  ids.head = 0;
  if (ids[INDEX]) ids[INDEX] = undefined;
}

/** Removes the index cell `cell`, shifting back the entries probed past it (no tombstones). */
function removeCell(ids: RecentIds, cell: number): void {
  const index = indexOf(ids);
  const words = ids.words;
  const mask = index.length - 1;
  let hole = cell;
  for (let j = (hole + 1) & mask; ; j = (j + 1) & mask) {
    const held = index[j]!;
    if (held === 0) break;
    const home = words[(held - 1) * WORDS]! & mask;
    // The entry at j may fill the hole unless its home lies cyclically in (hole, j].
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      index[hole] = held;
      hole = j;
    }
  }
  index[hole] = 0;
}

/** True when `id` was seen; otherwise records it at `time`. */
export function seenBefore(ids: RecentIds, id: string, time: number): boolean {
  return seenDigest(ids, idDigest(id), time);
}

function seenDigest(ids: RecentIds, d: Uint32Array, time: number): boolean {
  let cell = find(ids, d);
  if (cell >= 0) return true;
  const slots = ids.times.length;
  if (ids.size === slots) {
    // Up to the bound a token reaches when forgotten after every trade, then doubling.
    relayout(ids, slots < BOUNDED_SLOTS ? Math.min(Math.max(FIRST_SLOTS, slots * 2), BOUNDED_SLOTS) : slots * 2);
    cell = find(ids, d);
  }
  append(ids, d, 0, time, ~cell);
  return false;
}

/** True when `id` is held (nothing recorded). */
export function holdsId(ids: RecentIds, id: string): boolean {
  return find(ids, idDigest(id)) >= 0;
}

/** Event times of the held ids, oldest first. */
export function idTimes(ids: RecentIds): number[] {
  const out: number[] = [];
  for (let i = 0; i < ids.size; i++) out.push(ids.times[(ids.head + i) % ids.times.length]!);
  return out;
}

/** Forgets the ids past the dedupe horizon of `now` (the token's newest trade); see FORGET_EVERY. */
export function forgetOldIds(ids: RecentIds, now: number): void {
  // Small sets (most tokens) pass every trade. Above that the size steps by one per trade between
  // passes, a deterministic cadence kept across snapshots; past the cap by FORGET_EVERY a pass
  // runs whatever the size, so the bound holds regardless.
  const size = ids.size;
  if (size > FORGET_EVERY && size % FORGET_EVERY !== 0 && size < BOUNDED_SLOTS) return;
  const horizon = now - DEDUPE_HORIZON_MS;
  const slots = ids.times.length;
  while (ids.size > RECENT_IDS_FLOOR) {
    const oldest = ids.head;
    if (ids.times[oldest]! > horizon && ids.size <= RECENT_IDS_CAP) break;
    removeCell(ids, find(ids, ids.words, oldest * WORDS));
    ids.head = (oldest + 1) % slots;
    ids.size--;
  }
  // A token that was busy and is no longer: its ring shrinks with what it holds (a parked token
  // keeps its ring's bytes).
  if (slots > FIRST_SLOTS && ids.size * 4 <= slots) relayout(ids, Math.max(FIRST_SLOTS, ids.size * 2));
}

/**
 * `value` as the current format, with arrays of its own: a state read back (v8.deserialize) views
 * the whole buffer it was read from, a snapshot's or a parked token's. A Map of an older state
 * (ids in full, or 7-unit digest keys) is converted in its order.
 */
export function recentIdsOf(value: RecentIds | Map<string, number>): RecentIds {
  if (!(value instanceof Map))
    return { words: value.words.slice(), times: value.times.slice(), head: value.head, size: value.size };
  const ids = newRecentIds();
  for (const [key, time] of value) seenDigest(ids, isDigestKey(key) ? keyDigest(key) : idDigest(key), time);
  return ids;
}
