// Stream edge limits over real sockets: the handshake (key, connections per key, plain-text
// refusals) and backpressure (a reader that stops reading is closed with 4008 while another
// reader keeps receiving every update in order).
import assert from 'node:assert/strict';
import net from 'node:net';
import { BACKPRESSURE_CLOSE_CODE, DEFAULT_MAX_UNSENT_FRAMES } from '../stream-edge/backpressure.ts';
import { DEFAULT_MAX_CONNECTIONS_PER_KEY, createStreamEdge, type StreamEdge } from '../stream-edge/server.ts';
import {
  BASE_TOKEN,
  type StreamClient,
  connect,
  createEnv,
  refusalOf,
  sleep,
  tradeMessage,
  type Env,
} from './helpers/stream-edge.ts';

type PausableSocket = { pause(): void; resume(): void };
const socketOf = (client: StreamClient) => (client.ws as unknown as { _socket: PausableSocket })._socket;

describe('stream edge: handshake and limits', () => {
  let env: Env;
  const edges: StreamEdge[] = [];
  const clients: StreamClient[] = [];

  before(() => {
    env = createEnv();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    for (const e of edges.splice(0)) await e.stop();
  });
  after(() => env.cleanup());

  const startEdge = async (options: { maxConnectionsPerKey?: number; maxUnsentFrames?: number } = {}) => {
    const edge = createStreamEdge(env.ctx, { log: null, keys: env.keys, ...options });
    edges.push(edge);
    const { port } = await edge.start();
    return { edge, port };
  };
  const open = async (port: number, key = env.key) => {
    const client = await connect(port, key);
    clients.push(client);
    return client;
  };
  const waitFor = async (condition: () => boolean, what: string) => {
    const deadline = Date.now() + 10_000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(5);
    }
  };

  it('refuses the upgrade with 401 UNAUTHORIZED for a missing, malformed, unknown, revoked or expired key', async () => {
    const { port } = await startEdge();
    const revoked = env.keys.create({ label: 'revoked' });
    env.keys.revoke(revoked.record.id);
    const expired = env.keys.create({ label: 'expired', expiresAt: Date.now() - 1000 });
    const cases: Array<[string, Record<string, string>]> = [
      ['missing', {}],
      ['malformed', { Authorization: `Token ${env.key}` }],
      ['not bearer-spaced', { Authorization: `Bearer  ${env.key}` }],
      ['unknown', { Authorization: 'Bearer spot_unknownunknownunknownunknown1234' }],
      ['revoked', { Authorization: `Bearer ${revoked.key}` }],
      ['expired', { Authorization: `Bearer ${expired.key}` }],
    ];
    for (const [what, headers] of cases) {
      const refusal = await refusalOf(connect(port, null, headers));
      assert.equal(refusal.status, 401, what);
      assert.match(String(refusal.headers['content-type']), /application\/json/);
      assert.equal(JSON.parse(refusal.body).error.code, 'UNAUTHORIZED', what);
      assert.ok(refusal.headers['x-request-id'], what);
      assert.ok(refusal.headers['x-ratelimit-remaining'] !== undefined, what);
    }
    const accepted = await open(port);
    assert.equal(accepted.ws.readyState, 1);
  });

  it('answers requests without upgrade headers with plain text, and other paths with 404', async () => {
    const { port } = await startEdge();
    const plain = await fetch(`http://127.0.0.1:${port}/v1/stream`, {
      headers: { Authorization: `Bearer ${env.key}` },
    });
    assert.equal(plain.status, 426);
    assert.match(plain.headers.get('content-type') ?? '', /^text\/plain/);
    assert.equal(plain.headers.get('upgrade'), 'websocket');
    assert.ok((await plain.text()).length > 0);
    const noKey = await fetch(`http://127.0.0.1:${port}/v1/stream`);
    assert.equal(noKey.status, 426);
    const noSecKey = net.connect(port, '127.0.0.1');
    noSecKey.write(
      `GET /v1/stream HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nAuthorization: Bearer ${env.key}\r\n\r\n`,
    );
    const head = await new Promise<string>((resolve) => noSecKey.once('data', (chunk) => resolve(chunk.toString())));
    noSecKey.destroy();
    assert.match(head, /^HTTP\/1\.1 4\d\d /);
    assert.match(head, /content-type: text\/plain/i);
    const post = await fetch(`http://127.0.0.1:${port}/v1/stream`, { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(await post.text(), '');
    const elsewhere = await fetch(`http://127.0.0.1:${port}/v1/tokens`);
    assert.equal(elsewhere.status, 404);
    assert.equal(((await elsewhere.json()) as { error: { code: string } }).error.code, 'NOT_FOUND');
  });

  it('refuses the handshake beyond maxConnectionsPerKey with 429 and Retry-After, counting until close', async () => {
    const { port } = await startEdge({ maxConnectionsPerKey: 3 });
    const held = [await open(port), await open(port), await open(port)];
    const refusal = await refusalOf(connect(port, env.key));
    assert.equal(refusal.status, 429);
    assert.equal(JSON.parse(refusal.body).error.code, 'RATE_LIMITED');
    assert.ok(Number(refusal.headers['retry-after']) >= 1);
    assert.match(String(refusal.headers['retry-after']), /^\d+$/);
    // another key has its own count
    const other = env.keys.create({ label: 'other' });
    await open(port, other.key);
    // a closed connection frees its slot
    held[0]!.ws.close();
    await held[0]!.waitClosed();
    let reopened: StreamClient | null = null;
    const deadline = Date.now() + 10_000;
    while (!reopened) {
      try {
        reopened = await open(port);
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await sleep(10);
      }
    }
    assert.equal(reopened.ws.readyState, 1);
    assert.equal((await refusalOf(connect(port, env.key))).status, 429);
  });

  it('allows 100 open connections per key by default and refuses the 101st', async () => {
    assert.equal(DEFAULT_MAX_CONNECTIONS_PER_KEY, 100);
    const { edge, port } = await startEdge();
    const opened = await Promise.all(Array.from({ length: 100 }, () => open(port)));
    assert.equal(opened.length, 100);
    assert.equal(edge.stats().connections, 100);
    const refusal = await refusalOf(connect(port, env.key));
    assert.equal(refusal.status, 429);
    assert.equal(JSON.parse(refusal.body).error.code, 'RATE_LIMITED');
  });

  it('closes a reader that stops reading with 4008 while another reader receives every update in order', async () => {
    const maxUnsentFrames = 32;
    const { edge, port } = await startEdge({ maxUnsentFrames });
    const slow = await open(port);
    const fast = await open(port);
    const slowSub = (await slow.subscribe('spot.trades', { chain: 'base', token: BASE_TOKEN })).subscriptionId;
    const fastSub = (await fast.subscribe('spot.trades', { chain: 'base', token: BASE_TOKEN })).subscriptionId;
    socketOf(slow).pause();
    const bigName = 'x'.repeat(32 * 1024); // fills the socket buffers in a few hundred frames
    let routed = 0;
    const amounts: string[] = [];
    const routeSome = (n: number) => {
      for (let i = 0; i < n; i++) {
        const message = tradeMessage({}, [], { name: bigName });
        amounts.push(message.trade.amount);
        edge.route('spot.trades.v1', message);
        routed++;
      }
    };
    while (edge.stats().backpressureCloses === 0) {
      if (routed > 20_000) throw new Error('the paused reader was never closed');
      routeSome(8);
      await sleep(1); // the fast client (same process) reads between bursts
    }
    routeSome(20); // after the close the fast reader keeps receiving
    await fast.until(() => fast.updates(fastSub).length === routed, `all ${routed} updates on the fast reader`, 30_000);
    const updates = fast.updates(fastSub);
    assert.deepEqual(
      updates.map((u) => u.seq),
      Array.from({ length: routed }, (_, i) => i + 1),
    );
    assert.deepEqual(
      updates.map((u) => u.data.amount),
      amounts,
    );
    assert.equal(fast.closed, null);

    socketOf(slow).resume();
    const closed = await slow.waitClosed();
    assert.equal(closed.code, BACKPRESSURE_CLOSE_CODE);
    const slowSeqs = slow.updates(slowSub).map((u) => u.seq);
    assert.deepEqual(
      slowSeqs,
      Array.from({ length: slowSeqs.length }, (_, i) => i + 1),
    );
    assert.ok(slowSeqs.length < routed);
    assert.equal(edge.stats().backpressureCloses, 1);
  });

  it('pings a peer that never answers, then closes it as dead', async () => {
    const edge = createStreamEdge(env.ctx, { log: null, keys: env.keys, pingIntervalMs: 1000 });
    edges.push(edge);
    const { port } = await edge.start();
    const socket = rawUpgrade(port, env.key);
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    assert.match(received, /^HTTP\/1\.1 101/);
    assert.ok(received.includes('\x89\x00'), 'a ping frame was sent');
    assert.equal(edge.stats().connections, 0);
  });

  it('holds at most 1,024 unsent frames by default before closing with 4008', async () => {
    assert.equal(DEFAULT_MAX_UNSENT_FRAMES, 1024);
    const { edge, port } = await startEdge();
    // A raw TCP client that completes the handshake, subscribes, then never reads again.
    const socket = rawUpgrade(port, env.key);
    const head = await new Promise<string>((resolve) => socket.once('data', (chunk) => resolve(chunk.toString())));
    assert.match(head, /^HTTP\/1\.1 101/);
    socket.write(
      maskedTextFrame(
        JSON.stringify({ action: 'subscribe', channel: 'spot.trades', filters: { chain: 'base', token: BASE_TOKEN } }),
      ),
    );
    await waitFor(() => edge.stats().subscriptions === 1, 'the subscription');
    socket.pause();
    const bigName = 'y'.repeat(32 * 1024);
    let peak = 0;
    let routed = 0;
    while (edge.stats().backpressureCloses === 0) {
      if (routed > 20_000) throw new Error('the silent reader was never closed');
      peak = edge.stats().framesQueued;
      edge.route('spot.trades.v1', tradeMessage({}, [], { name: bigName }));
      routed++;
    }
    // the frame that met the limit was the 1,024th held; the one before left 1,023 waiting
    assert.equal(peak, DEFAULT_MAX_UNSENT_FRAMES - 1);
    assert.equal(edge.stats().framesQueued, 0);
    assert.equal(edge.stats().connections, 0);
    socket.destroy();
  });
});

/** A raw TCP client that sends a WebSocket upgrade request and then does only what a test says. */
function rawUpgrade(port: number, key: string): net.Socket {
  const socket = net.connect(port, '127.0.0.1');
  socket.write(
    'GET /v1/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${key}\r\n\r\n`,
  );
  return socket;
}

/** A client-to-server WebSocket text frame (clients must mask). */
function maskedTextFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = Buffer.from([1, 2, 3, 4]);
  const header =
    payload.length < 126
      ? Buffer.from([0x81, 0x80 | payload.length])
      : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
  return Buffer.concat([header, mask, masked]);
}
