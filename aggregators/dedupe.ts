// Redelivered swaps: per token, the ids of its recent trades (id → event time, in arrival order).
// A swap redelivered (a source re-reading blocks after a restart, a producer retry) is recognised
// while its id is among its token's last RECENT_IDS_CAP trades and within DEDUPE_HORIZON_MS of
// event time of the newest one, or among its last RECENT_IDS_FLOOR trades whatever their age.
// Ids are not kept for 24 h: their memory is bounded per token.

export const DEDUPE_HORIZON_MS = 10 * 60_000;
export const RECENT_IDS_CAP = 4096;
export const RECENT_IDS_FLOOR = 16;

/** True when `id` was seen; otherwise records it at `time`. */
export function seenBefore(ids: Map<string, number>, id: string, time: number): boolean {
  if (ids.has(id)) return true;
  ids.set(id, time);
  return false;
}

/** Forgets the ids past the dedupe horizon of `now` (the token's newest trade). */
export function forgetOldIds(ids: Map<string, number>, now: number): void {
  const horizon = now - DEDUPE_HORIZON_MS;
  for (const [id, time] of ids) {
    if (ids.size <= RECENT_IDS_FLOOR || (time > horizon && ids.size <= RECENT_IDS_CAP)) break;
    ids.delete(id);
  }
}
