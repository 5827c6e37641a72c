// Redelivered swaps: per token, the ids of its recent trades (id → event time, in arrival order).
// A swap redelivered (a source re-reading blocks after a restart, a producer retry) is recognised
// while its id is among its token's last RECENT_IDS_CAP trades and within DEDUPE_HORIZON_MS of
// event time of the newest one, or among its last RECENT_IDS_FLOOR trades whatever their age.
// Ids are not kept for 24 h: their memory is bounded per token. Past FORGET_EVERY ids, old ones
// are forgotten every FORGET_EVERY trades, so up to that many more are remembered (recognised
// longer, never shorter).

export const DEDUPE_HORIZON_MS = 10 * 60_000;
export const RECENT_IDS_CAP = 4096;
export const RECENT_IDS_FLOOR = 16;
/**
 * Trades between passes over the oldest ids. A Map keeps deleted entries as holes that iteration
 * walks until V8 rehashes it, so a pass per trade walked ~2,000 holes on a busy token: 1.7 against
 * 0.3 µs a trade with a pass every 64 (4,096 ids, one in, one out).
 */
export const FORGET_EVERY = 64;

/** True when `id` was seen; otherwise records it at `time`. */
export function seenBefore(ids: Map<string, number>, id: string, time: number): boolean {
  if (ids.has(id)) return true;
  ids.set(id, time);
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
