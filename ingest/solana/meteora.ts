// Meteora DBC EvtSwap / EvtSwap2 / EvtCurveComplete → swaps and curve events (CHAINS.md §1.7).
import { fromInt, pct, decToString } from '../../core/decimal.ts';
import { decodeFields } from './borsh.ts';
import { DISC } from './constants.ts';
import {
  DBC_CURVE_COMPLETE,
  DBC_SWAP,
  DBC_SWAP2,
  type DbcCurveCompleteEvent,
  type DbcSwap2Event,
  type DbcSwapEvent,
} from './layouts.ts';
import type { SwapFields, TxRecords } from './records.ts';
import type { RawEvent } from './transaction.ts';

/**
 * DBC swap accounts: pool_authority, config, pool, input_token_account, output_token_account,
 * base_vault, quote_vault, base_mint, quote_mint, payer, … — the pool is account 2.
 */
function swapAccounts(event: RawEvent, pool: string): { base: string; quote: string; payer: string } | null {
  const accounts = event.instruction?.accounts;
  if (!accounts || accounts.length < 10 || accounts[2] !== pool) return null;
  return { base: accounts[7]!, quote: accounts[8]!, payer: accounts[9]! };
}

/**
 * One convention with the other venues (docs/decoders.md): quoteAmount is the curve's amount
 * before fees, the fees are reported apart. The event's amounts are what the user paid in and got
 * out, so the fee comes off a buy's input or is added back to a sell's output when the fee was
 * taken in the quote mint (EvtSwap2: included_fee_input > excluded_fee_input means taken on input;
 * EvtSwap: assumed on the quote side, the usual config). trade_direction 1 = QuoteToBase is a buy.
 */
function onSwap(records: TxRecords, event: RawEvent, version: 1 | 2): void {
  const e =
    version === 1
      ? (decodeFields(DBC_SWAP, event.bytes.subarray(8)) as unknown as DbcSwapEvent)
      : (decodeFields(DBC_SWAP2, event.bytes.subarray(8)) as unknown as DbcSwap2Event);
  const accounts = swapAccounts(event, e.pool);
  if (!accounts) throw new RangeError(`dbc pool ${e.pool}: swap instruction accounts not found`);
  const tokenDecimals = records.decimalsOf(accounts.base);
  const quoteDecimals = records.decimalsOf(accounts.quote);
  if (tokenDecimals === null || quoteDecimals === null) throw new RangeError(`dbc ${accounts.base}: unknown decimals`);
  const result = e.swapResult;
  const input = 'actualInputAmount' in result ? result.actualInputAmount : result.includedFeeInputAmount;
  const output = result.outputAmount;
  const isBuy = e.tradeDirection === 1;
  const fees = result.tradingFee + result.protocolFee + result.referralFee;
  const feeOnInput =
    'includedFeeInputAmount' in result ? result.includedFeeInputAmount > result.excludedFeeInputAmount : isBuy;
  const feesInQuote = feeOnInput === isBuy;
  const tokenAmount = isBuy ? output : input;
  let quoteAmount = isBuy ? input : output;
  let platformFee = fees;
  if (feesInQuote) quoteAmount = isBuy ? quoteAmount - fees : quoteAmount + fees;
  // A fee taken in the base mint, valued at the execution price (fees stay in quote units).
  else platformFee = tokenAmount === 0n ? 0n : (fees * quoteAmount) / tokenAmount;
  const fields: SwapFields = {
    token: accounts.base,
    quoteAsset: accounts.quote,
    tokenAmount: tokenAmount.toString(),
    tokenDecimals,
    quoteAmount: quoteAmount.toString(),
    quoteDecimals,
    side: isBuy ? 'buy' : 'sell',
    trader: accounts.payer,
    pool: e.pool,
    dex: 'meteora-dbc',
    launchpad: 'meteora-dbc',
  };
  if ('migrationThreshold' in e && e.migrationThreshold > 0n) {
    const progress = pct(fromInt(e.quoteReserveAmount), fromInt(e.migrationThreshold));
    const complete = e.quoteReserveAmount >= e.migrationThreshold;
    fields.curve = {
      progressPct: decToString(complete ? fromInt(100) : progress),
      realQuoteReserves: e.quoteReserveAmount.toString(),
      complete,
    };
  }
  fields.fees = { platform: platformFee.toString() };
  records.swap(fields, e.currentTimestamp, event.instruction);
}

export function decodeMeteoraDbcEvent(records: TxRecords, event: RawEvent): void {
  if (event.kind !== 'anchor') return;
  const disc = Buffer.from(event.bytes.subarray(0, 8)).toString('hex');
  if (disc === DISC.dbcSwap) return onSwap(records, event, 1);
  if (disc === DISC.dbcSwap2) return onSwap(records, event, 2);
  if (disc === DISC.dbcCurveComplete) {
    const c = decodeFields(DBC_CURVE_COMPLETE, event.bytes.subarray(8)) as unknown as DbcCurveCompleteEvent;
    const token = swapAccounts(event, c.pool)?.base ?? records.tokenOfPool(c.pool);
    if (!token) throw new RangeError(`dbc pool ${c.pool}: curve complete without a known base mint`);
    records.tokenEvent({ kind: 'curve', token, progressPct: '100', complete: true });
  }
}
