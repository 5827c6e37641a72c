// Per-chain block clocks: block (slot) numbers and block times are pure functions of event time,
// so a restart or a second run numbers blocks the same way.
import type { Chain } from '../../core/chains.ts';

/** Block (slot) interval per chain, ms. */
export const BLOCK_MS: Record<Chain, number> = { solana: 400, base: 2000, bsc: 750, robinhood: 250, arc: 500 };

/** Block 0 of every simulated chain: 2020-01-01T00:00:00Z. */
const GENESIS_MS = 1_577_836_800_000;

export interface BlockPosition {
  number: number;
  /** Start of the block, unix ms. */
  timeMs: number;
}

export function blockAt(chain: Chain, timeMs: number): BlockPosition {
  const interval = BLOCK_MS[chain];
  const number = Math.max(0, Math.floor((timeMs - GENESIS_MS) / interval));
  return { number, timeMs: GENESIS_MS + number * interval };
}
