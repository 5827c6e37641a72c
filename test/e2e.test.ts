// The whole service as a user runs it: `spot up` in a child process on a fresh data dir, then
// black-box requests over HTTP, WebSocket and the SQL endpoint.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { createClient } from '@clickhouse/client';
import { answersOk, freePort, waitFor } from './helpers/ports.ts';

const KEY = 'e2e-test-key-0001';

describe('spot up (end to end, child process)', function () {
  this.timeout(180_000);
  let child: ChildProcess;
  let dataDir: string;
  let http: string;
  let ws: string;
  let sql: string;
  let output = '';
  const auth = { Authorization: `Bearer ${KEY}` };

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-e2e-'));
    const [httpPort, wsPort, sqlPort] = [await freePort(), await freePort(), await freePort()];
    http = `http://127.0.0.1:${httpPort}`;
    ws = `ws://127.0.0.1:${wsPort}/v1/stream`;
    sql = `http://127.0.0.1:${sqlPort}`;
    child = spawn(process.execPath, ['bin/spot.js', 'up'], {
      env: {
        ...process.env,
        SPOT_DATA_DIR: dataDir,
        SPOT_HTTP_PORT: String(httpPort),
        SPOT_WS_PORT: String(wsPort),
        SPOT_SQL_PORT: String(sqlPort),
        SPOT_API_KEYS: KEY,
        SPOT_SIM_WARM_HOURS: '1',
        // an hour of history dense enough to launch tokens some of which buy promotion (3 %)
        SPOT_SIM_HISTORY_RATE: '5',
        SPOT_SIM_RATE: '100',
        SPOT_LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    await waitFor(() => answersOk(`${http}/openapi.json`), 90_000, 'the REST API').catch((error) => {
      throw new Error(`${error.message}\n--- service output ---\n${output.slice(-4000)}`);
    });
  });

  after(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('shows every chain trading and serves a discovery board', async () => {
    const chains = ['solana', 'base', 'bsc', 'robinhood', 'arc'];
    const counts = await waitFor(
      async () => {
        const client = createClient({ url: sql });
        try {
          const result = await client.query({
            query: 'SELECT chain, count() AS n FROM spot.trades GROUP BY chain',
            format: 'JSONEachRow',
          });
          const rows = (await result.json()) as { chain: string; n: string | number }[];
          return chains.every((chain) => rows.some((row) => row.chain === chain && Number(row.n) > 0))
            ? rows
            : undefined;
        } finally {
          await client.close();
        }
      },
      90_000,
      'trades on all five chains',
    );
    assert.equal(counts.length, 5);

    // About 40 % of the simulator's trades go through named platforms, and REST shows them.
    const routed = await waitFor(
      async () => {
        const client = createClient({ url: sql });
        try {
          const result = await client.query({
            query: `SELECT chain, token, id, platforms FROM spot.trades FINAL
              WHERE notEmpty(platforms) ORDER BY timestamp DESC LIMIT 1`,
            format: 'JSONEachRow',
          });
          return ((await result.json()) as { chain: string; token: string; id: string; platforms: string[] }[])[0];
        } finally {
          await client.close();
        }
      },
      60_000,
      'a trade routed through a platform',
    );
    let cursor: string | null = null;
    let shown: { id: string; platforms?: unknown } | undefined;
    for (let page = 0; page < 20 && !shown; page++) {
      const query: string = cursor ? `?limit=100&cursor=${cursor}` : '?limit=100';
      const response = await fetch(`${http}/v1/tokens/${routed.chain}/${routed.token}/trades${query}`, {
        headers: auth,
      });
      const trades = (await response.json()) as { trades: { id: string }[]; nextCursor: string | null };
      shown = trades.trades.find((trade) => trade.id === routed.id);
      cursor = trades.nextCursor;
      if (!cursor) break;
    }
    assert.deepEqual(
      shown?.platforms,
      routed.platforms.map((platform) => ({ platform, isPaid: false, paidAt: null })),
    );

    type BoardToken = { address: string; chain: string; totals: { trades: number } };
    type Board = { columns: { column: string; deltas: { rank: number; data: BoardToken }[] }[] };
    // A launch is its own transaction, so the newest pairs may not have traded yet: those have no candles.
    const tradedOn = (board: Board) =>
      board.columns.flatMap((c) => c.deltas).find((delta) => delta.data.totals.trades > 0)?.data;
    // Token objects reach the API's hot views a moment after their trades reach ClickHouse.
    const body = await waitFor(
      async () => {
        const response = await fetch(`${http}/v1/discovery`, {
          method: 'POST',
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: JSON.stringify({ chains, newPairs: {}, graduating: {}, graduated: {} }),
        });
        assert.equal(response.status, 200);
        assert.ok(response.headers.get('x-ratelimit-remaining'));
        assert.ok(response.headers.get('x-request-id'));
        const board = (await response.json()) as Board;
        return tradedOn(board) ? board : undefined;
      },
      60_000,
      'a discovery board with a token that traded',
    );
    assert.deepEqual(
      body.columns.map((c) => c.column),
      ['newPairs', 'graduating', 'graduated'],
    );
    const traded = tradedOn(body)!;
    const details = await fetch(`${http}/v1/tokens/${traded.chain}/${traded.address}`, { headers: auth });
    assert.equal(details.status, 200);
    const token = (await details.json()) as { price: { usd: string }; stats: Record<string, unknown> };
    assert.match(token.price.usd, /^\d+(\.\d+)?$/);
    assert.deepEqual(Object.keys(token.stats).sort(), ['1h', '24h', '30m', '5m', '6h']);

    // Its open candle is published in the same views pass as the token, on a topic of its own.
    await waitFor(
      async () => {
        const candles = await fetch(`${http}/v1/tokens/${traded.chain}/${traded.address}/ohlcv?timeframe=1m`, {
          headers: auth,
        });
        assert.equal(candles.status, 200);
        return ((await candles.json()) as { candles: unknown[] }).candles.length > 0 || undefined;
      },
      10_000,
      "the traded token's candles",
    );
  });

  it("shows a promoted simulator token's paid promotion in its platforms", async () => {
    // The simulator's promotion feed is polled like DEX Screener's: a promotion reaches the log, then the token.
    const promoted = await waitFor(
      async () => {
        const client = createClient({ url: sql });
        try {
          const result = await client.query({
            query: "SELECT chain, token FROM spot.token_events WHERE kind = 'promotion' ORDER BY block_time LIMIT 1",
            format: 'JSONEachRow',
          });
          return ((await result.json()) as { chain: string; token: string }[])[0];
        } finally {
          await client.close();
        }
      },
      90_000,
      'a promotion event',
    );
    const platforms = await waitFor(
      async () => {
        const details = await fetch(`${http}/v1/tokens/${promoted.chain}/${promoted.token}`, { headers: auth });
        if (details.status !== 200) return undefined;
        const token = (await details.json()) as { platforms?: { platform: string; isPaid: boolean; paidAt: number }[] };
        return token.platforms?.length ? token.platforms : undefined;
      },
      30_000,
      'the promotion on the token',
    );
    assert.ok(platforms.every((p) => p.platform === 'dexscreener' && p.isPaid && Number.isInteger(p.paidAt)));
  });

  it('refuses requests without a key and writes through the SQL endpoint without the write credential', async () => {
    const response = await fetch(`${http}/v1/trades?identity=kol`);
    assert.equal(response.status, 401);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'UNAUTHORIZED');
    const client = createClient({ url: sql });
    try {
      await assert.rejects(client.command({ query: 'DROP TABLE spot.trades' }), /READONLY|readonly|Code: 164/);
    } finally {
      await client.close();
    }
  });

  it('streams live trades over the WebSocket', async () => {
    const socket = new WebSocket(ws, { headers: auth });
    const frames: { type: string; channel?: string; data?: { chain: string } }[] = [];
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    socket.on('message', (raw) => frames.push(JSON.parse(String(raw))));
    socket.send(JSON.stringify({ action: 'subscribe', channel: 'spot.trades', filters: { identity: 'kol' }, id: 'k' }));
    socket.send(
      JSON.stringify({ action: 'subscribe', channel: 'spot.trades', filters: { identity: 'fomoscan' }, id: 'f' }),
    );
    await waitFor(
      async () => (frames.some((f) => f.type === 'update') ? true : undefined),
      60_000,
      'a live trade update',
    );
    assert.ok(frames.some((f) => f.type === 'ack'));
    socket.close();
  });

  it('runs intake on its own thread and shows its metrics with the others on /metrics', async () => {
    // The sources and decoders log from the ingest thread, not the main thread.
    assert.match(output, /"thread":"ingest"[^\n]*"msg":"market simulator running"/);
    const text = await waitFor(
      async () => {
        const body = await (await fetch(`${http}/metrics`)).text();
        return /spot_ingest_behind_seconds\{chain="arc"\}/.test(body) ? body : undefined;
      },
      30_000,
      "the ingest thread's gauges on /metrics",
    );
    const named = (name: string) =>
      Number(new RegExp(`spot_named_counter\\{name="${name.replaceAll('.', '\\.')}"\\} (\\S+)`).exec(text)?.[1]);
    // Published by the ingest thread, processed by the main thread, served by the serving thread.
    assert.ok(named('ingest.published.swaps') > 0, 'ingest.published.swaps');
    assert.ok(named('aggregator.processed') > 0, 'aggregator.processed');
    // Both writers count their appends: the sum covers the swaps and what the aggregator derived.
    assert.ok(named('eventlog.produced') > named('ingest.published.swaps'), 'eventlog.produced');
    assert.match(text, /^process_cpu_seconds_total \S+$/m);
  });

  it('stops cleanly on SIGTERM', async () => {
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 0, output.slice(-2000));
  });
});
