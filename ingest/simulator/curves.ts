// Exact integer curve and pool math the simulator trades on (bigint, base units).
// pump.fun and LaunchLab follow CHAINS.md; the others are constant-product curves with
// virtual reserves, which is how their launch curves behave at this level of detail.

export interface CurveState {
  virtualToken: bigint;
  virtualQuote: bigint;
  realToken: bigint; // tokens still for sale on the curve
  realQuote: bigint; // quote raised so far
  /** Tokens sellable on the curve in total; progress = sold / initialRealToken. */
  initialRealToken: bigint;
  /** Quote-raised migration threshold (Meteora DBC); absent = the curve ends when its tokens are sold. */
  quoteThreshold?: bigint;
  complete: boolean;
}

export function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

/**
 * pump.fun: tokens out for `quoteIn` (net of fees) on virtual reserves, capped at the real
 * reserve; a curve with a quote threshold (DBC) takes at most what reaches the threshold.
 */
export function curveBuy(state: CurveState, quoteIn: bigint): { tokenOut: bigint; quoteIn: bigint } {
  if (state.quoteThreshold !== undefined && state.realQuote + quoteIn > state.quoteThreshold) {
    quoteIn = state.quoteThreshold - state.realQuote;
  }
  let tokenOut = (state.virtualToken * quoteIn) / (state.virtualQuote + quoteIn);
  if (tokenOut >= state.realToken) {
    tokenOut = state.realToken;
    quoteIn = (state.virtualQuote * tokenOut) / (state.virtualToken - tokenOut) + 1n;
  }
  state.virtualToken -= tokenOut;
  state.virtualQuote += quoteIn;
  state.realToken -= tokenOut;
  state.realQuote += quoteIn;
  if (state.realToken === 0n || (state.quoteThreshold !== undefined && state.realQuote >= state.quoteThreshold))
    state.complete = true;
  return { tokenOut, quoteIn };
}

export function curveSell(state: CurveState, tokenIn: bigint): { quoteOut: bigint } {
  let quoteOut = (tokenIn * state.virtualQuote) / (state.virtualToken + tokenIn);
  if (quoteOut > state.realQuote) quoteOut = state.realQuote;
  state.virtualToken += tokenIn;
  state.virtualQuote -= quoteOut;
  state.realToken += tokenIn;
  state.realQuote -= quoteOut;
  return { quoteOut };
}

export interface PoolState {
  token: bigint;
  quote: bigint;
}

/**
 * Constant product (Uniswap V2/V4, PancakeSwap V2, Raydium CPMM): the LP fee (pips of the
 * input) is taken from the input and stays in the pool. `fee` is reported in quote units at the
 * execution price (quoteAmount·pips/1e6, rounded down), as the EVM decoder reports it.
 */
export function poolBuy(pool: PoolState, quoteIn: bigint, feePips: bigint): { tokenOut: bigint; fee: bigint } {
  const fee = (quoteIn * feePips) / 1_000_000n;
  const net = quoteIn - fee;
  const tokenOut = (pool.token * net) / (pool.quote + net);
  pool.token -= tokenOut;
  pool.quote += quoteIn;
  return { tokenOut, fee };
}

export function poolSell(pool: PoolState, tokenIn: bigint, feePips: bigint): { quoteOut: bigint; fee: bigint } {
  const net = tokenIn - (tokenIn * feePips) / 1_000_000n;
  const quoteOut = (pool.quote * net) / (pool.token + net);
  pool.token += tokenIn;
  pool.quote -= quoteOut;
  return { quoteOut, fee: (quoteOut * feePips) / 1_000_000n };
}

/**
 * Meteora DAMM v2 full-range pool (x·y = L², how DBC migrates) in collect-fee mode OnlyB, the
 * token being token A and the quote token B: the fee (pips, rounded up) is in the quote, off a
 * buy's input and off a sell's output, and stays out of the reserves (claimable, not compounded).
 */
export function dammV2Buy(pool: PoolState, quoteIn: bigint, feePips: bigint): { tokenOut: bigint; fee: bigint } {
  const fee = ceilDiv(quoteIn * feePips, 1_000_000n);
  const net = quoteIn - fee;
  const tokenOut = (pool.token * net) / (pool.quote + net);
  pool.token -= tokenOut;
  pool.quote += net;
  return { tokenOut, fee };
}

