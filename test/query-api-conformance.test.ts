// Query API: SPEC.md conformance found by black-box checks (edge values of query integers,
// one detail per problem in discovery, credits headers on routing answers, case of paths).
import assert from 'node:assert/strict';
import {
  call,
  candleRow,
  makeToken,
  makeTrade,
  produceTokens,
  solanaAddress,
  startEnv,
  tradeRow,
  waitFor,
  type ApiEnv,
} from './query-api-env.ts';

const MINUTE = 60_000;

describe('query API: conformance edges', () => {
  let env: ApiEnv;
  const token = makeToken({ chain: 'solana', address: solanaAddress(), name: 'Edge Token' });
  const t0 = Math.floor(Date.now() / MINUTE) * MINUTE - 60 * MINUTE;
  const ohlcv = (q: string) => `/v1/tokens/solana/${token.address}/ohlcv${q}`;
  const fields = (r: { body: any }) => r.body.error.details.map((d: { field: string }) => d.field).sort();

  before(async () => {
    env = await startEnv();
    await produceTokens(env.log, [token]);
    await env.store.upsertCandles(Array.from({ length: 3 }, (_, i) => candleRow(token, '1m', t0 + i * MINUTE, i + 1)));
    const trades = Array.from({ length: 120 }, (_, i) => makeTrade(token, t0 + i * 1000, i));
    await env.store.insertTrades(trades.map((t, i) => tradeRow(t, i + 1)));
    await waitFor(() => env.api.views.token('solana', token.address) !== undefined, 'token in view');
  });
  after(async () => env.close());

  describe('integer query parameters', () => {
    it('answers a far-future `to` or `from` with candles, never a 500 (window bounds beyond 2^53 ms)', async () => {
      // SPEC: `to` integer, window end, exclusive; `from` integer, window start. Any later `to` selects every candle.
      for (const q of [
        '?to=9007199254740991',
        '?to=99999999999999999999',
        '?countBack=2&to=9007199254740991',
        '?from=0&to=9007199254740991',
      ]) {
        const r = await call(env.base, ohlcv(q), { key: env.key });
        assert.equal(r.status, 200, q);
        assert.deepEqual(
          r.body.candles.map((c: { time: number }) => c.time).slice(-2),
          [t0 + MINUTE, t0 + 2 * MINUTE],
          q,
        );
      }
      const weekly = await call(env.base, ohlcv('?timeframe=7d&to=9007199254000000'), { key: env.key });
      assert.equal(weekly.status, 200);
      assert.ok(Array.isArray(weekly.body.candles));
      const late = await call(env.base, ohlcv('?from=9007199254740991'), { key: env.key });
      assert.equal(late.status, 200);
      assert.deepEqual(late.body.candles, []);
      // An inverted window is still refused when both bounds are huge.
      const inverted = await call(env.base, ohlcv('?from=99999999999999999999&to=9007199254740991'), { key: env.key });
      assert.equal(inverted.status, 400);
      assert.deepEqual(fields(inverted), ['from']);
      const countBack = await call(env.base, ohlcv('?countBack=99999999999999999999'), { key: env.key });
      assert.equal(countBack.status, 400);
      assert.deepEqual(fields(countBack), ['countBack']);
    });

    it('lowers a limit of any size to 100 instead of refusing it', async () => {
      // SPEC: "Page size is capped at 100 (a larger `limit` is lowered to 100)".
      const r = await call(env.base, `/v1/tokens/solana/${token.address}/trades?limit=99999999999999999999`, {
        key: env.key,
      });
      assert.equal(r.status, 200);
      assert.equal(r.body.trades.length, 100);
      const identity = await call(env.base, '/v1/trades?identity=kol&limit=123456789012345678901234567890', {
        key: env.key,
      });
      assert.equal(identity.status, 200);
      const low = await call(env.base, `/v1/tokens/solana/${token.address}/trades?limit=-99999999999999999999`, {
        key: env.key,
      });
      assert.equal(low.status, 200);
      assert.equal(low.body.trades.length, 1);
    });
  });

  describe('POST /v1/discovery', () => {
    const discover = (body: unknown) => call(env.base, '/v1/discovery', { method: 'POST', key: env.key, body });

    it('lists every problem of a malformed body, one detail each', async () => {
      // SPEC: VALIDATION_ERROR carries "a list of {field, message}, one per problem".
      const empty = await discover({});
      assert.equal(empty.status, 400);
      assert.equal(empty.body.error.code, 'VALIDATION_ERROR');
      assert.deepEqual(fields(empty), ['body', 'chains']);
      assert.deepEqual(fields(await discover({ chains: [] })), ['body', 'chains']);
      const mixed = await discover({
        chains: [7],
        newPairs: { filters: { holderCount: { min: 5, max: 4 } } },
        graduated: { limit: 'x' },
      });
      assert.deepEqual(fields(mixed), ['chains[0]', 'graduated.limit', 'newPairs.filters.holderCount']);
    });
  });

  describe('routing answers', () => {
    it('gives a metered key X-Credits-Cost: 0 on a 404 and a 405', async () => {
      // SPEC: X-Credits-Cost "on a metered tier only; zero on any non-2xx".
      const { key } = env.keys.create({ metered: true, credits: 3 });
      for (const [method, path, status] of [
        ['GET', '/v1/nothing', 404],
        ['GET', '/v1/discovery', 405],
        ['DELETE', `/v1/tokens/solana/${token.address}`, 405],
      ] as const) {
        const r = await call(env.base, path, { method, key });
        assert.equal(r.status, status, path);
        assert.equal(r.headers.get('x-credits-cost'), '0', path);
        assert.equal(r.headers.get('x-credits-remaining'), '3', path);
      }
      // A standard key carries no credits headers.
      const standard = await call(env.base, '/v1/nothing', { key: env.key });
      assert.equal(standard.headers.get('x-credits-cost'), null);
    });

    it('matches paths case-sensitively: /v1/Trades is not a path', async () => {
      for (const path of [
        '/v1/Trades?identity=kol',
        `/v1/TOKENS/solana/${token.address}`,
        `/v1/tokens/solana/${token.address}/OHLCV`,
        '/v1/Discovery',
      ]) {
        const r = await call(env.base, path, { key: env.key });
        assert.equal(r.status, 404, path);
        assert.equal(r.body.error.code, 'NOT_FOUND', path);
        assert.ok(r.headers.get('x-ratelimit-remaining'), path);
      }
    });
  });
});
