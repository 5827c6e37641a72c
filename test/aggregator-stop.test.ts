// A stop while a snapshot's capture is under way drops that capture and writes only the final
// snapshot; input the merge held but had not processed stays on the log; views not built yet are
// named in the final snapshot and built by the next start. The restart then writes the same tables
// and builds the same tokens as a run never stopped.
import assert from 'node:assert/strict';
import { tokenKey } from '../core/chains.ts';
import type { EventLog } from '../core/eventlog/types.ts';
import type { Token } from '../core/schemas.ts';
import { TOPICS } from '../core/topics.ts';
import { createAggregator, type Aggregator } from '../aggregators/aggregator.ts';
import { readSnapshot, snapshotPath } from '../aggregators/snapshot.ts';
import { createAggregatorEnv, type AggregatorEnv } from './helpers/aggregator-env.ts';
import { waitFor } from './helpers/ports.ts';
import { makeScenario, produceScenario, swapMessage } from './fixtures/aggregator-scenario.ts';
import { dumpTables, latestPerKey } from './fixtures/aggregator-dump.ts';

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

/** Tokens whose latest message on the tokens topic is not their current view. */
async function unpublished(aggregator: Aggregator, log: EventLog): Promise<Token[]> {
  const published = await latestPerKey(log, TOPICS.tokens.name);
  return aggregator.tokens().filter((t) => published[tokenKey(t.chain, t.address)] !== JSON.stringify(t));
}

describe('aggregator stop with views not built yet (embedded log + chDB)', function () {
  this.timeout(180_000);
  let env: AggregatorEnv | undefined;
  after(() => env?.close());

  it('names them in the final snapshot; the next start publishes them with no input', async () => {
    env = await createAggregatorEnv('spot-stop-views-test-');
    const { ctx, log, store, client } = env;
    const scenario = makeScenario(17, 600);
    // Trades a minute after the scenario, arriving live in one produce: the input order is the same
    // whether they are on the log from the start or come later.
    const created = new Set(
      scenario.events.filter((e) => e.kind === 'created').map((e) => tokenKey(e.chain, e.token!)),
    );
    const priced = scenario.swaps.filter((s) => s.dex !== 'ref-pool' && created.has(tokenKey(s.chain, s.token)));
    const later = priced.slice(-40).map((s, i) => ({
      ...s,
      id: `${s.id}:later`,
      transactionHash: `${s.transactionHash}:later`,
      blockNumber: s.blockNumber + 100,
      blockTime: s.blockTime + 60_000 + i,
    }));
    await produceScenario(log, scenario);
    const options = { log, store, name: 'stop-views', viewsEveryMs: 3_600_000 };
    const first = createAggregator(ctx, options);
    await first.start();
    await first.drain();
    assert.deepEqual(await unpublished(first, log), [], 'a drain publishes every view');
    // The next views pass is an hour away: the later trades go out, their tokens' views wait.
    await log.produce(TOPICS.swaps.name, later.map(swapMessage));
    const total = scenario.swaps.length + scenario.events.length + later.length;
    await waitFor(async () => first.processed() >= total || undefined, 10_000, 'the later trades were processed');
    const stale = await unpublished(first, log);
    assert.ok(stale.length > 0, 'some views are not published before the stop');
    const candlesBefore = await latestPerKey(log, TOPICS.candles.name);
    await first.stop();

    const views = readSnapshot(snapshotPath(ctx, 'stop-views'))!.views!;
    for (const t of stale) assert.ok(views.changed.includes(tokenKey(t.chain, t.address)), 'a stale view is named');
    const traded = [...new Set(later.map((s) => tokenKey(s.chain, s.token)))];
    for (const key of traded) assert.ok(views.traded.includes(key), 'a token traded since the last pass is named');

    const second = createAggregator(ctx, options);
    await second.start();
    try {
      await waitFor(
        async () => (await unpublished(second, log)).length === 0 || undefined,
        10_000,
        'the views left by the stop were published',
      );
      assert.equal(second.processed(), first.processed(), 'no input was needed');
      const candlesAfter = await latestPerKey(log, TOPICS.candles.name);
      for (const key of traded) assert.notEqual(candlesAfter[key], candlesBefore[key], 'its candle view went out too');
      await second.drain();
    } finally {
      await second.stop();
    }
    assert.equal(
      readSnapshot(snapshotPath(ctx, 'stop-views'))!.views,
      undefined,
      'a stop with every view out names none',
    );

    // The store holds what a run never stopped writes (candle rows and token rows included).
    const tables = await dumpTables(client);
    await store.truncateDerived();
    const whole = createAggregator(ctx, { ...options, name: 'stop-views-whole' });
    await whole.start();
    await whole.drain();
    await whole.stop();
    assert.deepEqual(tables, await dumpTables(client));
  });
});
