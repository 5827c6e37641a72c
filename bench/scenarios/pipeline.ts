// Pipeline throughput: simulator chain records → real decoders → ingest publisher → event log →
// aggregator → every sink (chDB tables, spot.trades/tokens/candles topics), against a raw chDB
// insert of the same trade rows in the same process. The embedded run also times the two halves
// on their own (decode only; log → aggregate → sinks from decoded records) to show where time goes.
import type { Context } from '../../core/context.ts';
import { createIngestPublisher, type IngestRecords } from '../../ingest/publisher.ts';
import { createSimulatorDecoders } from '../../ingest/simulator/pipeline.ts';
import { createAggregator } from '../../aggregators/aggregator.ts';
import { insertRowText } from '../../clickhouse/client.ts';
import { STORE_INSERT_SETTINGS } from '../../clickhouse/store.ts';
import { encodeRowsInSlices, tradeFormat } from '../../clickhouse/rows.ts';
import type { ChainRecord } from '../../ingest/simulator/chain-writer.ts';
import { readInputs } from '../lib/inputs.ts';
import { openLog, openStore, type StoreHandle, type Transport } from '../lib/pipeline-parts.ts';
import { check, runScenarioMain, type Measurement } from '../lib/scenario.ts';
import { perSecond, round } from '../lib/stats.ts';

interface Params {
  inputFile: string;
  transport: Transport;
  /** Also time decode alone and log→sinks alone (embedded only). */
  split: boolean;
  targetSwapsPerSecond: number;
}

const yieldNow = () => new Promise<void>((resolve) => setImmediate(resolve));

interface RunResult {
  swaps: number;
  ms: number;
  decodeMs: number;
}

/** One timed pass; `decoded` given skips the decoders (the log → sinks half). */
async function timedPass(
  ctx: Context,
  transport: Transport,
  name: string,
  handle: StoreHandle,
  records: readonly ChainRecord[] | null,
  decoded: readonly IngestRecords[] | null,
): Promise<RunResult> {
  const logHandle = await openLog(ctx, transport, name);
  const { log } = logHandle;
  const aggregator = createAggregator(ctx, {
    log,
    store: handle.store,
    name,
    snapshotEveryMs: 3_600_000,
    snapshotEveryMessages: 10_000_000,
  });
  await aggregator.start();
  const publisher = createIngestPublisher(ctx, { log, markAfterMs: ctx.config.inputMarkMs });
  const decoders = createSimulatorDecoders({ metrics: ctx.metrics });
  let swaps = 0;
  let decodeMs = 0;
  const started = performance.now();
  const count = records?.length ?? decoded!.length;
  for (let i = 0; i < count; i++) {
    let out: IngestRecords;
    if (records) {
      const t = performance.now();
      out = decoders.decode(records[i]!);
      decodeMs += performance.now() - t;
    } else {
      out = decoded![i]!;
    }
    swaps += out.swaps.length;
    if (out.swaps.length + out.events.length > 0) void publisher.publish(out);
    // Let the publisher's sends and the aggregator run alongside, as they would in `spot up`.
    if (i % 500 === 499) await yieldNow();
  }
  await publisher.flush();
  await aggregator.drain();
  const ms = performance.now() - started;
  await aggregator.stop();
  await logHandle.close();
  return { swaps, ms, decodeMs };
}

/**
 * Raw baseline: the same trade rows into a copy of spot.trades, 10,000 per INSERT, in the store's
 * form (`spot bench store` compares the others): JSONCompactEachRow text (clickhouse/rows.ts)
 * handed over as one Buffer (zero-copy raw insert) with the store's insert settings. The timed
 * section includes building the text (encodeMs).
 */
async function rawInsert(handle: StoreHandle): Promise<{ rows: number; ms: number; encodeMs: number }> {
  const { client, tradeRows } = handle;
  await client.command({ query: 'CREATE DATABASE IF NOT EXISTS bench_raw' });
  await client.command({ query: 'DROP TABLE IF EXISTS bench_raw.trades' });
  await client.command({ query: 'CREATE TABLE bench_raw.trades AS spot.trades' });
  const started = performance.now();
  let encodeMs = 0;
  for (let start = 0; start < tradeRows.length; start += 10_000) {
    const encodeStarted = performance.now();
    const text = await encodeRowsInSlices(tradeFormat, tradeRows, start, Math.min(tradeRows.length, start + 10_000));
    encodeMs += performance.now() - encodeStarted;
    await insertRowText(
      client,
      'bench_raw.trades',
      tradeFormat.columns,
      text,
      'JSONCompactEachRow',
      STORE_INSERT_SETTINGS,
    );
  }
  return { rows: tradeRows.length, ms: performance.now() - started, encodeMs };
}

