// Holder figures kept up to date per change instead of recomputed over every holder at each
// token build: per counted holder its balance and categories, per token the sums, counts and the
// largest balances (for the top 10). Derived data, never in a snapshot: a token's index is built
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
import { createTopBalances, type TopBalances } from './top-balances.ts';
import { walletKey, type WalletReader } from './wallet-facts.ts';

interface Member {
  bal: bigint;
  mask: number;
}

interface HolderIndex {
  members: Map<string, Member>;
  sums: bigint[];
  counts: number[];
  /** The members' largest balances. */
  top: TopBalances;
  /** Holders changed since the figures were last read: applied then, once each. */
  dirty: Set<string>;
  /** The figures as last built; null once anything changed. */
  figures: HoldersObject | null;
}

// Keyed by the token's state object: an index lives and dies with it (a restored snapshot starts
// without one).
const indexes = new WeakMap<TokenState, HolderIndex>();
/** The top-holders share sums this many. */
const TOP_HOLDERS = 10;

/** One holder's entry from the state now (balance, attributes, wallet facts). */
function update(index: HolderIndex, token: TokenState, wallets: WalletReader, address: string): void {
  const rec = token.holders.get(address);
  const counted = rec !== undefined && rec.bal > 0n && !isExcludedHolder(token, address);
  const old = index.members.get(address);
  if (!counted) {
    if (!old) return;
    index.members.delete(address);
    addToCategories(index.sums, index.counts, old.bal, old.mask, -1);
    index.top.remove(old.bal);
  } else {
    const mask = categoriesOf(token, address, rec.attrs, wallets.get(walletKey(token.chain, address)));
    if (!old) {
      index.members.set(address, { bal: rec.bal, mask });
      addToCategories(index.sums, index.counts, rec.bal, mask, 1);
      index.top.add(rec.bal);
    } else {
      if (old.bal === rec.bal && old.mask === mask) return;
      addToCategories(index.sums, index.counts, old.bal, old.mask, -1);
      addToCategories(index.sums, index.counts, rec.bal, mask, 1);
      if (old.bal !== rec.bal) {
        index.top.remove(old.bal);
        index.top.add(rec.bal);
      }
      old.bal = rec.bal;
      old.mask = mask;
    }
  }
  index.figures = null;
}

function build(token: TokenState, wallets: WalletReader): HolderIndex {
  const members = new Map<string, Member>();
  const index: HolderIndex = {
    members,
    sums: emptySums(),
    counts: emptyCounts(),
    top: createTopBalances(TOP_HOLDERS, () => Array.from(members.values(), (m) => m.bal)),
    dirty: new Set(),
    figures: null,
  };
  for (const [address, rec] of token.holders) {
    if (rec.bal <= 0n || isExcludedHolder(token, address)) continue;
    const mask = categoriesOf(token, address, rec.attrs, wallets.get(walletKey(token.chain, address)));
    index.members.set(address, { bal: rec.bal, mask });
    addToCategories(index.sums, index.counts, rec.bal, mask, 1);
    index.top.add(rec.bal);
  }
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
    index.figures = figuresOf(token.supply, index.members.size, index.top.sum(), index.sums, index.counts);
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
