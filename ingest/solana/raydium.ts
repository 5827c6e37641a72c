// Raydium LaunchLab, AMM v4 (ray_log), CPMM and CLMM → swaps (CHAINS.md §1.4–1.6).
import { fromInt, pct, decToString } from '../../core/decimal.ts';
import { decodeFields } from './borsh.ts';
import { DISC, IX } from './constants.ts';
import {
  CLMM_SWAP,
  CPMM_SWAP,
  LAUNCHLAB_POOL_CREATE,
  LAUNCHLAB_TRADE,
  type ClmmSwapEvent,
  type CpmmSwapEvent,
  type LaunchLabPoolCreateEvent,
  type LaunchLabTradeEvent,
} from './layouts.ts';
import { chooseQuote, pairFields } from './pairs.ts';
import { parseRayLog } from './raylog.ts';
import type { SwapFields, TxRecords } from './records.ts';
import type { Instruction, RawEvent } from './transaction.ts';

const discOf = (event: RawEvent) => Buffer.from(event.bytes.subarray(0, 8)).toString('hex');

/** The instruction's accounts when it is the expected call (its `poolAt` account is the event's pool). */
function accountsOf(ix: Instruction | null, poolAt: number, pool: string, minLength: number): string[] | null {
  return ix && ix.accounts.length >= minLength && ix.accounts[poolAt] === pool ? ix.accounts : null;
}

/**
 * LaunchLab buy/sell instructions list payer, authority, global_config, platform_config,
 * pool_state, user_base, user_quote, base_vault, quote_vault, base_mint, quote_mint, …
 * Amounts are the curve's: a buy's quote excludes the fees, a sell's includes them.
 */
export function decodeLaunchLabEvent(records: TxRecords, event: RawEvent): void {
  if (event.kind !== 'anchor') return;
  if (discOf(event) === DISC.launchlabPoolCreate) return onLaunchLabPoolCreate(records, event);
  if (discOf(event) !== DISC.launchlabTrade) return;
  const t = decodeFields(LAUNCHLAB_TRADE, event.bytes.subarray(8)) as unknown as LaunchLabTradeEvent;
  const accounts = accountsOf(event.instruction, 4, t.poolState, 11);
  if (!accounts) throw new RangeError(`launchlab pool ${t.poolState}: instruction accounts not found`);
  const [trader, base, quote] = [accounts[0]!, accounts[9]!, accounts[10]!];
  const isBuy = t.tradeDirection === 0;
  const fees = t.protocolFee + t.platformFee + t.creatorFee + t.shareFee;
  const tokenAmount = isBuy ? t.amountOut : t.amountIn;
  const quoteAmount = isBuy ? t.amountIn - fees : t.amountOut + fees;
  const tokenDecimals = records.decimalsOf(base);
  const quoteDecimals = records.decimalsOf(quote);
  if (tokenDecimals === null || quoteDecimals === null)
    throw new RangeError(`launchlab ${base}/${quote}: unknown decimals`);
  const progress = t.totalBaseSell === 0n ? 0n : pct(fromInt(t.realBaseAfter), fromInt(t.totalBaseSell));
  const complete = t.poolStatus !== 0;
  const progressPct = decToString(progress > fromInt(100) ? fromInt(100) : progress);
  records.swap(
    {
      token: base,
      quoteAsset: quote,
      tokenAmount: tokenAmount.toString(),
      tokenDecimals,
      quoteAmount: quoteAmount.toString(),
      quoteDecimals,
      side: isBuy ? 'buy' : 'sell',
      trader,
      pool: t.poolState,
      dex: 'raydium-launchlab',
      launchpad: 'launchlab',
      reserves: { token: (t.totalBaseSell - t.realBaseAfter).toString(), quote: t.realQuoteAfter.toString() },
      curve: {
        progressPct,
        virtualTokenReserves: (t.virtualBase - t.realBaseAfter).toString(),
        virtualQuoteReserves: (t.virtualQuote + t.realQuoteAfter).toString(),
        realTokenReserves: (t.totalBaseSell - t.realBaseAfter).toString(),
        realQuoteReserves: t.realQuoteAfter.toString(),
        complete,
      },
      fees: { platform: fees.toString() },
    },
    undefined,
    event,
  );
  if (complete) records.tokenEvent({ kind: 'curve', token: base, progressPct, complete: true });
}

