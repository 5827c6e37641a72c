// four.meme (TokenManager V1/V2) curve trades, token creation and the end of the curve.
import { EVM_NATIVE_ADDRESS } from '../../core/chains.ts';
import * as D from '../../core/decimal.ts';
import type { RawSwap } from '../../core/topics.ts';
import type { NormalLog } from './receipt.ts';
import { decodeAs, type ReceiptScope } from './scope.ts';

export const FOURMEME = 'fourmeme';
const FOURMEME_DECIMALS = 18;
/** Bitquery's rule (CHAINS.md 2.2): 1e9 supply, 200M kept for liquidity, 800M sold on the curve. */
export const FOURMEME_CURVE_TOKENS = 800_000_000n * 10n ** 18n;

/** Curve completion from the tokens still unsold: (800M − offers)/800M·100, exact, clamped to 0..100. */
export function fourMemeProgressPct(offers: bigint): string {
  const remaining = offers > FOURMEME_CURVE_TOKENS ? FOURMEME_CURVE_TOKENS : offers < 0n ? 0n : offers;
  const sold = D.fromUnits(FOURMEME_CURVE_TOKENS - remaining, FOURMEME_DECIMALS);
  return D.decToString(D.pct(sold, D.fromUnits(FOURMEME_CURVE_TOKENS, FOURMEME_DECIMALS)));
}

interface CurveTrade {
  token: string;
  account: string;
  side: 'buy' | 'sell';
  amount: bigint;
  cost: bigint;
  fee?: bigint;
  offers?: bigint;
  funds?: bigint;
}

function addCurveTrade(scope: ReceiptScope, log: NormalLog, trade: CurveTrade): void {
  const token = trade.token.toLowerCase();
  // The event does not name the quote: native BNB unless the registry knows the curve's quote.
  const quote = scope.tokens.getToken(scope.chain, token)?.curveQuote?.toLowerCase() ?? EVM_NATIVE_ADDRESS;
  const tokenDecimals = scope.tokens.getDecimals(scope.chain, token);
  const quoteDecimals = scope.tokens.getDecimals(scope.chain, quote);
  if (tokenDecimals === undefined || quoteDecimals === undefined) return scope.addSwap({ skip: 'unknown_decimals' });
  const swap: RawSwap = Object.assign(scope.at(log.logIndex), {
    token,
    quoteAsset: quote,
    tokenAmount: trade.amount.toString(),
    tokenDecimals,
    quoteAmount: trade.cost.toString(),
    quoteDecimals,
    side: trade.side,
    trader: trade.account.toLowerCase(),
    pool: log.address,
    dex: FOURMEME,
    launchpad: FOURMEME,
  });
  if (trade.offers !== undefined && trade.funds !== undefined) {
    swap.reserves = { token: trade.offers.toString(), quote: trade.funds.toString() };
    swap.curve = {
      progressPct: fourMemeProgressPct(trade.offers),
      realTokenReserves: trade.offers.toString(),
      realQuoteReserves: trade.funds.toString(),
      complete: trade.offers === 0n,
    };
  }
  if (trade.fee !== undefined) swap.fees = { platform: trade.fee.toString() };
  scope.addSwap({ swap });
}

export function onFourMemeTrade(scope: ReceiptScope, log: NormalLog, side: 'buy' | 'sell'): void {
  const args = side === 'buy' ? decodeAs('fourMemePurchase', log) : decodeAs('fourMemeSale', log);
  addCurveTrade(scope, log, { ...args, side });
}

/** V1 trades: the lite ABI's five-word events carry the fee; the four-word form (API doc) does not. */
export function onFourMemeTradeV1(scope: ReceiptScope, log: NormalLog, side: 'buy' | 'sell', withFee = false): void {
  const args = withFee
    ? side === 'buy'
      ? decodeAs('fourMemePurchaseV1Fee', log)
      : decodeAs('fourMemeSaleV1Fee', log)
    : side === 'buy'
      ? decodeAs('fourMemePurchaseV1', log)
      : decodeAs('fourMemeSaleV1', log);
  addCurveTrade(scope, log, {
    token: args.token,
    account: args.account,
    side,
    amount: args.tokenAmount,
    cost: args.etherAmount,
    ...('fee' in args ? { fee: args.fee as bigint } : {}),
  });
}

/** TokenCreate: learned before the trades of the receipt so they find the token's decimals. */
export function learnFourMemeCreate(scope: ReceiptScope, log: NormalLog): void {
  const args = decodeAs('fourMemeCreate', log);
  const token = args.token.toLowerCase();
  scope.tokens.registerToken(scope.chain, token, {
    decimals: FOURMEME_DECIMALS,
    name: args.name,
    symbol: args.symbol,
    launchpad: FOURMEME,
  });
  const quote = scope.tokens.getToken(scope.chain, token)?.curveQuote?.toLowerCase() ?? EVM_NATIVE_ADDRESS;
  scope.events.push(
    Object.assign(scope.at(log.logIndex), {
      kind: 'created' as const,
      token,
      name: args.name,
      symbol: args.symbol,
      uri: '',
      decimals: FOURMEME_DECIMALS,
      supply: args.totalSupply.toString(),
      creator: args.creator.toLowerCase(),
      launchpad: FOURMEME,
      pool: log.address,
      quoteAsset: quote,
    }),
  );
}

/**
 * LiquidityAdded / TradeStop end the curve: a `curve` event (100 %, complete) now, and the
 * token waits for its DEX pool; the PairCreated/PoolCreated that names it (this receipt or a
 * later one) produces the `graduated` event.
 */
export function onFourMemeCurveEnd(
  scope: ReceiptScope,
  log: NormalLog,
  kind: 'liquidityAdded' | 'tradeStop',
  ended: Set<string>,
): void {
  const token = (
    kind === 'liquidityAdded' ? decodeAs('fourMemeLiquidityAdded', log).base : decodeAs('fourMemeTradeStop', log).token
  ).toLowerCase();
  // Both events usually come together: one curve event per token and receipt.
  if (ended.has(token)) return;
  ended.add(token);
  scope.tokens.markGraduationPending(scope.chain, token, FOURMEME);
  scope.events.push(
    Object.assign(scope.at(log.logIndex), { kind: 'curve' as const, token, progressPct: '100', complete: true }),
  );
}
