// Replay: `spot replay` (aggregators/replay.ts runReplay) over an embedded log filled beforehand
// with the decoded simulator records: empties the derived tables, rebuilds every table and
// compacted topic from offset 0. Rate = swaps in the log / replay wall time.
import { runReplay } from '../../aggregators/replay.ts';
import { createIngestPublisher } from '../../ingest/publisher.ts';
import { countSwaps, readDecoded } from '../lib/inputs.ts';
import { openLog, openStore } from '../lib/pipeline-parts.ts';
import { check, runScenarioMain } from '../lib/scenario.ts';
import { perSecond, round } from '../lib/stats.ts';

interface Params {
  inputFile: string;
  targetSwapsPerSecond: number;
}

runScenarioMain<Params>('replay', { inputFile: '', targetSwapsPerSecond: 100_000 }, async ({ ctx }, params) => {
  const decoded = readDecoded(params.inputFile);
  const { swaps, events } = countSwaps(decoded);
  const handle = await openStore(ctx);
  const logHandle = await openLog(ctx, 'embedded', 'events');
  const publisher = createIngestPublisher(ctx, {
    log: logHandle.log,
    maxBatch: 20_000,
    markAfterMs: ctx.config.inputMarkMs,
  });
  for (const item of decoded) if (item.swaps.length + item.events.length > 0) void publisher.publish(item);
  await publisher.flush();

  const result = await runReplay(ctx, { log: logHandle.log, store: handle.store, name: 'bench-replay', output: null });
  const rate = perSecond(swaps, result.ms);
  const writes = Object.fromEntries(
    [...handle.writes].map(([k, v]) => [k, { calls: v.calls, totalMs: round(v.ms, 0) }]),
  );
  const sinkMs = [...handle.writes.values()].reduce((sum, w) => sum + w.ms, 0);

  // The aggregator's own ceiling: the same replay with every store write acknowledged at once
  // (rows built and handed over, never sent to chDB). Runs second, so its code is already warm.
  const discard = async () => {};
  const noStore = {
    ...handle.store,
    insertTrades: discard,
    upsertTokens: discard,
    upsertCandles: discard,
    insertTokenEvents: discard,
    upsertWalletLabels: discard,
    upsertBalances: discard,
  };
  const alone = await runReplay(ctx, {
    log: logHandle.log,
    store: noStore,
    name: 'bench-replay-no-store',
    output: null,
  });
  const aloneRate = perSecond(swaps, alone.ms);
  await logHandle.close();
  await handle.store.close();
  return {
    params: { swaps, tokenEvents: events, messages: result.messages },
    measurements: [
      {
        subject: 'spot replay (embedded log → aggregator → chDB, compacted topics)',
        metric: 'swaps/s',
        value: round(rate, 0),
        unit: 'swaps/s',
        extra: { messagesPerSecond: round(perSecond(result.messages, result.ms), 0), ms: result.ms },
      },
      {
        subject: '  the same replay, store writes discarded (aggregator and compacted topics alone)',
        metric: 'swaps/s',
        value: round(aloneRate, 0),
        unit: 'swaps/s',
        extra: { messagesPerSecond: round(perSecond(alone.messages, alone.ms), 0), ms: alone.ms },
      },
    ],
    ratios: { replay_vs_replay_without_store: round(rate / aloneRate, 2) },
    targets: [
      check(
        `replay >= ${params.targetSwapsPerSecond.toLocaleString('en-US')} swaps/s`,
        'swaps/s',
        '>=',
        params.targetSwapsPerSecond,
        round(rate, 0),
        'swaps/s',
      ),
    ],
    evidence: { chdbWrites: writes, chdbShareOfReplayPct: round((100 * sinkMs) / result.ms, 1) },
    notes: [
      'Rate counts swaps only; the log also holds token events (messages/s counts both).',
      "The run without the store follows the real one in the same process (warm code); its messages/s is the aggregator's own ceiling on one core.",
    ],
  };
});
