// REST: requests/s and latency of each endpoint of the query API (Koa app, hot views filled from
// real topic values, chDB for history), under the same load generator as a Koa hello-world in
// the same process, one after the other. Budgets are lifted so the bench measures speed.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import type { CandleRow, Ohlc } from '../../clickhouse/types.ts';
import { createHotViews } from '../../query-api/hot-views.ts';
import { createQueryApi } from '../../query-api/app.ts';
import { derive } from '../lib/derived.ts';
import { BENCH_BUDGET_PER_MINUTE, benchKeys } from '../lib/edge-env.ts';
import { readDecoded } from '../lib/inputs.ts';
import { runLoad, type LoadResult } from '../lib/load.ts';
import { openLog, openStore } from '../lib/pipeline-parts.ts';
import { check, runScenarioMain, type Measurement, type TargetCheck } from '../lib/scenario.ts';
import { round } from '../lib/stats.ts';

interface Params {
  inputFile: string;
  connections: number;
  durationSeconds: number;
  candleBuckets: number;
  targetTokenRatio: number;
  targetTokenP99Ms: number;
  targetCandlesRps: number;
  /** Only endpoints whose name starts with this (profiling one endpoint); '' runs them all. */
  only: string;
}

const MINUTE = 60_000;

/** `count` closed 1m buckets ending before now, priced around `price` (exact decimal strings). */
function candleRows(chain: CandleRow['chain'], token: string, count: number, price: number): CandleRow[] {
  const end = Math.floor(Date.now() / MINUTE) * MINUTE;
  const rows: CandleRow[] = [];
  const fmt = (v: number) => v.toPrecision(12).replace(/\.?0+$/, '');
  for (let i = 0; i < count; i++) {
    const p = price * (1 + 0.01 * Math.sin(i / 7));
    const ohlc = (scale: number): Ohlc => ({
      open: fmt(p * scale),
      high: fmt(p * 1.01 * scale),
      low: fmt(p * 0.99 * scale),
      close: fmt(p * 1.002 * scale),
    });
    rows.push({
      chain,
      token,
      granularity: '1m',
      time: end - (count - i) * MINUTE,
      seq: i + 1,
      priceNative: ohlc(1 / 150),
      priceUsd: ohlc(1),
      marketCapNative: ohlc(1e9 / 150),
      marketCapUsd: ohlc(1e9),
      volumeNative: fmt(3 + (i % 5)),
      volumeUsd: fmt(450 + 150 * (i % 5)),
      trades: 5 + (i % 9),
    });
  }
  return rows;
}

