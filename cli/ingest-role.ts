// The ingest role: RPC sources for the chains that have an endpoint, otherwise the market
// simulator; both publish through the one ingest publisher.
import path from 'node:path';
import { CHAIN_INFO, type Chain } from '../core/chains.ts';
import { createIngestPublisher } from '../ingest/publisher.ts';
import { createCursorStore } from '../ingest/cursor-store.ts';
import { createSolanaDecoder, DECODED_PROGRAMS } from '../ingest/solana/index.ts';
import { createEvmDecoder, createPoolRegistry, createTokenRegistry, EVM_CONTRACTS } from '../ingest/evm/index.ts';
import { createEvmRpcSource } from '../ingest/sources/evm-rpc.ts';
import { createSolanaRpcSource } from '../ingest/sources/solana-rpc.ts';
import { createSimulatorSource } from '../ingest/simulator/runner.ts';
import { startSimEnrichment } from '../ingest/enrichment/sim-enrichment.ts';
import { createEnrichmentStage, httpRpcCallers } from '../ingest/enrichment/stage.ts';
import type { Runtime } from './runtime.ts';

/** Contracts an EVM source follows on a chain: factories, the V4 PoolManager, launchpads. */
function watchedContracts(chain: Chain): string[] {
  return Object.values(EVM_CONTRACTS).flatMap((byChain) => {
    const address = (byChain as Partial<Record<Chain, string>>)[chain];
    return address ? [address] : [];
  });
}

export async function startIngest(runtime: Runtime): Promise<void> {
  const { ctx, log } = runtime;
  // --chains (SPOT_SIM_CHAINS) limits either source: only the listed chains' endpoints are followed.
  const rpcChains = (Object.keys(ctx.config.rpc) as Chain[]).filter((chain) => ctx.config.simChains.includes(chain));
  const sources: { name: string; stop(): Promise<void> }[] = [];

  if (Object.keys(ctx.config.rpc).length > 0 && rpcChains.length === 0) {
    throw new Error(
      `--chains ${ctx.config.simChains.join(',')} names no chain with an RPC endpoint (SPOT_RPC_<CHAIN>)`,
    );
  }
  // Metadata and security of new tokens (docs/token-fields.md), answered off the ingest path.
  const enrichment =
    rpcChains.length > 0
      ? createEnrichmentStage(ctx, { rpc: httpRpcCallers(ctx.config.rpc, rpcChains) })
      : await startSimEnrichment(ctx, { seed: ctx.config.simSeed, chains: ctx.config.simChains });
  const publisher = enrichment.wrap(createIngestPublisher(ctx, { log }));
  if (rpcChains.length > 0) {
    const cursors = createCursorStore(ctx, { path: path.join(ctx.config.dataDir, 'ingest-cursors.sqlite') });
    for (const chain of rpcChains) {
      const url = ctx.config.rpc[chain]!;
      const source =
        CHAIN_INFO[chain].family === 'solana'
          ? createSolanaRpcSource(ctx, {
              url,
              publisher,
              cursors,
              programs: [...DECODED_PROGRAMS],
              decoder: createSolanaDecoder({ logger: ctx.logger, metrics: ctx.metrics }),
            })
          : createEvmRpcSource(ctx, {
              chain,
              url,
              publisher,
              cursors,
              addresses: watchedContracts(chain),
              decoder: createEvmDecoder({
                chain,
                tokens: createTokenRegistry(),
                pools: createPoolRegistry(),
                metrics: ctx.metrics,
              }),
            });
      await source.start();
      sources.push({ name: `rpc:${chain}`, stop: () => source.stop() });
      ctx.logger.info({ chain }, 'following chain over RPC');
    }
  } else {
    const simulator = createSimulatorSource(ctx, {
      publisher,
      seed: ctx.config.simSeed,
      rate: ctx.config.simRate,
      warmHours: ctx.config.simWarmHours,
      chains: ctx.config.simChains,
      ...(ctx.config.simNow !== null ? { now: () => ctx.config.simNow! } : {}),
    });
    await simulator.start();
    sources.push({ name: 'simulator', stop: () => simulator.stop() });
    ctx.logger.info({ chains: ctx.config.simChains, rate: ctx.config.simRate }, 'market simulator running');
  }

  runtime.add({
    name: 'ingest',
    async stop() {
      for (const source of sources) await source.stop();
      await publisher.flush();
      enrichment.close();
    },
  });
}
