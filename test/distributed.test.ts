// Distributed mode end to end: every role a separate process on librdkafka's mock Kafka cluster,
// ClickHouse reached over HTTP (the SQL endpoint on a chDB data dir stands in for a server), two
// aggregator instances of which one is SIGKILLed mid-stream. The trades, candles, token objects
// and compacted topics must equal an embedded-mode run over the same simulated log.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createClient } from '@clickhouse/client';
import { createEmbeddedLog } from '../core/eventlog/embedded.ts';
import { createKafkaLog } from '../core/eventlog/kafka.ts';
import { embeddedLogPath } from '../core/eventlog/index.ts';
import type { EventLog } from '../core/eventlog/types.ts';
import { TOPICS } from '../core/topics.ts';
import { partitionFor } from '../core/eventlog/partitioner.ts';
import { dumpTables, latestPerKey } from './fixtures/aggregator-dump.ts';
import { useDistributedSuite } from './helpers/distributed.ts';
import { requireKcat } from './helpers/kafka-mock.ts';
import { waitFor } from './helpers/ports.ts';
import { start, terminate, type Proc } from './helpers/processes.ts';

const SPOT = path.resolve('bin/spot.js');
const AGG_CHILD = path.resolve('test/fixtures/aggregator-child.ts');
const PASSWORD = 'distributed-test-writer';
// The same simulated log in both runs: seed, pinned clock, chains and history span.
// Enrichment off: its metadata answers arrive asynchronously, so two ingest runs would not publish the
// same log (this test compares an embedded and a distributed run of the same simulated history).
const SIM_ENV = {
  SPOT_SIM_SEED: '7',
  SPOT_SIM_NOW: String(Date.UTC(2026, 0, 5, 12)),
  SPOT_SIM_WARM_HOURS: '4',
  // The sparse history alone (no live-density last hour): the comparison needs a few thousand trades, not 70k.
  SPOT_SIM_RECENT_RATE: '0',
  SPOT_ENRICHMENT: 'off',
};
const CHAINS = ['--chains', 'solana,bsc'];

/** Trade ids published on spot.trades.v1 (at least once; duplicates allowed). */
async function tradeIds(log: EventLog): Promise<string[]> {
  const ids = new Set<string>();
  await log.readToEnd(TOPICS.trades.name, (m) => ids.add((JSON.parse(m.value) as { trade: { id: string } }).trade.id));
  return [...ids].sort();
}

