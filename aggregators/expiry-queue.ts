// Tokens whose windows still hold trades, with a lower bound of the event time at which a window
// next loses one, ordered by that bound: a decay tick visits only the tokens due, not every token
// with a trade in its 24 h windows (a one-day warm start ticks 8,640 times per chain over thousands).

export interface ExpiryQueue {
  get(key: string): number | undefined;
  set(key: string, bound: number): void;
  /** Keeps the earlier of the known bound and `bound`. */
  lower(key: string, bound: number): void;
  delete(key: string): void;
  /** Removes and returns the keys whose bound is at or before `time`, by bound then key (whatever the order they were set in). */
  takeDue(time: number): string[];
}

/**
 * A binary min-heap of (bound, key) beside the map of each key's bound. Entries superseded by a
 * later set or a delete stay in the heap until they come up and are skipped then: at most one
 * live entry per key, and stale ones are bounded by the sets made within a window's length.
 */
export function createExpiryQueue(): ExpiryQueue {
  const bounds = new Map<string, number>();
  const times: number[] = [];
  const keys: string[] = [];
  const before = (i: number, j: number) => times[i]! < times[j]! || (times[i] === times[j] && keys[i]! < keys[j]!);
  const swap = (i: number, j: number) => {
    const time = times[i]!;
    times[i] = times[j]!;
    times[j] = time;
    const key = keys[i]!;
    keys[i] = keys[j]!;
    keys[j] = key;
  };
  const push = (bound: number, key: string) => {
    let i = times.push(bound) - 1;
    keys.push(key);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(i, parent)) break;
      swap(i, parent);
      i = parent;
    }
  };
  const pop = () => {
    const last = times.length - 1;
    swap(0, last);
    times.pop();
    keys.pop();
    for (let i = 0; ; ) {
      const left = 2 * i + 1;
      if (left >= last) break;
      const right = left + 1;
      const child = right < last && before(right, left) ? right : left;
      if (!before(child, i)) break;
      swap(i, child);
      i = child;
    }
  };
  const set = (key: string, bound: number) => {
    if (bounds.get(key) === bound) return;
    bounds.set(key, bound);
    push(bound, key);
  };
  return {
    get: (key) => bounds.get(key),
    set,
    lower(key, bound) {
      const known = bounds.get(key);
      if (known === undefined || bound < known) set(key, bound);
    },
    delete: (key) => void bounds.delete(key),
    takeDue(time) {
      const out: string[] = [];
      while (times.length > 0 && times[0]! <= time) {
        const bound = times[0]!;
        const key = keys[0]!;
        pop();
        // A stale entry: superseded, deleted, or a second push of one taken already.
        if (bounds.get(key) !== bound) continue;
        bounds.delete(key);
        out.push(key);
      }
      return out;
    },
  };
}
