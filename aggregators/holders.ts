// Holder figures of one token from its balances (token events only) and wallet facts. Each
// definition is written out in docs/holders.md.
import { tokenKey } from '../core/chains.ts';
import { pct } from '../core/decimal.ts';
import type { Static } from '@sinclair/typebox';
import type { Holders } from '../core/schemas.ts';
import { ATTR, CATEGORIES, CATEGORY, type Category, type TokenState, type WalletState } from './state.ts';
import { decText } from './format.ts';
import { attrsOf, balOf } from './holder-records.ts';
import { setHolding, viewWallet, walletKey, type WalletReader } from './wallet-facts.ts';
import type { ParkedHolderRow } from './wallet-store.ts';

export const SNIPER_WINDOW_MS = 15_000;
export const FRESH_WALLET_MS = 24 * 3_600_000;
export const PRO_TRADER_TRADES = 50;
export const FOMO_MULTIPLE = 3n;

/** Addresses that hold supply without being holders: burns (EVM zero and dead, Solana incinerator). */
export const BURN_ADDRESSES = new Set([
  '0x0000000000000000000000000000000000000000',
  '0x000000000000000000000000000000000000dead',
  '1nc1nerator11111111111111111111111111111111',
]);

export function isExcludedHolder(token: TokenState, wallet: string): boolean {
  return (
    isBurnAddress(wallet) ||
    wallet === token.address ||
    token.pools.has(wallet) ||
    (token.custody?.includes(wallet) ?? false)
  );
}

/** A burn address in any case; lower-cases only what could be one (42 or 43 characters from '0' or '1'). */
function isBurnAddress(wallet: string): boolean {
  if (BURN_ADDRESSES.has(wallet)) return true;
  const first = wallet.charCodeAt(0);
  return (
    (wallet.length === 42 || wallet.length === 43) &&
    (first === 48 || first === 49) &&
    BURN_ADDRESSES.has(wallet.toLowerCase())
  );
}

/** The token's parked holder rows whose record is not back in memory (those count as they are in memory). */
export function* parkedOnly(token: TokenState, wallets: WalletReader): Generator<ParkedHolderRow> {
  if (!token.parkedHolders || !wallets.holders) return;
  for (const row of wallets.holders.holdersOf(tokenKey(token.chain, token.address)))
    if (!token.holders.has(row.wallet)) yield row;
}

/** A token leaves the wallet records that point at it (holdings, creations): its state moves elsewhere. */
export function detachFromWallets(wallets: Map<string, WalletState>, t: TokenState): void {
  const key = tokenKey(t.chain, t.address);
  for (const address of t.holders.keys()) {
    const wallet = wallets.get(walletKey(t.chain, address));
    if (wallet) setHolding(wallet, key, false);
  }
  const creator = t.creator === '' ? undefined : wallets.get(walletKey(t.chain, t.creator));
  if (creator) creator.created = creator.created.filter((k) => k !== key);
}

export function isProTrader(wallet: WalletState | undefined): boolean {
  return !!wallet && (wallet.labels.includes('pro_trader') || wallet.trades >= PRO_TRADER_TRADES);
}

export function isInsider(token: TokenState, attrs: number, wallet: WalletState | undefined): boolean {
  return (attrs & ATTR.insider) !== 0 || (!!wallet && token.creator !== '' && wallet.fundedBy.includes(token.creator));
}

export function isCexFunded(wallet: WalletState | undefined): boolean {
  return !!wallet?.funder?.label?.startsWith('cex:');
}

export function isPhishing(wallet: WalletState | undefined): boolean {
  return !!wallet && wallet.labels.includes('phishing');
}

export type HoldersObject = Static<typeof Holders>;

/** The categories (CATEGORY bits) a counted holder is in now: the one definition of each. */
export function categoriesOf(
  token: TokenState,
  address: string,
  attrs: number,
  wallet: WalletState | undefined,
): number {
  let mask = attrs & (CATEGORY.sniper | CATEGORY.bundler | CATEGORY.fresh | CATEGORY.fomo);
  if (address === token.creator) mask |= CATEGORY.dev;
  if (isInsider(token, attrs, wallet)) mask |= CATEGORY.insider;
  if (isProTrader(wallet)) mask |= CATEGORY.pro;
  if (isPhishing(wallet)) mask |= CATEGORY.phishing;
  if (isCexFunded(wallet)) mask |= CATEGORY.cex;
  return mask;
}

/** Index of each category in per-category sums and counts (CATEGORIES order). */
export const CATEGORY_INDEX = Object.fromEntries(CATEGORIES.map((c, i) => [c, i])) as Record<Category, number>;

/** Adds (sign 1) or removes (-1) one holder's balance to the sums and counts of its categories. */
export function addToCategories(sums: bigint[], counts: number[], bal: bigint, mask: number, sign: 1 | -1): void {
  for (let i = 0; i < CATEGORIES.length; i++) {
    if (mask & (1 << i)) {
      if (sign === 1) sums[i]! += bal;
      else sums[i]! -= bal;
      counts[i]! += sign;
    }
  }
}

/** The holder figures from the counted holders' totals: shares are of total supply. */
export function figuresOf(
  supply: bigint,
  count: number,
  top10: bigint,
  sums: bigint[],
  counts: number[],
): HoldersObject {
  const share = (part: bigint) => decText(pct(part, supply));
  const sum = (c: Category) => share(sums[CATEGORY_INDEX[c]]!);
  const n = (c: Category) => counts[CATEGORY_INDEX[c]]!;
  return {
    count,
    top10Pct: share(top10),
    devPct: sum('dev'),
    sniperPct: sum('sniper'),
    sniperCount: n('sniper'),
    insiderPct: sum('insider'),
    insiderCount: n('insider'),
    bundlerPct: sum('bundler'),
    bundlerCount: n('bundler'),
    freshWalletPct: sum('fresh'),
    freshWalletCount: n('fresh'),
    proTraderPct: sum('pro'),
    proTraderCount: n('pro'),
    fomoPct: sum('fomo'),
    phishingPct: sum('phishing'),
    fundedByCexPct: sum('cex'),
  };
}

export const emptySums = (): bigint[] => CATEGORIES.map(() => 0n);
export const emptyCounts = (): number[] => CATEGORIES.map(() => 0);

/**
 * Holder figures now, recomputed over every holder (parked ones too): the reference the incremental figures
 * (holder-index.ts) are tested against.
 */
export function computeHolders(token: TokenState, wallets: WalletReader): HoldersObject {
  let count = 0;
  const balances: bigint[] = [];
  const sums = emptySums();
  const counts = emptyCounts();
  const add = (address: string, bal: bigint, attrs: number) => {
    if (bal <= 0n || isExcludedHolder(token, address)) return;
    count++;
    balances.push(bal);
    const mask = categoriesOf(token, address, attrs, viewWallet(wallets, walletKey(token.chain, address)));
    addToCategories(sums, counts, bal, mask, 1);
  };
  for (const [address, rec] of token.holders) add(address, balOf(rec), attrsOf(rec));
  for (const row of parkedOnly(token, wallets)) add(row.wallet, row.bal, row.attrs);
  balances.sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
  const top10 = balances.slice(0, 10).reduce((s, b) => s + b, 0n);
  return figuresOf(token.supply, count, top10, sums, counts);
}
