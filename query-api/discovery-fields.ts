// What discovery reads of a token, as one flat object: the hot views keep one per token (about
// 34k through a mainnet day), and the token's nested shape cost some fifteen objects each where
// this costs one. Decimals stay exact strings, as the token has them.
import type { Chain } from '../core/chains.ts';
import type { Token } from '../core/schemas.ts';

export interface DiscoveryFields {
  chain: Chain;
  address: string;
  name: string;
  symbol: string;
  creator: string;
  createdAt: number;
  updatedAt: number;
  launchpad: string | null;
  anchorSymbol: string | null;
  bondingCurvePct: string | null;
  graduatedAt: number | null;
  /** The token carries the mayhem_mode annotation. */
  mayhem: boolean;
  funder: string | null;
  holderCount: number;
  devPct: string;
  sniperPct: string;
  top10Pct: string;
  liquidityUsd: string;
  marketCapUsd: string;
  buys24h: number;
  sells24h: number;
  volume24hUsd: string;
  volume1hUsd: string;
  feesDexUsd: string;
  feesPlatformUsd: string;
  twitter: string | null;
  website: string | null;
  telegram: string | null;
  discord: string | null;
}

/** Copies the fields (no references into the token's objects). `intern` may share repeated strings. */
export function discoveryFields(t: Token, intern: (text: string) => string = (text) => text): DiscoveryFields {
  const day = t.stats['24h'];
  return {
    chain: intern(t.chain) as Chain,
    address: t.address,
    name: t.name,
    symbol: t.symbol,
    creator: t.creator,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    launchpad: t.launchpad == null ? null : intern(t.launchpad),
    anchorSymbol: t.anchorSymbol == null ? null : intern(t.anchorSymbol),
    bondingCurvePct: t.bondingCurvePct ?? null,
    graduatedAt: t.graduatedAt ?? null,
    mayhem: t.annotations?.some((a) => a.kind === 'mayhem_mode') ?? false,
    funder: t.devFunding.funder,
    holderCount: t.holders.count,
    devPct: t.holders.devPct,
    sniperPct: t.holders.sniperPct,
    top10Pct: t.holders.top10Pct,
    liquidityUsd: t.liquidity.usd,
    marketCapUsd: t.marketCap.usd,
    buys24h: day.buyCount,
    sells24h: day.sellCount,
    volume24hUsd: day.volume.usd,
    volume1hUsd: t.stats['1h'].volume.usd,
    feesDexUsd: t.totals.fees.dex.usd,
    feesPlatformUsd: t.totals.fees.platform.usd,
    twitter: t.metadata.twitter,
    website: t.metadata.website,
    telegram: t.metadata.telegram,
    discord: t.metadata.discord,
  };
}
