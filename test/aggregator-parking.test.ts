// Idle tokens are kept serialised off the JS heap (aggregators/parking.ts), idle wallets and their
// holder records on disk (aggregators/wallet-store.ts); all come back on their next input or read: a run that parks after
// one idle minute (and restarts from a snapshot holding parked tokens and wallets) writes the same
// tables and builds the same tokens as a run that parks none.
import assert from 'node:assert/strict';
import type { Context } from '../core/context.ts';
import type { EventLog } from '../core/eventlog/types.ts';
import type { SpotStore } from '../clickhouse/types.ts';
import type { ClickHouseClient } from '../clickhouse/client.ts';
import { createAggregator } from '../aggregators/aggregator.ts';
import { readSnapshot, snapshotPath } from '../aggregators/snapshot.ts';
import { createAggregatorEnv, type AggregatorEnv } from './helpers/aggregator-env.ts';
import { makeScenario, produceScenario, T0, withIdleTokens, type Scenario } from './fixtures/aggregator-scenario.ts';
import { dumpTables } from './fixtures/aggregator-dump.ts';
import { waitFor } from './helpers/ports.ts';
import type { Token } from '../core/schemas.ts';

const byKey = (tokens: Token[]) => tokens.map((t) => JSON.stringify(t)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

describe('aggregator parking (embedded log + chDB)', function () {
  this.timeout(180_000);
  let env: AggregatorEnv;
  let ctx: Context;
  let log: EventLog;
  let store: SpotStore;
  let client: ClickHouseClient;

  before(async () => {
    env = await createAggregatorEnv('spot-park-test-');
    ({ ctx, log, store, client } = env);
  });

  after(() => env?.close());

  it('parked tokens come back with the same tables and tokens as a run that parks none', async () => {
    // Two thirds of the tokens fall silent at hour 12 for 30 h or 60 h; the restart is at hour 23. Their
    // windows last lost a trade near hour 18, and the views built since (every 200 messages) let them
    // park for good: at hour 20 whether they had was down to when live views passes ran.
    const scenario = withIdleTokens(makeScenario(11, 3000));
    const split = T0 + 23 * 3_600_000;
    const part = (keep: (time: number) => boolean): Scenario => ({
      tokens: scenario.tokens,
      swaps: scenario.swaps.filter((s) => keep(s.blockTime)),
      events: scenario.events.filter((e) => keep(e.blockTime)),
    });
    // stopReplayMost 0: the first stop captures a final snapshot (not a marker to replay to), so the
    // parked tokens it holds can be checked and the restart loads them.
    const run = async (name: string, parkIdleMs: number, stopReplayMost?: number) => {
      const aggregator = createAggregator(ctx, {
        log,
        store,
        name,
        maxBatch: 200,
        snapshotEveryMessages: 100,
        // Views built every 200 messages of the backlog: a token whose view is pending is not parked.
        flushEvery: 200,
        parkIdleMs,
        walletParkIdleMs: parkIdleMs,
        stopReplayMost,
      });
      const walletsParked = ctx.metrics.get('aggregator.wallets_parked');
      await aggregator.start();
      await aggregator.drain();
      // Wallets park in slices after a confirmed snapshot, when no snapshot is being written (a stop
      // leaves the rest in the final snapshot): the pass after the last one has the input done.
      if (Number.isFinite(parkIdleMs))
        await waitFor(
          async () => ctx.metrics.get('aggregator.wallets_parked') > walletsParked || undefined,
          20_000,
          'idle wallets parked',
        );
      await aggregator.stop();
      return aggregator;
    };

    await produceScenario(
      log,
      part((time) => time < split),
    );
    await run('parking', 60_000, 0);
    const saved = readSnapshot(snapshotPath(ctx, 'parking'))!;
    assert.ok((saved.parked?.size ?? 0) > 0, 'the snapshot holds parked tokens');
    for (const parked of saved.parked!.values())
      assert.equal(parked.bytes.buffer.byteLength, parked.bytes.byteLength, 'a loaded token owns its bytes');
    const parkedFirst = ctx.metrics.get('aggregator.parked');
    assert.ok(parkedFirst > 0);
    const walletsParkedFirst = ctx.metrics.get('aggregator.wallets_parked');
    assert.ok(walletsParkedFirst > 0, 'wallets moved to disk');
    assert.ok(saved.wallets.size < walletsParkedFirst, 'the snapshot holds only the wallets in memory');

    await produceScenario(
      log,
      part((time) => time >= split),
    );
    const parking = await run('parking', 60_000);
    assert.ok(ctx.metrics.get('aggregator.parked') > parkedFirst, 'tokens parked again after the restart');
    assert.ok(ctx.metrics.get('aggregator.wallets_parked') > walletsParkedFirst, 'wallets parked after the restart');
    assert.ok(ctx.metrics.get('aggregator.wallets_loaded') > 0, 'parked wallets came back');
    assert.ok(ctx.metrics.get('aggregator.holders_parked') > 0, 'holder records moved to disk');
    assert.ok(ctx.metrics.get('aggregator.wallet_park_passes') > 0, 'park passes went through every wallet and token');
    assert.ok(ctx.metrics.get('aggregator.snapshots_written') > 0);
    assert.ok(ctx.metrics.get('aggregator.holders_loaded') > 0, 'parked holder records came back');
    const parkingTables = await dumpTables(client);
    const parkingTokens = byKey(parking.tokens());

    await store.truncateDerived();
    const keeping = await run('keeping', Number.POSITIVE_INFINITY);
    assert.equal(keeping.processed(), parking.processed());
    assert.deepEqual(parkingTables, await dumpTables(client));
    assert.deepEqual(parkingTokens, byKey(keeping.tokens()));
    const token = scenario.tokens[0]!;
    assert.deepEqual(parking.token(token.chain, token.address), keeping.token(token.chain, token.address));
  });
});
