// From a pool's two token deltas to a RawSwap: which side is the quote, which the token,
// the direction, unsigned amounts with decimals, reserves and the LP fee in quote units.
import { CHAIN_INFO, EVM_NATIVE_ADDRESS, tradeId, type Chain } from '../../core/chains.ts';
import type { RawSwap } from '../../core/topics.ts';
import type { PoolInfo, TokenInfoProvider } from './registry.ts';

/** 2 = native (0x0 or the wrapped native), 1 = a stablecoin of CHAIN_INFO, 0 = anything else. */
export function quoteRank(chain: Chain, address: string): 0 | 1 | 2 {
  return quoteRanksOf(chain).get(address.toLowerCase()) ?? 0;
}

const QUOTE_RANKS = new Map<Chain, Map<string, 1 | 2>>();

/** The ranked addresses of a chain, lowercase, built once (quoteRank runs for every log). */
function quoteRanksOf(chain: Chain): Map<string, 1 | 2> {
  let ranks = QUOTE_RANKS.get(chain);
  if (!ranks) {
    const info = CHAIN_INFO[chain];
    ranks = new Map<string, 1 | 2>();
    for (const stable of Object.keys(info.stables)) ranks.set(stable, 1);
    ranks.set(EVM_NATIVE_ADDRESS, 2);
    ranks.set(info.native.wrapped.toLowerCase(), 2);
    QUOTE_RANKS.set(chain, ranks);
  }
  return ranks;
}

/**
 * The quote of a pair: the higher quote rank wins (native over stable over other); on a tie
 * (two unknown tokens, two stables, 0x0 beside the wrapped native) a launchpad's token is the
 * token (a Zora coin beside $ZORA), else token1 is the quote.
 */
export function pickQuote(
  chain: Chain,
  token0: string,
  token1: string,
  launched?: (token: string) => boolean,
): { token: string; quote: string; tokenIs0: boolean } {
  const rank0 = quoteRank(chain, token0);
  const rank1 = quoteRank(chain, token1);
  const tokenIs0 =
    rank0 === rank1 && launched !== undefined && launched(token1) && !launched(token0) ? false : rank0 <= rank1;
  return tokenIs0 ? { token: token0, quote: token1, tokenIs0 } : { token: token1, quote: token0, tokenIs0 };
}

export interface Position {
  id: string;
  chain: Chain;
  transactionHash: string;
  eventIndex: number;
  blockNumber: number;
  blockTime: number;
}

export function position(
  chain: Chain,
  transactionHash: string,
  eventIndex: number,
  blockNumber: number,
  blockTime: number,
): Position {
  return {
    id: tradeId(chain, transactionHash, eventIndex),
    chain,
    transactionHash,
    eventIndex,
    blockNumber,
    blockTime,
  };
}

export interface PoolTrade {
  pool: PoolInfo;
  dex: string;
  launchpad: string | null;
  /** What the pool received of token0 / token1: positive = the trader paid it in. */
  delta0: bigint;
  delta1: bigint;
  /** LP fee in pips (millionths) charged on the input; null = unknown, no dex fee reported. */
  feePips: number | null;
  /** The LP fee the pool reports having taken, per token (Aerodrome Fees): wins over feePips. */
  feePaid?: { amount0: bigint; amount1: bigint };
  trader: string;
  /** Post-trade reserves (V2-style Sync) in token0/token1 order. */
  reserves?: { reserve0: bigint; reserve1: bigint };
  /** The contract holding the pool's tokens when `pool.pool` is an id (V4 PoolManager). */
  custody?: string;
}

export type SkipReason = 'unknown_decimals' | 'no_direction';
export type SwapResult = { swap: RawSwap } | { skip: SkipReason };

const abs = (value: bigint) => (value < 0n ? -value : value);

export function buildPoolSwap(tokens: TokenInfoProvider, at: Position, trade: PoolTrade): SwapResult {
  const { pool, delta0, delta1 } = trade;
  // Exactly one side in and one side out; anything else (flash loans, both in) is no trade.
  if (!((delta0 > 0n && delta1 < 0n) || (delta0 < 0n && delta1 > 0n))) return { skip: 'no_direction' };
  const launched = (address: string) => Boolean(tokens.getToken(at.chain, address)?.launchpad);
  const { token, quote, tokenIs0 } = pickQuote(at.chain, pool.token0, pool.token1, launched);
  const tokenDecimals = tokens.getDecimals(at.chain, token);
  const quoteDecimals = tokens.getDecimals(at.chain, quote);
  if (tokenDecimals === undefined || quoteDecimals === undefined) return { skip: 'unknown_decimals' };
  const tokenDelta = tokenIs0 ? delta0 : delta1;
  const quoteAmount = abs(tokenIs0 ? delta1 : delta0);
  // Spelled out rather than `{ ...at, … }`: after a leading spread V8 (Node 20) makes a new
  // hidden class per added property.
  const swap: RawSwap = {
    id: at.id,
    chain: at.chain,
    transactionHash: at.transactionHash,
    eventIndex: at.eventIndex,
    blockNumber: at.blockNumber,
    blockTime: at.blockTime,
    token,
    quoteAsset: quote,
    tokenAmount: abs(tokenDelta).toString(),
    tokenDecimals,
    quoteAmount: quoteAmount.toString(),
    quoteDecimals,
    // The pool paid the token out: the trader received it.
    side: tokenDelta < 0n ? 'buy' : 'sell',
    trader: trade.trader,
    pool: pool.pool,
    dex: trade.dex,
    launchpad: trade.launchpad,
  };
  if (trade.custody) swap.custody = trade.custody;
  if (trade.reserves) {
    const { reserve0, reserve1 } = trade.reserves;
    swap.reserves = tokenIs0
      ? { token: reserve0.toString(), quote: reserve1.toString() }
      : { token: reserve1.toString(), quote: reserve0.toString() };
  }
  if (trade.feePaid) {
    // Taken in the input token: a quote fee as is, a token fee at the execution price.
    const quoteFee = tokenIs0 ? trade.feePaid.amount1 : trade.feePaid.amount0;
    const tokenFee = tokenIs0 ? trade.feePaid.amount0 : trade.feePaid.amount1;
    const tokenAmount = abs(tokenDelta);
    const converted = tokenAmount === 0n ? 0n : (tokenFee * quoteAmount) / tokenAmount;
    swap.fees = { dex: (quoteFee + converted).toString() };
  } else if (trade.feePips !== null) {
    // The LP fee is amountIn·fee. On a buy amountIn is the quote paid; on a sell it is the
    // token paid, converted at the execution price quoteAmount/tokenAmount, which reduces
    // to quoteAmount·fee as well. Rounded down to base units.
    swap.fees = { dex: ((quoteAmount * BigInt(trade.feePips)) / 1_000_000n).toString() };
  }
  return { swap };
}
