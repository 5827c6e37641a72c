// The largest balances of a token's holders, for the top-10 share: kept as a short ascending list
// instead of every balance in order. A sorted array of all balances cost a memmove per holder that
// came or left (up to tens of thousands on a busy token), about 8 % of the ingest thread at 2,000
// swaps/s. The list holds the largest need + SPARE balances; when removals leave fewer than `need`,
// it is refilled from every member once.

/** Balances kept beyond the ones summed: removals of top holders before a refill is needed. */
const SPARE = 22;

export interface TopBalances {
  add(bal: bigint): void;
  remove(bal: bigint): void;
  /** Sum of the `need` largest balances (all of them when fewer). */
  sum(): bigint;
}

/** Index of the first element >= value (ascending). */
function lowerBound(sorted: bigint[], value: bigint): number {
  let lo = 0,
    hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** `members()` lists every balance of the multiset; it is read only to refill. */
export function createTopBalances(need: number, members: () => Iterable<bigint>): TopBalances {
  const capacity = need + SPARE;
  /** The largest `top.length` balances, ascending; all of them while top.length === size. */
  let top: bigint[] = [];
  let size = 0;

  function keep(bal: bigint): void {
    top.splice(lowerBound(top, bal), 0, bal);
    if (top.length > capacity) top.shift();
  }

  return {
    add(bal) {
      const complete = top.length === size;
      size++;
      if (complete || bal > top[0]!) keep(bal);
    },
    remove(bal) {
      size--;
      // Every balance above the smallest kept is kept, and at least one equal to it.
      if (top.length === 0 || bal < top[0]!) return;
      const at = lowerBound(top, bal);
      if (top[at] === bal) top.splice(at, 1);
    },
    sum() {
      if (top.length < Math.min(need, size)) {
        top = [];
        for (const bal of members()) if (top.length < capacity || bal > top[0]!) keep(bal);
      }
      let total = 0n;
      for (let i = Math.max(0, top.length - need); i < top.length; i++) total += top[i]!;
      return total;
    },
  };
}
