// A stop while a snapshot's capture is under way drops that capture and writes only the final
// snapshot; input the merge held but had not processed stays on the log; views not built yet are
// named in the final snapshot and built by the next start. The restart then writes the same tables
// and builds the same tokens as a run never stopped. A stop soon after a snapshot writes a marker
// instead (stop-marker.ts): the next start replays to it publishing nothing, then goes on.
import assert from 'node:assert/strict';
import { tokenKey } from '../core/chains.ts';
import type { EventLog } from '../core/eventlog/types.ts';
import type { Token } from '../core/schemas.ts';
import { TOPICS } from '../core/topics.ts';
import { createAggregator, type Aggregator } from '../aggregators/aggregator.ts';
import fs from 'node:fs';
import { readSnapshot, snapshotPath } from '../aggregators/snapshot.ts';
import { stopMarkerPath } from '../aggregators/stop-marker.ts';
import { createAggregatorEnv, type AggregatorEnv } from './helpers/aggregator-env.ts';
import { waitFor } from './helpers/ports.ts';
import { makeScenario, produceScenario, swapMessage } from './fixtures/aggregator-scenario.ts';
import { dumpTables, latestPerKey } from './fixtures/aggregator-dump.ts';

const byKey = (tokens: Token[]) => tokens.map((t) => JSON.stringify(t)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/** The tables and tokens after `restarted` equal those of a run of the same log never stopped. */
async function assertSameAsWholeRun(
  env: AggregatorEnv,
  options: Parameters<typeof createAggregator>[1],
  restarted: Aggregator,
): Promise<void> {
  const restartedTables = await dumpTables(env.client);
  const restartedTokens = byKey(restarted.tokens());
  await env.store.truncateDerived();
  const whole = createAggregator(env.ctx, options);
  await whole.start();
  await whole.drain();
  await whole.stop();
  assert.equal(whole.processed(), restarted.processed());
  assert.deepEqual(restartedTables, await dumpTables(env.client));
  assert.deepEqual(restartedTokens, byKey(whole.tokens()));
}

describe('aggregator stop during a snapshot (embedded log + chDB)', function () {
  this.timeout(180_000);
  let env: AggregatorEnv | undefined;
  after(() => env?.close());

  it('restarts from the final snapshot to the tables and tokens of a run never stopped', async () => {
    env = await createAggregatorEnv('spot-stop-test-');
    const { ctx, log, store } = env;
    await produceScenario(log, makeScenario(17, 6000));
    // A final snapshot, not a marker.
    const options = { log, store, maxBatch: 200, snapshotEveryMessages: 2000, stopReplayMost: 0 };
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
    await assertSameAsWholeRun(env, { ...options, name: 'whole' }, second);
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
    // Soon after the snapshot it started from, the stop wrote a marker: it names the views left.
    const marker = JSON.parse(fs.readFileSync(stopMarkerPath(ctx, 'stop-views'), 'utf8'));
    assert.deepEqual(marker.views, { changed: [], traded: [] }, 'a stop with every view out names none');

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

/** How many times each trade id is on the trades topic. */
async function tradesPublished(log: EventLog): Promise<Map<string, number>> {
  const times = new Map<string, number>();
  await log.readToEnd(TOPICS.trades.name, (m) => {
    const id = (JSON.parse(m.value) as { trade: { id: string } }).trade.id;
    times.set(id, (times.get(id) ?? 0) + 1);
  });
  return times;
}

describe('aggregator stop after a snapshot (embedded log + chDB)', function () {
  this.timeout(180_000);
  let env: AggregatorEnv | undefined;
  after(() => env?.close());

  it('writes a marker; the restart replays to it publishing nothing (a stop meanwhile keeps it), then goes on as a run never stopped', async () => {
    env = await createAggregatorEnv('spot-stop-marker-test-');
    const { ctx, log, store, client } = env;
    await produceScenario(log, makeScenario(23, 6000));
    // Any distance from the snapshot on disk: the file waits for the store's acknowledgement, and on
    // a busy machine the first one landed 10,000 messages after its capture (the stop then captured).
    const options = { log, store, maxBatch: 200, snapshotEveryMessages: 2000, stopReplayMost: 1_000_000 };

    // Stopped 600 messages after its first snapshot is on disk.
    let stopping: Promise<void> | null = null;
    let writtenAt = 0;
    const first: Aggregator = createAggregator(ctx, {
      ...options,
      name: 'marked',
      onSnapshot: () => {
        writtenAt ||= first.processed();
      },
      onFlush: ({ processed }) => {
        if (writtenAt > 0 && processed >= writtenAt + 600) stopping ??= first.stop();
      },
    });
    await first.start();
    while (!stopping) await new Promise((resolve) => setTimeout(resolve, 5));
    await stopping;
    const stoppedAt = first.processed();
    const marker = JSON.parse(fs.readFileSync(stopMarkerPath(ctx, 'marked'), 'utf8'));
    assert.equal(marker.processed, stoppedAt);
    const onDisk = readSnapshot(snapshotPath(ctx, 'marked'))!;
    assert.equal(marker.base, onDisk.processed);
    assert.ok(onDisk.processed < stoppedAt, 'the snapshot on disk is older than the stop');
    const publishedAtStop = await tradesPublished(log);

    // Stopped again at its first flush, inside the quiet replay: the marker still covers the first stop.
    let interrupting: Promise<void> | null = null;
    const interrupted: Aggregator = createAggregator(ctx, {
      ...options,
      name: 'marked',
      onFlush: () => {
        interrupting ??= interrupted.stop();
      },
    });
    await interrupted.start();
    while (!interrupting) await new Promise((resolve) => setTimeout(resolve, 5));
    await interrupting;
    assert.ok(interrupted.processed() < stoppedAt, 'stopped before the replay reached the first stop');
    const joined = JSON.parse(fs.readFileSync(stopMarkerPath(ctx, 'marked'), 'utf8'));
    assert.equal(joined.base, marker.base);
    assert.deepEqual(joined.chainOffsets, marker.chainOffsets);
    assert.deepEqual(joined.views, marker.views);
    assert.equal((await tradesPublished(log)).size, publishedAtStop.size, 'the replay published no trade');

    const second = createAggregator(ctx, { ...options, name: 'marked' });
    await second.start();
    await second.drain();
    // Every view is out, those the stop left included.
    assert.deepEqual(await unpublished(second, log), []);
    await second.stop();
    assert.ok(second.processed() > stoppedAt, 'the restart went on from the stop');
    const published = await tradesPublished(log);
    assert.ok(published.size > publishedAtStop.size, 'trades after the stop were published');
    for (const [id, times] of published) assert.equal(times, 1, `trade ${id} published once`);
    const [stored] = (await (
      await client.query({
        query: 'SELECT count() AS rows, uniqExact(id) AS ids FROM spot.trades',
        format: 'JSONEachRow',
      })
    ).json()) as Array<{ rows: string; ids: string }>;
    assert.equal(stored!.rows, stored!.ids, 'each trade stored once');
    await assertSameAsWholeRun(env, { ...options, name: 'marked-whole' }, second);
  });
});
