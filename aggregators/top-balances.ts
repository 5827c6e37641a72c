// The largest balances of a token's holders, for the top-10 share: kept as a short ascending list
// instead of every balance in order. A sorted array of all balances cost a memmove per holder that
// came or left (up to tens of thousands on a busy token), about 8 % of the ingest thread at 2,000
// swaps/s. The list holds the largest need + SPARE balances; when removals leave fewer than `need`,
// it is refilled from every member once. Plain data (TopList), so it lives in the token's state.

/** Balances kept beyond the ones summed: removals of top holders before a refill is needed. */
const SPARE = 22;

/** How many balances the list keeps for `need`: a refill needs no more than the largest this many of a set. */
export const topKept = (need: number): number => need + SPARE;

/** A multiset's size and its largest balances, ascending (all of them while list.length === size). */
export interface TopList {
  list: bigint[];
  size: number;
}

export const newTopList = (): TopList => ({ list: [], size: 0 });

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

function keep(top: TopList, bal: bigint, need: number): void {
  top.list.splice(lowerBound(top.list, bal), 0, bal);
  if (top.list.length > topKept(need)) top.list.shift();
}

export function topAdd(top: TopList, bal: bigint, need: number): void {
  const complete = top.list.length === top.size;
  top.size++;
  if (complete || bal > top.list[0]!) keep(top, bal, need);
}

export function topRemove(top: TopList, bal: bigint): void {
  top.size--;
  // Every balance above the smallest kept is kept, and at least one equal to it.
  if (top.list.length === 0 || bal < top.list[0]!) return;
  const at = lowerBound(top.list, bal);
  if (top.list[at] === bal) top.list.splice(at, 1);
}

/** Sum of the `need` largest balances (all of them when fewer); `members()` lists every balance, read only to refill. */
export function topSum(top: TopList, need: number, members: () => Iterable<bigint>): bigint {
  if (top.list.length < Math.min(need, top.size)) {
    top.list = [];
    for (const bal of members()) if (top.list.length < topKept(need) || bal > top.list[0]!) keep(top, bal, need);
  }
  let total = 0n;
  for (let i = Math.max(0, top.list.length - need); i < top.list.length; i++) total += top.list[i]!;
  return total;
}

export interface TopBalances {
  add(bal: bigint): void;
  remove(bal: bigint): void;
  /** Sum of the `need` largest balances (all of them when fewer). */
  sum(): bigint;
}

/** A list of its own over the multiset `members()` lists. */
export function createTopBalances(need: number, members: () => Iterable<bigint>): TopBalances {
  const top = newTopList();
  return {
    add: (bal) => topAdd(top, bal, need),
    remove: (bal) => topRemove(top, bal),
    sum: () => topSum(top, need, members),
  };
}
