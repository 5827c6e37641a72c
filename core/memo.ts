// A bounded memo for values derived from keys that recur (addresses, partitions, decoded keys).
// Two generations of at most half the bound each: a hit in the older one moves the key to the
// newer, and a full newer generation becomes the older, the older dropped. Clearing one full map
// instead dropped the keys in use with the rest: on the mainnet profile the simulator's
// associated-token cache refilled every few seconds, and its PDA derivations took 8 % of the node.

export interface Memo<V> {
  /** The value of `key`, derived (and kept) on a miss. */
  get(key: string, derive: (key: string) => V): V;
  readonly size: number;
}

/** `bound`: the most entries kept, both generations together. */
export function createMemo<V>(bound: number): Memo<V> {
  const half = Math.max(1, Math.floor(bound / 2));
  let newer = new Map<string, V>();
  let older = new Map<string, V>();
  const keep = (key: string, value: V) => {
    if (newer.size >= half) {
      older = newer;
      newer = new Map();
    }
    newer.set(key, value);
  };
  return {
    get(key, derive) {
      const hit = newer.get(key);
      if (hit !== undefined) return hit;
      let value = older.get(key);
      if (value === undefined) value = derive(key);
      else older.delete(key);
      keep(key, value);
      return value;
    },
    get size() {
      return newer.size + older.size;
    },
  };
}
