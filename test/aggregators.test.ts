// The aggregator end to end on the embedded log and chDB: replays are identical, a live run
// equals a replay, candles and windowed stats equal brute-force recomputations from stored trades.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../core/config.ts';
import { createContext, type Context } from '../core/context.ts';
import { createLogger } from '../core/logger.ts';
import { parse } from '../core/decimal.ts';
import { createEmbeddedLog } from '../core/eventlog/embedded.ts';
import type { EventLog } from '../core/eventlog/types.ts';
import { TOPICS, type PricedTradeMessage } from '../core/topics.ts';
import { DENOMINATIONS, METRICS, TIMEFRAMES, type Token } from '../core/schemas.ts';
import { createStore } from '../clickhouse/store.ts';
import type { SpotStore, TradeRow } from '../clickhouse/types.ts';
import type { ClickHouseClient } from '../clickhouse/client.ts';
import { createAggregator } from '../aggregators/aggregator.ts';
import { runReplay } from '../aggregators/replay.ts';
import { statsAt, type TradeRec } from '../aggregators/windows.ts';
import { sharedChdb } from './helpers/chdb.ts';
import { makeScenario, produceScenario, type Scenario } from './fixtures/aggregator-scenario.ts';
import { dumpTables, latestPerKey } from './fixtures/aggregator-dump.ts';
import { bruteCandles, bruteStats } from './fixtures/aggregator-brute.ts';

const toRec = (r: TradeRow): TradeRec => ({
  t: r.timestamp,
  seq: r.seq,
  buy: r.side === 'buy',
  pn: parse(r.priceNative),
  pu: parse(r.priceUsd),
  mn: parse(r.marketCapNative),
  mu: parse(r.marketCapUsd),
  vn: parse(r.volumeNative),
  vu: parse(r.volumeUsd),
});

