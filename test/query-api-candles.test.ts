// The OHLCV answer cache: every answer it gives equals ClickHouse's answer merged with the live
// open bucket on the same data, through open-bucket updates, a bucket closing, a late trade into
// an older bucket and its time limit; repeated queries do not reach ClickHouse while nothing changed.
import assert from 'node:assert/strict';
import path from 'node:path';
import type { CandleQuery, SpotStore } from '../clickhouse/types.ts';
import { createStore } from '../clickhouse/store.ts';
import { createEmbeddedLog } from '../core/eventlog/embedded.ts';
import type { Candle } from '../core/schemas.ts';
import type { CandleUpdateMessage } from '../core/topics.ts';
import { createCandleCache, mergeOpen, type CandleCache } from '../query-api/candle-cache.ts';
import { createHotViews, type HotViews } from '../query-api/hot-views.ts';
import { sharedChdb } from './helpers/chdb.ts';
import { candleRow, makeToken, makeTrade, solanaAddress } from './query-api-env.ts';

const MINUTE = 60_000;

describe('query API: candle answer cache', () => {
  const token = makeToken({ chain: 'solana', address: solanaAddress(), name: 'Cached Candles' });
  const cold = makeToken({ chain: 'solana', address: solanaAddress(), name: 'No Open Candles' });
  const m0 = Math.floor(Date.now() / (5 * MINUTE)) * 5 * MINUTE - 60 * MINUTE;
  let clock = Date.now();
  let store: SpotStore;
  let views: HotViews;
  let cache: CandleCache;
  let storeCalls = 0;
  let closeLog = async () => {};
  let updatedAt = Date.now();

  const candle = (time: number, v: number): Candle => ({
    time,
    open: v,
    high: v + 2,
    low: v - 1,
    close: v + 1,
    volume: v * 3,
  });
  function openMessage(minute: number, v: number): CandleUpdateMessage {
    const pair = (c: Candle) => ({ usd: c, native: { ...c, open: c.open / 100, volume: c.volume / 100 } });
    const oneMinute = candle(minute, v);
    const fiveMinutes = candle(minute - (minute % (5 * MINUTE)), v * 2);
    return {
      chain: 'solana',
      token: token.address,
      updatedAt: ++updatedAt,
      open: {
        '1m': { price: pair(oneMinute), marketCap: pair({ ...oneMinute, open: v * 1000 }) },
        '5m': { price: pair(fiveMinutes), marketCap: pair(fiveMinutes) },
      },
    };
  }

  /** What the route answered before the cache: ClickHouse, then the live open bucket. */
  async function fresh(query: CandleQuery): Promise<string> {
    const stored = await store.queryCandles(query);
    const open = views.openCandle(query.chain, query.token, query.timeframe, query.metric, query.denomination);
    const inWindow =
      open && (query.from === undefined || open.time >= query.from) && (query.to === undefined || open.time < query.to);
    return JSON.stringify({ candles: inWindow ? mergeOpen(stored, open, query.limit) : stored });
  }

  const queries: CandleQuery[] = [
    { chain: 'solana', token: token.address, timeframe: '1m', metric: 'price', denomination: 'usd', limit: 500 },
    { chain: 'solana', token: token.address, timeframe: '1m', metric: 'marketCap', denomination: 'native', limit: 10 },
    {
      chain: 'solana',
      token: token.address,
      timeframe: '1m',
      metric: 'price',
      denomination: 'native',
      from: m0 + 5 * MINUTE,
      to: m0 + 20 * MINUTE,
      limit: 5000,
    },
    { chain: 'solana', token: token.address, timeframe: '5m', metric: 'price', denomination: 'usd', limit: 500 },
    {
      chain: 'solana',
      token: token.address,
      timeframe: '1m',
      metric: 'price',
      denomination: 'usd',
      from: m0,
      limit: 5000,
    },
  ];

  async function assertAllFresh(what: string): Promise<void> {
    for (const query of queries)
      assert.equal((await cache.body(query)).toString(), await fresh(query), `${what}: ${JSON.stringify(query)}`);
  }

  before(async () => {
    const chdb = await sharedChdb();
    const real = createStore(chdb.ctx, chdb.client);
    store = { ...real, queryCandles: (query) => (storeCalls++, real.queryCandles(query)) };
    const log = createEmbeddedLog(chdb.ctx, { path: path.join(chdb.dataDir, 'candle-cache-log', 'events.sqlite') });
    closeLog = () => log.close();
    views = createHotViews(chdb.ctx, { log, store, now: () => clock });
    cache = createCandleCache({ store, views, now: () => clock, ttlMs: 2000 });
    await store.upsertCandles(Array.from({ length: 30 }, (_, i) => candleRow(token, '1m', m0 + i * MINUTE, i + 1)));
    await store.upsertCandles(Array.from({ length: 3 }, (_, i) => candleRow(cold, '1m', m0 + i * MINUTE, i + 1)));
    views.applyCandles(openMessage(m0 + 29 * MINUTE, 500));
  });

  after(() => closeLog());

  it('answers as ClickHouse would and reuses the answer while nothing changed', async () => {
    await assertAllFresh('first');
    const calls = storeCalls;
    await assertAllFresh('again');
    // assertAllFresh's own reference reads are the only store calls.
    assert.equal(storeCalls - calls, queries.length);
  });

  it('follows updates of the open bucket without reading ClickHouse', async () => {
    views.applyCandles(openMessage(m0 + 29 * MINUTE, 700));
    const calls = storeCalls;
    await assertAllFresh('open bucket updated');
    assert.equal(storeCalls - calls, queries.length);
    const body = JSON.parse((await cache.body(queries[0]!)).toString());
    assert.equal(body.candles.at(-1).open, 700);
  });

  it('reads ClickHouse again when the open bucket closes', async () => {
    await store.upsertCandles([
      { ...candleRow(token, '1m', m0 + 29 * MINUTE, 800), seq: 2 },
      candleRow(token, '1m', m0 + 30 * MINUTE, 31),
    ]);
    views.applyCandles(openMessage(m0 + 30 * MINUTE, 900));
    await assertAllFresh('bucket closed');
    const body = JSON.parse((await cache.body(queries[0]!)).toString());
    assert.deepEqual(
      body.candles.slice(-2).map((c: Candle) => [c.time, c.open]),
      [
        [m0 + 29 * MINUTE, 800],
        [m0 + 30 * MINUTE, 900],
      ],
    );
  });

  it('reads ClickHouse again after a late trade into an older bucket', async () => {
    await store.upsertCandles([{ ...candleRow(token, '1m', m0 + 7 * MINUTE, 4242), seq: 2 }]);
    views.applyTrade({
      trade: makeTrade(token, m0 + 7 * MINUTE + 1000, 1),
      identities: [],
      pool: 'pool',
      dex: 'pumpfun',
    });
    await assertAllFresh('late trade');
    const body = JSON.parse((await cache.body(queries[2]!)).toString());
    assert.equal(body.candles.find((c: Candle) => c.time === m0 + 7 * MINUTE).open, 4242 / 100);
  });

  it('keeps an answer no longer than its time limit', async () => {
    // A write the stream does not show (e.g. a repair): visible once the entry expires.
    await store.upsertCandles([{ ...candleRow(token, '1m', m0 + 3 * MINUTE, 3333), seq: 3 }]);
    const before = JSON.parse((await cache.body(queries[0]!)).toString());
    assert.notEqual(before.candles.find((c: Candle) => c.time === m0 + 3 * MINUTE).open, 3333);
    clock += 2000;
    await assertAllFresh('expired');
    const after = JSON.parse((await cache.body(queries[0]!)).toString());
    assert.equal(after.candles.find((c: Candle) => c.time === m0 + 3 * MINUTE).open, 3333);
  });

  it('always reads ClickHouse for a token the views hold no candles for', async () => {
    const query: CandleQuery = {
      chain: 'solana',
      token: cold.address,
      timeframe: '1m',
      metric: 'price',
      denomination: 'usd',
      limit: 500,
    };
    const calls = storeCalls;
    for (let i = 0; i < 3; i++) assert.equal((await cache.body(query)).toString(), await fresh(query));
    assert.equal(storeCalls - calls, 6);
  });

  it("takes a candles message as the log's text, unparsed: the same open buckets, ordering and late-trade check", () => {
    const texted = makeToken({ chain: 'solana', address: solanaAddress(), name: 'Candles As Text' });
    const key = `solana:${texted.address}`;
    const minute = m0 + 50 * MINUTE;
    const message = { ...openMessage(minute, 60), token: texted.address };
    views.applyCandlesText(key, JSON.stringify(message));
    assert.deepEqual(views.openCandle('solana', texted.address, '1m', 'price', 'usd'), message.open['1m']!.price.usd);
    assert.deepEqual(
      views.openCandle('solana', texted.address, '5m', 'marketCap', 'native'),
      message.open['5m']!.marketCap.native,
    );
    // An older version does not replace it.
    views.applyCandlesText(key, JSON.stringify({ ...openMessage(minute, 61), token: texted.address, updatedAt: 1 }));
    assert.equal(views.openCandle('solana', texted.address, '1m', 'price', 'usd')?.open, 60);
    // The newest open bucket is the 1m one: a trade in it is not late, one before it is.
    const generation = views.candleGeneration('solana', texted.address);
    assert.notEqual(generation, undefined);
    const trade = (at: number, i: number) => ({
      trade: makeTrade(texted, at, i),
      identities: [],
      pool: 'pool',
      dex: 'pumpswap',
    });
    views.applyTrade(trade(minute + 1000, 1));
    assert.equal(views.candleGeneration('solana', texted.address), generation);
    views.applyTrade(trade(minute - 1000, 2));
    assert.notEqual(views.candleGeneration('solana', texted.address), generation);
    // A value without updatedAt or with a candle time that is not an integer is skipped.
    const other = makeToken({ chain: 'solana', address: solanaAddress(), name: 'Bad Candles' });
    views.applyCandlesText(
      `solana:${other.address}`,
      JSON.stringify({ ...message, token: other.address, updatedAt: 'x' }),
    );
    const badTime = JSON.stringify({ ...message, token: other.address }).replace('"time":', '"time":"x"');
    views.applyCandlesText(`solana:${other.address}`, badTime);
    assert.equal(views.candleGeneration('solana', other.address), undefined);
  });

  it('answers the same open buckets from a deflated candle state as from a plain one', () => {
    const packed = makeToken({ chain: 'solana', address: solanaAddress(), name: 'Packed Candles' });
    const minute = m0 + 55 * MINUTE;
    const first = { ...openMessage(minute, 70), token: packed.address };
    views.applyCandlesText(`solana:${packed.address}`, JSON.stringify(first));
    // Deflated before any read (a read keeps the unpacked buckets of the state it read).
    views.packIdle(Infinity);
    assert.deepEqual(views.openCandle('solana', packed.address, '1m', 'price', 'usd'), first.open['1m']!.price.usd);
    assert.deepEqual(
      views.openCandle('solana', packed.address, '5m', 'marketCap', 'native'),
      first.open['5m']!.marketCap.native,
    );
    // A newer version replaces the deflated one and is read plain.
    const second = { ...openMessage(minute, 71), token: packed.address };
    views.applyCandlesText(`solana:${packed.address}`, JSON.stringify(second));
    assert.deepEqual(views.openCandle('solana', packed.address, '1m', 'price', 'usd'), second.open['1m']!.price.usd);
  });

  it("keeps a token's trades newest first whatever their arrival order, each once (many share a second)", () => {
    const traded = makeToken({ chain: 'solana', address: solanaAddress(), name: 'Busy Second' });
    const second = m0 + 40 * MINUTE;
    const trades = Array.from({ length: 60 }, (_, i) => makeTrade(traded, second + (i % 3) * 1000, i));
    // Shuffled deterministically, every fifth one delivered twice; seq is the aggregator's order.
    const order = trades.map((_, i) => (i * 37) % trades.length);
    for (const [seq, i] of order.entries()) {
      const message = { trade: trades[i]!, identities: [], pool: 'pool', dex: 'pumpswap', seq: seq + 1 };
      views.applyTrade(message);
      if (i % 5 === 0) views.applyTrade(message);
    }
    const expected = [...trades]
      .sort((a, b) => b.timestamp - a.timestamp || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
      .map((t) => t.id);
    const held = views.tokenTrades('solana', traded.address, 60);
    assert.deepEqual(
      held?.map((t) => t.id),
      expected,
    );
  });
});
