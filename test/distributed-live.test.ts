// Distributed mode at the live edge: `spot ingest` keeps trading while two `spot aggregate`
// instances split the partitions and one is SIGKILLed. The instances' merges may order the newest
// messages differently (docs/distributed.md, Limits), so the numbers are not compared with
// an embedded run here; what must hold anyway: every swap of the log is exactly one trade (none
// lost at the hand-over, none invented) and every token's trade count equals its stored trades
// (none applied twice).
import assert from 'node:assert/strict';
import path from 'node:path';
import { createClient } from '@clickhouse/client';
import { createKafkaLog } from '../core/eventlog/kafka.ts';
import { TOPICS, isChainMark, type RawSwap } from '../core/topics.ts';
import { isReferencePair } from '../aggregators/pricing.ts';
import { useDistributedSuite } from './helpers/distributed.ts';
import { requireKcat } from './helpers/kafka-mock.ts';
import { waitFor } from './helpers/ports.ts';
import { start, terminate } from './helpers/processes.ts';

const SPOT = path.resolve('bin/spot.js');
const PASSWORD = 'distributed-live-writer';

if (requireKcat('the live distributed-mode test')) {
  describe('distributed mode at the live edge: ingest trading, one aggregator SIGKILLed', function () {
    this.timeout(240_000);
    const suite = useDistributedSuite('spot-distributed-live', PASSWORD);

    it('turns every swap into exactly one trade and counts each once', async () => {
      const { mock, standin, sqlPort, roleEnv } = await suite.cluster();
      const aggEnv = { SPOT_AGGREGATE_SESSION_MS: '6000', SPOT_AGGREGATE_SNAPSHOT_MS: '400' };
      // Live trading from the start: a short history, then 100 swaps/s at wall-clock time.
      const ingest = start('ingest', [SPOT, 'ingest', '--chains', 'solana,bsc'], {
        ...roleEnv('ingest'),
        SPOT_SIM_SEED: '5',
        SPOT_SIM_WARM_HOURS: '0.25',
        SPOT_SIM_RATE: '100',
      });
      const a = start('aggregator A', [SPOT, 'aggregate'], {
        ...roleEnv('agg-a'),
        ...aggEnv,
        SPOT_AGGREGATOR_ID: 'agg-a',
      });
      const b = start('aggregator B', [SPOT, 'aggregate'], {
        ...roleEnv('agg-b'),
        ...aggEnv,
        SPOT_AGGREGATOR_ID: 'agg-b',
      });
      await ingest.line((l) => l.msg === 'simulator history published', 90_000);
      const bHolds = await b.line((l) => l.msg === 'took partition over', 90_000);
      await a.line((l) => l.msg === 'took partition over', 90_000);
      const killedAt = await a.line(
        (l) =>
          l.msg === 'state made durable' && (l.tokens as number) > 0 && (l.time as number) > (bHolds.time as number),
        90_000,
      );
      a.child.kill('SIGKILL');
      await a.exited;
      // B takes A's partitions over while trading goes on, then ingest stops.
      await waitFor(
        async () => (b.lines.filter((l) => l.msg === 'took partition over').length >= 4 ? true : undefined),
        90_000,
        'B taking over every partition',
      );
      await new Promise((resolve) => setTimeout(resolve, 2000));
      await terminate(ingest);

      const kafka = createKafkaLog(suite.ctx, {
        brokers: mock.brokers,
        clientId: 'distributed-live-test',
        sessionTimeoutMs: 6000,
      });
      const client = createClient({
        url: `http://127.0.0.1:${sqlPort}`,
        username: 'spot_writer',
        password: PASSWORD,
        clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
      });
      try {
        const expected = new Set<string>();
        await kafka.readToEnd(TOPICS.swaps.name, (m) => {
          const value: unknown = JSON.parse(m.value);
          if (!isChainMark(value) && !isReferencePair(value as RawSwap)) expected.add((value as RawSwap).id);
        });
        const stored = async () => {
          const result = await client.query({ query: 'SELECT id FROM spot.trades FINAL', format: 'JSONEachRow' });
          return new Set((await result.json<{ id: string }>()).map((r) => r.id));
        };
        let count = 0;
        await waitFor(
          async () => ((count = (await stored()).size) >= expected.size ? true : undefined),
          90_000,
          `B writing all ${expected.size} trades`,
        ).catch((error: Error) => {
          throw new Error(`${error.message} (${count} stored)`);
        });
        await terminate(b); // its last views and state are written on the way out
        const have = await stored();
        console.log(`      A killed at ${killedAt.processed} messages; ${expected.size} swaps, ${have.size} trades`);
        assert.deepEqual(
          [...have].filter((id) => !expected.has(id)),
          [],
          'no trade without its swap',
        );
        assert.deepEqual(
          [...expected].filter((id) => !have.has(id)),
          [],
          'no swap without its trade',
        );
        const counts = await client.query({
          query: `SELECT t.chain AS chain, t.address AS address, JSONExtractUInt(t.body, 'totals', 'trades') AS counted, ifNull(r.n, 0) AS stored
FROM (SELECT chain, address, body FROM spot.tokens FINAL) AS t
LEFT JOIN (SELECT chain, token, count() AS n FROM spot.trades FINAL GROUP BY chain, token) AS r ON r.chain = t.chain AND r.token = t.address
WHERE counted != stored`,
          format: 'JSONEachRow',
        });
        assert.deepEqual(await counts.json(), [], 'every token counts each of its trades once');
      } finally {
        await client.close();
        await kafka.close();
      }
      await terminate(standin);
    });
  });
}