async function helloWorld(): Promise<{ url: string; close(): Promise<void> }> {
  const app = new Koa();
  app.use((ctx) => {
    ctx.body = 'Hello World';
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

runScenarioMain<Params>(
  'rest',
  {
    inputFile: '',
    connections: 10,
    durationSeconds: 3,
    candleBuckets: 500,
    only: '',
    targetTokenRatio: 0.7,
    targetTokenP99Ms: 5,
    targetCandlesRps: 2000,
  },
  async ({ ctx }, params) => {
    const derived = derive(ctx, readDecoded(params.inputFile));
    const handle = await openStore(ctx);
    const logHandle = await openLog(ctx, 'embedded', 'rest');
    const env = benchKeys(ctx);
    const views = createHotViews(ctx, { log: logHandle.log, store: handle.store });
    await views.start();
    for (const token of derived.tokens) views.applyToken(token);
    for (const message of derived.candles) views.applyCandles(message);
    for (const message of derived.trades) views.applyTrade(message);

    const counts = new Map<string, number>();
    for (const m of derived.trades)
      counts.set(`${m.trade.chain}:${m.trade.token}`, (counts.get(`${m.trade.chain}:${m.trade.token}`) ?? 0) + 1);
    const hottest = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
    const token = derived.tokens.find((t) => `${t.chain}:${t.address}` === hottest)!;
    await handle.store.upsertCandles(
      candleRows(token.chain, token.address, params.candleBuckets + 20, Number(token.price.usd) || 0.0001),
    );
    await handle.store.upsertTokens(derived.tokens);
    // The tokens last traded hours before the run, so they hold no trades ring: a trades page is the store's.
    await handle.store.insertTrades(derived.tradeRows);

    const api = createQueryApi(ctx, {
      store: handle.store,
      log: logHandle.log,
      keys: env.keys,
      views,
      keyBudgetPerMinute: BENCH_BUDGET_PER_MINUTE,
      ipBudgetPerMinute: BENCH_BUDGET_PER_MINUTE,
    });
    const { port } = await api.start();
    const base = `http://127.0.0.1:${port}`;
    const path = `/v1/tokens/${token.chain}/${token.address}`;
    const auth = { Authorization: env.authorization };
    const load = (
      url: string,
      extra: { method?: 'GET' | 'POST'; body?: string; headers?: Record<string, string> } = {},
    ) => runLoad({ url, connections: params.connections, durationSeconds: params.durationSeconds, ...extra });

    const probe = await fetch(`${base}${path}/trades?limit=50`, { headers: auth });
    const probed = ((await probe.json()) as { trades?: unknown[] }).trades?.length ?? 0;
    if (probe.status !== 200 || probed !== 50)
      throw new Error(
        `token trades (50) answered ${probe.status} with ${probed} trades; the scenario needs a full page`,
      );

    const hello = await helloWorld();
    const results: Array<[string, LoadResult]> = [];
    results.push(['Koa hello-world (baseline)', await load(hello.url)]);
    await hello.close();
    const endpoints: Array<[string, string, { method?: 'GET' | 'POST'; body?: string }]> = [
      ['token details', path, {}],
      [
        `candles (${params.candleBuckets} × 1m buckets)`,
        `${path}/ohlcv?timeframe=1m&metric=price&denomination=usd&countBack=${params.candleBuckets}`,
        {},
      ],
      ['token trades (50)', `${path}/trades?limit=50`, {}],
      ['identity trades (kol, 20)', '/v1/trades?identity=kol', {}],
      [
        'discovery (3 columns)',
        '/v1/discovery',
        {
          method: 'POST',
          body: JSON.stringify({
            chains: ['solana', 'base', 'bsc', 'robinhood', 'arc'],
            newPairs: {},
            graduating: {},
            graduated: {},
          }),
        },
      ],
    ];
    for (const [name, url, options] of endpoints) {
      if (!name.startsWith(params.only)) continue;
      const headers = options.method === 'POST' ? { ...auth, 'Content-Type': 'application/json' } : auth;
      results.push([name, await load(`${base}${url}`, { ...options, headers })]);
    }
    await api.stop();
    await views.stop();
    await logHandle.close();
    await handle.store.close();
    env.close();

    const measurements: Measurement[] = results.map(([name, r]) => ({
      subject: name,
      metric: 'requests/s',
      value: round(r.requestsPerSecond, 0),
      unit: 'req/s',
      extra: {
        p50: round(r.latency.p50, 2),
        p99: round(r.latency.p99, 2),
        p999: round(r.latency.p999, 2),
        requests: r.requests,
        non2xx: r.non2xx,
        errors: r.errors,
      },
    }));
    const koa = results[0]![1];
    const find = (prefix: string) => results.find(([name]) => name.startsWith(prefix))?.[1];
    const details = find('token details');
    const candles = find('candles');
    const ratios: Record<string, number> = {};
    for (const [name, r] of results.slice(1))
      ratios[`${name.split(' (')[0]!.replace(/\s+/g, '_')}_vs_koa_hello`] = round(
        r.requestsPerSecond / koa.requestsPerSecond,
        3,
      );
    const targets: TargetCheck[] = [];
    if (details) {
      targets.push(
        check(
          `token details >= ${params.targetTokenRatio}× Koa hello-world req/s`,
          'ratio',
          '>=',
          params.targetTokenRatio,
          round(details.requestsPerSecond / koa.requestsPerSecond, 3),
          '×',
        ),
      );
      targets.push(
        check(
          `token details p99 <= ${params.targetTokenP99Ms} ms`,
          'p99 ms',
          '<=',
          params.targetTokenP99Ms,
          round(details.latency.p99, 2),
          'ms',
        ),
      );
    }
    if (candles) {
      targets.push(
        check(
          `candles (${params.candleBuckets} buckets) >= ${params.targetCandlesRps.toLocaleString('en-US')} req/s`,
          'req/s',
          '>=',
          params.targetCandlesRps,
          round(candles.requestsPerSecond, 0),
          'req/s',
        ),
      );
    }
    const notes = [
      `autocannon, ${params.connections} connections, ${params.durationSeconds} s per endpoint, load generator in its own process; latency from every response.`,
      'token trades: the token last traded hours before the run, so it holds no trades ring; its page is read from chDB and kept for 1 s (query-api/store-page-cache.ts), reads arriving meanwhile sharing the query.',
    ];
    const failed = results
      .filter(([, r]) => r.non2xx > 0 || r.errors > 0)
      .map(([name, r]) => `${name}: ${r.non2xx} non-2xx, ${r.errors} errors (${JSON.stringify(r.statuses)})`);
    if (failed.length) notes.push(`Non-2xx responses: ${failed.join('; ')}`);
    return {
      params: { token: hottest, tokensInViews: derived.tokens.length, tradesInViews: derived.trades.length },
      measurements,
      ratios,
      targets,
      notes,
    };
  },
);
