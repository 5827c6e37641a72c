// RPC cost of reading chains by block: `spot ingest` in simulator-node mode (the market served as a
// local chain node, read by the same block sources as a real one) over `minutes` of history at
// `rate` swaps/s of event time (mainnet-like: ~1,500/s over five chains, ../shared/REALWORLD.md).
// Reports JSON-RPC calls (a batch item counts as one call, as providers bill them) and HTTP/WS
// requests per Solana slot and per EVM block, and the ingest rate through the node.
import { startIngest } from '../../cli/ingest-role.ts';
import { createRuntime } from '../../cli/runtime.ts';
import { CHAINS, type Chain } from '../../core/chains.ts';
import { BLOCK_MS } from '../../ingest/simulator/clock.ts';
import { readSimulatorState } from '../../ingest/simulator/runner.ts';
import { check, runScenarioMain, scenarioContext, sleep, type Measurement, type TargetCheck } from '../lib/scenario.ts';
import { perSecond, round } from '../lib/stats.ts';

interface Params {
  minutes: number;
  rate: number;
  maxCallsPerSlot: number;
  maxCallsPerBlock: number;
}

const NOW = Date.UTC(2026, 10, 20, 12, 0, 0);

runScenarioMain<Params>(
  'rpc',
  { minutes: 2, rate: 1500, maxCallsPerSlot: 3, maxCallsPerBlock: 3 },
  async ({ dir }, params) => {
    const ctx = scenarioContext(dir, {
      SPOT_SIM_NODE: '1',
      SPOT_SIM_NOW: String(NOW),
      SPOT_SIM_WARM_HOURS: String(params.minutes / 60),
      SPOT_SIM_HISTORY_RATE: String(params.rate),
      SPOT_SIM_RATE: '0',
    });
    const runtime = await createRuntime(ctx);
    const started = performance.now();
    await startIngest(runtime);
    while (readSimulatorState(dir)?.lastEventTime !== NOW) await sleep(50);
    const ms = performance.now() - started;
    await runtime.stop();

    const swaps = ctx.metrics.get('ingest.published.swaps');
    const measurements: Measurement[] = [];
    const targets: TargetCheck[] = [];
    const evidence: Record<string, unknown> = {};
    for (const chain of CHAINS as readonly Chain[]) {
      // The served range: the history plus the market's set-up lead (two minutes).
      const blocks = Math.ceil(((params.minutes + 2) * 60_000) / BLOCK_MS[chain]);
      const calls = ctx.metrics.get(`simulator.node.calls.${chain}`);
      const requests = ctx.metrics.get(`simulator.node.requests.${chain}`);
      const unit = chain === 'solana' ? 'calls/slot' : 'calls/block';
      const perBlock = round(calls / blocks, 3);
      measurements.push({
        subject: `${chain} by block`,
        metric: unit,
        value: perBlock,
        unit,
        extra: { requestsPerBlock: round(requests / blocks, 3), calls, blocks },
      });
      targets.push(
        chain === 'solana'
          ? check('solana <= 3 RPC calls per slot', unit, '<=', params.maxCallsPerSlot, perBlock, unit)
          : check(`${chain} <= 3 RPC calls per block`, unit, '<=', params.maxCallsPerBlock, perBlock, unit),
      );
      const prefix = `simulator.node.method.${chain}.`;
      const byMethod = Object.fromEntries(
        Object.entries(ctx.metrics.snapshot())
          .filter(([name]) => name.startsWith(prefix))
          .map(([name, count]) => [name.slice(prefix.length), round(count / blocks, 3)]),
      );
      evidence[chain] = { calls, requests, blocks, callsPerBlockByMethod: byMethod };
    }
    if (ctx.metrics.get('ingest.solana.blocks') > 0)
      evidence.solanaProducedBlocks = ctx.metrics.get('ingest.solana.blocks');
    measurements.push({
      subject: 'ingest through the simulator node',
      metric: 'swaps/s',
      value: round(perSecond(swaps, ms), 0),
      unit: 'swaps/s',
      extra: { swaps, ms: round(ms, 0) },
    });
    return {
      measurements,
      ratios: {},
      targets,
      notes: [
        `${params.minutes} min of history at ${params.rate} swaps/s of event time, read through the simulator node by the block sources`,
      ],
      evidence,
    };
  },
);
