// Holder figures of one token from its balances (token events only) and wallet facts. Each
// definition is written out in docs/holders.md.
import { tokenKey, type Chain } from '../core/chains.ts';
import { pct } from '../core/decimal.ts';
import type { Static } from '@sinclair/typebox';
import type { Holders } from '../core/schemas.ts';
import { ATTR, type TokenState, type WalletState } from './state.ts';
import { decText } from './format.ts';

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

/** A token leaves the wallet records that point at it (holdings, creations): its state moves elsewhere. */
export function detachFromWallets(wallets: Map<string, WalletState>, t: TokenState): void {
  const key = tokenKey(t.chain, t.address);
  for (const address of t.holders.keys()) wallets.get(walletKey(t.chain, address))?.held.delete(key);
  const creator = t.creator === '' ? undefined : wallets.get(walletKey(t.chain, t.creator));
  if (creator) creator.created = creator.created.filter((k) => k !== key);
}

export function walletKey(chain: Chain, wallet: string): string {
  return tokenKey(chain, wallet);
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

/** Holder figures now: shares are of total supply, counts are of current holders. */
export function computeHolders(token: TokenState, wallets: Map<string, WalletState>): HoldersObject {
  let count = 0;
  const top: bigint[] = []; // the 10 largest balances, descending
  let dev = 0n,
    sniper = 0n,
    insider = 0n,
    bundler = 0n,
    fresh = 0n,
    pro = 0n,
    fomo = 0n,
    phishing = 0n,
    cex = 0n;
  let sniperCount = 0,
    insiderCount = 0,
    bundlerCount = 0,
    freshCount = 0,
    proCount = 0;
  for (const [address, rec] of token.holders) {
    if (rec.bal <= 0n || isExcludedHolder(token, address)) continue;
    const bal = rec.bal;
    count++;
    if (top.length < 10 || bal > top[top.length - 1]!) {
      let i = top.length < 10 ? top.length : 9;
      top[i] = bal;
      while (i > 0 && top[i - 1]! < bal) {
        top[i] = top[i - 1]!;
        top[--i] = bal;
      }
    }
    if (address === token.creator) dev += bal;
    const wallet = wallets.get(walletKey(token.chain, address));
    const a = rec.attrs;
    if (a & ATTR.sniper) {
      sniper += bal;
      sniperCount++;
    }
    if (isInsider(token, a, wallet)) {
      insider += bal;
      insiderCount++;
    }
    if (a & ATTR.bundler) {
      bundler += bal;
      bundlerCount++;
    }
    if (a & ATTR.fresh) {
      fresh += bal;
      freshCount++;
    }
    if (isProTrader(wallet)) {
      pro += bal;
      proCount++;
    }
    if (a & ATTR.fomo) fomo += bal;
    if (isPhishing(wallet)) phishing += bal;
    if (isCexFunded(wallet)) cex += bal;
  }
  const share = (part: bigint) => decText(pct(part, token.supply));
  return {
    count,
    top10Pct: share(top.reduce((s, b) => s + b, 0n)),
    devPct: share(dev),
    sniperPct: share(sniper),
    sniperCount,
    insiderPct: share(insider),
    insiderCount,
    bundlerPct: share(bundler),
    bundlerCount,
    freshWalletPct: share(fresh),
    freshWalletCount: freshCount,
    proTraderPct: share(pro),
    proTraderCount: proCount,
    fomoPct: share(fomo),
    phishingPct: share(phishing),
    fundedByCexPct: share(cex),
  };
}
