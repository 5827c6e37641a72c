// Holder figures kept up to date per change instead of recomputed over every holder at each
// token build: each holder record keeps the categories and balance it is counted at, the token's
// state keeps the sums, counts and largest balances (for the top 10) of its counted holders. Built
// (one pass, the same as computeHolders) the first time it is needed and kept right by the
// processor's calls below; a change that can move many holders at once (a new creator) drops it.
// In the state, it travels with the token: a snapshot, parking or eviction brings it back as it was.
//
// Holder records of idle wallets park in the wallet store (embedded): the index keeps counting
// them, and their row keeps the categories they were counted in, so a record that comes back
// (holderOf) is counted as it left. A build reads the parked rows too, and brings back into memory
// the few whose categories changed while they were parked.
import { tokenKey } from '../core/chains.ts';
import type { HolderIndexState, HolderRec, TokenState } from './state.ts';
import {
  addToCategories,
  categoriesOf,
  emptyCounts,
  emptySums,
  figuresOf,
  isExcludedHolder,
  parkedOnly,
  type HoldersObject,
} from './holders.ts';
import { newTopList, topAdd, topKept, topRemove, topSum } from './top-balances.ts';
import { viewWallet, walletKey, type WalletReader } from './wallet-facts.ts';
import type { ParkedHolderRow } from './wallet-store.ts';

/** The top-holders share sums this many. */
const TOP_HOLDERS = 10;
/** A record's (or parked row's) mask when the index does not count its holder. */
export const NOT_COUNTED = -1;

/** The figures as last built, per index; dropped at each change. */
const figuresOfIndex = new WeakMap<HolderIndexState, HoldersObject>();

/** A holder record with nothing counted yet. */
export const newHolderRec = (): HolderRec => ({ bal: 0n, attrs: 0, mask: NOT_COUNTED, counted: 0n });

/** The holder's record, brought back into memory when it was parked. */
function holderOf(token: TokenState, address: string, wallets: WalletReader): HolderRec | undefined {
  return token.holders.get(address) ?? parkedHolderOf(token, address, wallets);
}

/** A record not in memory, brought back from the store when it was parked. */
export function parkedHolderOf(token: TokenState, address: string, wallets: WalletReader): HolderRec | undefined {
  if (!token.parkedHolders || !wallets.holders) return undefined;
  const row = wallets.holders.holder(tokenKey(token.chain, token.address), address);
  if (!row) return undefined;
  const counted = row.mask === NOT_COUNTED ? 0n : row.bal;
  const rec: HolderRec = { bal: row.bal, attrs: row.attrs, mask: row.mask, counted };
  token.holders.set(address, rec);
  return rec;
}

/** One holder's entry from the state now (balance, attributes, wallet facts). */
function update(index: HolderIndexState, token: TokenState, wallets: WalletReader, address: string): void {
  const rec = holderOf(token, address, wallets);
  // A holder without a record was never counted.
  if (!rec) return;
  const counted = rec.bal > 0n && !isExcludedHolder(token, address);
  const mask = counted
    ? categoriesOf(token, address, rec.attrs, wallets.get(walletKey(token.chain, address)))
    : NOT_COUNTED;
  const was = rec.mask !== NOT_COUNTED;
  if (mask === rec.mask && (!counted || rec.counted === rec.bal)) return;
  if (was) addToCategories(index.sums, index.counts, rec.counted, rec.mask, -1);
  if (counted) addToCategories(index.sums, index.counts, rec.bal, mask, 1);
  if (was && counted) {
    if (rec.counted !== rec.bal) {
      topRemove(index.top, rec.counted);
      topAdd(index.top, rec.bal, TOP_HOLDERS);
    }
  } else if (was) topRemove(index.top, rec.counted);
  else topAdd(index.top, rec.bal, TOP_HOLDERS);
  rec.mask = mask;
  rec.counted = counted ? rec.bal : 0n;
  figuresOfIndex.delete(index);
}

/**
 * The counted balances a refill of the top list needs: every record in memory, then the largest
 * parked ones not back in memory, as many as the list keeps (the store reads them in balance order).
 */
function* countedBalances(token: TokenState, wallets: WalletReader) {
  for (const rec of token.holders.values()) if (rec.mask !== NOT_COUNTED) yield rec.counted;
  if (!token.parkedHolders || !wallets.holders) return;
  let left = topKept(TOP_HOLDERS);
  for (const row of wallets.holders.countedByBalance(tokenKey(token.chain, token.address))) {
    if (token.holders.has(row.wallet)) continue;
    yield row.bal;
    if (--left === 0) return;
  }
}

