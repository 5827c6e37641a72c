// The enrichment stage as the simulator runs it: its metadata host on loopback (the URIs' host
// sim.spot.dev mapped onto it) and its chains' token state answering the security reads.
import type { Chain } from '../../core/chains.ts';
import type { Context } from '../../core/context.ts';
import { createSimChainState } from './sim-chain-state.ts';
import { startSimMetadataServer } from './sim-metadata-server.ts';
import { createEnrichmentStage, type EnrichmentStage } from './stage.ts';

/** Host of the simulator's metadata URIs (ingest/simulator/model.ts). */
export const SIM_METADATA_HOST = 'sim.spot.dev';

export async function startSimEnrichment(
  ctx: Context,
  options: { seed: number; chains: readonly Chain[]; cachePath?: string; slowMs?: number; fetchTimeoutMs?: number },
): Promise<EnrichmentStage> {
  const server = await startSimMetadataServer({ seed: options.seed, slowMs: options.slowMs });
  const state = createSimChainState(options.seed);
  const stage = createEnrichmentStage(ctx, {
    rpc: Object.fromEntries(options.chains.map((chain) => [chain, state])),
    hostMap: { [SIM_METADATA_HOST]: server.origin },
    cachePath: options.cachePath,
    // one local host serves every simulated token: a real host's spacing would starve the queue
    hostIntervalMs: 2,
    fetchTimeoutMs: options.fetchTimeoutMs,
  });
  return {
    wrap: (inner) => stage.wrap(inner),
    observeSolana: (tx, decoded) => stage.observeSolana(tx, decoded),
    idle: () => stage.idle(),
    close() {
      stage.close();
      void server.close();
    },
  };
}
