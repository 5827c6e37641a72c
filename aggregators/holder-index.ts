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
//
// A record's mask is the one it is counted in, and so is its balance unless the holder is dirty:
// a change keeps the record as it was counted beside the holder's dirty mark (setHolderRec).
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
import { NOT_COUNTED, attrsOf, balOf, holderRec, maskOf, withMask } from './holder-records.ts';
import { newTopList, topAdd, topKept, topRemove, topSum } from './top-balances.ts';
import { viewWallet, walletKey, type WalletReader } from './wallet-facts.ts';
import type { ParkedHolderRow } from './wallet-store.ts';

/** The top-holders share sums this many. */
const TOP_HOLDERS = 10;

/** The figures as last built, per index; dropped at each change. */
const figuresOfIndex = new WeakMap<HolderIndexState, HoldersObject>();

/** The holder's record, brought back into memory when it was parked. */
function holderOf(token: TokenState, address: string, wallets: WalletReader): HolderRec | undefined {
  return token.holders.get(address) ?? parkedHolderOf(token, address, wallets);
}

/** A record not in memory, brought back from the store when it was parked. */
export function parkedHolderOf(token: TokenState, address: string, wallets: WalletReader): HolderRec | undefined {
  if (!token.parkedHolders || !wallets.holders) return undefined;
  const row = wallets.holders.holder(tokenKey(token.chain, token.address), address);
  if (!row) return undefined;
  const rec = holderRec(row.bal, row.attrs, row.mask);
  token.holders.set(address, rec);
  return rec;
}

/**
 * One holder's entry from the state now (balance, attributes, wallet facts). `before` is its record
 * as the index counts it; undefined when it was parked, as its row is then.
 */
function update(
  index: HolderIndexState,
  token: TokenState,
  wallets: WalletReader,
  address: string,
  before: HolderRec | undefined,
): void {
  const rec = holderOf(token, address, wallets);
  // A holder without a record was never counted.
  if (rec === undefined) return;
  const bal = balOf(rec);
  const counted = bal > 0n && !isExcludedHolder(token, address);
  const mask = counted
    ? categoriesOf(token, address, attrsOf(rec), wallets.get(walletKey(token.chain, address)))
    : NOT_COUNTED;
  // A record's mask changes only here and in a build, so `rec` still has the one counted.
  const wasMask = maskOf(rec);
  const was = wasMask !== NOT_COUNTED;
  const wasBal = was ? balOf(before ?? rec) : 0n;
  if (mask === wasMask && (!counted || wasBal === bal)) return;
  if (was) addToCategories(index.sums, index.counts, wasBal, wasMask, -1);
  if (counted) addToCategories(index.sums, index.counts, bal, mask, 1);
  if (was && counted) {
    if (wasBal !== bal) {
      topRemove(index.top, wasBal);
      topAdd(index.top, bal, TOP_HOLDERS);
    }
  } else if (was) topRemove(index.top, wasBal);
  else topAdd(index.top, bal, TOP_HOLDERS);
  if (mask !== wasMask) token.holders.set(address, withMask(rec, mask));
  figuresOfIndex.delete(index);
}

/**
 * The counted balances a refill of the top list needs: every record in memory, then the largest
 * parked ones not back in memory, as many as the list keeps (the store reads them in balance order).
 */
function* countedBalances(token: TokenState, wallets: WalletReader) {
  for (const rec of token.holders.values()) if (maskOf(rec) !== NOT_COUNTED) yield balOf(rec);
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
  const index: HolderIndexState = { sums: emptySums(), counts: emptyCounts(), top: newTopList(), dirty: new Map() };
  for (const [address, rec] of token.holders) {
    const bal = balOf(rec);
    const counted = bal > 0n && !isExcludedHolder(token, address);
    const mask = counted
      ? categoriesOf(token, address, attrsOf(rec), wallets.get(walletKey(token.chain, address)))
      : NOT_COUNTED;
    // Replacing the value of a key the loop has reached does not disturb the iteration.
    if (mask !== maskOf(rec)) token.holders.set(address, withMask(rec, mask));
    if (counted) count(index, bal, mask);
  }
  for (const row of parkedOnly(token, wallets)) {
    const counted = row.bal > 0n && !isExcludedHolder(token, row.wallet);
    const mask = counted
      ? categoriesOf(token, row.wallet, row.attrs, viewWallet(wallets, walletKey(token.chain, row.wallet)))
      : NOT_COUNTED;
    // Its categories moved while it was parked (no index marked it): back in memory as it is now.
    if (mask !== row.mask) token.holders.set(row.wallet, holderRec(row.bal, row.attrs, mask));
    if (counted) count(index, row.bal, mask);
  }
  token.holderIndex = index;
  return index;
}

/** The token's index with every change applied. */
function settled(token: TokenState, wallets: WalletReader): HolderIndexState {
  const index = token.holderIndex ?? build(token, wallets);
  if (index.dirty.size > 0) {
    for (const [address, before] of index.dirty) update(index, token, wallets, address, before);
    index.dirty.clear();
  }
  return index;
}

/** Marks the holder changed, keeping its record as the index counts it (the first mark's). */
function markDirty(index: HolderIndexState, address: string, counted: HolderRec | undefined): void {
  if (index.dirty.get(address) === undefined) index.dirty.set(address, counted);
}

/** Call after the facts of the holder's wallet changed (its record did not). */
export function holderChanged(token: TokenState, address: string): void {
  if (token.holderIndex) markDirty(token.holderIndex, address, token.holders.get(address));
}

/**
 * Replaces the holder's record `from` in memory (read with the processor's holder(), which brings
 * a parked one back) by `to`: the index applies the change when the figures are next read.
 */
export function setHolderRec(token: TokenState, address: string, from: HolderRec, to: HolderRec): void {
  if (token.holderIndex) markDirty(token.holderIndex, address, from);
  token.holders.set(address, to);
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
  return parkHolderRecords(token, wallets, leaving);
}

/** Takes the records of these holders (each in memory) out of memory and returns them as store rows. */
export function parkHolderRecords(token: TokenState, wallets: WalletReader, leaving: string[]): ParkedHolderRow[] {
  if (leaving.length === 0) return [];
  // Applied first: a parked record's balance is the one it is counted at.
  settled(token, wallets);
  const key = tokenKey(token.chain, token.address);
  const rows: ParkedHolderRow[] = [];
  for (const address of leaving) {
    const rec = token.holders.get(address)!;
    rows.push({ token: key, wallet: address, bal: balOf(rec), attrs: attrsOf(rec), mask: maskOf(rec) });
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
