// Token-vs-quote choice for pools whose events name two mints without a base/quote role.
import { QUOTE_MINTS, USDC_MINT } from './constants.ts';
import type { SwapFields, TxRecords } from './records.ts';

/**
 * The quote of a pair: USDC over SOL (so SOL/USDC prices SOL in USDC), else SOL or USDC
 * whichever is present, else `fallback` (the pool's own pricing side).
 */
export function chooseQuote(mintA: string, mintB: string, fallback: string): string {
  if (mintA === USDC_MINT || mintB === USDC_MINT) return USDC_MINT;
  if (QUOTE_MINTS.has(mintA)) return mintA;
  if (QUOTE_MINTS.has(mintB)) return mintB;
  return fallback;
}

export interface PairLeg {
  mintIn: string;
  mintOut: string;
  amountIn: bigint;
  amountOut: bigint;
  /** Post-trade pool reserves by mint, when known. */
  reservesIn?: bigint;
  reservesOut?: bigint;
}

/** The token/quote/side/amount fields of a swap from the user's in and out legs. */
export function pairFields(
  records: TxRecords,
  leg: PairLeg,
  quote: string,
): Pick<
  SwapFields,
  'token' | 'quoteAsset' | 'tokenAmount' | 'tokenDecimals' | 'quoteAmount' | 'quoteDecimals' | 'side' | 'reserves'
> {
  const tokenIsInput = quote === leg.mintOut;
  const token = tokenIsInput ? leg.mintIn : leg.mintOut;
  const tokenDecimals = records.decimalsOf(token);
  const quoteDecimals = records.decimalsOf(quote);
  if (tokenDecimals === null || quoteDecimals === null) throw new RangeError(`unknown decimals for ${token}/${quote}`);
  const [tokenAmount, quoteAmount] = tokenIsInput ? [leg.amountIn, leg.amountOut] : [leg.amountOut, leg.amountIn];
  const reserves =
    leg.reservesIn !== undefined && leg.reservesOut !== undefined
      ? tokenIsInput
        ? { token: leg.reservesIn.toString(), quote: leg.reservesOut.toString() }
        : { token: leg.reservesOut.toString(), quote: leg.reservesIn.toString() }
      : undefined;
  const fields: ReturnType<typeof pairFields> = {
    token,
    quoteAsset: quote,
    tokenDecimals,
    quoteDecimals,
    tokenAmount: tokenAmount.toString(),
    quoteAmount: quoteAmount.toString(),
    side: tokenIsInput ? 'sell' : 'buy',
  };
  if (reserves) fields.reserves = reserves;
  return fields;
}
