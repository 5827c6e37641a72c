// The distributed aggregator's durable state (migration 2): per input partition, the latest token
// states its owner wrote and the partition offsets they cover. Versions are offset sums, so the
// latest row per key wins whether or not ClickHouse merged the parts yet.
import type { ClickHouseClient } from './client.ts';

export interface PartitionMark {
  swaps: number;
  events: number;
}

export interface StoredTokenState {
  token: string;
  covered: PartitionMark;
  /** base64 of the v8-serialised token state. */
  state: string;
}

export interface AggregatorStateStore {
  /** The latest mark of every partition that has one. */
  readMarks(): Promise<Map<number, PartitionMark>>;
  readTokens(partition: number): Promise<StoredTokenState[]>;
  /**
   * The tokens first, then the mark: a mark never names states that are not stored. A token's
   * `covered` are its chain's positions in the partition; its version adds the mark's, so it
   * grows past rows written before (whose offsets were the partition's).
   */
  write(
    partition: number,
    mark: PartitionMark,
    tokens: Array<{ key: string; state: string; covered: PartitionMark }>,
    instance: string,
  ): Promise<void>;
}

const num = (value: number | string) => Number(value);

export function createAggregatorStateStore(client: ClickHouseClient): AggregatorStateStore {
  return {
    async readMarks() {
      const result = await client.query({
        query: `SELECT partition, argMax(swaps_offset, version) AS swaps, argMax(events_offset, version) AS events
FROM spot.aggregator_partitions GROUP BY partition`,
        format: 'JSONEachRow',
      });
      const rows = await result.json<{ partition: number | string; swaps: number | string; events: number | string }>();
      return new Map(rows.map((row) => [num(row.partition), { swaps: num(row.swaps), events: num(row.events) }]));
    },

    async readTokens(partition) {
      const result = await client.query({
        query: `SELECT token, argMax(swaps_offset, version) AS swaps, argMax(events_offset, version) AS events, argMax(state, version) AS state
FROM spot.aggregator_tokens WHERE partition = {partition:UInt32} GROUP BY token`,
        query_params: { partition },
        format: 'JSONEachRow',
      });
      const rows = await result.json<{
        token: string;
        swaps: number | string;
        events: number | string;
        state: string;
      }>();
      return rows.map((row) => ({
        token: row.token,
        covered: { swaps: num(row.swaps), events: num(row.events) },
        state: row.state,
      }));
    },

    async write(partition, mark, tokens, instance) {
      const version = mark.swaps + mark.events;
      const now = Date.now();
      const common = {
        partition,
        swaps_offset: mark.swaps,
        events_offset: mark.events,
        version,
        instance,
        updated_at: now,
      };
      if (tokens.length > 0) {
        await client.insert({
          table: 'spot.aggregator_tokens',
          format: 'JSONEachRow',
          values: tokens.map((t) => ({
            ...common,
            swaps_offset: t.covered.swaps,
            events_offset: t.covered.events,
            version: version + t.covered.swaps + t.covered.events,
            token: t.key,
            state: t.state,
          })),
        });
      }
      await client.insert({ table: 'spot.aggregator_partitions', format: 'JSONEachRow', values: [common] });
    },
  };
}

/** Token states that left the embedded aggregator's memory (migration 3), by token key. */
export interface EvictedTokenStore {
  /** Stores the states; `version` orders rewrites of one key (the latest wins). */
  write(tokens: Array<{ key: string; state: string }>, version: number): Promise<void>;
  /** The latest stored state of each key found. */
  read(keys: string[]): Promise<Map<string, string>>;
}

export function createEvictedTokenStore(client: ClickHouseClient): EvictedTokenStore {
  return {
    async write(tokens, version) {
      if (tokens.length === 0) return;
      const now = Date.now();
      await client.insert({
        table: 'spot.aggregator_evicted',
        format: 'JSONEachRow',
        values: tokens.map((t) => ({ token: t.key, version, state: t.state, evicted_at: now })),
      });
    },

    async read(keys) {
      if (keys.length === 0) return new Map();
      const result = await client.query({
        query: `SELECT token, argMax(state, version) AS state FROM spot.aggregator_evicted
WHERE token IN {keys:Array(String)} GROUP BY token`,
        query_params: { keys },
        format: 'JSONEachRow',
      });
      const rows = await result.json<{ token: string; state: string }>();
      return new Map(rows.map((row) => [row.token, row.state]));
    },
  };
}
