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

/** One key's place: heap items point at it, so a key string is kept once however often it is set. */
interface Entry {
  readonly key: string;
  bound: number;
}

/**
 * A binary min-heap of (bound, entry) beside the map of each key's entry. Items superseded by a
 * later set or a delete stay in the heap until they come up and are skipped then: 16 B each, at
 * most one per set whose bound was not yet reached.
 */
export function createExpiryQueue(): ExpiryQueue {
  const entries = new Map<string, Entry>();
  const times: number[] = [];
  const items: Entry[] = [];
  const before = (i: number, j: number) =>
    times[i]! < times[j]! || (times[i] === times[j] && items[i]!.key < items[j]!.key);
  const swap = (i: number, j: number) => {
    const time = times[i]!;
    times[i] = times[j]!;
    times[j] = time;
    const item = items[i]!;
    items[i] = items[j]!;
    items[j] = item;
  };
  const push = (bound: number, entry: Entry) => {
    let i = times.push(bound) - 1;
    items.push(entry);
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
    items.pop();
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
    let entry = entries.get(key);
    if (entry?.bound === bound) return;
    if (entry) entry.bound = bound;
    else entries.set(key, (entry = { key, bound }));
    push(bound, entry);
  };
  return {
    get: (key) => entries.get(key)?.bound,
    set,
    lower(key, bound) {
      const known = entries.get(key)?.bound;
      if (known === undefined || bound < known) set(key, bound);
    },
    delete: (key) => void entries.delete(key),
    takeDue(time) {
      const out: string[] = [];
      while (times.length > 0 && times[0]! <= time) {
        const bound = times[0]!;
        const entry = items[0]!;
        pop();
        // A stale item: superseded, deleted, or a second push of one taken already.
        if (entries.get(entry.key) !== entry || entry.bound !== bound) continue;
        entries.delete(entry.key);
        out.push(entry.key);
      }
      return out;
    },
  };
}
