// The parts the pipeline, latency and replay scenarios assemble: an event log (embedded SQLite
// or Kafka on kcat's mock cluster), chDB with the migrations, the store, the aggregator and
// the ingest publisher, built from the project's own factories.
import path from 'node:path';
import type { Context } from '../../core/context.ts';
import { createEmbeddedLog, createKafkaLog } from '../../core/eventlog/index.ts';
import type { EventLog } from '../../core/eventlog/types.ts';
import { ALL_TOPICS } from '../../core/topics.ts';
import { createClickHouseClient, type ClickHouseClient } from '../../clickhouse/client.ts';
import { migrate } from '../../clickhouse/migrations.ts';
import { createStore } from '../../clickhouse/store.ts';
import type { SpotStore, TradeRow } from '../../clickhouse/types.ts';
import { startKafkaMock, type KafkaMock } from '../../test/helpers/kafka-mock.ts';

export type Transport = 'embedded' | 'kafka';

export interface LogHandle {
  log: EventLog;
  close(): Promise<void>;
}

/** A fresh log: an embedded file named `name` in the data dir, or a new mock Kafka cluster. */
export async function openLog(ctx: Context, transport: Transport, name: string): Promise<LogHandle> {
  if (transport === 'embedded') {
    const log = createEmbeddedLog(ctx, { path: path.join(ctx.config.dataDir, 'log', `${name}.sqlite`) });
    await log.ensureTopics(ALL_TOPICS);
    return { log, close: () => log.close() };
  }
  const mock: KafkaMock = await startKafkaMock({ brokers: 1 });
  const log = createKafkaLog(ctx, { brokers: mock.brokers, clientId: `spot-bench-${name}` });
  await log.ensureTopics(ALL_TOPICS);
  return {
    log,
    async close() {
      await log.close();
      await mock.stop();
    },
  };
}

export interface StoreHandle {
  client: ClickHouseClient;
  store: SpotStore;
  /** Trade rows the aggregator handed to the store, in order (the raw-insert baseline replays them). */
  tradeRows: TradeRow[];
  /** Calls and total ms of every write method (insert*, upsert*), for where-time-goes evidence. */
  writes: Map<string, { calls: number; ms: number }>;
}

const WRITE_METHODS = [
  'insertTrades',
  'upsertTokens',
  'upsertCandles',
  'insertTokenEvents',
  'upsertWalletLabels',
  'upsertBalances',
] as const;

/** chDB on the data dir, migrated; the store records the trade rows it is given. */
export async function openStore(ctx: Context): Promise<StoreHandle> {
  const client = createClickHouseClient(ctx);
  await migrate(client);
  const base = createStore(ctx, client);
  const tradeRows: TradeRow[] = [];
  const writes = new Map<string, { calls: number; ms: number }>();
  const store: SpotStore = { ...base };
  for (const method of WRITE_METHODS) {
    const original = base[method] as (rows: unknown[]) => Promise<void>;
    (store as unknown as Record<string, (rows: unknown[]) => Promise<void>>)[method] = async (rows) => {
      if (method === 'insertTrades') for (const row of rows as TradeRow[]) tradeRows.push(row);
      const started = performance.now();
      await original(rows);
      const entry = writes.get(method) ?? { calls: 0, ms: 0 };
      entry.calls += 1;
      entry.ms += performance.now() - started;
      writes.set(method, entry);
    };
  }
  return { client, store, tradeRows, writes };
}
