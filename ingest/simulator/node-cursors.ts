// What the simulator's node reads of its readers' saved cursors (ingest-cursors.sqlite): where each
// chain's reader stopped in an earlier run (the node's blocks start after it) and what it has
// processed and had acknowledged (a batch is done when every chain's reader passed its tip).
import { CHAIN_INFO, type Chain } from '../../core/chains.ts';
import type { CursorStore, EvmCursor } from '../cursor-store.ts';
import type { SolanaBlockCursor } from '../sources/solana-blocks.ts';
import type { Anchor } from './node-chains.ts';

/** The cursor id of the Solana block source (getBlock or Geyser: one position). */
export const SOLANA_CURSOR = 'solana-blocks';
/** The cursor id of an EVM chain's source. */
export const evmCursor = (chain: Chain) => `evm:${chain}`;

/** Where each chain's reader stopped in an earlier run: the node's blocks start after it. */
export function anchorsOf(cursors: CursorStore, chains: Chain[]): Partial<Record<Chain, Anchor>> {
  const anchors: Partial<Record<Chain, Anchor>> = {};
  for (const chain of chains) {
    if (CHAIN_INFO[chain].family === 'solana') {
      const cursor = cursors.get<SolanaBlockCursor>(SOLANA_CURSOR);
      const last = cursor?.hashes[cursor.hashes.length - 1];
      if (cursor)
        anchors[chain] = { number: cursor.slot, ...(last ? { parent: { slot: last[0], hash: last[1] } } : {}) };
    } else {
      const cursor = cursors.get<EvmCursor>(evmCursor(chain));
      if (cursor) anchors[chain] = { number: cursor.block };
    }
  }
  return anchors;
}

/** The last block (slot) a chain's source processed and had acknowledged; -1 before the first. */
export function processedOf(cursors: CursorStore, chain: Chain): number {
  return CHAIN_INFO[chain].family === 'solana'
    ? (cursors.get<SolanaBlockCursor>(SOLANA_CURSOR)?.slot ?? -1)
    : (cursors.get<EvmCursor>(evmCursor(chain))?.block ?? -1);
}
