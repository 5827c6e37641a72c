// The stream edge fed by a real embedded event log: messages produced to spot.trades.v1,
// spot.candles.v1 and spot.tokens.v1 reach the matching subscriptions, from the topics' end.
import assert from 'node:assert/strict';
import path from 'node:path';
import { createEmbeddedLog } from '../core/eventlog/embedded.ts';
import type { EventLog } from '../core/eventlog/types.ts';
import { TOPICS } from '../core/topics.ts';
import { createStreamEdge, type StreamEdge } from '../stream-edge/server.ts';
import {
  BASE_TOKEN,
  type StreamClient,
  candleMessage,
  connect,
  createEnv,
  tokenObject,
  tradeMessage,
  type Env,
} from './helpers/stream-edge.ts';

describe('stream edge: fed by the embedded event log', () => {
  let env: Env;
  let log: EventLog;
  let edge: StreamEdge;
  let port: number;
  let client: StreamClient;
  const produce = (topic: string, value: unknown, key = `base:${BASE_TOKEN}`) =>
    log.produce(topic, [{ key, value: typeof value === 'string' ? value : JSON.stringify(value) }]);

  before(async () => {
    env = createEnv();
    log = createEmbeddedLog(env.ctx, { path: path.join(env.dir, 'log', 'events.sqlite') });
    await log.ensureTopics([TOPICS.trades, TOPICS.candles, TOPICS.tokens]);
    // Produced before the edge starts: a live stream starts at the end and never sends it.
    await produce(TOPICS.trades.name, tradeMessage({ amount: '111' }));
    edge = createStreamEdge(env.ctx, { log, keys: env.keys });
    ({ port } = await edge.start());
    client = await connect(port, env.key);
  });
  after(async () => {
    client.close();
    await edge.stop();
    await log.close();
    env.cleanup();
  });

  it('routes produced trades, candles and tokens to their subscriptions in log order', async () => {
    const trades = (await client.subscribe('spot.trades', { chain: 'base', token: BASE_TOKEN })).subscriptionId;
    const candles = (await client.subscribe('spot.candles', { chain: 'base', token: BASE_TOKEN, metric: 'price' }))
      .subscriptionId;
    const tokens = (await client.subscribe('spot.tokens', { chain: 'base', addresses: [BASE_TOKEN] })).subscriptionId;
    const produced = [
      tradeMessage({ amount: '201' }),
      tradeMessage({ amount: '202' }),
      tradeMessage({ amount: '203' }),
    ];
    for (const m of produced) await produce(TOPICS.trades.name, m);
    const candle = candleMessage('base', BASE_TOKEN, 1_760_000_100_000, 5);
    await produce(TOPICS.candles.name, candle);
    const token = tokenObject(BASE_TOKEN, 1_760_000_100_001);
    await produce(TOPICS.tokens.name, token);
    await client.until(
      () =>
        client.updates(trades).length === 3 &&
        client.updates(candles).length === 1 &&
        client.updates(tokens).length === 1,
      'updates from the log',
    );
    assert.deepEqual(
      client.updates(trades).map((u) => [u.seq, u.data.amount]),
      [
        [1, '201'],
        [2, '202'],
        [3, '203'],
      ],
    );
    // the trade produced before start() was never routed: the feed starts at the topics' end
    assert.equal(edge.stats().messagesRouted, 5);
    assert.ok(client.updates(trades).every((u) => !('flags' in u.data)));
    assert.deepEqual(client.updates(candles)[0]!.data, candle.open['1m']!.price.usd);
    assert.deepEqual(client.updates(tokens)[0]!.data, token);
  });

  it('skips a message that breaks its topic contract and keeps routing', async () => {
    const trades = (await client.subscribe('spot.trades', { chain: 'base', wallet: tradeMessage().trade.trader }))
      .subscriptionId;
    const invalidBefore = edge.stats().messagesInvalid;
    await produce(TOPICS.trades.name, '{"trade": {"id": 1}}');
    await produce(TOPICS.trades.name, 'not json');
    const good = tradeMessage({ amount: '301' });
    await produce(TOPICS.trades.name, good);
    await client.until(() => client.updates(trades).length === 1, 'the valid trade');
    assert.deepEqual(client.updates(trades)[0]!.data, good.trade);
    assert.equal(edge.stats().messagesInvalid, invalidBefore + 2);
  });

  it('reads a candle or token message only when a subscription follows its token (by the message key)', async () => {
    const invalidBefore = edge.stats().messagesInvalid;
    const unfollowed = `base:0x${'c'.repeat(40)}`;
    await produce(TOPICS.candles.name, 'not json', unfollowed);
    await produce(TOPICS.tokens.name, 'not json', unfollowed);
    // Followed (the first test's subscriptions): read, found invalid. Routed in log order, so the
    // unfollowed ones were passed over before these.
    await produce(TOPICS.candles.name, 'not json');
    await produce(TOPICS.tokens.name, 'not json');
    await client.until(() => edge.stats().messagesInvalid >= invalidBefore + 2, 'the followed messages');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(edge.stats().messagesInvalid, invalidBefore + 2);
  });
});
