// SimEvent → real chain records, per chain: Solana transactions and EVM receipts built with the
// protocol encoders (solana-writer.ts, evm-writer.ts). Hashes, signatures and block numbers
// derive from the seed and the event, so the same events always give the same records.
import type { Chain } from '../../core/chains.ts';
import { createEvmWriter } from './evm-writer.ts';
import type { SimEvent } from './model.ts';
import type { ChainRecord } from './records.ts';
import { createSolanaWriter } from './solana-writer.ts';

export type { ChainRecord } from './records.ts';

export interface ChainWriter {
  write(event: SimEvent): ChainRecord[];
}

export interface ChainWriterOptions {
  /** Seed text of the market run; hashes and signatures derive from it. */
  seed: string | number;
}

export function createChainWriter(options: ChainWriterOptions): ChainWriter {
  const seed = String(options.seed);
  const writers = new Map<Chain, ChainWriter>();
  const writerOf = (chain: Chain): ChainWriter => {
    let writer = writers.get(chain);
    if (!writer) {
      writer = chain === 'solana' ? createSolanaWriter(seed) : createEvmWriter(seed, chain);
      writers.set(chain, writer);
    }
    return writer;
  };
  return { write: (event) => writerOf(event.chain).write(event) };
}
