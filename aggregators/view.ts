// Token objects (spot.tokens.v1, the tokens table) built from a token's state: a pure function
// of that state and the wallet facts its holders depend on (no wall clock, no live marks).
import type { Token } from '../core/schemas.ts';
import { ZERO, type Dec } from '../core/decimal.ts';
import { CHAIN_INFO } from '../core/chains.ts';
import { walletKey, type WalletReader } from './wallet-facts.ts';
import { holderFigures } from './holder-index.ts';
import { quoteSymbol } from './pricing.ts';
import type { PoolState, TokenState } from './state.ts';
import { windowStats } from './windows.ts';
import { decText } from './format.ts';

const priced = (native: Dec, usd: Dec) => ({ native: decText(native), usd: decText(usd) });

/** Pools deepest first (native liquidity), ties by address so the order is fixed. */
export function poolsByDepth(t: TokenState): Array<[string, PoolState]> {
  return [...t.pools.entries()].sort(([a, pa], [b, pb]) =>
    pa.liqN > pb.liqN ? -1 : pa.liqN < pb.liqN ? 1 : a < b ? -1 : a > b ? 1 : 0,
  );
}

export function buildToken(t: TokenState, wallets: WalletReader): Token {
  const pools = poolsByDepth(t);
  const dexes: string[] = [];
  let liqN = ZERO;
  let liqU = ZERO;
  for (const [, ps] of pools) {
    if (ps.dex && !dexes.includes(ps.dex)) dexes.push(ps.dex);
    liqN += ps.liqN;
    liqU += ps.liqU;
  }
  const anchor = pools[0]?.[1].quote ?? null;
  const funder = t.creator ? (wallets.get(walletKey(t.chain, t.creator))?.funder ?? null) : null;
  const f = t.fees;
  const isLaunchpad = t.launchpad !== null;
  return {
    chain: t.chain,
    address: t.address,
    name: t.name,
    symbol: t.symbol,
    decimals: t.decimals,
    supply: decText(t.supplyHuman),
    creator: t.creator,
    devFunding: {
      funder: funder?.from ?? null,
      funderLabel: funder?.label ?? null,
      amount: funder ? priced(funder.amountN, funder.amountU) : null,
      fundedAt: funder?.at ?? null,
    },
    createdAt: t.createdAt,
    dexes,
    price: priced(t.priceN, t.priceU),
    marketCap: priced(t.mcapN, t.mcapU),
    liquidity: priced(liqN, liqU),
    ath: {
      price: priced(t.athPN, t.athPU),
      priceAt: t.athPAt,
      marketCap: priced(t.athMN, t.athMU),
      marketCapAt: t.athMAt,
    },
    stats: windowStats(t.win),
    totals: {
      fees: {
        transaction: priced(f.txN, f.txU),
        validator: priced(f.valN, f.valU),
        platform: priced(f.platN, f.platU),
        dex: priced(f.dexN, f.dexU),
      },
      trades: t.trades,
      buys: t.buys,
      sells: t.sells,
      volume: priced(t.volN, t.volU),
    },
    holders: holderFigures(t, wallets),
    security: {
      mintDisabled: t.security.mintDisabled ?? isLaunchpad,
      transferBlockable: t.security.transferBlockable,
      lpBurntPct: t.security.lpBurntPct,
      transferFeeBps: t.security.transferFeeBps,
    },
    metadata: { ...t.metadata },
    updatedAt: t.updatedAt,
    anchorAddress: anchor,
    anchorSymbol:
      anchor === null
        ? null
        : (quoteSymbol(t.chain, anchor) ??
          (anchor === CHAIN_INFO[t.chain].native.wrapped ? CHAIN_INFO[t.chain].native.wrappedSymbol : null)),
    annotations: t.mayhem ? [{ kind: 'mayhem_mode' }] : [],
    bondingCurvePct: t.bondingCurvePct,
    launchpad: t.launchpad,
    graduatedAt: t.graduatedAt,
    graduatedToPool: t.graduatedToPool,
    graduatedToDex: t.graduatedToDex,
    // Paid promotions only: the platforms a trade was routed through belong to the trade.
    platforms: (t.promotions ?? []).map((p) => ({ platform: p.platform, isPaid: true, paidAt: p.paidAt })),
  };
}
