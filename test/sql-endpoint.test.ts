// The SQL endpoint over real HTTP, driven by @clickhouse/client, fetch and the CLI helper.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import {
  createClient as createHttpClient,
  ClickHouseError,
  ClickHouseLogLevel,
  type ClickHouseClient,
} from '@clickhouse/client';
import { sharedChdb } from './helpers/chdb.ts';
import { freePort } from './helpers/ports.ts';
import { createRuntime } from '../cli/runtime.ts';
import { createClickHouseClient } from '../clickhouse/client.ts';
import { createSqlEndpoint, type SqlEndpoint } from '../clickhouse/sql-endpoint.ts';
import { writerPassword, writerPasswordPath, writerUrl } from '../clickhouse/sql-auth.ts';
import { runSqlCli } from '../clickhouse/sql-cli.ts';
import { createStore } from '../clickhouse/store.ts';
import type { Context } from '../core/context.ts';
import type { TradeRow } from '../clickhouse/types.ts';

// The client logs every failed request; these tests cause failures on purpose.
const createClient = (config: Parameters<typeof createHttpClient>[0]) =>
  createHttpClient({ ...config, log: { level: ClickHouseLogLevel.OFF } });

async function expectClickHouseError(promise: Promise<unknown>, code: string): Promise<ClickHouseError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ClickHouseError, `expected a ClickHouseError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected ClickHouse error ${code}`);
}

