// The stream edge fed by Kafka (librdkafka's mock cluster via kcat): the same routing as the
// embedded log, through a consumer group of its own that starts at the topics' end.
import assert from 'node:assert/strict';
import { createKafkaLog } from '../core/eventlog/kafka.ts';
import type { EventLog } from '../core/eventlog/types.ts';
import { TOPICS } from '../core/topics.ts';
import { createStreamEdge, type StreamEdge } from '../stream-edge/server.ts';
import { requireKcat, startKafkaMock, type KafkaMock } from './helpers/kafka-mock.ts';
import {
  BASE_TOKEN,
  BASE_WALLET,
  type StreamClient,
  candleMessage,
  connect,
  createEnv,
  sleep,
  tradeMessage,
  type Env,
} from './helpers/stream-edge.ts';

if (requireKcat('stream edge over Kafka')) {
  describe('stream edge: fed by Kafka', function () {
    this.timeout(60_000);
    let env: Env;
    let mock: KafkaMock;
    let log: EventLog;
    let edge: StreamEdge;
    let client: StreamClient;

    before(async () => {
      env = createEnv();
      mock = await startKafkaMock();
      log = createKafkaLog(env.ctx, { brokers: mock.brokers, sessionTimeoutMs: 10_000 });
      // Topics exist (auto-created) and hold a message from before the edge started.
      await log.produce(TOPICS.trades.name, [
        { key: `base:${BASE_TOKEN}`, value: JSON.stringify(tradeMessage({ amount: '100' })) },
      ]);
      edge = createStreamEdge(env.ctx, { log, keys: env.keys });
      const { port } = await edge.start();
      client = await connect(port, env.key);
    });
    after(async () => {
      client?.close();
      await edge?.stop();
      await log?.close();
      // kafka-mock's stop() can wait forever for an exit event it no longer listens to; it has
      // sent SIGTERM (and SIGKILL after 3 s) by then, so do not wait longer than that.
      await Promise.race([mock?.stop(), sleep(4000)]);
      env.cleanup();
    });

    it('routes trades and candles produced after start, in order, and nothing from before', async () => {
      const byToken = (await client.subscribe('spot.trades', { chain: 'base', token: BASE_TOKEN })).subscriptionId;
      const byWallet = (await client.subscribe('spot.trades', { chain: 'base', wallet: BASE_WALLET })).subscriptionId;
      const candles = (await client.subscribe('spot.candles', { chain: 'base', token: BASE_TOKEN })).subscriptionId;
      const key = `base:${BASE_TOKEN}`;
      const trades = [tradeMessage({ amount: '201' }), tradeMessage({ amount: '202' })];
      await log.produce(
        TOPICS.trades.name,
        trades.map((t) => ({ key, value: JSON.stringify(t) })),
      );
      const candle = candleMessage('base', BASE_TOKEN, 1_760_000_200_000, 4);
      await log.produce(TOPICS.candles.name, [{ key, value: JSON.stringify(candle) }]);
      await client.until(
        () =>
          client.updates(byToken).length === 2 &&
          client.updates(byWallet).length === 2 &&
          client.updates(candles).length === 1,
        'updates from Kafka',
        45_000,
      );
      assert.deepEqual(
        client.updates(byToken).map((u) => [u.seq, u.data.amount]),
        [
          [1, '201'],
          [2, '202'],
        ],
      );
      assert.deepEqual(
        client.updates(byWallet).map((u) => u.data),
        trades.map((t) => t.trade),
      );
      assert.deepEqual(client.updates(candles)[0]!.data, candle.open['1m']!.marketCap.usd);
      assert.equal(edge.stats().messagesRouted, 3);
    });
  });
}
