// Partitioned token state: what one distributed aggregator instance costs when it owns all, half
// or a quarter of the 4 input partitions, against the embedded aggregator (which owns everything
// without partitioning). Each run merges the whole log (marks and wallet facts are chain-wide) with
// store writes discarded; the partitions are fixed here instead of coming from the ownership group,
// and every snapshot stands for the other owners' durable marks (the journals are emptied).
import { createAggregator } from '../../aggregators/aggregator.ts';
import type { PartitionedHooks } from '../../aggregators/ownership.ts';
import { journaling } from '../../aggregators/partition-journal.ts';
import type { AggregatorState } from '../../aggregators/state.ts';
import { dropSnapshots } from '../../aggregators/snapshot.ts';
import type { SpotStore } from '../../clickhouse/types.ts';
import { createIngestPublisher } from '../../ingest/publisher.ts';
import { countSwaps, readDecoded } from '../lib/inputs.ts';
import { openLog, openStore } from '../lib/pipeline-parts.ts';
import { runScenarioMain } from '../lib/scenario.ts';
import { perSecond, round } from '../lib/stats.ts';

interface Params {
  inputFile: string;
}

const PARTITIONS = 4;

function fixedOwnership(owned: number[]): PartitionedHooks {
  const own = new Set(owned);
  let state: AggregatorState | null = null;
  return {
    attach(loaded) {
      state = loaded;
      return journaling(loaded, PARTITIONS, (p) => own.has(p));
    },
    changed() {},
    async beforeSnapshot() {
      state?.journals?.clear();
    },
  };
}

runScenarioMain<Params>('partitioned', { inputFile: '' }, async ({ ctx }, params) => {
  const decoded = readDecoded(params.inputFile);
  const { swaps } = countSwaps(decoded);
  const handle = await openStore(ctx);
  const logHandle = await openLog(ctx, 'embedded', 'events');
  const publisher = createIngestPublisher(ctx, {
    log: logHandle.log,
    maxBatch: 20_000,
    markAfterMs: ctx.config.inputMarkMs,
  });
  for (const item of decoded) if (item.swaps.length + item.events.length > 0) void publisher.publish(item);
  await publisher.flush();
  const discard = async () => {};
  const store: SpotStore = {
    ...handle.store,
    insertTrades: discard,
    upsertTokens: discard,
    upsertCandles: discard,
    insertTokenEvents: discard,
    upsertWalletLabels: discard,
    upsertBalances: discard,
  };

  const run = async (name: string, owned: number[] | null) => {
    dropSnapshots(ctx);
    const hooks = owned ? fixedOwnership(owned) : undefined;
    const aggregator = createAggregator(ctx, {
      log: logHandle.log,
      store,
      name,
      publish: true,
      publishTrades: false,
      snapshotEveryMs: 1000,
      partitioned: hooks,
    });
    const started = performance.now();
    const cpu = process.cpuUsage();
    await aggregator.start();
    await aggregator.drain();
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const tokens = aggregator.tokens().length;
    await aggregator.stop();
    return { ms, cpuMs: (used.user + used.system) / 1000, tokens, messages: aggregator.processed() };
  };

  await run('warm-up', null);
  const whole = await run('embedded', null);
  const shares = [[0, 1, 2, 3], [0, 1], [0]];
  const parts = [];
  for (const owned of shares) parts.push({ owned, ...(await run(`owns-${owned.length}`, owned)) });
  await logHandle.close();
  await handle.store.close();

  const rate = (r: { ms: number }) => round(perSecond(swaps, r.ms), 0);
  return {
    params: { swaps, messages: whole.messages, partitions: PARTITIONS },
    measurements: [
      {
        subject: 'embedded aggregator (all tokens, no partitioning), store writes discarded',
        metric: 'swaps/s',
        value: rate(whole),
        unit: 'swaps/s',
        extra: { cpuMs: round(whole.cpuMs, 0), tokens: whole.tokens },
      },
      ...parts.map((p) => ({
        subject: `  distributed instance owning ${p.owned.length} of ${PARTITIONS} partitions`,
        metric: 'swaps/s',
        value: rate(p),
        unit: 'swaps/s',
        extra: { cpuMs: round(p.cpuMs, 0), tokensHeld: p.tokens },
      })),
    ],
    ratios: Object.fromEntries(
      parts.map((p) => [`cpu_owning_${p.owned.length}_of_${PARTITIONS}_vs_embedded`, round(p.cpuMs / whole.cpuMs, 2)]),
    ),
    targets: [],
    notes: [
      'Every instance merges the whole log: marks, wallet facts and the order are chain-wide. What an instance does only for its own partitions is token state, candles, views, sink rows and publishing.',
      "One process, one run after the other, after a warm-up run; CPU is the process's user + system time during each run.",
    ],
  };
});
