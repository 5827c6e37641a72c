// Meteora DAMM v2 (cp-amm) EvtSwap / EvtSwap2 → swaps: the pool Meteora DBC tokens graduate to
// (migration_damm_v2). Layouts and sources in docs/decoders.md.
import { decodeFields } from './borsh.ts';
import { DISC } from './constants.ts';
import { DAMM_V2_SWAP, DAMM_V2_SWAP2, type DammV2Swap2Event, type DammV2SwapEvent } from './layouts.ts';
import { chooseQuote, pairFields, type PairLeg } from './pairs.ts';
import type { SwapFields, TxRecords } from './records.ts';
import type { RawEvent } from './transaction.ts';

/**
 * swap / swap2 accounts (SwapCtx): pool_authority, pool (1), input_token_account,
 * output_token_account, token_a_vault, token_b_vault, token_a_mint (6), token_b_mint (7),
 * payer (8), token_a_program, token_b_program, referral_token_account, event_authority, program.
 */
function swapAccounts(event: RawEvent, pool: string): { mintA: string; mintB: string; payer: string } | null {
  const accounts = event.instruction?.accounts;
  if (!accounts || accounts.length < 9 || accounts[1] !== pool) return null;
  return { mintA: accounts[6]!, mintB: accounts[7]!, payer: accounts[8]! };
}

/** What crossed the pool, the pool's fee (all its parts) and where it was taken. */
interface PoolLeg {
  amountIn: bigint;
  amountOut: bigint;
  fee: bigint;
  feeOnInput: boolean;
  reserves?: { a: bigint; b: bigint };
}

/**
 * EvtSwap does not say where the fee was taken. It is read as collect-fee mode OnlyB (DBC's
 * default for its migrated pools, `QuoteToken`): the fee is in token B, off the input when B goes
 * in. The real swap N2jtQtjj agrees: its fee is exactly ceil(25 bps of the input) (docs/decoders.md).
 */
function legOfSwap(e: DammV2SwapEvent): PoolLeg {
  const r = e.swapResult;
  return {
    amountIn: e.actualAmountIn,
    amountOut: r.outputAmount,
    fee: r.lpFee + r.protocolFee + r.partnerFee + r.referralFee,
    feeOnInput: e.tradeDirection === 1,
  };
}

/** EvtSwap2 says it: included_fee_input > excluded_fee_input when the fee came off the input. */
function legOfSwap2(e: DammV2Swap2Event): PoolLeg {
  const r = e.swapResult;
  return {
    amountIn: r.includedFeeInputAmount,
    amountOut: r.outputAmount,
    fee: r.tradingFee + r.protocolFee + r.partnerFee + r.referralFee,
    feeOnInput: r.includedFeeInputAmount > r.excludedFeeInputAmount,
    reserves: { a: e.reserveAAmount, b: e.reserveBAmount },
  };
}

/**
 * Priced like the other pools (docs/decoders.md): the amounts are what went into and out of the
 * pool, its fee inside them and reported apart as `fees.dex` in quote units (a fee taken in the
 * token is valued at the execution price). SOL/USDC is the quote; else token B, DBC's quote side.
 */
function onSwap(records: TxRecords, event: RawEvent, version: 1 | 2): void {
  const payload = event.bytes.subarray(8);
  const e =
    version === 1
      ? (decodeFields(DAMM_V2_SWAP, payload) as unknown as DammV2SwapEvent)
      : (decodeFields(DAMM_V2_SWAP2, payload) as unknown as DammV2Swap2Event);
  const accounts = swapAccounts(event, e.pool);
  if (!accounts) throw new RangeError(`damm v2 pool ${e.pool}: swap instruction accounts not found`);
  const leg = version === 1 ? legOfSwap(e as DammV2SwapEvent) : legOfSwap2(e as DammV2Swap2Event);
  const aToB = e.tradeDirection === 0;
  const { mintA, mintB } = accounts;
  const pair: PairLeg = {
    mintIn: aToB ? mintA : mintB,
    mintOut: aToB ? mintB : mintA,
    amountIn: leg.amountIn,
    amountOut: leg.amountOut,
  };
  if (leg.reserves) {
    pair.reservesIn = aToB ? leg.reserves.a : leg.reserves.b;
    pair.reservesOut = aToB ? leg.reserves.b : leg.reserves.a;
  }
  const quote = chooseQuote(mintA, mintB, mintB);
  const fields = pairFields(records, pair, quote);
  const feeMint = leg.feeOnInput ? pair.mintIn : pair.mintOut;
  const tokenAmount = BigInt(fields.tokenAmount);
  const dexFee =
    feeMint === quote ? leg.fee : tokenAmount === 0n ? 0n : (leg.fee * BigInt(fields.quoteAmount)) / tokenAmount;
  const swap: SwapFields = Object.assign(fields, {
    trader: accounts.payer,
    pool: e.pool,
    dex: 'meteora-damm-v2',
    launchpad: null,
    fees: { dex: dexFee.toString() },
  });
  records.swap(swap, e.currentTimestamp, event);
}

export function decodeMeteoraDammV2Event(records: TxRecords, event: RawEvent): void {
  if (event.kind !== 'anchor') return;
  const disc = Buffer.from(event.bytes.subarray(0, 8)).toString('hex');
  if (disc === DISC.dammV2Swap) onSwap(records, event, 1);
  else if (disc === DISC.dammV2Swap2) onSwap(records, event, 2);
}
