// Bytes of aggregator state (JS heap and external memory after a full GC, node --expose-gc) per
// active token and per wallet, measured on the real processor fed synthetic swaps of real shape:
// tokens trading over one hour of event time (a few trades, or ten times as many, each), tokens
// trading every second for a day (the windows' bucket bound), then one-off wallets.
import type { Context } from '../../core/context.ts';
import type { RawSwap } from '../../core/topics.ts';
import { newRecentIds } from '../../aggregators/dedupe.ts';
import { holderFigures } from '../../aggregators/holder-index.ts';
import { createProcessor, newBatchOutput } from '../../aggregators/process.ts';
import { newState } from '../../aggregators/state.ts';
import { newTradeWindow } from '../../aggregators/windows.ts';

export interface StateSizeParams {
  tokens: number;
  /** Trades per token over the hour, for the two token stages. */
  fewTrades: number;
  manyTrades: number;
  /** Tokens trading once a second for 24 h of event time. */
  dayTokens: number;
  wallets: number;
}

export interface StateSize {
  /** Heap bytes per token trading `fewTrades` and `manyTrades` times within the hour. */
  perTokenFew: number;
  perTokenMany: number;
  /** Heap bytes per token trading every second for 24 h. */
  perTokenDay: number;
  /** Heap bytes per one-off wallet: its facts and its holder record in the token it traded. */
  perWallet: number;
  /**
   * Of those, heap bytes per holder record with its holder-index entry (built once the token's
   * figures are read, as every views pass does): what a busy token gains per new holder.
   */
  perHolder: number;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 0, 5, 12);
const WETH = '0x4200000000000000000000000000000000000006';
const addr = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;

function heldAfterGc(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('measuring aggregator state needs node --expose-gc');
  gc();
  gc();
  // With what the heap holds outside it: typed arrays' bytes (the dedupe ids).
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
}

export function measureAggregatorState(ctx: Context, params: StateSizeParams): StateSize {
  let n = 0;
  const swap = (token: string, trader: string, time: number): RawSwap => {
    n++;
    const hash = `0x${n.toString(16).padStart(64, '0')}`;
    return {
      id: `base:${hash}:0`,
      chain: 'base',
      transactionHash: hash,
      eventIndex: 0,
      blockNumber: Math.floor(time / 2000),
      blockTime: Math.floor(time / 1000) * 1000,
      token,
      quoteAsset: WETH,
      tokenAmount: String(10n ** 18n * BigInt(1 + (n % 997))),
      tokenDecimals: 18,
      quoteAmount: String(10n ** 12n * BigInt(1 + ((n * 7919) % 10007))),
      quoteDecimals: 18,
      side: n % 3 === 0 ? 'sell' : 'buy',
      trader,
      pool: `0x9${token.slice(3)}`, // one pool per token
      dex: 'uniswap-v2',
      launchpad: null,
      reserves: { token: String(10n ** 27n), quote: String(10n ** 20n) },
    };
  };
  const traders = Array.from({ length: 8 }, (_, i) => addr(0x5000 + i));

  /** Heap bytes per token of `tokens` tokens trading `trades` times each, evenly over `span` ms. */
  const tokenStage = (first: number, tokens: number, trades: number, span = HOUR): number => {
    const state = newState();
    const p = createProcessor(ctx, state);
    const before = heldAfterGc();
    for (let k = 0; k < trades; k++) {
      const out = newBatchOutput();
      for (let i = 0; i < tokens; i++) {
        const time = T0 + Math.floor(((k * tokens + i) * span) / (trades * tokens));
        p.swap(swap(addr(first + i), traders[(k + i) % traders.length]!, time), out);
      }
    }
    const bytes = (heldAfterGc() - before) / tokens;
    if (state.tokens.size !== tokens) throw new Error('tokens missing from the state');
    return bytes;
  };

  // One-off wallets: each trades once, on one of 100 tokens that already trade.
  const state = newState();
  const p = createProcessor(ctx, state);
  for (let i = 0; i < 100; i++) p.swap(swap(addr(0xc00000 + i), traders[0]!, T0), newBatchOutput());
  const before = heldAfterGc();
  for (let w = 0; w < params.wallets; w += 1000) {
    const out = newBatchOutput();
    for (let i = w; i < Math.min(params.wallets, w + 1000); i++)
      p.swap(
        swap(addr(0xc00000 + (i % 100)), addr(0x1000000 + i), T0 + 1000 + Math.floor((i * HOUR) / params.wallets)),
        out,
      );
  }
  // The trades' own traces (window buckets, dedupe ids) are token state: cleared before reading.
  for (const t of state.tokens.values()) {
    t.recentIds = newRecentIds();
    t.win = newTradeWindow();
    t.closedCandles.length = 0;
  }
  const perWallet = (heldAfterGc() - before) / params.wallets;
  if (state.wallets.size < params.wallets) throw new Error('wallets missing from the state');
  // The holder records stay with their tokens once the wallets' facts are gone (parked, forgotten).
  for (const t of state.tokens.values()) holderFigures(t, state.wallets);
  state.wallets.clear();
  const perHolder = (heldAfterGc() - before) / params.wallets;

  const perTokenFew = tokenStage(0xa00000, params.tokens, params.fewTrades);
  const perTokenMany = tokenStage(0xb00000, params.tokens, params.manyTrades);
  const perTokenDay = tokenStage(0xd00000, params.dayTokens, DAY / 1000, DAY);
  return { perTokenFew, perTokenMany, perTokenDay, perWallet, perHolder };
}
