// Holder figures kept up to date per change instead of recomputed over every holder at each
// token build: per counted holder its balance and categories, per token the sums, counts and the
// balances in order (for the top 10). Derived data, never in a snapshot: a token's index is built
// (one pass, the same as computeHolders) the first time it is needed and kept right by the
// processor's calls below; a token change that can move many holders at once drops it.
import type { TokenState } from './state.ts';
import {
  addToCategories,
  categoriesOf,
  emptyCounts,
  emptySums,
  figuresOf,
  isExcludedHolder,
  type HoldersObject,
} from './holders.ts';
import { walletKey, type WalletReader } from './wallet-facts.ts';

interface Member {
  bal: bigint;
  mask: number;
}

interface HolderIndex {
  members: Map<string, Member>;
  sums: bigint[];
  counts: number[];
  /** Balances of the members, ascending. */
  sorted: bigint[];
  /** Holders changed since the figures were last read: applied then, once each. */
  dirty: Set<string>;
  /** The figures as last built; null once anything changed. */
  figures: HoldersObject | null;
}

// Keyed by the token's state object: an index lives and dies with it (a restored snapshot starts
// without one).
const indexes = new WeakMap<TokenState, HolderIndex>();

/** Index of the first element >= value (ascending array). */
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

function insertSorted(sorted: bigint[], bal: bigint): void {
  const at = lowerBound(sorted, bal);
  if (at === sorted.length) sorted.push(bal);
  else sorted.splice(at, 0, bal);
}

/** Replaces one `from` by `to`, shifting only the balances between the two. */
function moveSorted(sorted: bigint[], from: bigint, to: bigint): void {
  let i = lowerBound(sorted, from);
  if (to > from) {
    while (i + 1 < sorted.length && sorted[i + 1]! < to) {
      sorted[i] = sorted[i + 1]!;
      i++;
    }
  } else {
    while (i > 0 && sorted[i - 1]! > to) {
      sorted[i] = sorted[i - 1]!;
      i--;
    }
  }
  sorted[i] = to;
}

function removeSorted(sorted: bigint[], bal: bigint): void {
  const at = lowerBound(sorted, bal);
  if (at === sorted.length - 1) sorted.pop();
  else sorted.splice(at, 1);
}

/** One holder's entry from the state now (balance, attributes, wallet facts). */
function update(index: HolderIndex, token: TokenState, wallets: WalletReader, address: string): void {
  const rec = token.holders.get(address);
  const counted = rec !== undefined && rec.bal > 0n && !isExcludedHolder(token, address);
  const old = index.members.get(address);
  if (!counted) {
    if (!old) return;
    index.members.delete(address);
    addToCategories(index.sums, index.counts, old.bal, old.mask, -1);
    removeSorted(index.sorted, old.bal);
  } else {
    const mask = categoriesOf(token, address, rec.attrs, wallets.get(walletKey(token.chain, address)));
    if (!old) {
      index.members.set(address, { bal: rec.bal, mask });
      addToCategories(index.sums, index.counts, rec.bal, mask, 1);
      insertSorted(index.sorted, rec.bal);
    } else {
      if (old.bal === rec.bal && old.mask === mask) return;
      addToCategories(index.sums, index.counts, old.bal, old.mask, -1);
      addToCategories(index.sums, index.counts, rec.bal, mask, 1);
      if (old.bal !== rec.bal) moveSorted(index.sorted, old.bal, rec.bal);
      old.bal = rec.bal;
      old.mask = mask;
    }
  }
  index.figures = null;
}

function build(token: TokenState, wallets: WalletReader): HolderIndex {
  const index: HolderIndex = {
    members: new Map(),
    sums: emptySums(),
    counts: emptyCounts(),
    sorted: [],
    dirty: new Set(),
    figures: null,
  };
  for (const [address, rec] of token.holders) {
    if (rec.bal <= 0n || isExcludedHolder(token, address)) continue;
    const mask = categoriesOf(token, address, rec.attrs, wallets.get(walletKey(token.chain, address)));
    index.members.set(address, { bal: rec.bal, mask });
    addToCategories(index.sums, index.counts, rec.bal, mask, 1);
    index.sorted.push(rec.bal);
  }
  index.sorted.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  indexes.set(token, index);
  return index;
}

/** Call after a holder's balance or attributes, or the facts of its wallet, changed. */
export function holderChanged(token: TokenState, address: string): void {
  const index = indexes.get(token);
  if (index) index.dirty.add(address);
}

/** Call after a change that can move many holders of the token (creator, supply, pools). */
export function holdersReset(token: TokenState): void {
  indexes.delete(token);
}

/** Holder figures of the token (the same as computeHolders(token, wallets)); a fresh object each call. */
export function holderFigures(token: TokenState, wallets: WalletReader): HoldersObject {
  const index = indexes.get(token) ?? build(token, wallets);
  if (index.dirty.size > 0) {
    for (const address of index.dirty) update(index, token, wallets, address);
    index.dirty.clear();
  }
  if (!index.figures) {
    const { sums, counts, sorted } = index;
    let top = 0n;
    for (let i = Math.max(0, sorted.length - 10); i < sorted.length; i++) top += sorted[i]!;
    index.figures = figuresOf(token.supply, index.members.size, top, sums, counts);
  }
  return { ...index.figures };
}

/** Holder entries of one wallet in every token it holds (its labels, funding or trade count changed). */
export function walletHoldersChanged(tokens: Map<string, TokenState>, held: Iterable<string>, address: string): void {
  for (const key of held) {
    const token = tokens.get(key);
    if (token) holderChanged(token, address);
  }
}