describe('aggregator (embedded log + chDB)', function () {
  this.timeout(120_000);
  let dir: string;
  let ctx: Context;
  let log: EventLog;
  let store: SpotStore;
  let client: ClickHouseClient;
  let scenario: Scenario;
  let replayDump: Record<string, unknown[]>;
  let replayTokens: Record<string, string>;
  let replayCandles: Record<string, string>;

  before(async () => {
    const shared = await sharedChdb();
    client = shared.client;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-agg-test-'));
    ctx = createContext(loadConfig({ SPOT_DATA_DIR: dir, SPOT_LOG_LEVEL: 'silent' }), createLogger('silent'));
    store = createStore(ctx, client);
    await store.migrate();
    log = createEmbeddedLog(ctx, { path: path.join(dir, 'log.sqlite'), retentionIntervalMs: 0 });
    scenario = makeScenario(7, 3000);
    await produceScenario(log, scenario);
  });

  after(async () => {
    await log?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('two replays of the same log give identical tables and compacted topics', async () => {
    let last: [number, number] = [0, 0];
    const first = await runReplay(ctx, { log, store, output: null, progress: (done, total) => (last = [done, total]) });
    assert.equal(first.messages, scenario.swaps.length + scenario.events.length);
    assert.deepEqual(last, [first.messages, first.messages]);
    assert.equal(ctx.metrics.get('aggregator.invalid_messages'), 0);
    assert.ok(ctx.metrics.get('aggregator.duplicate_swaps') > 0, 'the scenario redelivers swaps');
    assert.ok(ctx.metrics.get('aggregator.swaps_unknown_token') > 0, 'the scenario trades a token never created');
    assert.ok(ctx.metrics.get('aggregator.late_trades') > 0, 'a trade older than its open buckets rebuilt them');
    replayDump = await dumpTables(client);
    replayTokens = await latestPerKey(log, TOPICS.tokens.name);
    replayCandles = await latestPerKey(log, TOPICS.candles.name);

    await runReplay(ctx, { log, store, output: null });
    assert.deepEqual(await dumpTables(client), replayDump);
    assert.deepEqual(await latestPerKey(log, TOPICS.tokens.name), replayTokens);
    assert.deepEqual(await latestPerKey(log, TOPICS.candles.name), replayCandles);

    // Every token trade once (duplicates dropped, reference swaps are marks only).
    const ids = new Set(scenario.swaps.filter((s) => s.dex !== 'ref-pool').map((s) => s.id));
    assert.equal(replayDump.trades!.length, ids.size);
    assert.equal(Object.keys(replayTokens).length, scenario.tokens.length);
    for (const value of Object.values(replayTokens)) {
      const token = JSON.parse(value) as Token;
      assert.ok(token.stats['24h'] && token.holders.count >= 0);
    }
  });

  it('candles equal a brute-force recomputation from the stored trades', async () => {
    let compared = 0;
    for (const { chain, address } of scenario.tokens) {
      const rows = await store.allTrades(chain, address);
      assert.ok(rows.length > 10, `${address} traded`);
      const open = JSON.parse(replayCandles[`${chain}:${address}`]!);
      for (const timeframe of TIMEFRAMES) {
        for (const metric of METRICS) {
          for (const denomination of DENOMINATIONS) {
            const expected = bruteCandles(rows, timeframe, metric, denomination);
            const actual = await store.queryCandles({
              chain,
              token: address,
              timeframe,
              metric,
              denomination,
              limit: 5000,
            });
            assert.deepEqual(actual, expected, `${chain}:${address} ${timeframe} ${metric} ${denomination}`);
            // The published open bucket is the newest bucket that traded.
            assert.deepEqual(open.open[timeframe][metric][denomination], expected[expected.length - 1]);
            compared += expected.length;
          }
        }
      }
    }
    assert.ok(compared > 10_000);
  });

  it('windowed stats equal a brute-force recomputation at several event times', async () => {
    for (const { chain, address } of scenario.tokens) {
      const rows = await store.allTrades(chain, address);
      const recs = rows.map(toRec).sort((a, b) => a.t - b.t || a.seq - b.seq);
      const times = [0.1, 0.3, 0.5, 0.77, 0.9, 1].map(
        (f) => recs[Math.min(recs.length - 1, Math.floor(f * recs.length))]!.t,
      );
      times.push(times[times.length - 1]! + 299_999, times[times.length - 1]! + 300_000, times[2]! + 1);
      // Inside the 5 s, 15 s and 60 s granules of the aligned window starts.
      times.push(times[3]! + 3_602_500, times[3]! + 21_607_500, times[1]! + 86_430_000);
      for (const t of times) assert.deepEqual(statsAt(recs, t), bruteStats(rows, t), `${address} at ${t}`);
    }
  });

  it('a live run (publishing trades) writes the same tables as a replay, with token stats at their stats time', async () => {
    await store.truncateDerived();
    const tradesBefore = await log.endOffsets(TOPICS.trades.name);
    const aggregator = createAggregator(ctx, { log, store, name: 'live', maxBatch: 700, flushEvery: 1500 });
    await aggregator.start();
    await aggregator.drain();
    try {
      assert.deepEqual(await dumpTables(client), replayDump);
      for (const { chain, address } of scenario.tokens) {
        const token = aggregator.token(chain, address)!;
        const rows = await store.allTrades(chain, address);
        assert.deepEqual(token.stats, bruteStats(rows, aggregator.statsTime(chain, address)!), `${address} stats`);
        assert.equal(token.totals.trades, rows.length);
      }
    } finally {
      await aggregator.stop();
    }
    const published = new Set<string>();
    const startAt = tradesBefore;
    await log.readToEnd(TOPICS.trades.name, (m) => {
      if (m.offset >= (startAt.get(m.partition) ?? 0))
        published.add((JSON.parse(m.value) as PricedTradeMessage).trade.id);
    });
    assert.equal(published.size, replayDump.trades!.length);
  });
});