/**
 * PoolCreateEvent names the pool, creator and the mint's metadata; the mint itself is the
 * initialize instruction's account 6 (initialize, initialize_v2, initialize_with_token_2022:
 * payer, creator, global_config, platform_config, authority, pool_state, base_mint, quote_mint, …).
 */
function onLaunchLabPoolCreate(records: TxRecords, event: RawEvent): void {
  const c = decodeFields(LAUNCHLAB_POOL_CREATE, event.bytes.subarray(8)) as unknown as LaunchLabPoolCreateEvent;
  const accounts = accountsOf(event.instruction, 5, c.poolState, 8);
  if (!accounts) throw new RangeError(`launchlab pool ${c.poolState}: initialize instruction accounts not found`);
  records.tokenEvent({
    kind: 'created',
    token: accounts[6]!,
    name: c.baseMintParam.name,
    symbol: c.baseMintParam.symbol,
    uri: c.baseMintParam.uri,
    decimals: c.baseMintParam.decimals,
    supply: c.supply.toString(),
    creator: c.creator,
    launchpad: 'launchlab',
    pool: c.poolState,
    quoteAsset: accounts[7]!,
  });
}

/**
 * Graduation emits no event: the migrate instruction names the new pool. migrate_to_amm:
 * payer, base_mint, quote_mint, …, amm_pool (13), …, pool_state (23); migrate_to_cpswap: payer,
 * base_mint, quote_mint, platform_config, cpswap_program, cpswap_pool (5), …, pool_state (17).
 */
export function decodeLaunchLabInstruction(records: TxRecords, ix: Instruction): void {
  const disc = Buffer.from(ix.data.subarray(0, 8)).toString('hex');
  if (disc === IX.launchlabMigrateToAmm && ix.accounts.length > 23)
    records.tokenEvent({ kind: 'graduated', token: ix.accounts[1]!, pool: ix.accounts[13]!, dex: 'raydium-amm-v4' });
  else if (disc === IX.launchlabMigrateToCpswap && ix.accounts.length > 17)
    records.tokenEvent({ kind: 'graduated', token: ix.accounts[1]!, pool: ix.accounts[5]!, dex: 'raydium-cpmm' });
}

/**
 * AMM v4 swap instructions end with user_source, user_dest, user_owner; the vaults are
 * accounts n−13, n−12 in the 17/18-account forms and 3, 4 in the 8-account v2 form; the amm is
 * account 1. Mints and decimals come from the vaults' token balances, else from the user's
 * source/destination accounts; pc is the quote unless SOL or USDC sits on the coin side.
 */
export function decodeRayLogEvent(records: TxRecords, event: RawEvent): void {
  if (event.kind !== 'raylog') return;
  const log = parseRayLog(Buffer.from(event.bytes).toString('base64'));
  const ix = event.instruction;
  if (!log) return;
  if (!ix || ix.accounts.length < 8) throw new RangeError('ray_log without its swap instruction');
  const n = ix.accounts.length;
  const [coinVault, pcVault] =
    n >= 17 ? [ix.accounts[n - 13]!, ix.accounts[n - 12]!] : [ix.accounts[3]!, ix.accounts[4]!];
  const [source, dest, owner] = [ix.accounts[n - 3]!, ix.accounts[n - 2]!, ix.accounts[n - 1]!];
  const pcToCoin = log.direction === 1n;
  const coinMint = records.balanceOf(coinVault)?.mint ?? records.balanceOf(pcToCoin ? dest : source)?.mint;
  const pcMint = records.balanceOf(pcVault)?.mint ?? records.balanceOf(pcToCoin ? source : dest)?.mint;
  if (!coinMint || !pcMint) throw new RangeError(`raydium amm ${ix.accounts[1]}: mints not found`);
  const leg = pcToCoin
    ? {
        mintIn: pcMint,
        mintOut: coinMint,
        amountIn: log.amountIn,
        amountOut: log.amountOut,
        reservesIn: log.poolPc + log.amountIn,
        reservesOut: log.poolCoin - log.amountOut,
      }
    : {
        mintIn: coinMint,
        mintOut: pcMint,
        amountIn: log.amountIn,
        amountOut: log.amountOut,
        reservesIn: log.poolCoin + log.amountIn,
        reservesOut: log.poolPc - log.amountOut,
      };
  records.swap(
    Object.assign(pairFields(records, leg, chooseQuote(coinMint, pcMint, pcMint)), {
      trader: owner,
      pool: ix.accounts[1]!,
      dex: 'raydium-amm-v4',
      launchpad: null,
    }),
    undefined,
    event,
  );
}

