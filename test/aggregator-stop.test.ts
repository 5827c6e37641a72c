// A stop while a snapshot's capture is under way drops that capture and writes only the final
// snapshot; input the merge held but had not processed stays on the log. The restart then writes
// the same tables and builds the same tokens as a run never stopped.
import assert from 'node:assert/strict';
import type { Token } from '../core/schemas.ts';
import { createAggregator, type Aggregator } from '../aggregators/aggregator.ts';
import { createAggregatorEnv, type AggregatorEnv } from './helpers/aggregator-env.ts';
import { makeScenario, produceScenario } from './fixtures/aggregator-scenario.ts';
import { dumpTables } from './fixtures/aggregator-dump.ts';

const byKey = (tokens: Token[]) => tokens.map((t) => JSON.stringify(t)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

describe('aggregator stop during a snapshot (embedded log + chDB)', function () {
  this.timeout(180_000);
  let env: AggregatorEnv | undefined;
  after(() => env?.close());

  it('restarts from the final snapshot to the tables and tokens of a run never stopped', async () => {
    env = await createAggregatorEnv('spot-stop-test-');
    const { ctx, log, store, client } = env;
    await produceScenario(log, makeScenario(17, 6000));
    const options = { log, store, maxBatch: 200, snapshotEveryMessages: 2000 };
    const abandonedBefore = ctx.metrics.get('aggregator.snapshots_abandoned');

    // Stopped right after its second snapshot began: the capture is taken in slices between batches.
    let stopping: Promise<void> | null = null;
    let snapshots = 0;
    const first: Aggregator = createAggregator(ctx, {
      ...options,
      name: 'stopped',
      onFlush: ({ snapshot }) => {
        if (snapshot && ++snapshots === 2) stopping ??= first.stop();
      },
    });
    await first.start();
    while (!stopping) await new Promise((resolve) => setTimeout(resolve, 5));
    await stopping;
    assert.equal(ctx.metrics.get('aggregator.snapshots_abandoned') - abandonedBefore, 1, 'the capture was dropped');
    const stoppedAt = first.processed();

    const second = createAggregator(ctx, { ...options, name: 'stopped' });
    await second.start();
    await second.drain();
    await second.stop();
    assert.ok(second.processed() > stoppedAt, 'the restart went on from the stop');
    const restartedTables = await dumpTables(client);
    const restartedTokens = byKey(second.tokens());

    await store.truncateDerived();
    const whole = createAggregator(ctx, { ...options, name: 'whole' });
    await whole.start();
    await whole.drain();
    await whole.stop();
    assert.equal(whole.processed(), second.processed());
    assert.deepEqual(restartedTables, await dumpTables(client));
    assert.deepEqual(restartedTokens, byKey(whole.tokens()));
  });
});
