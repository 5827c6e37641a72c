// Tokens that stop trading leave the embedded aggregator's memory for ClickHouse and come back on
// their next input with identical results: a run that evicts (and restarts in the middle) writes
// the same tables as a replay that keeps every token.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { normalizeAddress, tokenKey } from '../core/chains.ts';
import { loadConfig } from '../core/config.ts';
import { createContext, type Context } from '../core/context.ts';
import { createLogger } from '../core/logger.ts';
import { createEmbeddedLog } from '../core/eventlog/embedded.ts';
import type { EventLog } from '../core/eventlog/types.ts';
import type { TokenEvent } from '../core/topics.ts';
import type { SpotStore } from '../clickhouse/types.ts';
import type { ClickHouseClient } from '../clickhouse/client.ts';
import { createEvictedTokenStore } from '../clickhouse/aggregator-state.ts';
import { createAggregator } from '../aggregators/aggregator.ts';
import { runReplay } from '../aggregators/replay.ts';
import { createAggregatorEnv, type AggregatorEnv } from './helpers/aggregator-env.ts';
import { makeScenario, produceScenario, T0, withIdleTokens, type Scenario } from './fixtures/aggregator-scenario.ts';
import { dumpTables } from './fixtures/aggregator-dump.ts';

const HOUR = 3_600_000;
const sleepMs = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const inputsBefore = (scenario: Scenario, time: number): Scenario => ({
  tokens: scenario.tokens,
  swaps: scenario.swaps.filter((s) => s.blockTime < time),
  events: scenario.events.filter((e) => e.blockTime < time),
});
const inputsFrom = (scenario: Scenario, time: number): Scenario => ({
  tokens: scenario.tokens,
  swaps: scenario.swaps.filter((s) => s.blockTime >= time),
  events: scenario.events.filter((e) => e.blockTime >= time),
});

describe('aggregator eviction (embedded log + chDB)', function () {
  this.timeout(180_000);
  let env: AggregatorEnv;
  let ctx: Context;
  let log: EventLog;
  let store: SpotStore;
  let client: ClickHouseClient;

  before(async () => {
    env = await createAggregatorEnv('spot-evict-test-');
    ({ ctx, log, store, client } = env);
  });

  after(() => env?.close());

  it('idle tokens leave memory and come back with the same tables as a run that keeps them', async () => {
    const scenario = withIdleTokens(makeScenario(7, 3000));
    const split = T0 + 62 * HOUR;
    const evictedStore = createEvictedTokenStore(client);
    const run = async () => {
      const aggregator = createAggregator(ctx, {
        log,
        store,
        name: 'evicting',
        maxBatch: 200,
        snapshotEveryMessages: 100,
        // Views built every 200 messages of the backlog: a token whose view is pending stays.
        flushEvery: 200,
        evictedStore,
      });
      await aggregator.start();
      await aggregator.drain();
      await aggregator.stop();
      return aggregator;
    };
    // Two runs: the second starts from the first one's snapshot (its evicted set included).
    await produceScenario(log, inputsBefore(scenario, split));
    await run();
    const evictedByFirst = ctx.metrics.get('aggregator.tokens_evicted');
    await produceScenario(log, inputsFrom(scenario, split));
    const second = await run();
    assert.ok(evictedByFirst > 0, 'tokens left memory in the first run');
    assert.ok(ctx.metrics.get('aggregator.tokens_reloaded') > 0, 'evicted tokens came back');
    assert.ok(second.tokens().length > 0, 'tokens traded again after the restart');
    assert.ok(ctx.metrics.get('aggregator.tokens_evicted') > evictedByFirst, 'tokens left memory at the end');
    assert.ok(second.tokens().length < scenario.tokens.length, 'idle tokens are not in memory at the end');
    assert.equal(ctx.metrics.get('aggregator.evicted_missing'), 0);
    const evicting = await dumpTables(client);

    await runReplay(ctx, { log, store, output: null });
    assert.deepEqual(evicting, await dumpTables(client));
  });

  it('live, with trades due at once and a reload slower than that, brings an evicted token back for its trade', async () => {
    await store.truncateDerived();
    const liveDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-evict-live-'));
    const liveCtx = createContext(
      loadConfig({ SPOT_DATA_DIR: liveDir, SPOT_LOG_LEVEL: 'silent' }),
      createLogger('silent'),
    );
    const liveLog = createEmbeddedLog(liveCtx, { path: path.join(liveDir, 'log.sqlite'), retentionIntervalMs: 0 });
    const scenario = withIdleTokens(makeScenario(7, 3000));
    const split = T0 + 62 * HOUR;
    const real = createEvictedTokenStore(client);
    // A reload slower than tradesEveryMs: the held message's trades fall due while it waits.
    const slow = { ...real, read: async (keys: string[]) => (await sleepMs(5), real.read(keys)) };
    const options = {
      log: liveLog,
      store,
      name: 'evicting-live',
      maxBatch: 200,
      snapshotEveryMessages: 100,
      flushEvery: 200,
    };
    try {
      await produceScenario(liveLog, inputsBefore(scenario, split));
      const first = createAggregator(liveCtx, { ...options, evictedStore: real });
      await first.start();
      await first.drain();
      await first.stop();
      const rows = await client.query({
        query: 'SELECT token FROM spot.aggregator_evicted FINAL',
        format: 'JSONEachRow',
      });
      const evicted = new Set((await rows.json<{ token: string }>()).map((r) => r.token));
      const swap = scenario.swaps.find(
        (s) => s.blockTime < split && evicted.has(tokenKey(s.chain, normalizeAddress(s.chain, s.token))),
      );
      assert.ok(swap, 'a token left memory');

      const second = createAggregator(liveCtx, { ...options, evictedStore: slow, tradesEveryMs: 1 });
      await second.start();
      await second.drain();
      // 31 messages of a token in memory, then the evicted token's trade, held for its reload.
      const at = split + HOUR;
      const events: TokenEvent[] = Array.from({ length: 31 }, (_, i) => ({
        id: `${swap.chain}:held-${i}:0`,
        chain: swap.chain,
        transactionHash: `held-${i}`,
        eventIndex: 0,
        blockNumber: swap.blockNumber,
        blockTime: at,
        kind: 'balance',
        token: swap.chain === 'solana' ? 'HeLdTokenInMemory1111111111111111111111111' : `0x${'ab'.repeat(20)}`,
        owner: swap.trader,
        amount: String(i + 1),
      }));
      const late = { ...swap, id: `${swap.chain}:held-swap:0`, transactionHash: 'held-swap', blockTime: at + 1000 };
      await produceScenario(liveLog, { ...scenario, swaps: [late], events });
      await second.drain();
      await second.stop();
      assert.ok(liveCtx.metrics.get('aggregator.tokens_reloaded') > 0, 'the evicted token came back');
      assert.equal(second.processed(), first.processed() + 32);
    } finally {
      await liveLog.close();
      fs.rmSync(liveDir, { recursive: true, force: true });
    }
  });
});
