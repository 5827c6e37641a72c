// Holder figures kept up to date per change instead of recomputed over every holder at each
// token build: per counted holder its balance and categories, per token the sums, counts and the
// largest balances (for the top 10). Derived data, never in a snapshot: a token's index is built
// (one pass, the same as computeHolders) the first time it is needed and kept right by the
// processor's calls below; a token change that can move many holders at once drops it.
//
// Holder records of idle wallets park in the wallet store (embedded): the index keeps counting
// them, and their row keeps the categories it counted them in, so a record that comes back
// (holderOf) is a member again as it left. A build reads the parked rows too, and brings back
// into memory the few whose categories changed while they were parked.
import { tokenKey } from '../core/chains.ts';
import type { HolderRec, TokenState } from './state.ts';
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
import { viewWallet, walletKey, type WalletReader } from './wallet-facts.ts';
import type { ParkedHolderRow } from './wallet-store.ts';

interface Member {
  bal: bigint;
  mask: number;
}

interface HolderIndex {
  /** Counted holders whose record is in memory. */
  members: Map<string, Member>;
  /** Counted holders, parked ones included. */
  count: number;
  sums: bigint[];
  counts: number[];
  /** The counted holders' largest balances. */
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
/** A parked row's mask when the index did not count its holder. */
const NOT_COUNTED = -1;

/** The holder's record, brought back into memory when it was parked. */
export function holderOf(token: TokenState, address: string, wallets: WalletReader): HolderRec | undefined {
  const live = token.holders.get(address);
  if (live || !token.parkedHolders || !wallets.holders) return live;
  const row = wallets.holders.holder(tokenKey(token.chain, token.address), address);
  if (!row) return undefined;
  const rec: HolderRec = { bal: row.bal, attrs: row.attrs };
  token.holders.set(address, rec);
  const index = indexes.get(token);
  if (index && row.mask !== NOT_COUNTED) index.members.set(address, { bal: row.bal, mask: row.mask });
  return rec;
}

function count(index: HolderIndex, bal: bigint, mask: number, sign: 1 | -1): void {
  addToCategories(index.sums, index.counts, bal, mask, sign);
  index.count += sign;
  if (sign === 1) index.top.add(bal);
  else index.top.remove(bal);
}

/** One holder's entry from the state now (balance, attributes, wallet facts). */
function update(index: HolderIndex, token: TokenState, wallets: WalletReader, address: string): void {
  const rec = holderOf(token, address, wallets);
  const counted = rec !== undefined && rec.bal > 0n && !isExcludedHolder(token, address);
  const old = index.members.get(address);
  if (!counted) {
    if (!old) return;
    index.members.delete(address);
    count(index, old.bal, old.mask, -1);
  } else {
    const mask = categoriesOf(token, address, rec.attrs, wallets.get(walletKey(token.chain, address)));
    if (!old) {
      index.members.set(address, { bal: rec.bal, mask });
      count(index, rec.bal, mask, 1);
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

/** Every counted balance: the members', then the parked rows' (read only to refill the top list). */
function* countedBalances(token: TokenState, members: Map<string, Member>, wallets: WalletReader) {
  for (const member of members.values()) yield member.bal;
  if (!token.parkedHolders || !wallets.holders) return;
  for (const row of wallets.holders.holdersOf(tokenKey(token.chain, token.address)))
    if (row.mask !== NOT_COUNTED && !token.holders.has(row.wallet)) yield row.bal;
}

function build(token: TokenState, wallets: WalletReader): HolderIndex {
  const members = new Map<string, Member>();
  const index: HolderIndex = {
    members,
    count: 0,
    sums: emptySums(),
    counts: emptyCounts(),
    top: createTopBalances(TOP_HOLDERS, () => countedBalances(token, members, wallets)),
    dirty: new Set(),
    figures: null,
  };
  for (const [address, rec] of token.holders) {
    if (rec.bal <= 0n || isExcludedHolder(token, address)) continue;
    const mask = categoriesOf(token, address, rec.attrs, wallets.get(walletKey(token.chain, address)));
    members.set(address, { bal: rec.bal, mask });
    count(index, rec.bal, mask, 1);
  }
  if (token.parkedHolders && wallets.holders) {
    for (const row of wallets.holders.holdersOf(tokenKey(token.chain, token.address))) {
      if (token.holders.has(row.wallet)) continue;
      const counted = row.bal > 0n && !isExcludedHolder(token, row.wallet);
      const mask = counted
        ? categoriesOf(token, row.wallet, row.attrs, viewWallet(wallets, walletKey(token.chain, row.wallet)))
        : NOT_COUNTED;
      if (mask !== row.mask) {
        // Its categories moved while it was parked (no index marked it): back in memory as it is now.
        token.holders.set(row.wallet, { bal: row.bal, attrs: row.attrs });
        if (counted) members.set(row.wallet, { bal: row.bal, mask });
      }
      if (counted) count(index, row.bal, mask, 1);
    }
  }
  indexes.set(token, index);
  return index;
}

/** The token's index with every change applied. */
function settled(token: TokenState, wallets: WalletReader): HolderIndex {
  const index = indexes.get(token) ?? build(token, wallets);
  if (index.dirty.size > 0) {
    for (const address of index.dirty) update(index, token, wallets, address);
    index.dirty.clear();
  }
  return index;
}

/** Call after a holder's balance or attributes, or the facts of its wallet, changed. */
export function holderChanged(token: TokenState, address: string): void {
  const index = indexes.get(token);
  if (index) index.dirty.add(address);
}

/** Call after a change that can move many holders of the token (its creator). */
export function holdersReset(token: TokenState): void {
  indexes.delete(token);
}

/** Holder figures of the token (the same as computeHolders(token, wallets)); a fresh object each call. */
export function holderFigures(token: TokenState, wallets: WalletReader): HoldersObject {
  const index = settled(token, wallets);
  if (!index.figures) {
    index.figures = figuresOf(token.supply, index.count, index.top.sum(), index.sums, index.counts);
  }
  return { ...index.figures };
}

/**
 * Takes the records of holders `idle` says are idle out of memory and returns them as store rows;
 * the index keeps counting them as they are.
 */
export function parkHolders(
  token: TokenState,
  wallets: WalletReader,
  idle: (address: string) => boolean,
): ParkedHolderRow[] {
  let any = false;
  for (const address of token.holders.keys()) if ((any = idle(address))) break;
  if (!any) return [];
  const index = settled(token, wallets);
  const key = tokenKey(token.chain, token.address);
  const rows: ParkedHolderRow[] = [];
  for (const [address, rec] of token.holders) {
    if (!idle(address)) continue;
    const member = index.members.get(address);
    rows.push({
      token: key,
      wallet: address,
      bal: rec.bal,
      attrs: rec.attrs,
      mask: member ? member.mask : NOT_COUNTED,
    });
    token.holders.delete(address);
    if (member) index.members.delete(address);
  }
  if (rows.length > 0) token.parkedHolders = (token.parkedHolders ?? 0) + rows.length;
  return rows;
}

/** Holder entries of one wallet in every token it holds (its labels, funding or trade count changed). */
export function walletHoldersChanged(tokens: Map<string, TokenState>, held: Iterable<string>, address: string): void {
  for (const key of held) {
    const token = tokens.get(key);
    if (token) holderChanged(token, address);
  }
}
