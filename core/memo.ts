// A bounded memo for values derived from keys that recur (addresses, partitions, decoded keys).
// Two generations of at most half the bound each: a hit in the older one moves the key to the
// newer, and a full newer generation becomes the older, the older dropped. Clearing one full map
// instead dropped the keys in use with the rest: on the mainnet profile the simulator's
// associated-token cache refilled every few seconds, and its PDA derivations took 8 % of the node.
// get and set, not get(key, derive): callers on the hot path (a partition per appended message)
// allocate no closure per call.

export interface Memo<V> {
  /** The value kept for `key`, if any. */
  get(key: string): V | undefined;
  /** Keeps `value` for `key`; returns it. */
  set(key: string, value: V): V;
  readonly size: number;
}

/** `bound`: the most entries kept, both generations together. */
export function createMemo<V>(bound: number): Memo<V> {
  const half = Math.max(1, Math.floor(bound / 2));
  let newer = new Map<string, V>();
  let older = new Map<string, V>();
  const set = (key: string, value: V): V => {
    if (newer.size >= half) {
      older = newer;
      newer = new Map();
    }
    newer.set(key, value);
    return value;
  };
  return {
    get(key) {
      const hit = newer.get(key);
      if (hit !== undefined) return hit;
      const kept = older.get(key);
      if (kept === undefined) return undefined;
      older.delete(key);
      return set(key, kept);
    },
    set,
    get size() {
      return newer.size + older.size;
    },
  };
}
