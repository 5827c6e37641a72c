// Query API: token details, routing, headers, authentication, limits, credits, outages and
// /openapi.json, through real HTTP against the service started in-process.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createClickHouseClient } from '../clickhouse/client.ts';
import { createStore } from '../clickhouse/store.ts';
import { createKeyStore } from '../core/auth/keys.ts';
import { createRateLimiter } from '../core/auth/rate-limit.ts';
import { keysCommand } from '../query-api/keys-cli.ts';
import {
  call,
  evmAddress,
  makeToken,
  produceTokens,
  solanaAddress,
  startEnv,
  waitFor,
  WS_PORT,
  type ApiEnv,
} from './query-api-env.ts';

describe('query API: tokens, routing, headers, auth, limits', () => {
  let env: ApiEnv;
  const hot = makeToken({ chain: 'solana', address: solanaAddress(), name: 'Hot Token' });
  const evm = makeToken({ chain: 'base', address: evmAddress(), name: 'Evm Token' });
  const cold = makeToken({
    chain: 'bsc',
    address: evmAddress(),
    name: 'Cold Token',
    updatedAt: Date.now() - 3 * 24 * 3600_000,
  });

  before(async () => {
    env = await startEnv();
    await produceTokens(env.log, [hot, evm]);
    await env.store.upsertTokens([cold]);
    await waitFor(
      () =>
        env.api.views.token('base', evm.address) !== undefined &&
        env.api.views.token('solana', hot.address) !== undefined,
      'tokens in the hot view',
    );
  });
  after(async () => env.close());

  describe('GET /v1/tokens/{chain}/{address}', () => {
    it('serves a hot token as the token object', async () => {
      const r = await call(env.base, `/v1/tokens/solana/${hot.address}`, { key: env.key });
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type') ?? '', /application\/json/);
      assert.deepEqual(r.body, hot);
    });

    it('compares EVM addresses case-insensitively', async () => {
      const r = await call(env.base, `/v1/tokens/base/0x${evm.address.slice(2).toUpperCase()}`, { key: env.key });
      assert.equal(r.status, 200);
      assert.equal(r.body.address, evm.address);
    });

    it('reads a cold token from the store', async () => {
      const r = await call(env.base, `/v1/tokens/bsc/${cold.address}`, { key: env.key });
      assert.equal(r.status, 200);
      assert.equal(r.body.name, 'Cold Token');
    });

    it('answers 404 NOT_FOUND for an unknown token', async () => {
      const r = await call(env.base, `/v1/tokens/solana/${solanaAddress()}`, { key: env.key });
      assert.equal(r.status, 404);
      assert.equal(r.body.error.code, 'NOT_FOUND');
      assert.equal(typeof r.body.error.message, 'string');
      assert.equal(r.body.error.details, undefined);
    });

    it('answers UNSUPPORTED_CHAIN with {chain} for an unknown slug', async () => {
      for (const slug of ['ethereum', 'Solana', 'sol']) {
        const r = await call(env.base, `/v1/tokens/${slug}/${hot.address}`, { key: env.key });
        assert.equal(r.status, 400);
        assert.deepEqual(r.body.error.details, { chain: slug });
        assert.equal(r.body.error.code, 'UNSUPPORTED_CHAIN');
      }
    });

    it('answers VALIDATION_ERROR on `address` for an address of the wrong format', async () => {
      for (const [chain, address] of [
        ['solana', evm.address],
        ['base', hot.address],
        ['bsc', '0x1234'],
      ]) {
        const r = await call(env.base, `/v1/tokens/${chain}/${address}`, { key: env.key });
        assert.equal(r.status, 400);
        assert.equal(r.body.error.code, 'VALIDATION_ERROR');
        assert.deepEqual(
          r.body.error.details.map((d: { field: string }) => d.field),
          ['address'],
        );
      }
    });
  });

  describe('routing', () => {
    it('answers an unknown path with a 404 envelope, inside and outside /v1', async () => {
      for (const p of ['/v1/nothing', '/v2/tokens/solana/x', '/', '/v1/tokens/solana']) {
        const r = await call(env.base, p, { key: env.key });
        assert.equal(r.status, 404, p);
        assert.equal(r.body.error.code, 'NOT_FOUND');
      }
      const r = await call(env.base, '/v1/nothing', { key: env.key });
      assert.ok(r.headers.get('x-ratelimit-remaining'));
    });

    it('answers a wrong method with 405, an Allow header and no body', async () => {
      for (const [method, p, allow] of [
        ['DELETE', `/v1/tokens/solana/${hot.address}`, 'GET'],
        ['GET', '/v1/discovery', 'POST'],
        ['POST', '/v1/trades', 'GET'],
        ['PUT', '/openapi.json', 'GET'],
      ] as const) {
        const r = await call(env.base, p, { method, key: env.key });
        assert.equal(r.status, 405, `${method} ${p}`);
        assert.equal(r.text, '');
        assert.match(r.headers.get('allow') ?? '', new RegExp(allow));
        assert.ok(r.headers.get('x-request-id'));
        if (p.startsWith('/v1')) assert.ok(r.headers.get('x-ratelimit-remaining'));
      }
      const noKey = await call(env.base, '/v1/discovery', { method: 'GET' });
      assert.equal(noKey.status, 405);
    });

    it('answers GET /v1/stream with a plain-text 426 naming the stream port', async () => {
      const r = await call(env.base, '/v1/stream', { key: env.key });
      assert.equal(r.status, 426);
      assert.match(r.headers.get('content-type') ?? '', /text\/plain/);
      assert.ok(r.text.includes(String(WS_PORT)));
      assert.ok(r.headers.get('x-ratelimit-remaining'));
    });
  });

  describe('headers', () => {
    it('echoes a valid X-Request-ID and replaces any other value with a UUID', async () => {
      const good = 'abc-123_XYZ:~!';
      const r1 = await call(env.base, `/v1/tokens/solana/${hot.address}`, {
        key: env.key,
        headers: { 'x-request-id': good },
      });
      assert.equal(r1.headers.get('x-request-id'), good);
      const long = 'a'.repeat(128);
      assert.equal(
        (await call(env.base, '/v1/nothing', { key: env.key, headers: { 'x-request-id': long } })).headers.get(
          'x-request-id',
        ),
        long,
      );
      for (const bad of ['has space', 'a'.repeat(129), 'caf\u00e9']) {
        const r = await call(env.base, '/openapi.json', {
          headers: { 'x-request-id': encodeURI(bad) === bad ? bad : 'has space' },
        });
        assert.match(
          r.headers.get('x-request-id') ?? '',
          /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
        );
      }
      const none = await call(env.base, '/v1/nothing', { key: env.key });
      assert.match(none.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    });

    it('carries X-RateLimit-Remaining on /v1 responses, counting down the key budget', async () => {
      // A frozen clock: the budget refills one request every 5 ms, so a real clock could refill between calls.
      const frozen = Date.now();
      const { api, base } = await env.extra({ now: () => frozen });
      try {
        const a = await call(base, `/v1/tokens/solana/${hot.address}`, { key: env.key });
        const b = await call(base, `/v1/tokens/solana/${hot.address}`, { key: env.key });
        const ra = Number(a.headers.get('x-ratelimit-remaining'));
        const rb = Number(b.headers.get('x-ratelimit-remaining'));
        assert.equal(ra, 11_999);
        assert.equal(rb, 11_998);
        assert.equal(a.headers.get('x-credits-cost'), null);
        assert.equal(a.headers.get('x-credits-remaining'), null);
      } finally {
        await api.stop();
      }
    });
    it('reports the key budget of the default API on every /v1 response', async () => {
      const a = await call(env.base, `/v1/tokens/solana/${hot.address}`, { key: env.key });
      const ra = Number(a.headers.get('x-ratelimit-remaining'));
      assert.ok(Number.isInteger(ra) && ra < 12_000 && ra > 11_000);
      assert.equal(a.headers.get('x-credits-cost'), null);
      assert.equal(a.headers.get('x-credits-remaining'), null);
    });
  });

  describe('authentication', () => {
    const expectUnauthorized = (r: Awaited<ReturnType<typeof call>>) => {
      assert.equal(r.status, 401);
      assert.equal(r.body.error.code, 'UNAUTHORIZED');
      // The IP budget (60,000/min) is reported, not a key budget (12,000/min).
      assert.ok(Number(r.headers.get('x-ratelimit-remaining')) > 12_000);
    };
    const p = () => `/v1/tokens/solana/${hot.address}`;

    it('refuses a missing, malformed or unknown key', async () => {
      expectUnauthorized(await call(env.base, p()));
      expectUnauthorized(
        await call(env.base, p(), { headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } }),
      );
      expectUnauthorized(await call(env.base, p(), { headers: { authorization: 'Bearer' } }));
      expectUnauthorized(await call(env.base, p(), { headers: { authorization: `Bearer  ${env.key}` } }));
      expectUnauthorized(await call(env.base, p(), { headers: { authorization: env.key } }));
      expectUnauthorized(await call(env.base, p(), { headers: { 'x-api-key': env.key } }));
      expectUnauthorized(await call(env.base, p(), { key: 'spot_unknownunknownunknownunknown12' }));
    });

    it('refuses an expired key and a revoked one, also when revoked by another process', async () => {
      const expired = env.keys.create({ expiresAt: Date.now() - 1000 });
      expectUnauthorized(await call(env.base, p(), { key: expired.key }));
      const soon = env.keys.create({ expiresAt: Date.now() + 60_000 });
      assert.equal((await call(env.base, p(), { key: soon.key })).status, 200);

      const revoked = env.keys.create();
      assert.equal((await call(env.base, p(), { key: revoked.key })).status, 200);
      assert.equal(env.keys.revoke(revoked.record.id), true);
      expectUnauthorized(await call(env.base, p(), { key: revoked.key }));

      // `spot keys revoke` from another process: another connection to the same file.
      const other = env.keys.create();
      assert.equal((await call(env.base, p(), { key: other.key })).status, 200);
      const cli = createKeyStore(env.ctx, { path: path.join(env.dir, 'keys.sqlite') });
      assert.equal(cli.revoke(other.record.id), true);
      cli.close();
      await waitFor(
        async () => (await call(env.base, p(), { key: other.key })).status === 401,
        'revocation seen by the service',
        3000,
      );
    });

    it('registers SPOT_API_KEYS-style keys idempotently', async () => {
      const first = env.keys.register('my-configured-key-1');
      const again = env.keys.register('my-configured-key-1');
      assert.equal(first.id, again.id);
      assert.equal((await call(env.base, p(), { key: 'my-configured-key-1' })).status, 200);
    });

    it('answers 503 with the IP budget when the key cannot be checked', async () => {
      const broken = createKeyStore(env.ctx, { path: path.join(env.dir, 'keys-broken.sqlite') });
      const { key } = broken.create();
      broken.close();
      const { base } = await env.extra({ keys: broken });
      const r = await call(base, p(), { key });
      assert.equal(r.status, 503);
      assert.equal(r.body.error.code, 'SERVICE_UNAVAILABLE');
      assert.ok(Number(r.headers.get('x-ratelimit-remaining')) > 12_000);
    });

    it('serves /openapi.json without a key, budget or X-RateLimit-Remaining', async () => {
      const r = await call(env.base, '/openapi.json');
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('x-ratelimit-remaining'), null);
      assert.ok(r.headers.get('x-request-id'));
    });
  });

  describe('limits', () => {
    it('refuses past the key budget with 429, Retry-After >= 1 and 0 remaining', async () => {
      const { base } = await env.extra({ keyBudgetPerMinute: 3 });
      const { key } = env.keys.create();
      const remaining: number[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await call(base, `/v1/tokens/solana/${hot.address}`, { key });
        assert.equal(r.status, 200);
        remaining.push(Number(r.headers.get('x-ratelimit-remaining')));
      }
      assert.deepEqual(remaining, [2, 1, 0]);
      const r = await call(base, `/v1/tokens/solana/${hot.address}`, { key });
      assert.equal(r.status, 429);
      assert.equal(r.body.error.code, 'RATE_LIMITED');
      assert.equal(r.headers.get('x-ratelimit-remaining'), '0');
      const retry = r.headers.get('retry-after') ?? '';
      assert.match(retry, /^[1-9]\d*$/);
      assert.ok(Number(retry) <= 20);
      // Another key keeps its own budget.
      assert.equal((await call(base, `/v1/tokens/solana/${hot.address}`, { key: env.key })).status, 200);
    });

    it('refuses past the IP budget with 429 reporting the IP budget, also without a key', async () => {
      const { base } = await env.extra({ ipBudgetPerMinute: 2 });
      assert.equal((await call(base, `/v1/tokens/solana/${hot.address}`, { key: env.key })).status, 200);
      const unauth = await call(base, `/v1/tokens/solana/${hot.address}`);
      assert.equal(unauth.status, 401);
      assert.equal(unauth.headers.get('x-ratelimit-remaining'), '0');
      const r = await call(base, `/v1/tokens/solana/${hot.address}`, { key: env.key });
      assert.equal(r.status, 429);
      assert.equal(r.headers.get('x-ratelimit-remaining'), '0');
      assert.match(r.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      // /openapi.json spends no budget.
      assert.equal((await call(base, '/openapi.json')).status, 200);
    });

    it('refills the bucket evenly and allows a full minute at once', () => {
      const limiter = createRateLimiter({ perMinute: 60 });
      const t0 = 1_000_000;
      for (let i = 0; i < 60; i++) assert.equal(limiter.take('k', t0).allowed, true);
      const refused = limiter.take('k', t0);
      assert.equal(refused.allowed, false);
      assert.equal(refused.retryAfterSeconds, 1);
      assert.equal(limiter.take('k', t0 + 999).allowed, false);
      const later = limiter.take('k', t0 + 1000);
      assert.equal(later.allowed, true);
      assert.equal(limiter.remaining('k', t0 + 31_000), 30);
      assert.equal(limiter.remaining('k', t0 + 120_000), 60);
      limiter.stop();
    });
  });

  describe('credits on a metered key', () => {
    it('reports X-Credits-Cost and X-Credits-Remaining, zero cost on a non-2xx', async () => {
      const { key } = env.keys.create({ metered: true, credits: 3 });
      const ok = await call(env.base, `/v1/tokens/solana/${hot.address}`, { key });
      assert.equal(ok.status, 200);
      assert.equal(ok.headers.get('x-credits-cost'), '1');
      assert.equal(ok.headers.get('x-credits-remaining'), '2');
      const missing = await call(env.base, `/v1/tokens/solana/${solanaAddress()}`, { key });
      assert.equal(missing.status, 404);
      assert.equal(missing.headers.get('x-credits-cost'), '0');
      assert.equal(missing.headers.get('x-credits-remaining'), '2');
      const bad = await call(env.base, '/v1/discovery', { key, method: 'POST', body: '{' });
      assert.equal(bad.status, 400);
      assert.equal(bad.headers.get('x-credits-cost'), '0');
    });
  });

  describe('store outage', () => {
    it('answers 503 SERVICE_UNAVAILABLE when the store is unreachable', async () => {
      // Nothing listens on port 9: the client the service builds classifies the refusal as an outage.
      const unreachableCtx = { ...env.ctx, config: { ...env.ctx.config, clickhouseUrl: 'http://127.0.0.1:9' } };
      const unreachable = createStore(unreachableCtx, createClickHouseClient(unreachableCtx));
      const { base } = await env.extra({ store: unreachable });
      const r = await call(base, `/v1/tokens/bsc/${cold.address}`, { key: env.key });
      assert.equal(r.status, 503);
      assert.equal(r.body.error.code, 'SERVICE_UNAVAILABLE');
      assert.ok(r.headers.get('x-ratelimit-remaining'));
      // Hot tokens are still served from memory.
      assert.equal((await call(base, `/v1/tokens/solana/${hot.address}`, { key: env.key })).status, 200);
      await unreachable.close();
    });
  });

  describe('keys CLI', () => {
    it('creates, lists and revokes keys in the data dir', async () => {
      const lines: string[] = [];
      const out = { write: (t: string) => lines.push(t) };
      const errors = { write: (_t: string) => true };
      assert.equal(await keysCommand(env.ctx, ['create', '--label', 'cli', '--expires-in', '30d'], out, errors), 0);
      const key = lines.join('').trim();
      assert.match(key, /^spot_[0-9A-Za-z]{32}$/);
      assert.equal((await call(env.base, `/v1/tokens/solana/${hot.address}`, { key })).status, 200);
      lines.length = 0;
      assert.equal(await keysCommand(env.ctx, ['list'], out, errors), 0);
      const row = lines
        .join('')
        .split('\n')
        .find((l) => l.includes('\tcli\t'));
      assert.ok(row);
      assert.ok(!lines.join('').includes(key), 'list never prints a key');
      const id = row.split('\t')[0]!;
      assert.equal(await keysCommand(env.ctx, ['revoke', id], out, errors), 0);
      assert.equal(await keysCommand(env.ctx, ['revoke', id], out, errors), 1);
      assert.equal(await keysCommand(env.ctx, ['create', '--expires-in', 'soon'], out, errors), 2);
      await waitFor(
        async () => (await call(env.base, `/v1/tokens/solana/${hot.address}`, { key })).status === 401,
        'CLI revocation',
        3000,
      );
    });
  });

  describe('stop', () => {
    it('cuts a connection whose request is still in flight once the grace period is over', async () => {
      const { api, base } = await env.extra({ stopGraceMs: 200 });
      const socket = net.connect(Number(new URL(base).port), '127.0.0.1');
      await once(socket, 'connect');
      const closedByServer = once(socket, 'close');
      // A body announced and never finished: the request stays in flight, as with a client that stalls.
      socket.write(
        `POST /v1/discovery HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${env.key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"chains":`,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      const from = performance.now();
      await api.stop();
      const ms = performance.now() - from;
      assert.ok(ms >= 150 && ms < 2000, `stopped after ${ms} ms`);
      await closedByServer;
    });
  });

  describe('/openapi.json', () => {
    it('is a valid OpenAPI 3.1 document, version 1.0.0, naming every path and error code', async () => {
      const r = await call(env.base, '/openapi.json');
      const doc = r.body;
      assert.equal(doc.openapi, '3.1.0');
      assert.equal(doc.info.version, '1.0.0');
      const result = await new Validator().validate(doc);
      assert.equal(result.valid, true, JSON.stringify(result.errors));
      for (const p of [
        '/v1/tokens/{chain}/{address}',
        '/v1/tokens/{chain}/{address}/ohlcv',
        '/v1/tokens/{chain}/{address}/trades',
        '/v1/trades',
        '/v1/discovery',
        '/v1/stream',
        '/openapi.json',
      ]) {
        assert.ok(doc.paths[p], p);
      }
      const text = JSON.stringify(doc);
      for (const code of [
        'VALIDATION_ERROR',
        'UNSUPPORTED_CHAIN',
        'UNAUTHORIZED',
        'NOT_FOUND',
        'RATE_LIMITED',
        'INTERNAL_ERROR',
        'SERVICE_UNAVAILABLE',
      ]) {
        assert.ok(text.includes(code), code);
      }
      for (const header of [
        'X-RateLimit-Remaining',
        'X-Request-ID',
        'Retry-After',
        'X-Credits-Cost',
        'X-Credits-Remaining',
      ])
        assert.ok(text.includes(`"${header}"`), header);
      // Every $ref resolves.
      for (const [, target] of text.matchAll(/"\$ref":"#\/([^"]+)"/g)) {
        let node: any = doc;
        for (const part of target!.split('/')) node = node?.[part];
        assert.ok(node, target);
      }
      const ohlcv = doc.paths['/v1/tokens/{chain}/{address}/ohlcv'].get.parameters;
      assert.equal(ohlcv.find((x: any) => x.name === 'countBack').schema.maximum, 5000);
      assert.equal(ohlcv.find((x: any) => x.name === 'timeframe').schema.default, '1m');
    });
  });
});
