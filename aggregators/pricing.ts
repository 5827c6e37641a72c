// Native/USD marks per chain and the pricing of one swap, in exact decimals (core/decimal.ts).
// A mark is the median of the last MARK_WINDOW reference executions (wrapped native against a
// stable, in either order); arc's native asset is USDC, so its mark is always 1.
import { CHAIN_INFO, EVM_NATIVE_ADDRESS, normalizeAddress, type Chain } from '../core/chains.ts';
import { ONE, ZERO, div, fromUnits, mul, type Dec } from '../core/decimal.ts';

export const MARK_WINDOW = 5;

/** Last reference prices (USD per native) and their median, per chain. */
export interface MarkState {
  recent: Dec[];
  mark: Dec;
}

export type MarkBook = Record<string, MarkState>;

export function newMarkBook(): MarkBook {
  return {};
}

export function markOf(book: MarkBook, chain: Chain): Dec {
  if (chain === 'arc') return ONE;
  return book[chain]?.mark ?? ZERO;
}

/** Median of the values (mean of the two middle ones for an even count); zero when empty. */
export function median(values: readonly Dec[]): Dec {
  if (values.length === 0) return ZERO;
  const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const mid = sorted.length >> 1;
  if (sorted.length % 2 === 1) return sorted[mid]!;
  return div(sorted[mid - 1]! + sorted[mid]!, 2n * ONE);
}

/** Records one reference execution price (USD per native) and recomputes the chain's mark. */
export function recordReference(book: MarkBook, chain: Chain, usdPerNative: Dec): Dec {
  if (chain === 'arc') return ONE;
  const state = (book[chain] ??= { recent: [], mark: ZERO });
  if (usdPerNative <= 0n) return state.mark;
  state.recent.push(usdPerNative);
  if (state.recent.length > MARK_WINDOW) state.recent.shift();
  state.mark = median(state.recent);
  return state.mark;
}

export type QuoteKind = 'native' | 'stable' | 'other';

export function isNativeAsset(chain: Chain, address: string): boolean {
  const info = CHAIN_INFO[chain];
  const canonical = normalizeAddress(chain, address);
  return canonical === info.native.wrapped || (info.family === 'evm' && canonical === EVM_NATIVE_ADDRESS);
}

export function stableOf(chain: Chain, address: string): { symbol: string; decimals: number } | undefined {
  return CHAIN_INFO[chain].stables[normalizeAddress(chain, address)];
}

export function quoteKind(chain: Chain, address: string): QuoteKind {
  if (isNativeAsset(chain, address)) return 'native';
  return stableOf(chain, address) ? 'stable' : 'other';
}

/** Display symbol of a quote asset: WSOL/WETH/WBNB (arc: USDC), a stable's symbol, else null. */
export function quoteSymbol(chain: Chain, address: string): string | null {
  if (isNativeAsset(chain, address)) return CHAIN_INFO[chain].native.wrappedSymbol;
  return stableOf(chain, address)?.symbol ?? null;
}

export interface SwapAmounts {
  chain: Chain;
  token: string;
  quoteAsset: string;
  tokenAmount: string;
  tokenDecimals: number;
  quoteAmount: string;
  quoteDecimals: number;
}

/**
 * USD per native from a reference swap (token/quote = wrapped native/stable or stable/native),
 * or null when the swap is not one.
 */
export function referencePrice(swap: SwapAmounts): Dec | null {
  const { chain } = swap;
  if (chain === 'arc') return null;
  const tokenIsNative = isNativeAsset(chain, swap.token);
  const tokenIsStable = !tokenIsNative && stableOf(chain, swap.token) !== undefined;
  const quoteIsNative = isNativeAsset(chain, swap.quoteAsset);
  const quoteIsStable = !quoteIsNative && stableOf(chain, swap.quoteAsset) !== undefined;
  const tokenHuman = fromUnits(swap.tokenAmount, swap.tokenDecimals);
  const quoteHuman = fromUnits(swap.quoteAmount, swap.quoteDecimals);
  if (tokenIsNative && quoteIsStable) return div(quoteHuman, tokenHuman);
  if (tokenIsStable && quoteIsNative) return div(tokenHuman, quoteHuman);
  return null;
}