function count(index: HolderIndexState, bal: bigint, mask: number): void {
  addToCategories(index.sums, index.counts, bal, mask, 1);
  topAdd(index.top, bal, TOP_HOLDERS);
}

function build(token: TokenState, wallets: WalletReader): HolderIndexState {
  const index: HolderIndexState = { sums: emptySums(), counts: emptyCounts(), top: newTopList(), dirty: new Set() };
  for (const [address, rec] of token.holders) {
    const counted = rec.bal > 0n && !isExcludedHolder(token, address);
    rec.mask = counted
      ? categoriesOf(token, address, rec.attrs, wallets.get(walletKey(token.chain, address)))
      : NOT_COUNTED;
    rec.counted = counted ? rec.bal : 0n;
    if (counted) count(index, rec.bal, rec.mask);
  }
  for (const row of parkedOnly(token, wallets)) {
    const counted = row.bal > 0n && !isExcludedHolder(token, row.wallet);
    const mask = counted
      ? categoriesOf(token, row.wallet, row.attrs, viewWallet(wallets, walletKey(token.chain, row.wallet)))
      : NOT_COUNTED;
    // Its categories moved while it was parked (no index marked it): back in memory as it is now.
    if (mask !== row.mask)
      token.holders.set(row.wallet, { bal: row.bal, attrs: row.attrs, mask, counted: counted ? row.bal : 0n });
    if (counted) count(index, row.bal, mask);
  }
  token.holderIndex = index;
  return index;
}

/** The token's index with every change applied. */
function settled(token: TokenState, wallets: WalletReader): HolderIndexState {
  const index = token.holderIndex ?? build(token, wallets);
  if (index.dirty.size > 0) {
    for (const address of index.dirty) update(index, token, wallets, address);
    index.dirty.clear();
  }
  return index;
}

/** Call after a holder's balance or attributes, or the facts of its wallet, changed. */
export function holderChanged(token: TokenState, address: string): void {
  token.holderIndex?.dirty.add(address);
}

/** Call after a change that can move many holders of the token (its creator, its supply). */
export function holdersReset(token: TokenState): void {
  token.holderIndex = undefined;
}

/** Holder figures of the token (the same as computeHolders(token, wallets)); a fresh object each call. */
export function holderFigures(token: TokenState, wallets: WalletReader): HoldersObject {
  const index = settled(token, wallets);
  let figures = figuresOfIndex.get(index);
  if (!figures) {
    const top10 = topSum(index.top, TOP_HOLDERS, () => countedBalances(token, wallets));
    figures = figuresOf(token.supply, index.top.size, top10, index.sums, index.counts);
    figuresOfIndex.set(index, figures);
  }
  return { ...figures };
}

/**
 * Takes the records of up to `max` holders `idle` says are idle out of memory and returns them as
 * store rows; the index keeps counting them as they are.
 */
export function parkHolders(
  token: TokenState,
  wallets: WalletReader,
  idle: (address: string) => boolean,
  max = Number.POSITIVE_INFINITY,
): ParkedHolderRow[] {
  const leaving: string[] = [];
  for (const address of token.holders.keys()) if (idle(address) && leaving.push(address) >= max) break;
  if (leaving.length === 0) return [];
  // Applied first: a parked record's balance is the one it is counted at.
  settled(token, wallets);
  const key = tokenKey(token.chain, token.address);
  const rows: ParkedHolderRow[] = [];
  for (const address of leaving) {
    const rec = token.holders.get(address)!;
    rows.push({ token: key, wallet: address, bal: rec.bal, attrs: rec.attrs, mask: rec.mask });
    token.holders.delete(address);
  }
  if (rows.length > 0) token.parkedHolders = (token.parkedHolders ?? 0) + rows.length;
  return rows;
}

/**
 * Holder entries of one wallet in every token it holds (its labels, funding or trade count
 * changed). `tokenIn` brings a parked token back: its index is in its state and must see the
 * change; an evicted one rebuilds its index when it comes back.
 */
export function walletHoldersChanged(
  tokenIn: (key: string) => TokenState | undefined,
  held: Iterable<string>,
  address: string,
): void {
  for (const key of held) {
    const token = tokenIn(key);
    if (token) holderChanged(token, address);
  }
}