export function dammV2Sell(pool: PoolState, tokenIn: bigint, feePips: bigint): { quoteOut: bigint; fee: bigint } {
  const gross = (pool.quote * tokenIn) / (pool.token + tokenIn);
  const fee = ceilDiv(gross * feePips, 1_000_000n);
  pool.token += tokenIn;
  pool.quote -= gross;
  return { quoteOut: gross - fee, fee };
}

/** PumpSwap fee rates (bps of the quote amount): LP fee stays in the pool, the others leave it. */
export const PUMPSWAP_FEE_BPS = { lp: 20n, protocol: 5n, creator: 5n } as const;

export interface PumpSwapResult {
  tokenAmount: bigint;
  quoteAmount: bigint;
  lpFee: bigint;
  protocolFee: bigint;
  creatorFee: bigint;
}

function pumpSwapFees(quoteAmount: bigint) {
  return {
    lpFee: ceilDiv(quoteAmount * PUMPSWAP_FEE_BPS.lp, 10_000n),
    protocolFee: ceilDiv(quoteAmount * PUMPSWAP_FEE_BPS.protocol, 10_000n),
    creatorFee: ceilDiv(quoteAmount * PUMPSWAP_FEE_BPS.creator, 10_000n),
  };
}

/** PumpSwap buy: `quoteAmount` goes into the curve, the fees are paid on top. */
export function pumpSwapBuy(pool: PoolState, quoteAmount: bigint): PumpSwapResult {
  const tokenAmount = (pool.token * quoteAmount) / (pool.quote + quoteAmount);
  const fees = pumpSwapFees(quoteAmount);
  pool.token -= tokenAmount;
  pool.quote += quoteAmount + fees.lpFee;
  return { tokenAmount, quoteAmount, ...fees };
}

/** PumpSwap sell: `quoteAmount` comes out of the curve, the fees are deducted from it. */
export function pumpSwapSell(pool: PoolState, tokenAmount: bigint): PumpSwapResult {
  const quoteAmount = (pool.quote * tokenAmount) / (pool.token + tokenAmount);
  const fees = pumpSwapFees(quoteAmount);
  pool.token += tokenAmount;
  pool.quote -= quoteAmount - fees.lpFee;
  return { tokenAmount, quoteAmount, ...fees };
}

/** Integer square root (Newton), for sqrtPriceX96 and Q64.64 prices. */
export function isqrt(value: bigint): bigint {
  if (value < 0n) throw new RangeError('square root of a negative number');
  if (value < 2n) return value;
  // Start from the float estimate (just above the root), then Newton steps down to it.
  let x = BigInt(Math.ceil(Math.sqrt(Number(value)) * (1 + 1e-12))) + 1n;
  if (x * x < value) x = value;
  let y = (x + value / x) >> 1n;
  while (y < x) {
    x = y;
    y = (x + value / x) >> 1n;
  }
  return x;
}

/** sqrt(amount1/amount0) in Q64.96, Uniswap's sqrtPriceX96. */
export function sqrtPriceX96(reserve0: bigint, reserve1: bigint): bigint {
  if (reserve0 === 0n) return 0n;
  return isqrt((reserve1 << 192n) / reserve0);
}

/** Uniswap tick of a raw price amount1/amount0: floor(log_1.0001(price)). */
export function tickOf(reserve0: bigint, reserve1: bigint): number {
  if (reserve0 === 0n || reserve1 === 0n) return 0;
  const ratio = Number(reserve1) / Number(reserve0);
  return Math.floor(Math.log(ratio) / Math.log(1.0001));
}

// pump.fun Global constants (CHAINS.md 1.2).
export const PUMP = {
  initialVirtualToken: 1_073_000_000_000_000n,
  initialVirtualQuote: 30_000_000_000n,
  initialRealToken: 793_100_000_000_000n,
  totalSupply: 1_000_000_000_000_000n,
  feeBps: 95n,
  creatorFeeBps: 30n,
  migrationFee: 15_000_001n,
} as const;

export function newPumpCurve(): CurveState {
  return {
    virtualToken: PUMP.initialVirtualToken,
    virtualQuote: PUMP.initialVirtualQuote,
    realToken: PUMP.initialRealToken,
    realQuote: 0n,
    initialRealToken: PUMP.initialRealToken,
    complete: false,
  };
}