describe('SQL endpoint (ClickHouse HTTP interface over chDB)', () => {
  let ctx: Context;
  let endpoint: SqlEndpoint;
  let base: string;
  let port: number;
  let analyst: ClickHouseClient;
  let writer: ClickHouseClient;
  const clients: ClickHouseClient[] = [];

  before(async () => {
    const shared = await sharedChdb();
    ctx = shared.ctx;
    endpoint = createSqlEndpoint(ctx, shared.client, { port: 0 });
    ({ port } = await endpoint.start());
    base = `http://127.0.0.1:${port}`;
    analyst = createClient({ url: base });
    writer = createClient({ url: base, username: 'spot_writer', password: writerPassword(ctx) });
    clients.push(analyst, writer);
    await writer.command({ query: 'DROP TABLE IF EXISTS spot.endpoint_probe' });
  });

  after(async () => {
    for (const client of clients) await client.close();
    await endpoint.stop();
  });

  it('answers /ping and client.ping()', async () => {
    const res = await fetch(`${base}/ping`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'Ok.\n');
    assert.equal((await analyst.ping()).success, true);
  });

  it('runs reads from curl-style GET and POST with ClickHouse headers', async () => {
    const get = await fetch(`${base}/?query=SELECT+1`);
    assert.equal(get.status, 200);
    assert.equal(await get.text(), '1\n');
    assert.equal(get.headers.get('x-clickhouse-format'), 'TabSeparated');
    assert.ok(get.headers.get('x-clickhouse-query-id'));
    assert.ok(JSON.parse(get.headers.get('x-clickhouse-summary') ?? 'null').read_rows !== undefined);
    const post = await fetch(`${base}/`, { method: 'POST', body: 'SELECT 1 AS one, 2 AS two FORMAT JSONEachRow' });
    assert.equal(await post.text(), '{"one":1,"two":2}\n');
    assert.equal(post.headers.get('x-clickhouse-format'), 'JSONEachRow');
    assert.match(post.headers.get('content-type') ?? '', /application\/json/);
    const defaultFormat = await fetch(`${base}/?default_format=CSVWithNames&database=spot`, {
      method: 'POST',
      body: 'SELECT currentDatabase() AS db',
    });
    assert.equal(await defaultFormat.text(), '"db"\n"spot"\n');
  });

  it('serves @clickhouse/client reads with bound parameters, settings and gzip', async () => {
    const rs = await analyst.query({
      query: 'SELECT {n:UInt32} * 2 AS v, {s:String} AS s, {a:Array(String)} AS a',
      query_params: { n: 21, s: "it's", a: ['x', 'y'] },
      format: 'JSONEachRow',
      clickhouse_settings: { max_threads: 1 },
    });
    assert.deepEqual(await rs.json(), [{ v: '42', s: "it's", a: ['x', 'y'] }]); // UInt32 * 2 is UInt64: quoted, as ClickHouse does
    const compressed = createClient({ url: base, compression: { request: true, response: true } });
    clients.push(compressed);
    const tables = await compressed.query({
      query: "SELECT name FROM system.tables WHERE database = 'spot' AND name = 'trades'",
      format: 'JSONEachRow',
    });
    assert.deepEqual(await tables.json(), [{ name: 'trades' }]);
  });

  it('refuses every write without the write credential with READONLY (164)', async () => {
    for (const query of [
      "INSERT INTO spot.tokens (chain, address) VALUES ('base', '0x1')",
      'CREATE TABLE spot.evil (a UInt8) ENGINE = Memory',
      'DROP TABLE spot.trades',
      'ALTER TABLE spot.trades DELETE WHERE 1',
      'TRUNCATE TABLE spot.trades',
      "SELECT 1 INTO OUTFILE '/tmp/spot-endpoint-outfile.txt'",
      "SELECT * FROM file('/etc/passwd', 'LineAsString')",
    ]) {
      await expectClickHouseError(analyst.command({ query }), '164');
    }
    await expectClickHouseError(
      analyst.insert({ table: 'spot.tokens', values: [{ chain: 'base', address: '0x1' }], format: 'JSONEachRow' }),
      '164',
    );
    const other = createClient({ url: base, username: 'mallory', password: 'guess' });
    clients.push(other);
    await expectClickHouseError(other.command({ query: 'DROP TABLE spot.trades' }), '164');
    const multi = await fetch(`${base}/`, { method: 'POST', body: 'SELECT 1; DROP TABLE spot.trades' });
    assert.equal(multi.headers.get('x-clickhouse-exception-code'), '62');
    const exists = await analyst.query({
      query: "SELECT count() AS n FROM system.tables WHERE database = 'spot' AND name = 'trades'",
      format: 'JSONEachRow',
    });
    assert.deepEqual(await exists.json(), [{ n: '1' }]);
  });

  it('refuses the writer user with a wrong password (516)', async () => {
    const wrong = createClient({ url: base, username: 'spot_writer', password: 'nope' });
    clients.push(wrong);
    await expectClickHouseError(wrong.query({ query: 'SELECT 1', format: 'JSONEachRow' }), '516');
    const res = await fetch(`${base}/?query=SELECT+1`, {
      headers: { 'X-ClickHouse-User': 'spot_writer', 'X-ClickHouse-Key': 'nope' },
    });
    assert.equal(res.status, 403);
  });

  it('lets the writer run DDL and inserts end to end, stored with mode 0600', async () => {
    assert.equal(fs.statSync(writerPasswordPath(ctx)).mode & 0o777, 0o600);
    await writer.command({
      query: 'CREATE TABLE spot.endpoint_probe (id UInt32, label String) ENGINE = MergeTree ORDER BY id',
    });
    await writer.insert({
      table: 'spot.endpoint_probe',
      values: [
        { id: 1, label: 'a' },
        { id: 2, label: "b'; DROP" },
      ],
      format: 'JSONEachRow',
    });
    await writer.command({ query: 'ALTER TABLE spot.endpoint_probe ADD COLUMN extra UInt8 DEFAULT 7' });
    const rows = await analyst.query({
      query: 'SELECT id, label, extra FROM spot.endpoint_probe ORDER BY id',
      format: 'JSONEachRow',
    });
    assert.deepEqual(await rows.json(), [
      { id: 1, label: 'a', extra: 7 },
      { id: 2, label: "b'; DROP", extra: 7 },
    ]);
    await writer.command({ query: 'DROP TABLE spot.endpoint_probe' });
  });

  it('serves a whole store to another role through SPOT_CLICKHOUSE_URL', async () => {
    const roleCtx: Context = { ...ctx, config: { ...ctx.config, clickhouseUrl: writerUrl(ctx, port) } };
    const remote = createClickHouseClient(roleCtx);
    clients.push(remote);
    const store = createStore(roleCtx, remote);
    await store.migrate();
    const trade: TradeRow = {
      id: 'base:0xremote:1',
      chain: 'base',
      token: '0xremotetoken',
      seq: 1,
      name: 'R',
      symbol: 'R',
      trader: '0xt',
      side: 'buy',
      transactionHash: '0xremote',
      eventIndex: 1,
      blockNumber: 5,
      // Newer than any trade other suites of this process stored: the identity query returns the newest 100.
      timestamp: 4_102_444_800_000,
      amount: '1.000000000000000000000000000001',
      quoteAmount: '2',
      quoteAsset: 'WETH',
      priceNative: '2',
      priceUsd: '5000',
      volumeNative: '2',
      volumeUsd: '5000',
      marketCapNative: '10',
      marketCapUsd: '25000',
      pool: '0xpool',
      dex: 'uniswap-v2',
      identities: ['kol'],
      flags: ['kol'],
      platforms: ['gmgn'],
    };
    await store.insertTrades([trade, trade]);
    assert.deepEqual(await store.allTrades('base', '0xremotetoken'), [trade]);
    // Other suites of this process may have stored kol trades on base in the shared store.
    const identity = await store.queryIdentityTrades('kol', ['base'], 100);
    assert.deepEqual(
      identity.filter((t) => t.token === trade.token),
      [trade],
    );
  });

  it('returns malformed queries as errors and keeps serving', async () => {
    const error = await expectClickHouseError(analyst.query({ query: 'SELECT (1 +', format: 'JSONEachRow' }), '62');
    assert.match(error.message, /Syntax error/);
    const res = await fetch(`${base}/?query=SELEC+1`);
    assert.equal(res.status, 400);
    assert.equal(res.headers.get('x-clickhouse-exception-code'), '62');
    assert.match(await res.text(), /^Code: 62\. DB::Exception: /);
    await expectClickHouseError(
      analyst.query({ query: 'SELECT * FROM spot.no_such_table', format: 'JSONEachRow' }),
      '60',
    );
    const gz = await fetch(`${base}/`, { method: 'POST', body: 'not gzip', headers: { 'Content-Encoding': 'gzip' } });
    assert.equal(gz.headers.get('x-clickhouse-exception-code'), '271');
    const big = await fetch(`${base}/`, { method: 'POST', body: `SELECT '${'x'.repeat(2 << 20)}'` });
    assert.equal(big.status, 413);
    assert.equal((await analyst.ping()).success, true);
  });

  it('prints spot sql results through the endpoint or directly from the data dir', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    await runSqlCli({ ...ctx, config: { ...ctx.config, sqlPort: port } }, 'SELECT 40 + 2 AS answer', out);
    assert.match(text, /answer/);
    assert.match(text, /42/);
    text = '';
    // Nothing listens on port 1: the CLI opens the store itself (same data dir, same engine).
    await runSqlCli(
      { ...ctx, config: { ...ctx.config, sqlPort: 1 } },
      "SELECT count() AS tables FROM system.tables WHERE database = 'spot' AND name = 'candles'",
      out,
    );
    assert.match(text, /tables/);
    assert.match(text, /\b1\b/);
    await assert.rejects(
      runSqlCli({ ...ctx, config: { ...ctx.config, sqlPort: port } }, 'DROP TABLE spot.trades', out),
      /Code: 164/,
    );
    await assert.rejects(
      runSqlCli({ ...ctx, config: { ...ctx.config, sqlPort: 1 } }, 'DROP TABLE spot.trades', out),
      /Code: 164/,
    );
  });
});

describe('start-up against a store that is not up yet', function () {
  this.timeout(30_000);

  it('retries the migrations while the store is unreachable, then starts', async () => {
    const shared = await sharedChdb();
    const port = await freePort();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-store-wait-'));
    const ctx = {
      ...shared.ctx,
      config: {
        ...shared.ctx.config,
        dataDir,
        clickhouseUrl: `http://spot_writer:${writerPassword(shared.ctx)}@127.0.0.1:${port}`,
      },
    };
    const runtime = await createRuntime(ctx);
    // The endpoint (a ClickHouse HTTP interface) only starts listening a second after the runtime asks.
    let endpoint: SqlEndpoint | null = null;
    const late = setTimeout(() => {
      endpoint = createSqlEndpoint(shared.ctx, shared.client, { port });
      void endpoint.start();
    }, 1000);
    try {
      const started = performance.now();
      const { client } = await runtime.store();
      assert.ok(performance.now() - started >= 900, 'it waited for the store');
      const result = await client.query({ query: 'SELECT 1 AS one', format: 'JSONEachRow' });
      assert.deepEqual(await result.json(), [{ one: 1 }]);
    } finally {
      clearTimeout(late);
      await runtime.stop();
      await (endpoint as SqlEndpoint | null)?.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
