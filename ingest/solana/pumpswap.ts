// PumpSwap (pump_amm) Buy/Sell events → swaps (CHAINS.md §1.3). Pool reserves in the event are
// pre-trade; the swap carries the post-trade ones: the LP fee stays in the pool, protocol and
// creator fees leave it.
import { decodeFields } from './borsh.ts';
import { DISC, QUOTE_MINTS } from './constants.ts';
import {
  PUMPSWAP_BUY,
  PUMPSWAP_CREATE_POOL,
  PUMPSWAP_SELL,
  type PumpSwapCreatePoolEvent,
  type PumpSwapEvent,
} from './layouts.ts';
import { pairFields } from './pairs.ts';
import type { SwapFields, TxRecords } from './records.ts';
import type { RawEvent } from './transaction.ts';

/** Base and quote mints: from the user's token accounts, else the instruction's base_mint/quote_mint (accounts 3, 4). */
function poolMints(records: TxRecords, e: PumpSwapEvent, event: RawEvent): { base: string; quote: string } | null {
  const ix = event.instruction;
  const base =
    records.balanceOf(e.userBaseTokenAccount)?.mint ?? (ix && ix.accounts.length > 4 ? ix.accounts[3]! : null);
  const quote =
    records.balanceOf(e.userQuoteTokenAccount)?.mint ?? (ix && ix.accounts.length > 4 ? ix.accounts[4]! : null);
  return base && quote ? { base, quote } : null;
}

export function decodePumpSwapEvent(records: TxRecords, event: RawEvent): void {
  if (event.kind !== 'anchor') return;
  const disc = Buffer.from(event.bytes.subarray(0, 8)).toString('hex');
  if (disc === DISC.pumpswapCreatePool) return onCreatePool(records, event);
  const isBuy = disc === DISC.pumpswapBuy;
  if (!isBuy && disc !== DISC.pumpswapSell) return;
  const e = decodeFields(isBuy ? PUMPSWAP_BUY : PUMPSWAP_SELL, event.bytes.subarray(8)) as unknown as PumpSwapEvent;
  const mints = poolMints(records, e, event);
  if (!mints) throw new RangeError(`pumpswap pool ${e.pool}: mints not found`);

  const baseAmount = isBuy ? e.baseAmountOut! : e.baseAmountIn!;
  const quoteAmount = isBuy ? e.quoteAmountIn! : e.quoteAmountOut!;
  const postBase = isBuy ? e.poolBaseTokenReserves - baseAmount : e.poolBaseTokenReserves + baseAmount;
  const postQuote = isBuy
    ? e.poolQuoteTokenReserves + (e.quoteAmountInWithLpFee ?? quoteAmount + e.lpFee)
    : e.poolQuoteTokenReserves - (e.quoteAmountOutWithoutLpFee ?? quoteAmount - e.lpFee);
  const leg = isBuy
    ? {
        mintIn: mints.quote,
        mintOut: mints.base,
        amountIn: quoteAmount,
        amountOut: baseAmount,
        reservesIn: postQuote,
        reservesOut: postBase,
      }
    : {
        mintIn: mints.base,
        mintOut: mints.quote,
        amountIn: baseAmount,
        amountOut: quoteAmount,
        reservesIn: postBase,
        reservesOut: postQuote,
      };
  // Canonical pools trade the coin (base) against SOL (quote); a pool with SOL/USDC as base flips.
  const flipped = QUOTE_MINTS.has(mints.base) && !QUOTE_MINTS.has(mints.quote);
  const quote = flipped ? mints.base : mints.quote;
  const fields: SwapFields = Object.assign(pairFields(records, leg, quote), {
    trader: e.user,
    pool: e.pool,
    dex: 'pumpswap',
    launchpad: null,
  });
  // Fees are paid in the pool's quote mint, so they are only in our quote units when not flipped.
  if (!flipped)
    fields.fees = { dex: e.lpFee.toString(), platform: (e.protocolFee + (e.coinCreatorFee ?? 0n)).toString() };
  records.swap(fields, e.timestamp, event);
}

/**
 * A PumpSwap pool for a coin is where it trades after its curve (pump.fun's migrate creates it, in
 * the same transaction as CompletePumpAmmMigrationEvent: records keep one graduation per token and
 * pool). The coin is the side that is not SOL/USDC.
 */
function onCreatePool(records: TxRecords, event: RawEvent): void {
  const c = decodeFields(PUMPSWAP_CREATE_POOL, event.bytes.subarray(8)) as unknown as PumpSwapCreatePoolEvent;
  const flipped = QUOTE_MINTS.has(c.baseMint) && !QUOTE_MINTS.has(c.quoteMint);
  records.tokenEvent(
    { kind: 'graduated', token: flipped ? c.quoteMint : c.baseMint, pool: c.pool, dex: 'pumpswap' },
    c.timestamp,
  );
}
