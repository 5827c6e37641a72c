// Resume in distributed mode: two `spot edge` processes on librdkafka's mock Kafka cluster. A
// client (client/index.ts) follows the KOL feed through edge A; edge A is SIGKILLed mid-stream;
// the client reconnects to edge B with resumeFrom and receives exactly the trades it missed,
// each once, compared with spot.trades.v1 itself.
import assert from 'node:assert/strict';
import path from 'node:path';
import { createStreamClient, type StreamEvent } from '../client/index.ts';
import { createKafkaLog } from '../core/eventlog/kafka.ts';
import type { EventLog } from '../core/eventlog/types.ts';
import type { Trade } from '../core/schemas.ts';
import { TOPICS, type PricedTradeMessage } from '../core/topics.ts';
import { useDistributedSuite } from './helpers/distributed.ts';
import { requireKcat } from './helpers/kafka-mock.ts';
import { start, type Proc } from './helpers/processes.ts';
import { createRelay, evmAddress, sleep, tradeMessage } from './helpers/stream-edge.ts';

const SPOT = path.resolve('bin/spot.js');
const PASSWORD = 'stream-resume-writer';
const KEY = 'stream-resume-distributed-key-0001';

if (requireKcat('the distributed stream resume test')) {
  describe('stream resume in distributed mode: edge process SIGKILLed, client resumed on another replica', function () {
    this.timeout(180_000);
    const suite = useDistributedSuite('spot-stream-resume', PASSWORD);
    let kafka: EventLog | null = null;
    after(async () => {
      await kafka?.close();
    });

    const waitFor = async (predicate: () => boolean, what: string, timeoutMs = 60_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!predicate()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await sleep(20);
      }
    };

    it('the client gets every KOL trade once, across the kill, equal to the log', async () => {
      const { mock, roleEnv } = await suite.cluster();
      kafka = createKafkaLog(suite.ctx, { brokers: mock.brokers, clientId: 'stream-resume-test' });
      await kafka.ensureTopics([TOPICS.trades, TOPICS.candles, TOPICS.tokens]);
      const edgeProcess = async (name: string): Promise<{ proc: Proc; port: number }> => {
        const proc = start(name, [SPOT, 'edge'], { ...roleEnv(name), SPOT_WS_PORT: '0', SPOT_API_KEYS: KEY });
        const line = await proc.line((l) => l.msg === 'stream edge listening', 90_000);
        return { proc, port: line.port as number };
      };
      const a = await edgeProcess('edge-a');
      const b = await edgeProcess('edge-b');

      const tokens = Array.from({ length: 8 }, (_, i) => evmAddress(0xd000 + i));
      let n = 0;
      const produced: PricedTradeMessage[] = [];
      const produce = async (count: number) => {
        for (let i = 0; i < count; i++) {
          const token = tokens[n % tokens.length]!;
          const kol = n % 2 === 0;
          n++;
          const message = tradeMessage({ token, trader: evmAddress(kol ? 0xbeef : 0xcafe) }, kol ? ['kol'] : []);
          await kafka!.produce(TOPICS.trades.name, [{ key: `base:${token}`, value: JSON.stringify(message) }]);
          produced.push(message);
        }
      };

      let target = a.port;
      const relay = createRelay(() => target);
      const relayPort = await relay.listen();
      const events: StreamEvent[] = [];
      const client = createStreamClient({
        url: `ws://127.0.0.1:${relayPort}/v1/stream`,
        apiKey: KEY,
        minBackoffMs: 100,
        maxBackoffMs: 500,
        onEvent: (e) => events.push(e),
      });
      const received: Trade[] = [];
      const sub = client.subscribe('spot.trades', { identity: 'kol' }, { onUpdate: (t) => received.push(t) });
      try {
        await sub.ready;
        await produce(40);
        await waitFor(() => received.length >= 10, 'live trades through edge A');
        target = b.port;
        a.proc.child.kill('SIGKILL');
        await a.proc.exited;
        await produce(60); // missed while no edge serves the client
        await waitFor(() => events.filter((e) => e.type === 'open').length >= 2, 'the reconnect to edge B');
        await produce(20);

        const ids = new Set(produced.map((m) => m.trade.id));
        const expected = new Map<number, string[]>();
        const partitionOf = new Map<string, number>();
        await kafka.readToEnd(TOPICS.trades.name, (m) => {
          const message = JSON.parse(m.value) as PricedTradeMessage;
          partitionOf.set(message.trade.id, m.partition);
          if (!ids.has(message.trade.id) || !message.identities.includes('kol')) return;
          expected.set(m.partition, [...(expected.get(m.partition) ?? []), message.trade.id]);
        });
        const total = [...expected.values()].reduce((sum, list) => sum + list.length, 0);
        assert.equal(total, 60);
        await waitFor(() => received.length >= total, `${total} trades`);
        await sleep(500);
        const got = received.map((t) => t.id);
        assert.equal(new Set(got).size, got.length, 'no trade twice');
        const perPartition = new Map<number, string[]>();
        for (const id of got)
          perPartition.set(partitionOf.get(id)!, [...(perPartition.get(partitionOf.get(id)!) ?? []), id]);
        assert.deepEqual(perPartition, expected, 'every KOL trade, in log order per partition');
      } finally {
        client.close();
        await relay.close();
      }
      assert.ok(b.proc.lines.some((l) => l.msg === 'stream edge listening'));
    });
  });
}