runScenarioMain<Params>(
  'pipeline',
  { inputFile: '', transport: 'embedded', split: true, targetSwapsPerSecond: 100_000 },
  async ({ ctx }, params) => {
    const input = readInputs(params.inputFile);
    const handle = await openStore(ctx);
    const measurements: Measurement[] = [];
    const notes: string[] = [];
    const label = params.transport === 'embedded' ? 'embedded log' : 'Kafka (mock cluster)';

    const full = await timedPass(ctx, params.transport, 'full', handle, input.records, null);
    const fullRate = perSecond(full.swaps, full.ms);
    measurements.push({
      subject: `spot pipeline, ${label}: records → decoders → log → aggregator → sinks`,
      metric: 'swaps/s',
      value: round(fullRate, 0),
      unit: 'swaps/s',
      extra: {
        swaps: full.swaps,
        ms: round(full.ms, 0),
        decodeMs: round(full.decodeMs, 0),
        decodeSharePct: round((100 * full.decodeMs) / full.ms, 1),
      },
    });

    const raw = await rawInsert(handle);
    const rawRate = perSecond(raw.rows, raw.ms);
    measurements.push({
      subject:
        "raw chDB insert of the same trade rows (the store's form: JSONCompactEachRow Buffer, optimize_on_insert=0; 10k/INSERT)",
      metric: 'rows/s',
      value: round(rawRate, 0),
      unit: 'rows/s',
      extra: { rows: raw.rows, ms: round(raw.ms, 0), encodeMs: round(raw.encodeMs, 0) },
    });
    const ratios: Record<string, number> = {
      [`pipeline_${params.transport}_vs_raw_chdb_insert`]: round(fullRate / rawRate, 3),
    };

    if (params.split && params.transport === 'embedded') {
      const decodeRate = perSecond(full.swaps, full.decodeMs);
      measurements.push({
        subject: 'decoders alone (same records, inside the full pass)',
        metric: 'swaps/s',
        value: round(decodeRate, 0),
        unit: 'swaps/s',
        extra: { ms: round(full.decodeMs, 0) },
      });
      // The log → aggregator → sinks half on its own: records decoded beforehand, tables emptied.
      const decoders = createSimulatorDecoders();
      const decoded = input.records.map((record) => decoders.decode(record));
      await handle.store.truncateDerived();
      handle.tradeRows.length = 0;
      const half = await timedPass(ctx, params.transport, 'decoded', handle, null, decoded);
      const halfRate = perSecond(half.swaps, half.ms);
      measurements.push({
        subject: 'log → aggregator → sinks alone (decoded beforehand)',
        metric: 'swaps/s',
        value: round(halfRate, 0),
        unit: 'swaps/s',
        extra: { swaps: half.swaps, ms: round(half.ms, 0) },
      });
      ratios.log_to_sinks_vs_raw_chdb_insert = round(halfRate / rawRate, 3);
    }

    notes.push(
      `${input.records.length} chain records (${params.transport}); inputs generated ahead of time in ${round(input.generateMs / 1000, 1)} s, outside the timed section.`,
    );
    await handle.store.close();
    return {
      params: {
        transport: params.transport,
        records: input.records.length,
        swaps: full.swaps,
        chains: input.spec.chains,
        seed: input.spec.seed,
        simRate: input.spec.rate,
      },
      measurements,
      ratios,
      targets: [
        check(
          `pipeline (${label}) >= ${params.targetSwapsPerSecond.toLocaleString('en-US')} swaps/s`,
          'swaps/s',
          '>=',
          params.targetSwapsPerSecond,
          round(fullRate, 0),
          'swaps/s',
        ),
      ],
      notes,
    };
  },
);