/**
 * CPMM SwapEvent: mints from the event (newer layout) or the swap instruction's
 * input/output mints (accounts 10, 11; account 3 is the pool); trader = payer (account 0).
 * Without SOL/USDC in the pair, the lexicographically smaller mint is the quote.
 */
function onCpmm(records: TxRecords, event: RawEvent): void {
  const s = decodeFields(CPMM_SWAP, event.bytes.subarray(8)) as unknown as CpmmSwapEvent;
  const accounts = accountsOf(event.instruction, 3, s.poolId, 12);
  const mintIn = s.inputMint ?? accounts?.[10];
  const mintOut = s.outputMint ?? accounts?.[11];
  if (!mintIn || !mintOut) throw new RangeError(`cpmm pool ${s.poolId}: mints not found`);
  const quote = chooseQuote(mintIn, mintOut, mintIn < mintOut ? mintIn : mintOut);
  const fields = pairFields(
    records,
    {
      mintIn,
      mintOut,
      amountIn: s.inputAmount,
      amountOut: s.outputAmount,
      reservesIn: s.inputVaultBefore + s.inputAmount - s.inputTransferFee,
      reservesOut: s.outputVaultBefore - s.outputAmount,
    },
    quote,
  );
  const quoteIsInput = quote === mintIn;
  const fees: { dex?: string; platform?: string } = {};
  if (s.tradeFee !== undefined && quoteIsInput) fees.dex = s.tradeFee.toString();
  if (s.creatorFee !== undefined && s.creatorFeeOnInput === quoteIsInput) fees.platform = s.creatorFee.toString();
  const swap: SwapFields = Object.assign(fields, {
    trader: accounts?.[0] ?? records.feePayer,
    pool: s.poolId,
    dex: 'raydium-cpmm',
    launchpad: null,
  });
  if (fees.dex !== undefined || fees.platform !== undefined) swap.fees = fees;
  records.swap(swap, undefined, event);
}

/**
 * CLMM SwapEvent: token_account_0/1 are the sender's accounts of mint 0/1 (their balances give
 * the mints); else swap_v2's input/output vault mints (accounts 11, 12). Mint 1 prices mint 0
 * unless SOL/USDC says otherwise.
 */
function onClmm(records: TxRecords, event: RawEvent): void {
  const s = decodeFields(CLMM_SWAP, event.bytes.subarray(8)) as unknown as ClmmSwapEvent;
  const accounts = accountsOf(event.instruction, 2, s.poolState, 13);
  const [inputMint, outputMint] = [accounts?.[11], accounts?.[12]];
  const mint0 = records.balanceOf(s.tokenAccount0)?.mint ?? (s.zeroForOne ? inputMint : outputMint);
  const mint1 = records.balanceOf(s.tokenAccount1)?.mint ?? (s.zeroForOne ? outputMint : inputMint);
  if (!mint0 || !mint1) throw new RangeError(`clmm pool ${s.poolState}: mints not found`);
  const leg = s.zeroForOne
    ? { mintIn: mint0, mintOut: mint1, amountIn: s.amount0, amountOut: s.amount1 }
    : { mintIn: mint1, mintOut: mint0, amountIn: s.amount1, amountOut: s.amount0 };
  records.swap(
    Object.assign(pairFields(records, leg, chooseQuote(mint0, mint1, mint1)), {
      trader: s.sender,
      pool: s.poolState,
      dex: 'raydium-clmm',
      launchpad: null,
    }),
    undefined,
    event,
  );
}

export function decodeCpmmEvent(records: TxRecords, event: RawEvent): void {
  if (event.kind === 'anchor' && discOf(event) === DISC.raydiumSwap) onCpmm(records, event);
}

export function decodeClmmEvent(records: TxRecords, event: RawEvent): void {
  if (event.kind === 'anchor' && discOf(event) === DISC.raydiumSwap) onClmm(records, event);
}
