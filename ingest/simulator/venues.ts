// Per-launchpad and per-venue conventions of the simulated market: curve parameters, fee
// rates, the DEX a curve graduates to, and how each venue reports a trade's quote amount, so a
// trade the model makes is exactly what the venue's event says.
import {
  ceilDiv,
  curveBuy,
  curveSell,
  dammV2Buy,
  dammV2Sell,
  newPumpCurve,
  poolBuy,
  poolSell,
  pumpSwapBuy,
  pumpSwapSell,
  PUMP,
  type CurveState,
  type PoolState,
} from './curves.ts';

export type Launchpad = 'pumpfun' | 'launchlab' | 'meteora-dbc' | 'fourmeme' | 'clanker' | 'pools.trade' | 'arc-launch';

/** Curve parameters per launchpad: virtual reserves in base units, the sellable share, token decimals. */
export function newCurve(
  launchpad: Launchpad,
  nativeDecimals: number,
): { curve: CurveState | null; decimals: number; supply: bigint } {
  const unit = 10n ** BigInt(nativeDecimals);
  switch (launchpad) {
    case 'pumpfun':
      return { curve: newPumpCurve(), decimals: 6, supply: PUMP.totalSupply };
    case 'launchlab':
      return { curve: { ...newPumpCurve(), virtualQuote: 30n * unit }, decimals: 6, supply: PUMP.totalSupply };
    case 'meteora-dbc':
      // DBC migrates on quote raised (migration_quote_threshold), before the curve runs out of tokens.
      return {
        curve: { ...newPumpCurve(), virtualQuote: 30n * unit, quoteThreshold: 80n * unit },
        decimals: 6,
        supply: PUMP.totalSupply,
      };
    case 'fourmeme': {
      const token = 10n ** 18n;
      const sellable = 800_000_000n * token;
      return {
        curve: {
          virtualToken: 1_073_300_000n * token,
          virtualQuote: (75n * unit) / 10n,
          realToken: sellable,
          realQuote: 0n,
          initialRealToken: sellable,
          complete: false,
        },
        decimals: 18,
        supply: 1_000_000_000n * token,
      };
    }
    default:
      return { curve: null, decimals: 18, supply: 1_000_000_000n * 10n ** 18n };
  }
}

/** Where each launchpad's curve migrates on chain (DBC: migration_damm_v2). */
export const GRADUATION_DEX: Partial<Record<Launchpad, string>> = {
  pumpfun: 'pumpswap',
  launchlab: 'raydium-cpmm',
  'meteora-dbc': 'meteora-damm-v2',
  fourmeme: 'pancakeswap-v2',
};

/** Curve fees in bps of the curve amount: platform (launchpad/protocol) and creator. */
const CURVE_FEE_BPS: Partial<Record<Launchpad, { platform: bigint; creator: bigint }>> = {
  pumpfun: { platform: PUMP.feeBps, creator: PUMP.creatorFeeBps },
  launchlab: { platform: 125n, creator: 5n },
  'meteora-dbc': { platform: 80n, creator: 20n },
  fourmeme: { platform: 100n, creator: 0n },
};

/** LP fee of constant-product pools in pips (millionths). */
const POOL_FEE_PIPS: Record<string, bigint> = {
  'raydium-cpmm': 2500n,
  'meteora-damm-v2': 2500n,
  'pancakeswap-v2': 2500n,
};
export const V4_FEE_PIPS: Partial<Record<Launchpad, number>> = {
  clanker: 10_000,
  'pools.trade': 2500,
  'arc-launch': 3000,
};

export function poolFeePips(launchpad: Launchpad, dex: string): bigint {
  if (dex === 'uniswap-v4') return BigInt(V4_FEE_PIPS[launchpad] ?? 3000);
  return POOL_FEE_PIPS[dex] ?? 2500n;
}

export interface VenueState {
  launchpad: Launchpad;
  curve: CurveState | null;
  pool: PoolState | null;
  poolDex: string | null;
}

export interface TradeResult {
  venue: 'curve' | 'pool';
  tokenAmount: bigint;
  /** The curve's or pool's amount before fees, fees apart (docs/decoders.md: one convention on every venue). */
  quoteAmount: bigint;
  platformFee: bigint;
  creatorFee: bigint;
  lpFee: bigint;
  /** State before and after the trade; the caller commits `after`. */
  curveBefore: CurveState | null;
  poolBefore: PoolState | null;
  curve: CurveState | null;
  pool: PoolState | null;
}

/**
 * Prices a trade on the token's current venue without touching its state: `amount` is the
 * quote spent on a buy, the tokens sold on a sell. Null when the trade rounds to nothing.
 */
export function priceTrade(state: VenueState, side: 'buy' | 'sell', amount: bigint): TradeResult | null {
  const onCurve = state.curve !== null && !state.curve.complete;
  const curve = onCurve ? { ...state.curve! } : null;
  const pool = !onCurve && state.pool ? { ...state.pool } : null;
  if (!curve && !pool) return null;
  let tokenAmount: bigint,
    quoteAmount: bigint,
    platformFee = 0n,
    creatorFee = 0n,
    lpFee = 0n;
  if (curve) {
    let curveQuote: bigint;
    if (side === 'buy') {
      const result = curveBuy(curve, amount);
      tokenAmount = result.tokenOut;
      curveQuote = result.quoteIn;
    } else {
      tokenAmount = amount;
      curveQuote = curveSell(curve, amount).quoteOut;
    }
    const rates = CURVE_FEE_BPS[state.launchpad] ?? { platform: 0n, creator: 0n };
    platformFee = ceilDiv(curveQuote * rates.platform, 10_000n);
    creatorFee = ceilDiv(curveQuote * rates.creator, 10_000n);
    const fees = platformFee + creatorFee;
    if (side === 'sell' && curveQuote <= fees) return null;
    quoteAmount = curveQuote;
  } else if (state.poolDex === 'pumpswap') {
    const result = side === 'buy' ? pumpSwapBuy(pool!, amount) : pumpSwapSell(pool!, amount);
    ({ tokenAmount, quoteAmount, lpFee, protocolFee: platformFee, creatorFee } = result);
    if (side === 'sell' && quoteAmount <= lpFee + platformFee + creatorFee) return null;
  } else if (state.poolDex === 'meteora-damm-v2') {
    // The pool's in/out amounts, its fee (in the quote) inside them.
    const pips = poolFeePips(state.launchpad, state.poolDex);
    if (side === 'buy') {
      ({ tokenOut: tokenAmount, fee: lpFee } = dammV2Buy(pool!, amount, pips));
      quoteAmount = amount;
    } else {
      ({ quoteOut: quoteAmount, fee: lpFee } = dammV2Sell(pool!, amount, pips));
      tokenAmount = amount;
    }
  } else {
    const pips = poolFeePips(state.launchpad, state.poolDex ?? '');
    if (side === 'buy') {
      const result = poolBuy(pool!, amount, pips);
      tokenAmount = result.tokenOut;
      quoteAmount = amount;
      lpFee = result.fee;
    } else {
      const result = poolSell(pool!, amount, pips);
      tokenAmount = amount;
      quoteAmount = result.quoteOut;
      lpFee = result.fee;
    }
  }
  if (tokenAmount === 0n || quoteAmount === 0n) return null;
  return {
    venue: curve ? 'curve' : 'pool',
    tokenAmount,
    quoteAmount,
    platformFee,
    creatorFee,
    lpFee,
    curveBefore: curve ? { ...state.curve! } : null,
    poolBefore: pool ? { ...state.pool! } : null,
    curve,
    pool,
  };
}
