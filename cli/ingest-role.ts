// The ingest role: block sources for the chains that have an RPC endpoint, otherwise the market
// simulator, either served as a local chain node that the same block sources read
// (SPOT_SIM_NODE=1) or decoded in-process; everything publishes through the one ingest publisher.
import path from 'node:path';
import { CHAIN_INFO, type Chain } from '../core/chains.ts';
import type { Context } from '../core/context.ts';
import { createIngestPublisher, type IngestPublisher } from '../ingest/publisher.ts';
import { createCursorStore, type CursorStore } from '../ingest/cursor-store.ts';
import { createSolanaDecoder } from '../ingest/solana/index.ts';
import {
  createEvmDecoder,
  createPoolRegistry,
  createTokenRegistry,
  EVM_CONTRACTS,
  TOPIC0,
  type EvmDecoder,
} from '../ingest/evm/index.ts';
import { readCexHotWallets } from '../ingest/labels/bundled.ts';
import { labelCsvLine, LABEL_CSV_HEADER, parseLabels } from '../ingest/labels/format.ts';
import { createLabelImporter, type LabelImporter } from '../ingest/labels/import.ts';
import { createEvmRpcSource } from '../ingest/sources/evm-rpc.ts';
import { createSolanaBlockSource } from '../ingest/sources/solana-blocks.ts';
import { createSolanaGeyserSource } from '../ingest/sources/solana-geyser.ts';
import type { ChainSource } from '../ingest/sources/solana-rpc.ts';
import type { EvmChain } from '../ingest/simulator/addresses.ts';
import { evmCursor, SOLANA_CURSOR } from '../ingest/simulator/node-cursors.ts';
import { startSimulatorNodeProcess } from '../ingest/simulator/node-process.ts';
import { createConfiguredEvmDecoder } from '../ingest/simulator/pipeline.ts';
import { createSimulatorSource } from '../ingest/simulator/runner.ts';
import { startSimEnrichment } from '../ingest/enrichment/sim-enrichment.ts';
import { createEnrichmentStage, httpRpcCallers } from '../ingest/enrichment/stage.ts';
import { startPromotionSource } from '../ingest/promotions/source.ts';
import type { Runtime } from './runtime.ts';
import { lowerProcessPriority } from './thread-priority.ts';

/** How much lower than the ingest threads the simulator's node process runs. */
const SIMULATOR_NICE_ABOVE_INGEST = 5;

/** Contracts an EVM source follows on a chain: factories, the V4 PoolManager, launchpads. */
function watchedContracts(chain: Chain): string[] {
  return Object.values(EVM_CONTRACTS).flatMap((byChain) => {
    const address = (byChain as Partial<Record<Chain, string>>)[chain];
    return address ? [address] : [];
  });
}

interface SourceSetup {
  publisher: IngestPublisher;
  cursors: CursorStore;
  /** Reading the simulator's node: its chains are final at once and every pool event is followed. */
  simulated: boolean;
  /** First block (slot) without a stored cursor; default the head. */
  from?: number;
}

/** One block source per chain: the same code for a real node and the simulator's. */
function createChainSource(ctx: Context, chain: Chain, url: string, setup: SourceSetup): ChainSource {
  const { publisher, cursors, simulated, from } = setup;
  if (CHAIN_INFO[chain].family === 'solana' && !simulated && ctx.config.geyserSolana) {
    // Same decoders and cursor as the getBlock source; SPOT_RPC_SOLANA still serves enrichment.
    return createSolanaGeyserSource(ctx, {
      url: ctx.config.geyserSolana,
      token: ctx.config.geyserToken,
      publisher,
      cursors,
      sourceId: SOLANA_CURSOR,
      decoder: createSolanaDecoder({ logger: ctx.logger, metrics: ctx.metrics }),
    });
  }
  if (CHAIN_INFO[chain].family === 'solana') {
    return createSolanaBlockSource(ctx, {
      url,
      publisher,
      cursors,
      sourceId: SOLANA_CURSOR,
      decoder: createSolanaDecoder({ logger: ctx.logger, metrics: ctx.metrics }),
      ...(from !== undefined ? { fromSlot: from } : {}),
      ...(simulated ? { batchSize: 100, pollIntervalMs: 100 } : {}),
    });
  }
  const decoder: EvmDecoder = simulated
    ? createConfiguredEvmDecoder(chain as EvmChain, ctx.metrics)
    : createEvmDecoder({ chain, tokens: createTokenRegistry(), pools: createPoolRegistry(), metrics: ctx.metrics });
  return createEvmRpcSource(ctx, {
    chain,
    url,
    publisher,
    cursors,
    sourceId: evmCursor(chain),
    addresses: watchedContracts(chain),
    decoder,
    ...(from !== undefined ? { fromBlock: from } : {}),
    // The simulator's pools and Transfers are all of its market: every decoded event is followed.
    ...(simulated
      ? { confirmations: 0, topics: Object.values(TOPIC0), pollIntervalMs: 100, maxRange: 4_000, blockBatch: 2_000 }
      : {}),
  });
}

/** The bundled exchange hot wallets of the followed chains, through the label import. */
async function importCexList(labels: LabelImporter, chains: Chain[]): Promise<void> {
  const lines = parseLabels(readCexHotWallets(), 'csv').lines.filter((line) => chains.includes(line.chain));
  if (lines.length === 0) return;
  const text = `${LABEL_CSV_HEADER}\n${lines.map((line) => labelCsvLine(line)).join('\n')}\n`;
  await labels.importText(text, { format: 'csv', origin: 'cex-hot-wallets.csv' });
}

