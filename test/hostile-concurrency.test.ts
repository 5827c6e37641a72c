// Limits under concurrency (issue 14): 1,000 clients at once against the key budget, the IP
// budget and the 100-connection limit of the stream; each limit is met exactly, never over- or
// under-counted. The clock is frozen for REST so the budgets do not refill mid-burst.
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { loadConfig } from '../core/config.ts';
import { createContext } from '../core/context.ts';
import { createLogger } from '../core/logger.ts';
import { DEFAULT_MAX_CONNECTIONS_PER_KEY, createStreamEdge, type StreamEdge } from '../stream-edge/server.ts';
import { startEnv, type ApiEnv } from './query-api-env.ts';

const CLIENTS = 1000;
const DISCOVERY = JSON.stringify({ chains: ['solana'], newPairs: {} });

describe('hostile input: limits under 1,000 concurrent clients', function () {
  this.timeout(120_000);
  let env: ApiEnv;
  before(async () => {
    env = await startEnv();
  });
  after(async () => {
    await env?.close();
  });

  const burst = (base: string) =>
    Promise.all(
      Array.from({ length: CLIENTS }, () =>
        fetch(`${base}/v1/discovery`, {
          method: 'POST',
          headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' },
          body: DISCOVERY,
        }).then(async (r) => ({
          status: r.status,
          remaining: Number(r.headers.get('x-ratelimit-remaining')),
          retryAfter: r.headers.get('retry-after'),
          body: await r.text(),
        })),
      ),
    );

  it('spends the key budget exactly: 250 served, 750 refused, each remaining count once', async () => {
    const frozen = Date.now();
    const { base } = await env.extra({ keyBudgetPerMinute: 250, ipBudgetPerMinute: 1_000_000, now: () => frozen });
    const replies = await burst(base);
    const served = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 429);
    assert.equal(served.length, 250);
    assert.equal(refused.length, CLIENTS - 250);
    assert.deepEqual(
      served.map((r) => r.remaining).sort((a, b) => a - b),
      Array.from({ length: 250 }, (_, i) => i),
    );
    for (const r of refused) {
      assert.equal(r.remaining, 0);
      assert.ok(Number(r.retryAfter) >= 1);
      assert.equal(JSON.parse(r.body).error.code, 'RATE_LIMITED');
    }
  });

  it('spends the IP budget exactly: 300 answered, 700 refused', async () => {
    const frozen = Date.now();
    const { base } = await env.extra({ keyBudgetPerMinute: 1_000_000, ipBudgetPerMinute: 300, now: () => frozen });
    const replies = await burst(base);
    assert.equal(replies.filter((r) => r.status === 200).length, 300);
    const refused = replies.filter((r) => r.status === 429);
    assert.equal(refused.length, CLIENTS - 300);
    for (const r of refused) assert.equal(r.remaining, 0);
  });

  describe('stream connections', () => {
    let edge: StreamEdge;
    let port: number;
    const sockets: WebSocket[] = [];
    before(async () => {
      const ctx = createContext(
        loadConfig({ SPOT_DATA_DIR: env.dir, SPOT_LOG_LEVEL: 'silent', SPOT_WS_PORT: '0' }),
        createLogger('silent'),
      );
      edge = createStreamEdge(ctx, { log: null, keys: env.keys });
      port = (await edge.start()).port;
    });
    after(async () => {
      for (const ws of sockets) ws.terminate();
      await edge?.stop();
    });

    const open = (count: number) =>
      Promise.all(
        Array.from(
          { length: count },
          () =>
            new Promise<{ ws: WebSocket | null; status: number; code?: string }>((resolve) => {
              const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/stream`, {
                headers: { authorization: `Bearer ${env.key}` },
              });
              ws.on('open', () => {
                sockets.push(ws);
                resolve({ ws, status: 101 });
              });
              ws.on('unexpected-response', (_req, res) => {
                let text = '';
                res.on('data', (chunk: Buffer) => (text += chunk));
                res.on('end', () =>
                  resolve({ ws: null, status: res.statusCode ?? 0, code: JSON.parse(text).error.code }),
                );
              });
              ws.on('error', () => {});
            }),
        ),
      );
    const waitUntil = async (condition: () => boolean) => {
      for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
      assert.ok(condition());
    };

    it(`opens exactly ${DEFAULT_MAX_CONNECTIONS_PER_KEY} of ${CLIENTS} concurrent handshakes, then one per closed socket`, async () => {
      const results = await open(CLIENTS);
      const opened = results.filter((r) => r.status === 101);
      const refused = results.filter((r) => r.status === 429);
      assert.equal(opened.length, DEFAULT_MAX_CONNECTIONS_PER_KEY);
      assert.equal(refused.length, CLIENTS - DEFAULT_MAX_CONNECTIONS_PER_KEY);
      for (const r of refused) assert.equal(r.code, 'RATE_LIMITED');
      assert.equal(edge.stats().connections, DEFAULT_MAX_CONNECTIONS_PER_KEY);

      for (const { ws } of opened.slice(0, 10)) ws!.close();
      await waitUntil(() => edge.stats().connections === DEFAULT_MAX_CONNECTIONS_PER_KEY - 10);
      const again = await open(50);
      assert.equal(again.filter((r) => r.status === 101).length, 10);
      assert.equal(again.filter((r) => r.status === 429).length, 40);
      assert.equal(edge.stats().connections, DEFAULT_MAX_CONNECTIONS_PER_KEY);
    });
  });
});
