// Query API: candles, token trades and identity feeds through real HTTP, with history in chDB
// and the newest state fed through the topics.
import assert from 'node:assert/strict';
import { tradePlatforms, type Trade } from '../core/schemas.ts';
import {
  call,
  candleRow,
  evmAddress,
  makeToken,
  makeTrade,
  produceCandles,
  produceTokens,
  produceTrades,
  solanaAddress,
  startEnv,
  tradeRow,
  waitFor,
  type ApiEnv,
} from './query-api-env.ts';

const MINUTE = 60_000;

describe('query API: candles and trades', () => {
  let env: ApiEnv;
  const token = makeToken({ chain: 'solana', address: solanaAddress(), name: 'Candle Token' });
  const evm = makeToken({ chain: 'base', address: evmAddress() });
  // 1m buckets: 520 minutes ending at t0 (exclusive); price = index.
  const t0 = Math.floor(Date.now() / (5 * MINUTE)) * 5 * MINUTE - 10 * MINUTE;
  const firstMinute = t0 - 520 * MINUTE;
  const candlesPath = (q = '') => `/v1/tokens/solana/${token.address}/ohlcv${q}`;

  before(async () => {
    env = await startEnv();
    await produceTokens(env.log, [token, evm]);
    const rows = Array.from({ length: 520 }, (_, i) => candleRow(token, '1m', firstMinute + i * MINUTE, i + 1));
    // 5,005 one-second buckets for the cap.
    const secondsStart = firstMinute - 10_000_000;
    rows.push(...Array.from({ length: 5005 }, (_, i) => candleRow(token, '1s', secondsStart + i * 1000, i + 1)));
    await env.store.upsertCandles(rows);
    await waitFor(() => env.api.views.token('solana', token.address) !== undefined, 'token in view');
  });
  after(async () => env.close());

  describe('GET …/ohlcv', () => {
    it('returns the newest 500 buckets oldest first by default (1m, marketCap, usd)', async () => {
      const r = await call(env.base, candlesPath(), { key: env.key });
      assert.equal(r.status, 200);
      const candles = r.body.candles;
      assert.equal(candles.length, 500);
      assert.equal(candles[0].time, firstMinute + 20 * MINUTE);
      assert.equal(candles[499].time, firstMinute + 519 * MINUTE);
      assert.equal(candles[499].open, 520 * 1000);
      assert.equal(typeof candles[0].volume, 'number');
      for (let i = 1; i < candles.length; i++) assert.ok(candles[i].time > candles[i - 1].time);
    });

    it('honours metric and denomination', async () => {
      const r = await call(env.base, candlesPath('?metric=price&denomination=native&countBack=1'), { key: env.key });
      assert.deepEqual(r.body.candles, [
        { time: firstMinute + 519 * MINUTE, open: 5.2, high: 6.2, low: 4.7, close: 5.7, volume: 52 },
      ]);
    });

    it('countBack gives the newest N buckets before `to`, and takes priority over `from`', async () => {
      const to = firstMinute + 100 * MINUTE;
      const r = await call(
        env.base,
        candlesPath(`?countBack=3&to=${to}&from=${firstMinute + 99 * MINUTE}&metric=price`),
        { key: env.key },
      );
      assert.deepEqual(
        r.body.candles.map((c: { time: number }) => c.time),
        [97, 98, 99].map((i) => firstMinute + i * MINUTE),
      );
    });

    it('treats `from` as inclusive and `to` as exclusive', async () => {
      const from = firstMinute + 10 * MINUTE;
      const r = await call(env.base, candlesPath(`?from=${from}&to=${from + 3 * MINUTE}`), { key: env.key });
      assert.deepEqual(
        r.body.candles.map((c: { time: number }) => c.time),
        [from, from + MINUTE, from + 2 * MINUTE],
      );
      const empty = await call(env.base, candlesPath(`?from=${from}&to=${from}`), { key: env.key });
      assert.deepEqual(empty.body.candles, []);
    });

    it('rolls up timeframes and caps a window at 5,000 buckets keeping the newest', async () => {
      const fiveMinutes = await call(
        env.base,
        candlesPath(`?timeframe=5m&from=${firstMinute}&to=${firstMinute + 10 * MINUTE}&metric=price`),
        { key: env.key },
      );
      assert.equal(fiveMinutes.body.candles.length, 2);
      assert.equal(fiveMinutes.body.candles[0].open, 1);
      assert.equal(fiveMinutes.body.candles[0].close, 5.5);
      const seconds = await call(env.base, candlesPath('?timeframe=1s&from=0&metric=price'), { key: env.key });
      assert.equal(seconds.body.candles.length, 5000);
      assert.equal(seconds.body.candles[4999].open, 5005);
      assert.equal(seconds.body.candles[0].open, 6);
    });

    it('merges the open bucket from the candles topic', async () => {
      const open = { time: t0, open: 1, high: 2, low: 0.5, close: 1.5, volume: 3 };
      const pair = { usd: open, native: { ...open, volume: 0.03 } };
      await produceCandles(env.log, {
        chain: 'solana',
        token: token.address,
        updatedAt: Date.now(),
        open: { '1m': { price: pair, marketCap: pair } },
      });
      await waitFor(
        () => env.api.views.openCandle('solana', token.address, '1m', 'price', 'usd') !== undefined,
        'open candle',
      );
      const r = await call(env.base, candlesPath('?metric=price'), { key: env.key });
      assert.equal(r.body.candles.length, 500);
      assert.deepEqual(r.body.candles[499], open);
      assert.equal(r.body.candles[0].time, firstMinute + 21 * MINUTE);
    });

    it('refuses bad countBack, from, to, timeframe, metric and denomination with one detail per problem', async () => {
      for (const countBack of ['0', '-1', '5001', '1.5', 'abc', '']) {
        const r = await call(env.base, candlesPath(`?countBack=${countBack}`), { key: env.key });
        assert.equal(r.status, 400, countBack);
        assert.deepEqual(
          r.body.error.details.map((d: { field: string }) => d.field),
          ['countBack'],
        );
      }
      assert.equal((await call(env.base, candlesPath('?countBack=5000'), { key: env.key })).status, 200);
      const many = await call(env.base, candlesPath('?timeframe=2m&metric=volume&denomination=eur&from=x&to=1.5'), {
        key: env.key,
      });
      assert.equal(many.status, 400);
      assert.deepEqual(many.body.error.details.map((d: { field: string }) => d.field).sort(), [
        'denomination',
        'from',
        'metric',
        'timeframe',
        'to',
      ]);
      const inverted = await call(env.base, candlesPath('?from=2000&to=1000'), { key: env.key });
      assert.deepEqual(
        inverted.body.error.details.map((d: { field: string }) => d.field),
        ['from'],
      );
      const twice = await call(env.base, candlesPath('?timeframe=1m&timeframe=5m'), { key: env.key });
      assert.deepEqual(
        twice.body.error.details.map((d: { field: string }) => d.field),
        ['timeframe'],
      );
    });

    it('answers 404 for an unknown token and UNSUPPORTED_CHAIN for an unknown slug', async () => {
      const r = await call(env.base, `/v1/tokens/solana/${solanaAddress()}/ohlcv`, { key: env.key });
      assert.equal(r.status, 404);
      const chain = await call(env.base, `/v1/tokens/eth/${evm.address}/ohlcv`, { key: env.key });
      assert.deepEqual(chain.body.error, {
        code: 'UNSUPPORTED_CHAIN',
        message: chain.body.error.message,
        details: { chain: 'eth' },
      });
    });
  });

  describe('GET …/trades', () => {
    const traded = makeToken({ chain: 'base', address: evmAddress(), name: 'Traded' });
    const path = (q = '') => `/v1/tokens/base/${traded.address}/trades${q}`;
    let trades: Trade[];

    before(async () => {
      await produceTokens(env.log, [traded]);
      const start = Date.now() - 3600_000;
      // 105 trades, two sharing each timestamp, so the id breaks ties.
      trades = Array.from({ length: 105 }, (_, i) => makeTrade(traded, start + Math.floor(i / 2) * 1000, i));
      await env.store.insertTrades(trades.map((t, i) => tradeRow(t, i + 1)));
    });

    const newestFirst = (list: Trade[]) =>
      [...list].sort((a, b) => b.timestamp - a.timestamp || (a.id < b.id ? 1 : -1));

    it('pages newest first with opaque cursors until nextCursor is null', async () => {
      const expected = newestFirst(trades).map((t) => t.id);
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const r: Awaited<ReturnType<typeof call>> = await call(
          env.base,
          path(`?limit=40${cursor ? `&cursor=${cursor}` : ''}`),
          { key: env.key },
        );
        assert.equal(r.status, 200);
        seen.push(...r.body.trades.map((t: Trade) => t.id));
        assert.equal(r.body.hasMore, r.body.nextCursor !== null);
        cursor = r.body.nextCursor;
        pages++;
      } while (cursor);
      assert.equal(pages, 3);
      assert.deepEqual(seen, expected);
    });

    it('keeps pages stable while new trades arrive', async () => {
      const first = await call(env.base, path('?limit=10'), { key: env.key });
      const newer = makeTrade(traded, Date.now(), 500);
      await env.store.insertTrades([tradeRow(newer, 500)]);
      await produceTrades(env.log, [newer]);
      const second = await call(env.base, path(`?limit=10&cursor=${first.body.nextCursor}`), { key: env.key });
      const ids = newestFirst(trades).map((t) => t.id);
      assert.deepEqual(
        second.body.trades.map((t: Trade) => t.id),
        ids.slice(10, 20),
      );
      const fresh = await call(env.base, path('?limit=1'), { key: env.key });
      assert.equal(fresh.body.trades[0].id, newer.id);
    });

    it('clamps limit into 1..100 and defaults to 50', async () => {
      assert.equal((await call(env.base, path('?limit=1000'), { key: env.key })).body.trades.length, 100);
      assert.equal((await call(env.base, path('?limit=0'), { key: env.key })).body.trades.length, 1);
      assert.equal((await call(env.base, path('?limit=-5'), { key: env.key })).body.trades.length, 1);
      assert.equal((await call(env.base, path(), { key: env.key })).body.trades.length, 50);
    });

    it('refuses a non-integer limit and a foreign cursor', async () => {
      const limit = await call(env.base, path('?limit=ten'), { key: env.key });
      assert.deepEqual(
        limit.body.error.details.map((d: { field: string }) => d.field),
        ['limit'],
      );
      for (const cursor of ['nope', Buffer.from('{"a":1}').toString('base64url'), '!!']) {
        const r = await call(env.base, path(`?cursor=${encodeURIComponent(cursor)}`), { key: env.key });
        assert.equal(r.status, 400);
        assert.deepEqual(
          r.body.error.details.map((d: { field: string }) => d.field),
          ['cursor'],
        );
      }
    });

    it('serves the newest page from memory, identical to the store page', async () => {
      const hotToken = makeToken({ chain: 'solana', address: solanaAddress(), name: 'Hot Trades' });
      await produceTokens(env.log, [hotToken]);
      const start = Date.now() - 1000_000;
      const list = Array.from({ length: 110 }, (_, i) =>
        makeTrade(hotToken, start + i * 1000, i, {
          flags: i % 3 === 0 ? ['kol'] : [],
          platforms: i % 4 === 1 ? tradePlatforms(['axiom', 'photon']) : [],
        }),
      );
      await env.store.insertTrades(list.map((t, i) => tradeRow(t, i + 1)));
      await produceTrades(env.log, list);
      await waitFor(() => env.api.views.tokenTrades('solana', hotToken.address, 101) !== null, 'trades ring');
      const fromMemory = await call(env.base, `/v1/tokens/solana/${hotToken.address}/trades?limit=100`, {
        key: env.key,
      });
      const fromStore = await env.store.queryTokenTrades('solana', hotToken.address, 100);
      assert.deepEqual(
        fromMemory.body.trades.map((t: Trade) => t.id),
        fromStore.map((r) => r.id),
      );
      assert.deepEqual(fromMemory.body.trades[0], list[109], 'a routed trade shows its platforms');
      const next = await call(
        env.base,
        `/v1/tokens/solana/${hotToken.address}/trades?limit=100&cursor=${fromMemory.body.nextCursor}`,
        { key: env.key },
      );
      // The older page comes from the store: flags and platforms read back from its rows.
      assert.deepEqual(next.body.trades, list.slice(0, 10).reverse());
      assert.ok(next.body.trades.some((t: Trade) => t.platforms?.length === 2));
      assert.equal(next.body.hasMore, false);
      assert.equal(next.body.nextCursor, null);
    });

    it('answers 404 for an unknown token and an empty page for a known one without trades', async () => {
      assert.equal((await call(env.base, `/v1/tokens/base/${evmAddress()}/trades`, { key: env.key })).status, 404);
      const empty = await call(env.base, `/v1/tokens/base/${evm.address}/trades`, { key: env.key });
      assert.deepEqual(empty.body, { trades: [], hasMore: false, nextCursor: null });
    });
  });

  describe('GET /v1/trades', () => {
    const a = makeToken({ chain: 'solana', address: solanaAddress(), name: 'Kol A' });
    const b = makeToken({ chain: 'bsc', address: evmAddress(), name: 'Kol B' });
    let kolTrades: Trade[];

    before(async () => {
      const start = Date.now() - 600_000;
      kolTrades = [
        ...Array.from({ length: 6 }, (_, i) =>
          makeTrade(a, start + i * 2000, i, { platforms: i === 2 ? tradePlatforms(['trojan']) : [] }),
        ),
        ...Array.from({ length: 6 }, (_, i) => makeTrade(b, start + i * 2000 + 1000, i)),
      ];
      // As the pipeline does: every trade in the store and on the trades topic.
      const identitiesOf = (i: number) => (i % 4 === 0 ? ['kol', 'fomoscan'] : ['kol']);
      await env.store.insertTrades(kolTrades.map((t, i) => tradeRow(t, i + 1, identitiesOf(i))));
      for (let i = 0; i < kolTrades.length; i++) await produceTrades(env.log, [kolTrades[i]!], identitiesOf(i));
      await waitFor(
        () => (env.api.views.identityTrades('kol', ['solana', 'bsc'], 100) ?? []).length >= 12,
        'identity feed in memory',
      );
    });

    it('pages one identity feed across tokens and chains, newest first', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const r: Awaited<ReturnType<typeof call>> = await call(
          env.base,
          `/v1/trades?identity=kol&chains=solana,bsc&limit=5${cursor ? `&cursor=${cursor}` : ''}`,
          { key: env.key },
        );
        assert.equal(r.status, 200);
        seen.push(...r.body.trades.map((t: Trade) => t.id));
        cursor = r.body.nextCursor;
      } while (cursor);
      const mine = new Set(kolTrades.map((t) => t.id));
      const ordered = [...kolTrades].sort((x, y) => y.timestamp - x.timestamp).map((t) => t.id);
      assert.deepEqual(
        seen.filter((id) => mine.has(id)),
        ordered,
      );
      const all = await call(env.base, '/v1/trades?identity=kol&chains=solana,bsc&limit=100', { key: env.key });
      const routed = all.body.trades.find((t: Trade) => t.id === kolTrades[2]!.id);
      assert.deepEqual(routed.platforms, [{ platform: 'trojan', isPaid: false, paidAt: null }]);
      const onlyBsc = await call(env.base, '/v1/trades?identity=kol&chains=bsc&limit=100', { key: env.key });
      assert.ok(onlyBsc.body.trades.every((t: Trade) => t.chain === 'bsc'));
      const fomo = await call(env.base, '/v1/trades?identity=fomoscan&chains=solana,bsc&limit=100', { key: env.key });
      assert.deepEqual(fomo.body.trades.map((t: Trade) => t.id).filter((id: string) => mine.has(id)).length, 3);
    });

    it('defaults limit to 20 and clamps it into 1..100', async () => {
      const many = Array.from({ length: 25 }, (_, i) => makeTrade(a, Date.now() - 5000 + i, 100 + i));
      await env.store.insertTrades(many.map((t, i) => tradeRow(t, 100 + i, ['kol'])));
      await produceTrades(env.log, many, ['kol']);
      await waitFor(
        () => (env.api.views.identityTrades('kol', ['solana'], 100) ?? []).length >= 31,
        'identity feed in memory',
      );
      assert.equal((await call(env.base, '/v1/trades?identity=kol', { key: env.key })).body.trades.length, 20);
      assert.equal((await call(env.base, '/v1/trades?identity=kol&limit=0', { key: env.key })).body.trades.length, 1);
      assert.ok(
        (await call(env.base, '/v1/trades?identity=kol&limit=500', { key: env.key })).body.trades.length <= 100,
      );
    });

    it('requires an identity and refuses chains lists that name nothing or an unknown chain', async () => {
      const fields = async (q: string) =>
        (await call(env.base, `/v1/trades${q}`, { key: env.key })).body.error.details.map(
          (d: { field: string }) => d.field,
        );
      assert.deepEqual(await fields(''), ['identity']);
      assert.deepEqual(await fields('?identity=whales'), ['identity']);
      assert.deepEqual(await fields('?identity=kol&chains='), ['chains']);
      assert.deepEqual(await fields('?identity=kol&chains=,'), ['chains']);
      assert.deepEqual(await fields('?identity=kol&limit=1.5'), ['limit']);
      assert.deepEqual((await fields('?chains=&limit=x')).sort(), ['chains', 'identity', 'limit']);
      const r = await call(env.base, '/v1/trades?identity=kol&chains=solana,ethereum', { key: env.key });
      assert.equal(r.status, 400);
      assert.equal(r.body.error.code, 'UNSUPPORTED_CHAIN');
      assert.deepEqual(r.body.error.details, { chain: 'ethereum' });
    });
  });
});