/** Per chain, the canonical addresses of its reference assets (native, wrapped native, stables). */
const REFERENCE_ASSETS = new Map<Chain, Set<string>>(
  (Object.keys(CHAIN_INFO) as Chain[]).map((chain) => {
    const info = CHAIN_INFO[chain];
    const set = new Set<string>([info.native.wrapped, ...Object.keys(info.stables)]);
    if (info.family === 'evm') set.add(EVM_NATIVE_ADDRESS);
    return [chain, set];
  }),
);

/** True for swaps between two reference assets (native, stables): they move marks, not tokens. */
export function isReferencePair(swap: SwapAmounts): boolean {
  const { chain } = swap;
  const assets = REFERENCE_ASSETS.get(chain)!;
  return assets.has(normalizeAddress(chain, swap.token)) && assets.has(normalizeAddress(chain, swap.quoteAsset));
}

/**
 * How quote amounts convert: × native and × usd per quote unit, or, for a stable (usd per quote
 * unit is 1), ÷ the mark for native, which keeps stable-quoted prices exact.
 */
export interface QuoteRate {
  native: Dec;
  usd: Dec;
  /** Set for stables: native = amount / mark. */
  stableMark?: Dec;
}

export function toNative(rate: QuoteRate, amount: Dec): Dec {
  return rate.stableMark !== undefined ? div(amount, rate.stableMark) : mul(amount, rate.native);
}

export function toUsd(rate: QuoteRate, amount: Dec): Dec {
  return rate.stableMark !== undefined ? amount : mul(amount, rate.usd);
}

/**
 * Rate of a quote asset: native → (1, mark); stable → (1/mark, 1); other → its own latest native
 * price × mark, or null when unknown (the trade is then left unpriced).
 */
let lastStable: QuoteRate | null = null;

export function quoteRate(
  chain: Chain,
  quoteAsset: string,
  mark: Dec,
  otherNativePrice: (address: string) => Dec,
): QuoteRate | null {
  const kind = quoteKind(chain, quoteAsset);
  if (kind === 'native') return { native: ONE, usd: mark };
  if (kind === 'stable') {
    // 1/mark once per mark, not per trade (rates are only read).
    if (lastStable === null || lastStable.stableMark !== mark)
      lastStable = { native: div(ONE, mark), usd: ONE, stableMark: mark };
    return lastStable;
  }
  const native = otherNativePrice(normalizeAddress(chain, quoteAsset));
  if (native === ZERO) return null;
  return { native, usd: mul(native, mark) };
}

export interface TradePrice {
  priceNative: Dec;
  priceUsd: Dec;
  volumeNative: Dec;
  volumeUsd: Dec;
  /** Human token amount. */
  amount: Dec;
  /** Human quote amount. */
  quoteAmount: Dec;
}

/** Prices one trade from its amounts and the quote's rate (null rate: every value zero). */
export function priceTrade(swap: SwapAmounts, rate: QuoteRate | null): TradePrice {
  const amount = fromUnits(swap.tokenAmount, swap.tokenDecimals);
  const quoteAmount = fromUnits(swap.quoteAmount, swap.quoteDecimals);
  if (!rate) return { priceNative: ZERO, priceUsd: ZERO, volumeNative: ZERO, volumeUsd: ZERO, amount, quoteAmount };
  const priceInQuote = div(quoteAmount, amount);
  return {
    priceNative: toNative(rate, priceInQuote),
    priceUsd: toUsd(rate, priceInQuote),
    volumeNative: toNative(rate, quoteAmount),
    volumeUsd: toUsd(rate, quoteAmount),
    amount,
    quoteAmount,
  };
}
