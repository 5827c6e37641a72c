// Meteora DBC EvtSwap / EvtSwap2 / EvtCurveComplete → swaps and curve events (CHAINS.md §1.7).
import { fromInt, pct, decToString } from '../../core/decimal.ts';
import { decodeFields } from './borsh.ts';
import { DISC, IX } from './constants.ts';
import {
  DBC_CURVE_COMPLETE,
  DBC_INITIALIZE_PARAMS,
  DBC_SWAP,
  DBC_SWAP2,
  type DbcCurveCompleteEvent,
  type DbcSwap2Event,
  type DbcSwapEvent,
} from './layouts.ts';
import type { SwapFields, TxRecords } from './records.ts';
import type { Instruction, RawEvent } from './transaction.ts';

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
  records.swap(fields, e.currentTimestamp, event);
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

/**
 * Pool creation and migration emit no event with the token's metadata or the new pool, so the
 * instructions are read. initialize_virtual_pool_with_spl_token / _with_token2022 accounts:
 * config, pool_authority, creator, base_mint, quote_mint, pool, base_vault, …; args name, symbol,
 * uri. The whole pre-migration supply is minted into base_vault, whose balance gives supply and
 * decimals. migrate_meteora_damm: virtual_pool, migration_metadata, config, pool_authority,
 * pool (4), damm_config, lp_mint, token_a_mint (7 = the base), token_b_mint, …;
 * migration_damm_v2: …, pool (4), …, base_mint (13), quote_mint (14), ….
 */
export function decodeMeteoraDbcInstruction(records: TxRecords, ix: Instruction): void {
  const disc = Buffer.from(ix.data.subarray(0, 8)).toString('hex');
  const a = ix.accounts;
  if ((disc === IX.dbcInitializeWithSplToken || disc === IX.dbcInitializeWithToken2022) && a.length > 6) {
    const params = decodeFields(DBC_INITIALIZE_PARAMS, ix.data.subarray(8)) as {
      name: string;
      symbol: string;
      uri: string;
    };
    const vault = records.balanceOf(a[6]!);
    if (!vault || vault.post === null)
      throw new RangeError(`dbc pool ${a[5]}: base vault balance not in the transaction`);
    records.tokenEvent({
      kind: 'created',
      token: a[3]!,
      name: params.name,
      symbol: params.symbol,
      uri: params.uri,
      decimals: vault.decimals,
      supply: vault.post.toString(),
      creator: a[2]!,
      launchpad: 'meteora-dbc',
      pool: a[5]!,
      quoteAsset: a[4]!,
    });
  } else if (disc === IX.dbcMigrateDamm && a.length > 8) {
    records.tokenEvent({ kind: 'graduated', token: a[7]!, pool: a[4]!, dex: 'meteora-damm' });
  } else if (disc === IX.dbcMigrateDammV2 && a.length > 14) {
    records.tokenEvent({ kind: 'graduated', token: a[13]!, pool: a[4]!, dex: 'meteora-damm-v2' });
  }
}