if (requireKcat('the distributed-mode test (Kafka roles as processes)')) {
  describe('distributed mode: roles as processes on Kafka, one aggregator SIGKILLed', function () {
    this.timeout(240_000);
    const suite = useDistributedSuite('spot-distributed', PASSWORD);
    const { root, ctx } = suite;

    it('gives the same trades, candles, tokens and topics as an embedded run of the same log', async () => {
      // 1. The embedded reference: `spot ingest` on an embedded log, then the aggregator on it.
      const embeddedDir = path.join(root, 'embedded');
      const t0 = Date.now();
      const embeddedIngest = start('embedded ingest', [SPOT, 'ingest', ...CHAINS], {
        ...SIM_ENV,
        SPOT_DATA_DIR: embeddedDir,
        SPOT_KAFKA_BROKERS: '',
        SPOT_CLICKHOUSE_URL: '',
      });
      await embeddedIngest.line((l) => l.msg === 'simulator history published', 90_000);
      await terminate(embeddedIngest);
      const reference = start('embedded aggregator', ['--import', 'tsx', AGG_CHILD], {
        SPOT_DATA_DIR: path.join(root, 'embedded-agg'),
        AGG_LOG_PATH: embeddedLogPath(embeddedDir),
        AGG_DUMP_PATH: path.join(root, 'embedded-dump.json'),
      });
      assert.equal((await reference.exited).code, 0, reference.tail());
      const expected = JSON.parse(fs.readFileSync(path.join(root, 'embedded-dump.json'), 'utf8')) as Record<
        string,
        unknown[]
      >;
      assert.ok(expected.trades!.length > 1000, `the simulated log has trades (${expected.trades!.length})`);

      console.log(`      embedded reference: ${Date.now() - t0} ms`);
      // 2. Kafka, the ClickHouse stand-in, two aggregator instances.
      const { mock, standin, sqlPort, roleEnv } = await suite.cluster();
      const aggEnv = { SPOT_AGGREGATE_SESSION_MS: '6000', SPOT_AGGREGATE_SNAPSHOT_MS: '400' };
      // 3. `spot ingest` publishes the same simulated history (before the aggregators read it: a
      // merge that catches up with a live log may order the newest messages differently, and the
      // comparison is with a replay). Both aggregators then start and split the partitions.
      const ingest = start('ingest', [SPOT, 'ingest', ...CHAINS], { ...SIM_ENV, ...roleEnv('ingest') });
      await ingest.line((l) => l.msg === 'simulator history published', 90_000);
      await terminate(ingest);
      const holds = (p: Proc) => p.line((l) => l.msg === 'took partition over', 90_000);
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
      // A is killed once both instances hold partitions and A made its own durable.
      const bHolds = await holds(b);
      await holds(a);
      const progressed = await a.line(
        (l) =>
          l.msg === 'state made durable' &&
          (l.processed as number) >= 3000 &&
          (l.time as number) > (bHolds.time as number),
        90_000,
      );
      a.child.kill('SIGKILL');
      assert.equal((await a.exited).signal, 'SIGKILL');

      const kafka = createKafkaLog(ctx, {
        brokers: mock.brokers,
        clientId: 'distributed-test',
        sessionTimeoutMs: 6000,
      });
      let total = 0;
      for (const topic of [TOPICS.swaps.name, TOPICS.tokenEvents.name])
        for (const end of (await kafka.endOffsets(topic)).values()) total += end;
      assert.ok(
        (progressed.processed as number) < total,
        `A was killed mid-stream (${progressed.processed} of ${total} messages)`,
      );

      console.log(`      A killed at ${progressed.processed} of ${total} messages`);
      // 4. B takes A's partitions over and completes the tables.
      await waitFor(
        async () => (b.lines.filter((l) => l.msg === 'took partition over').length >= 4 ? true : undefined),
        90_000,
        'B taking over every partition',
      );
      // chDB in-process prints 64-bit integers as numbers; ClickHouse's HTTP default quotes them.
      const client = createClient({
        url: `http://127.0.0.1:${sqlPort}`,
        username: 'spot_writer',
        password: PASSWORD,
        clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
      });
      try {
        let written = 0;
        await waitFor(
          async () => {
            const result = await client.query({
              query: 'SELECT count() AS n FROM spot.trades FINAL',
              format: 'JSONEachRow',
            });
            const [row] = await result.json<{ n: string | number }>();
            written = Number(row?.n);
            return written === expected.trades!.length ? true : undefined;
          },
          90_000,
          `B writing all ${expected.trades!.length} trades`,
        ).catch(async (error: Error) => {
          const notes = (p: Proc) =>
            p.lines
              .filter((l) => /partition|durable|snapshot/.test(l.msg ?? ''))
              .map((l) => JSON.stringify(l))
              .join('\n');
          const result = await client.query({ query: 'SELECT id FROM spot.trades FINAL', format: 'JSONEachRow' });
          const have = new Set((await result.json<{ id: string }>()).map((r) => r.id));
          const missing = (expected.trades as Array<{ id: string; chain: string; token: string; timestamp: unknown }>)
            .filter((t) => !have.has(t.id))
            .map((t) => `${t.id} p${partitionFor(`${t.chain}:${t.token}`, 4)} ${String(t.timestamp)}`);
          throw new Error(
            `${error.message} (${written} written of ${total} messages); missing:\n${missing.slice(0, 40).join('\n')}\nA:\n${notes(a)}\nB:\n${notes(b)}`,
          );
        });
        const takeovers = b.lines
          .filter((l) => l.msg === 'took partition over')
          .map(
            (l) =>
              `p${l.partition}@${l.processed} (${l.durableTokens} durable token states, ${l.replayed} journaled inputs replayed)`,
          );
        console.log(`      B took over: ${takeovers.join(', ')}`);
        // A's partitions moved with the state A made durable, not rebuilt from the whole log.
        const afterKill = b.lines.filter(
          (l) => l.msg === 'took partition over' && (l.time as number) > (progressed.time as number),
        );
        assert.ok(
          afterKill.length >= 1 && afterKill.every((l) => (l.durableTokens as number) > 0),
          `B adopted A's durable state: ${takeovers.join(', ')}`,
        );

        // 5. A restarts from its local snapshot (taken before the kill); the group gives it
        // partitions back, B writes their state as it gives them up, A takes them over from that.
        const a2 = start('aggregator A restarted', [SPOT, 'aggregate'], {
          ...roleEnv('agg-a'),
          ...aggEnv,
          SPOT_AGGREGATOR_ID: 'agg-a',
        });
        const back = await a2.line((l) => l.msg === 'took partition over', 120_000);
        const gaveUp = await b.line((l) => l.msg === 'gave partition up', 30_000);
        console.log(
          `      A restarted (resumed from ${String(a2.lines.find((l) => l.msg === 'aggregator starting')?.resumedFrom)}), took p${back.partition} back (${back.durableTokens} durable token states); B gave p${gaveUp.partition} up`,
        );
        assert.ok((back.durableTokens as number) > 0, 'A took a partition back from the state B made durable');
        await terminate(a2);
        await terminate(b);
        const actual = await dumpTables(client);
        for (const table of [
          'trades',
          'candles',
          'tokens',
          'token_events',
          'wallet_labels',
          'balances',
          'identity_trades',
        ]) {
          assert.equal(actual[table]!.length, expected[table]!.length, `rows of ${table}`);
          assert.deepEqual(actual[table], expected[table], `table ${table}`);
        }
      } finally {
        await client.close();
      }

      // 6. The compacted topics hold the same latest value per key; every trade was published.
      const embeddedLog = createEmbeddedLog(ctx, { path: embeddedLogPath(embeddedDir), readonly: true });
      try {
        for (const topic of [TOPICS.tokens.name, TOPICS.candles.name]) {
          assert.deepEqual(await latestPerKey(kafka, topic), await latestPerKey(embeddedLog, topic), topic);
        }
        assert.deepEqual(await tradeIds(kafka), await tradeIds(embeddedLog));
      } finally {
        await embeddedLog.close();
        await kafka.close();
      }
      await terminate(standin);
    });
  });
}