/** The chains' sources stop together: each waits for its own batch in flight, not for the others'. */
async function stopAll(sources: Array<{ stop(): Promise<void> }>): Promise<void> {
  await Promise.all(sources.map((source) => source.stop()));
}

export async function startIngest(runtime: Runtime): Promise<void> {
  const { ctx, log } = runtime;
  // --chains (SPOT_SIM_CHAINS) limits either source: only the listed chains' endpoints are followed.
  // A Geyser endpoint follows Solana as an RPC endpoint does.
  const endpoints = { ...(ctx.config.geyserSolana ? { solana: ctx.config.geyserSolana } : {}), ...ctx.config.rpc };
  const rpcChains = (Object.keys(endpoints) as Chain[]).filter((chain) => ctx.config.simChains.includes(chain));
  const stops: { name: string; stop(): Promise<void> }[] = [];
  const cursorsPath = path.join(ctx.config.dataDir, 'ingest-cursors.sqlite');
  const openCursors = () => createCursorStore(ctx, { path: cursorsPath });

  if (Object.keys(endpoints).length > 0 && rpcChains.length === 0) {
    throw new Error(
      `--chains ${ctx.config.simChains.join(',')} names no chain with an RPC endpoint (SPOT_RPC_<CHAIN>)`,
    );
  }
  // Metadata and security of new tokens (docs/token-fields.md), answered off the ingest path.
  const enrichment =
    ctx.config.enrichment === 'off'
      ? null
      : rpcChains.length > 0
        ? createEnrichmentStage(ctx, { rpc: httpRpcCallers(ctx.config.rpc, rpcChains) })
        : await startSimEnrichment(ctx, { seed: ctx.config.simSeed, chains: ctx.config.simChains });
  const ingestPublisher = createIngestPublisher(ctx, { log, markAfterMs: ctx.config.inputMarkMs });
  const enriched = enrichment ? enrichment.wrap(ingestPublisher) : ingestPublisher;
  // Paid promotions of tokens (their `platforms`): SPOT_PROMOTIONS_URL, or the simulator's own feed.
  const promotions = await startPromotionSource(ctx, { simulated: rpcChains.length === 0 });
  const publisher = promotions ? promotions.wrap(enriched) : enriched;
  const labels = createLabelImporter(ctx, { log, publisher });
  if (rpcChains.length > 0) {
    const cursors = openCursors();
    await importCexList(labels, rpcChains);
    const sources: Array<{ stop(): Promise<void> }> = [];
    for (const chain of rpcChains) {
      const source = createChainSource(ctx, chain, endpoints[chain]!, { publisher, cursors, simulated: false });
      await source.start();
      sources.push(source);
      ctx.logger.info({ chain }, 'following chain over RPC');
    }
    stops.push({ name: 'sources', stop: () => stopAll(sources) });
    stops.push({ name: 'cursors', stop: async () => cursors.close() });
  } else if (ctx.config.simNode) {
    // The market and its chain node run in a process of their own (node-process.ts), read over
    // JSON-RPC by the same block sources as a real node.
    const cursors = openCursors();
    const node = await startSimulatorNodeProcess(ctx, {
      cursorsPath,
      labels,
      onFailure: (error) => runtime.fail('simulator-node', error),
    });
    // The chain yields to the service: below the ingest threads, so that under contention the
    // serving thread's GC helpers and the main thread come first (a starved node lags in event time).
    if (ctx.config.ingestNice > 0)
      lowerProcessPriority(node.pid, Math.min(19, ctx.config.ingestNice + SIMULATOR_NICE_ABOVE_INGEST), ctx.logger);
    stops.push({ name: 'simulator', stop: () => node.stop() });
    const sources: Array<{ stop(): Promise<void> }> = [];
    for (const chain of ctx.config.simChains) {
      const source = createChainSource(ctx, chain, node.wsUrl(chain), {
        publisher,
        cursors,
        simulated: true,
        from: node.firstBlock(chain),
      });
      await source.start();
      sources.push(source);
    }
    stops.push({ name: 'sources', stop: () => stopAll(sources) });
    stops.push({ name: 'simulator-node', stop: () => node.close() });
    stops.push({ name: 'cursors', stop: async () => cursors.close() });
  } else {
    const simulator = createSimulatorSource(ctx, {
      publisher,
      seed: ctx.config.simSeed,
      rate: ctx.config.simRate,
      warmHours: ctx.config.simWarmHours,
      chains: ctx.config.simChains,
      ...(ctx.config.simNow !== null ? { now: () => ctx.config.simNow! } : {}),
      onFailure: (error) => runtime.fail('simulator', error),
    });
    await simulator.start();
    stops.push({ name: 'simulator', stop: () => simulator.stop() });
  }
  if (rpcChains.length === 0) {
    ctx.logger.info(
      { chains: ctx.config.simChains, rate: ctx.config.simRate, node: ctx.config.simNode },
      'market simulator running',
    );
  }

  if (promotions) {
    promotions.start();
    stops.unshift({ name: 'promotions', stop: () => promotions.stop() });
  }
  runtime.add({
    name: 'ingest',
    async stop() {
      // Each step's time is logged: what a SIGTERM waits for on this thread.
      const phasesMs: Record<string, number> = {};
      const timed = async (name: string, step: () => Promise<void>) => {
        const from = performance.now();
        await step();
        phasesMs[name] = Math.round(performance.now() - from);
      };
      for (const part of stops) await timed(part.name, () => part.stop());
      await timed('publish', () => publisher.flush());
      enrichment?.close();
      ctx.logger.info({ phasesMs }, 'ingest stop phases');
    },
  });
}
