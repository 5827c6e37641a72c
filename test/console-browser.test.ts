// The live console in a real browser: `spot up` in a child process, Debian's chromium driven by
// playwright-core. The board shows the tokens POST /v1/discovery returns in all three columns; a
// token page draws candles; the chart and the trades tape change while the test watches. The
// page holds no key: it reads through a session opened by the one-time link the banner prints.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import nodeHttp from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Koa from 'koa';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { createRateLimiter } from '../core/auth/rate-limit.ts';
import { notFound, type SpotError } from '../core/errors.ts';
import { createConsole } from '../query-api/console/console.ts';
import { sendError } from '../query-api/errors.ts';
import {
  createConsoleSessions,
  LINK_TTL_MS,
  MAX_SESSIONS,
  mintConsoleToken,
  SESSION_TTL_MS,
} from '../query-api/console/sessions.ts';
import { freePort, waitFor } from './helpers/ports.ts';

const KEY = 'console-test-key-0001';
const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const COLUMNS = ['newPairs', 'graduating', 'graduated'] as const;
const ALL_CHAINS = ['solana', 'base', 'bsc', 'robinhood', 'arc'];

interface Token {
  chain: string;
  address: string;
  symbol: string;
}

describe('console in headless chromium', function () {
  this.timeout(240_000);
  let child: ChildProcess;
  let output = '';
  let dataDir: string;
  let userDataDir: string;
  let http: string;
  let httpPort: number;
  let browser: BrowserContext;
  let page: Page;

  const v1 = async (route: string, body?: unknown) => {
    const response = await fetch(`${http}/v1${route}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    assert.equal(response.status, 200, `${route}: ${response.status}`);
    return response.json();
  };

  /** The board's request: every chain, 30 per column (what the page asks). */
  const discovery = async (): Promise<Record<string, Token[]>> => {
    const body = (await v1('/discovery', {
      chains: ALL_CHAINS,
      newPairs: { limit: 30 },
      graduating: { limit: 30 },
      graduated: { limit: 30 },
    })) as { columns: { column: string; deltas: { data?: Token }[] }[] };
    return Object.fromEntries(
      body.columns.map(({ column, deltas }) => [column, deltas.flatMap((d) => (d.data ? [d.data] : []))]),
    );
  };

  before(async function () {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium (.ci/run does)`);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-console-'));
    userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-chromium-'));
    httpPort = await freePort();
    const [wsPort, sqlPort] = [await freePort(), await freePort()];
    http = `http://127.0.0.1:${httpPort}`;
    child = spawn(process.execPath, ['bin/spot.js', 'up'], {
      env: {
        ...process.env,
        SPOT_DATA_DIR: dataDir,
        SPOT_HTTP_PORT: String(httpPort),
        SPOT_WS_PORT: String(wsPort),
        SPOT_SQL_PORT: String(sqlPort),
        SPOT_API_KEYS: KEY,
        SPOT_SIM_WARM_HOURS: '1',
        // Pretty logs print the banner with the console link (JSON logs keep the link off log shippers).
        SPOT_LOG_FORMAT: 'pretty',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    await waitFor(async () => (/Console\s+http/.test(output) ? true : undefined), 150_000, 'the banner').catch(
      (error) => {
        throw new Error(`${error.message}\n--- service output ---\n${output.slice(-4000)}`);
      },
    );
    browser = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
      viewport: { width: 1400, height: 900 },
    });
    page = browser.pages()[0] ?? (await browser.newPage());
  });

  after(async () => {
    await browser?.close();
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    for (const dir of [dataDir, userDataDir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a request naming another host (DNS rebinding) gets no session and the no-session page; the console API answers 401 without one', async () => {
    const url = new URL(http);
    const rebound = await new Promise<{ status: number; cookie: string[] | undefined }>((resolve, reject) => {
      nodeHttp
        .get(
          { host: url.hostname, port: url.port, path: '/', headers: { Host: `rebound.example:${url.port}` } },
          (res) => {
            res.resume();
            resolve({ status: res.statusCode ?? 0, cookie: res.headers['set-cookie'] });
          },
        )
        .on('error', reject);
    });
    assert.equal(rebound.status, 200);
    assert.equal(rebound.cookie, undefined, 'no session for a host that is not loopback');
    const api = await fetch(`${http}/console/api/v1/discovery`, { method: 'POST', body: '{}' });
    assert.equal(api.status, 401);
    assert.equal(((await api.json()) as { error: { code: string } }).error.code, 'UNAUTHORIZED');
  });

  it('on loopback GET / opens a session by itself: the board shows what POST /v1/discovery returns', async () => {
    const fresh = await browser.newPage();
    try {
      await browser.clearCookies();
      await fresh.goto(`${http}/`);
      const session = (await browser.cookies(http)).find((cookie) => cookie.name === 'spot_console');
      assert.ok(session?.httpOnly, 'an HttpOnly session cookie from GET / on loopback');
      await waitFor(
        async () => {
          const api = await discovery();
          const shown = (await fresh.evaluate(`[...document.querySelectorAll('[data-testid=board-row]')]
            .map((row) => row.dataset.symbol)`)) as string[];
          const expected = COLUMNS.flatMap((column) => api[column]!.map((t) => t.symbol));
          return expected.length > 0 && expected.every((symbol) => shown.includes(symbol)) ? true : undefined;
        },
        60_000,
        'the board of a page opened without a link',
      );
    } finally {
      await fresh.close();
    }
  });

  it('opens a session from the banner link once; the board shows what POST /v1/discovery returns in all three columns', async () => {
    const link = /Console\s+(http\S+)/.exec(output)![1]!;
    assert.ok(link.startsWith(`${http}/console/open?token=`), link);
    await page.goto(link);
    assert.equal(new URL(page.url()).pathname, '/');
    const cookies = await browser.cookies(http);
    const session = cookies.find((cookie) => cookie.name === 'spot_console');
    assert.ok(session?.httpOnly, 'an HttpOnly session cookie');
    assert.equal(session.sameSite, 'Strict');

    // The page's symbols per column equal the API's at one moment (both move; retried until they meet).
    const rows = await waitFor(
      async () => {
        const api = await discovery();
        const shown = (await page.evaluate(`Object.fromEntries(${JSON.stringify(COLUMNS)}.map((column) => [column,
          [...document.querySelectorAll('[data-testid=column-' + column + '] [data-testid=board-row]')]
            .map((row) => row.dataset.symbol)]))`)) as Record<string, string[]>;
        const same = COLUMNS.every(
          (column) =>
            api[column]!.length > 0 &&
            JSON.stringify([...api[column]!.map((t) => t.symbol)].sort()) ===
              JSON.stringify([...(shown[column] ?? [])].sort()),
        );
        return same ? shown : undefined;
      },
      60_000,
      'the board to show the tokens of POST /v1/discovery in all three columns',
    );
    for (const column of COLUMNS) assert.ok(rows[column]!.length > 0, column);

    // The link is one-time: a second use opens nothing.
    const again = await fetch(link, { redirect: 'manual' });
    assert.equal(again.status, 401);
    // The cookie opens the console reads only: /v1 still wants a Bearer key.
    const v1Status = await page.evaluate(
      `fetch('/v1/discovery', { method: 'POST', body: '{}' }).then((r) => r.status)`,
    );
    assert.equal(v1Status, 401);
  });

  it('a token page draws candles; the chart and the trades tape change while the test watches', async () => {
    // The token that traded last among the busiest ones, so trades arrive while the test watches.
    const columns = await discovery();
    const candidates = [...columns.graduated!, ...columns.graduating!].slice(0, 12);
    let best: { token: Token; at: number } | null = null;
    for (const token of candidates) {
      const newest = (await v1(`/tokens/${token.chain}/${token.address}/trades?limit=1`)) as {
        trades: { timestamp: number }[];
      };
      const at = newest.trades[0]?.timestamp ?? 0;
      if (!best || at > best.at) best = { token, at };
    }
    assert.ok(best, 'a token with trades');
    const { chain, address, symbol } = best.token;

    await page.goto(`${http}/#/token/${chain}/${address}`);
    // Polled from here: the page's CSP (script-src 'self') refuses waitForFunction's string eval.
    const truthy = (expression: string, what: string) =>
      waitFor(async () => ((await page.evaluate(expression)) ? true : undefined), 20_000, what);
    await truthy(`Number(document.querySelector('[data-testid=chart]')?.dataset.candles) > 0`, 'candles');
    assert.ok((await page.locator('[data-testid=chart] canvas').count()) > 0, 'lightweight-charts drew on a canvas');
    assert.match((await page.textContent('h1')) ?? '', new RegExp(`^${symbol}`));
    await page.waitForSelector('[data-testid=tape-row]', { timeout: 20_000 });

    const read = async () =>
      (await page.evaluate(`({
        candle: document.querySelector('[data-testid=legend]').dataset.lastTime + '/' +
          document.querySelector('[data-testid=legend]').dataset.close,
        firstTrade: document.querySelector('[data-testid=tape-row]').dataset.id,
      })`)) as { candle: string; firstTrade: string };
    const first = await read();
    // The tape shows the API's trades: its newest is among the API's newest 100 once the store
    // has written it (the stream can run a store flush ahead under load).
    await waitFor(
      async () => {
        const api = (await v1(`/tokens/${chain}/${address}/trades?limit=100`)) as { trades: { id: string }[] };
        return api.trades.some((trade) => trade.id === first.firstTrade) ? true : undefined;
      },
      20_000,
      `the tape's newest trade ${first.firstTrade} on the API`,
    );

    const changed = await waitFor(
      async () => {
        const now = await read();
        return now.candle !== first.candle && now.firstTrade !== first.firstTrade ? now : undefined;
      },
      60_000,
      'the chart and the tape to change',
    );
    assert.notEqual(changed.candle, first.candle);
    assert.notEqual(changed.firstTrade, first.firstTrade);

    // Timeframe and metric switches reload the series.
    await page.click('button:text-is("1m")');
    await page.click('button:text-is("Market cap")');
    const before = Number(changed.candle.split('/')[1]);
    await truthy(`Number(document.querySelector('[data-testid=legend]').dataset.close) > ${10 * before}`, 'market cap');
  });

  it('spot console prints a fresh link that opens a session', async () => {
    const result = spawnSync(process.execPath, ['bin/spot.js', 'console'], {
      env: { ...process.env, SPOT_DATA_DIR: dataDir, SPOT_HTTP_PORT: String(httpPort), SPOT_LOG_LEVEL: 'silent' },
      encoding: 'utf8',
    });
    assert.equal(result.status, 0, result.stderr);
    const link = result.stdout.trim();
    const response = await fetch(link, { redirect: 'manual' });
    assert.equal(response.status, 303);
    assert.match(response.headers.get('set-cookie') ?? '', /^spot_console=[\w-]+; Path=\/; HttpOnly; SameSite=Strict/);
  });
});

describe('console sessions', () => {
  const secret = Buffer.alloc(32, 7);

  it('opens one session per link, refuses forged, reused and expired links', () => {
    let clock = 1_000_000;
    const sessions = createConsoleSessions(secret, () => clock);
    const token = sessions.mintToken();
    const [expires, nonce, signature] = token.split('.');
    assert.equal(sessions.redeem(`${expires}.${nonce}.${signature!.slice(1)}x`), null, 'forged signature');
    assert.equal(sessions.redeem(`${Number(expires) + 1}.${nonce}.${signature}`), null, 'moved expiry');
    assert.equal(sessions.redeem(mintConsoleToken(Buffer.alloc(32, 8), clock)), null, 'another secret');
    const id = sessions.redeem(token);
    assert.ok(id !== null && sessions.valid(id));
    assert.equal(sessions.redeem(token), null, 'one use');
    assert.equal(sessions.valid(undefined), false);
    assert.equal(sessions.valid('not-a-session'), false);
    const late = sessions.mintToken();
    clock += LINK_TTL_MS + 1;
    assert.equal(sessions.redeem(late), null, 'expired link');
    clock += SESSION_TTL_MS;
    assert.equal(sessions.valid(id), false, 'expired session');
  });

  it('holds at most MAX_SESSIONS sessions, dropping the oldest', () => {
    const sessions = createConsoleSessions(secret);
    const ids = Array.from({ length: MAX_SESSIONS + 1 }, () => sessions.redeem(sessions.mintToken())!);
    assert.equal(sessions.valid(ids[0]), false);
    assert.ok(ids.slice(1).every((id) => sessions.valid(id)));
  });
});

describe('console access modes (SPOT_CONSOLE)', () => {
  /** The console handler in a Koa app as app.ts mounts it; `proxy` lets a test pose as a remote client. */
  async function serve(mode: 'loopback' | 'open' | 'off') {
    const sessions = createConsoleSessions(Buffer.alloc(32, 9));
    const ipLimiter = createRateLimiter({ perMinute: 1000 });
    const handler = createConsole({ sessions, ipLimiter, mode, now: Date.now });
    const app = new Koa();
    app.proxy = true;
    app.use(async (koa) => {
      try {
        if (await handler(koa, async () => {})) return;
        throw notFound();
      } catch (error) {
        sendError(koa, error as SpotError);
      }
    });
    const server = nodeHttp.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return {
      base,
      get: (route: string, remote = false) =>
        fetch(`${base}${route}`, { headers: remote ? { 'X-Forwarded-For': '203.0.113.7' } : {} }),
      close: () => {
        ipLimiter.stop();
        return new Promise((resolve) => server.close(resolve));
      },
    };
  }

  it('loopback serves loopback clients only; open serves anyone; off serves nothing', async () => {
    const loopback = await serve('loopback');
    const open = await serve('open');
    const off = await serve('off');
    try {
      const page = await loopback.get('/');
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'/);
      assert.match(await page.text(), /<script src="\/console\/lightweight-charts.js">/);
      const charts = await loopback.get('/console/lightweight-charts.js');
      assert.equal(charts.status, 200);
      assert.match(await charts.text(), /LightweightCharts/);
      const remote = await loopback.get('/', true);
      assert.equal(remote.status, 404);
      assert.equal(((await remote.json()) as { error: { code: string } }).error.code, 'NOT_FOUND');
      assert.equal((await open.get('/', true)).status, 200);
      assert.equal((await open.get('/console/api/v1/discovery', true)).status, 401);
      assert.equal((await off.get('/')).status, 404);
      assert.equal((await loopback.get('/console/nothing-here')).status, 404);
    } finally {
      await Promise.all([loopback.close(), open.close(), off.close()]);
    }
  });
});
