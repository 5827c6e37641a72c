// The typed client (client/index.ts) against a real edge: backoff with full jitter, Retry-After of
// a refused handshake honoured, subscriptions restored after the server closes the socket, a
// refusal reported once and not restored, REST errors as SpotApiError with the envelope's code.
import assert from 'node:assert/strict';
import {
  SpotApiError,
  backoffDelay,
  createRestClient,
  createStreamClient,
  type StreamClient,
  type StreamEvent,
} from '../client/index.ts';
import { TOPICS } from '../core/topics.ts';
import { createStreamEdge, type StreamEdge } from '../stream-edge/server.ts';
import { BASE_TOKEN, connect, createEnv, createRelay, sleep, tradeMessage, type Env } from './helpers/stream-edge.ts';

describe('client: reconnect, backoff, Retry-After, restore, errors', function () {
  this.timeout(30_000);
  let env: Env;
  let edge: StreamEdge;
  let port: number;
  const clients: StreamClient[] = [];

  before(async () => {
    env = createEnv();
    edge = createStreamEdge(env.ctx, { log: null, keys: env.keys, maxConnectionsPerKey: 1 });
    ({ port } = await edge.start());
  });
  after(async () => {
    for (const c of clients) c.close();
    await edge.stop();
    env.cleanup();
  });

  const waitFor = async (predicate: () => boolean, what: string, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(10);
    }
  };

  it('backoff: full jitter under a ceiling that doubles per attempt up to the maximum', () => {
    assert.equal(
      backoffDelay(0, 250, 30_000, () => 0),
      0,
    );
    assert.equal(
      backoffDelay(0, 250, 30_000, () => 0.999_999),
      249,
    );
    assert.equal(
      backoffDelay(3, 250, 30_000, () => 0.5),
      1000,
    );
    assert.equal(
      backoffDelay(20, 250, 30_000, () => 0.999_999),
      29_999,
    );
    const spread = new Set(Array.from({ length: 50 }, () => backoffDelay(4, 250, 30_000, Math.random)));
    assert.ok(spread.size > 10, 'jitter spreads the retries');
  });

  it('honours Retry-After of a refused handshake, then connects and restores the subscription', async () => {
    const holder = await connect(port, env.key); // the key's only connection slot
    const events: StreamEvent[] = [];
    const client = createStreamClient({
      url: `ws://127.0.0.1:${port}/v1/stream`,
      apiKey: env.key,
      minBackoffMs: 10,
      maxBackoffMs: 20,
      onEvent: (e) => events.push(e),
    });
    clients.push(client);
    const received: string[] = [];
    const sub = client.subscribe(
      'spot.trades',
      { chain: 'base', token: BASE_TOKEN },
      { onUpdate: (trade) => received.push(trade.id) },
    );
    await waitFor(() => events.some((e) => e.type === 'refused'), 'the refusal');
    const refused = events.find((e) => e.type === 'refused') as Extract<StreamEvent, { type: 'refused' }>;
    assert.equal(refused.status, 429);
    assert.equal(refused.retryAfterSeconds, 1);
    await waitFor(() => events.some((e) => e.type === 'reconnecting'), 'the retry');
    const retry = events.find((e) => e.type === 'reconnecting') as Extract<StreamEvent, { type: 'reconnecting' }>;
    assert.ok(retry.delayMs >= 1000, `waited ${retry.delayMs} ms, not the 10-20 ms backoff`);
    holder.close();
    await sub.ready;
    const message = tradeMessage();
    edge.route(TOPICS.trades.name, message);
    await waitFor(() => received.length === 1, 'the update');
    assert.deepEqual(received, [message.trade.id]);
    client.close();
    await waitFor(() => edge.stats().connections === 0, 'the close');
  });

  it('restores subscriptions after the connection is lost, and keeps handing updates to the same handler', async () => {
    const relay = createRelay(() => port);
    const relayPort = await relay.listen();
    const events: StreamEvent[] = [];
    const client = createStreamClient({
      url: `ws://127.0.0.1:${relayPort}/v1/stream`,
      apiKey: env.key,
      minBackoffMs: 10,
      maxBackoffMs: 50,
      onEvent: (e) => events.push(e),
    });
    clients.push(client);
    const received: string[] = [];
    const sub = client.subscribe(
      'spot.trades',
      { chain: 'base', token: BASE_TOKEN },
      { onUpdate: (trade) => received.push(trade.id) },
    );
    await sub.ready;
    const first = sub.subscriptionId;
    relay.cut(); // the connection dies without a close frame
    await waitFor(() => sub.subscriptionId !== first && edge.stats().subscriptions === 1, 'the restored subscription');
    assert.ok(events.some((e) => e.type === 'close' && e.code === 1006));
    assert.equal(events.filter((e) => e.type === 'open').length, 2);
    const message = tradeMessage();
    edge.route(TOPICS.trades.name, message);
    await waitFor(() => received.length === 1, 'the update after the restore');
    assert.deepEqual(received, [message.trade.id]);
    client.close();
    await relay.close();
    await waitFor(() => edge.stats().connections === 0, 'the close');
  });

  it('reports a refused subscription once (onError, ready rejects) and does not restore it', async () => {
    const client = createStreamClient({ url: `ws://127.0.0.1:${port}/v1/stream`, apiKey: env.key });
    clients.push(client);
    const errors: string[] = [];
    const sub = client.subscribe(
      'spot.candles',
      { chain: 'base', token: 'nope' },
      {
        onUpdate: () => assert.fail('no update'),
        onError: (e) => errors.push(e.code),
      },
    );
    await assert.rejects(sub.ready, /VALIDATION_ERROR/);
    assert.deepEqual(errors, ['VALIDATION_ERROR']);
    client.close();
  });

  it('REST: an error comes back as SpotApiError with the envelope code and status', async () => {
    const rest = createRestClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: env.key });
    // The stream port answers any other path with the JSON envelope (404 NOT_FOUND).
    await assert.rejects(rest.token('base', BASE_TOKEN), (error: unknown) => {
      assert.ok(error instanceof SpotApiError);
      assert.equal(error.status, 404);
      assert.equal(error.code, 'NOT_FOUND');
      return true;
    });
  });
});
