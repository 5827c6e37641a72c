// A snapshot begins only once the last one's file is on disk, its interval counting from there, and
// sliced work (snapshot captures, the wallet park, views passes) also runs inside a backlog's turns:
// input goes on while a file waits for the store, and the wallet park, which runs from a snapshot's
// confirmation to the next snapshot, completes while a backlog keeps the thread busy. Before, each
// next snapshot held processing until the previous file was written, and a backlog held back every
// slice of a capture and of the park until it was worked off.
import assert from 'node:assert/strict';
import type { SpotStore } from '../clickhouse/types.ts';
import { createAggregator, type AggregatorOptions } from '../aggregators/aggregator.ts';
import { createAggregatorEnv, type AggregatorEnv } from './helpers/aggregator-env.ts';
import { makeScenario, produceScenario } from './fixtures/aggregator-scenario.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Cadence {
  begun: number;
  written: number;
  overlapping: number;
  flushesWhileWriting: number;
  passesDuringBacklog: number;
  processed: number;
  total: number;
}

describe('aggregator snapshot cadence (embedded log + chDB)', function () {
  this.timeout(180_000);
  let env: AggregatorEnv | undefined;
  afterEach(() => env?.close());

  /** Runs a scenario's backlog to its end with `options`, watching the snapshots and park passes. */
  async function runBacklog(name: string, options: Partial<AggregatorOptions>, slowTradesMs = 0): Promise<Cadence> {
    env = await createAggregatorEnv(`spot-snapshot-cadence-${name}-`);
    const { ctx, log, store } = env;
    const scenario = makeScenario(23, 12_000);
    await produceScenario(log, scenario);
    const seen: Cadence = {
      begun: 0,
      written: 0,
      overlapping: 0,
      flushesWhileWriting: 0,
      passesDuringBacklog: 0,
      processed: 0,
      total: scenario.swaps.length + scenario.events.length,
    };
    // Each trades insert acknowledged late: every snapshot's file waits for it.
    const slowStore: SpotStore = {
      ...store,
      insertTrades: async (rows) => {
        await sleep(slowTradesMs);
        return store.insertTrades(rows);
      },
    };
    let writing = false;
    const passesBefore = ctx.metrics.get('aggregator.wallet_park_passes');
    const aggregator = createAggregator(ctx, {
      log,
      store: slowStore,
      name,
      walletParkIdleMs: 60_000,
      ...options,
      onFlush: (info) => {
        seen.processed = info.processed;
        if (info.snapshot) {
          if (writing) seen.overlapping++;
          writing = true;
          seen.begun++;
        } else if (writing) seen.flushesWhileWriting++;
        if (info.processed < seen.total)
          seen.passesDuringBacklog = ctx.metrics.get('aggregator.wallet_park_passes') - passesBefore;
      },
      onSnapshot: () => {
        writing = false;
        seen.written++;
      },
    });
    await aggregator.start();
    await aggregator.drain();
    await aggregator.stop();
    assert.equal(seen.processed, seen.total);
    return seen;
  }

  it('begins no snapshot while the last one is written, and goes on with input meanwhile', async () => {
    // Due at every flush: only the file being written holds the next snapshot back.
    const seen = await runBacklog('due', { maxBatch: 200, snapshotEveryMs: 0 }, 100);
    assert.ok(seen.written >= 2, `snapshots written: ${seen.written}`);
    assert.equal(seen.overlapping, 0, 'a snapshot began while the last one was being written');
    assert.ok(seen.flushesWhileWriting > 0, 'input went on while a snapshot file waited for the store');
  });

  it('completes wallet park passes while a backlog keeps the thread busy', async () => {
    const seen = await runBacklog('backlog', { snapshotEveryMs: 200 });
    assert.ok(seen.written >= 2, `snapshots written: ${seen.written}`);
    assert.ok(seen.passesDuringBacklog > 0, 'a wallet park pass completed before the backlog was done');
  });
});
