// The simulator's ingest path: SimEvent → chain record (chain-writer) → the REAL decoders →
// raw swaps and token events. Decoder registries start with what a deployment configures
// (reference pools, launchpad hooks; wrapped native and stables are built in) and learn the
// rest from the records; token metadata that an RPC source would resolve with eth_call comes
// with the record (ChainRecord.tokens).
import { CHAIN_INFO } from '../../core/chains.ts';
import type { Logger } from '../../core/logger.ts';
import { createMetrics, type Metrics } from '../../core/metrics.ts';
import {
  createEvmDecoder,
  createPoolRegistry,
  createTokenRegistry,
  sortTokens,
  type EvmDecoder,
} from '../evm/index.ts';
import type { IngestRecords } from '../publisher.ts';
import { createSolanaDecoder, type SolanaDecoder } from '../solana/index.ts';
import { createSolanaTransferExtractor, type SolanaTransferExtractor } from '../transfers/solana-transfers.ts';
import { EVM_SETUP, type EvmChain } from './addresses.ts';
import { createChainWriter, type ChainRecord, type ChainWriter } from './chain-writer.ts';
import type { SimEvent } from './model.ts';

export interface SimulatorDecoders {
  decode(record: ChainRecord): IngestRecords;
}

/** An EVM decoder configured as a deployment of the simulated chains is: its reference pool and launch hooks. */
export function createConfiguredEvmDecoder(chain: EvmChain, metrics: Metrics): EvmDecoder {
  const decoder = createEvmDecoder({ chain, tokens: createTokenRegistry(), pools: createPoolRegistry(), metrics });
  const setup = EVM_SETUP[chain];
  decoder.pools.registerLaunchHooks(chain, setup.launchHooks, setup.launchpad);
  if (setup.reference) {
    const [token0, token1] = sortTokens(CHAIN_INFO[chain].native.wrapped, setup.reference.stable);
    decoder.pools.registerPool(chain, {
      pool: setup.reference.pool,
      token0,
      token1,
      dex: setup.reference.dex,
      fee: setup.reference.fee,
    });
  }
  return decoder;
}

export function createSimulatorDecoders(options: { metrics?: Metrics; logger?: Logger } = {}): SimulatorDecoders {
  const metrics = options.metrics ?? createMetrics();
  let solana: SolanaDecoder | null = null;
  let transfers: SolanaTransferExtractor | null = null;
  const evm = new Map<EvmChain, EvmDecoder>();
  return {
    decode(record) {
      switch (record.kind) {
        // In-process only; the node path writes it to the labels file and imports it.
        case 'label':
          return { swaps: [], events: [record.event] };
        case 'solana': {
          solana ??= createSolanaDecoder({ metrics, ...(options.logger ? { logger: options.logger } : {}) });
          transfers ??= createSolanaTransferExtractor();
          // What the block source does with each transaction of a block.
          const decoded = solana.decodeTransaction(record.transaction);
          const extra = transfers.extract(record.transaction, decoded);
          return extra.length === 0 ? decoded : { swaps: decoded.swaps, events: [...decoded.events, ...extra] };
        }
        case 'evm': {
          let decoder = evm.get(record.chain);
          if (!decoder) {
            decoder = createConfiguredEvmDecoder(record.chain, metrics);
            evm.set(record.chain, decoder);
          }
          for (const token of record.tokens) {
            // Records repeat the metadata of every token they touch: register only what is new.
            const known = decoder.tokens.getToken(record.chain, token.address);
            if (
              known &&
              known.decimals === token.decimals &&
              known.name === token.name &&
              known.symbol === token.symbol
            )
              continue;
            decoder.tokens.registerToken(record.chain, token.address, {
              decimals: token.decimals,
              name: token.name,
              symbol: token.symbol,
            });
          }
          return decoder.decodeReceipt(record.receipt, record.blockTimeMs, record.transaction);
        }
      }
    },
  };
}

export interface SimulatorPipeline {
  readonly writer: ChainWriter;
  readonly decoders: SimulatorDecoders;
  /** Writes and decodes one event. */
  decodeEvent(event: SimEvent): IngestRecords;
  /** Writes and decodes events in order, records concatenated. */
  process(events: readonly SimEvent[]): IngestRecords;
}

export function createSimulatorPipeline(options: {
  seed: string | number;
  metrics?: Metrics;
  logger?: Logger;
}): SimulatorPipeline {
  const writer = createChainWriter({ seed: options.seed });
  const decoders = createSimulatorDecoders(options);
  function decodeEvent(event: SimEvent): IngestRecords {
    const out: IngestRecords = { swaps: [], events: [] };
    for (const record of writer.write(event)) {
      const decoded = decoders.decode(record);
      out.swaps.push(...decoded.swaps);
      out.events.push(...decoded.events);
    }
    return out;
  }
  return {
    writer,
    decoders,
    decodeEvent,
    process(events) {
      const out: IngestRecords = { swaps: [], events: [] };
      for (const event of events) {
        const decoded = decodeEvent(event);
        for (const swap of decoded.swaps) out.swaps.push(swap);
        for (const item of decoded.events) out.events.push(item);
      }
      return out;
    },
  };
}
