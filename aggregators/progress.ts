// Shared "written up to" positions of the distributed aggregator, one per ownership partition, in
// ClickHouse (spot.aggregator_progress). A row says: the outputs of that partition's tokens for the
// first `processed` input messages of the merge are in the sinks and on the topics. Every instance
// runs the same deterministic merge, so a count of processed messages names the same point on all
// of them. Written only after the sinks acknowledged; the highest count wins.
import type { ClickHouseClient } from '../clickhouse/client.ts';

export interface ProgressStore {
  ensure(): Promise<void>;
  read(): Promise<Map<number, number>>;
  write(partitions: number[], processed: number, instance: string): Promise<void>;
}

export const PROGRESS_TABLE = 'spot.aggregator_progress';

export function createProgressStore(client: ClickHouseClient): ProgressStore {
  return {
    async ensure() {
      await client.command({ query: 'CREATE DATABASE IF NOT EXISTS spot' });
      await client.command({
        query: `CREATE TABLE IF NOT EXISTS ${PROGRESS_TABLE} (
  partition UInt32,
  processed UInt64,
  instance String,
  updated_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(processed)
ORDER BY partition`,
      });
    },

    async read() {
      const result = await client.query({
        query: `SELECT partition, max(processed) AS processed FROM ${PROGRESS_TABLE} GROUP BY partition`,
        format: 'JSONEachRow',
      });
      const rows = await result.json<{ partition: number | string; processed: number | string }>();
      return new Map(rows.map((row) => [Number(row.partition), Number(row.processed)]));
    },

    async write(partitions, processed, instance) {
      if (partitions.length === 0) return;
      const now = Date.now();
      await client.insert({
        table: PROGRESS_TABLE,
        format: 'JSONEachRow',
        values: partitions.map((partition) => ({ partition, processed, instance, updated_at: now })),
      });
    },
  };
}
