// Numbered, idempotent schema migrations. Every statement is CREATE … IF NOT EXISTS (or otherwise
// safe to repeat), and spot.schema_migrations records the versions applied, so running migrate
// twice, or from two processes at once, converges on the same schema.
import type { ClickHouseClient } from './client.ts';

export interface Migration {
  version: number;
  name: string;
  statements: string[];
}

const DEC = 'Decimal(76, 30)';
const TIME = "DateTime64(3, 'UTC')";

const tradeColumns = `
  id String,
  chain LowCardinality(String),
  token String,
  seq UInt64,
  name String,
  symbol String,
  trader String,
  side LowCardinality(String),
  transaction_hash String,
  event_index UInt32,
  block_number UInt64,
  timestamp ${TIME},
  amount ${DEC},
  quote_amount ${DEC},
  quote_asset String,
  price_native ${DEC},
  price_usd ${DEC},
  volume_native ${DEC},
  volume_usd ${DEC},
  market_cap_native ${DEC},
  market_cap_usd ${DEC},
  pool String,
  dex LowCardinality(String),
  identities Array(LowCardinality(String)),
  flags Array(String),
  inserted_at ${TIME} DEFAULT now64(3)`;

/** Tables rebuilt from the raw log by a replay (everything except the migration record). */
export const DERIVED_TABLES = [
  'trades',
  'identity_trades',
  'candles',
  'tokens',
  'token_events',
  'wallet_labels',
  'balances',
  'aggregator_tokens',
  'aggregator_partitions',
  'aggregator_evicted',
] as const;

/** Every merge vertical, whatever its rows and columns, reading sources in small blocks. */
export const SMALL_MERGE_SETTINGS = [
  'vertical_merge_algorithm_min_rows_to_activate = 1',
  'vertical_merge_algorithm_min_columns_to_activate = 1',
  'merge_max_block_size = 1024',
  'merge_max_block_size_bytes = 1048576',
].join(', ');

/** Outdated parts removed by the cleanup thread itself, however many there are. */
export const SERIAL_PART_REMOVAL = 'concurrent_part_removal_threshold = 1000000';

const ohlc = (prefix: string) =>
  ['open', 'high', 'low', 'close'].map((part) => `${prefix}_${part} ${DEC}`).join(',\n  ');

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    statements: [
      `CREATE TABLE IF NOT EXISTS spot.trades (${tradeColumns}
) ENGINE = ReplacingMergeTree
ORDER BY (chain, token, timestamp, id)`,
      `CREATE TABLE IF NOT EXISTS spot.identity_trades (
  identity LowCardinality(String),${tradeColumns}
) ENGINE = ReplacingMergeTree
ORDER BY (identity, timestamp, id)`,
      `CREATE TABLE IF NOT EXISTS spot.candles (
  chain LowCardinality(String),
  token String,
  granularity LowCardinality(String),
  time ${TIME},
  seq UInt64,
  ${ohlc('price_native')},
  ${ohlc('price_usd')},
  ${ohlc('market_cap_native')},
  ${ohlc('market_cap_usd')},
  volume_native ${DEC},
  volume_usd ${DEC},
  trades UInt32
) ENGINE = ReplacingMergeTree(seq)
ORDER BY (chain, token, granularity, time)`,
      `CREATE TABLE IF NOT EXISTS spot.tokens (
  chain LowCardinality(String),
  address String,
  name String,
  symbol String,
  created_at ${TIME},
  launchpad Nullable(String),
  market_cap_usd ${DEC},
  liquidity_usd ${DEC},
  volume_24h_usd ${DEC},
  holders_count UInt32,
  bonding_curve_pct Nullable(${DEC}),
  graduated_at Nullable(${TIME}),
  updated_at ${TIME},
  body String
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (chain, address)`,
      `CREATE TABLE IF NOT EXISTS spot.token_events (
  id String,
  chain LowCardinality(String),
  token String,
  kind LowCardinality(String),
  block_time ${TIME},
  body String
) ENGINE = ReplacingMergeTree
ORDER BY (chain, token, block_time, id)`,
      `CREATE TABLE IF NOT EXISTS spot.wallet_labels (
  chain LowCardinality(String),
  wallet String,
  labels Array(LowCardinality(String)),
  name Nullable(String),
  updated_at ${TIME}
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (chain, wallet)`,
      `CREATE TABLE IF NOT EXISTS spot.balances (
  chain LowCardinality(String),
  token String,
  wallet String,
  amount String,
  updated_at ${TIME}
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (chain, token, wallet)`,
    ],
  },
  {
    version: 2,
    name: 'distributed aggregator state',
    statements: [
      // A token's aggregator state as its partition's owner last made it durable, with the
      // partition offsets it covers (version: their sum, which only grows).
      `CREATE TABLE IF NOT EXISTS spot.aggregator_tokens (
  partition UInt32,
  token String,
  swaps_offset UInt64,
  events_offset UInt64,
  version UInt64,
  state String,
  instance String,
  updated_at ${TIME}
) ENGINE = ReplacingMergeTree(version)
ORDER BY (partition, token)`,
      // Per partition: every token state up to these offsets is in spot.aggregator_tokens and
      // every output of its inputs before them is in the sinks.
      `CREATE TABLE IF NOT EXISTS spot.aggregator_partitions (
  partition UInt32,
  swaps_offset UInt64,
  events_offset UInt64,
  version UInt64,
  instance String,
  updated_at ${TIME}
) ENGINE = ReplacingMergeTree(version)
ORDER BY partition`,
    ],
  },
  {
    version: 3,
    name: 'evicted aggregator token state',
    statements: [
      // A token that stopped trading leaves the aggregator's memory for here and comes back on its
      // next input (aggregators/eviction.ts); version: the aggregator's processed count then.
      `CREATE TABLE IF NOT EXISTS spot.aggregator_evicted (
  token String,
  version UInt64,
  state String,
  evicted_at ${TIME}
) ENGINE = ReplacingMergeTree(version)
ORDER BY token`,
    ],
  },
  {
    version: 4,
    name: 'trade platforms',
    // The trading platforms a trade's transaction names (RawSwap.platforms); older rows read [].
    statements: ['trades', 'identity_trades'].map(
      (table) => `ALTER TABLE spot.${table} ADD COLUMN IF NOT EXISTS platforms Array(String) DEFAULT [] AFTER flags`,
    ),
  },
  {
    version: 5,
    name: 'merges in small blocks, a column at a time',
    // A horizontal merge reads every column of every part at once: 120–230 MB for one merge of the
    // trades, tokens or candles of a mainnet minute, the process's RSS jumping with it. Vertical
    // merges (key columns first, then each other column alone) in 1,024-row or 1 MB blocks take
    // a quarter of that (docs/performance.md). The rows a merge keeps are the same.
    statements: DERIVED_TABLES.map((table) => `ALTER TABLE spot.${table} MODIFY SETTING ${SMALL_MERGE_SETTINGS}`),
  },
  {
    version: 6,
    name: 'merged-away parts removed one at a time',
    // Past 100 outdated parts at once, ClickHouse removes them on up to 128 threads of its global
    // pool, which keeps them afterwards: chDB's threads went from 9 to 132 four minutes into the
    // mainnet check. Removing a local part is a directory unlink; one thread does it.
    statements: DERIVED_TABLES.map((table) => `ALTER TABLE spot.${table} MODIFY SETTING ${SERIAL_PART_REMOVAL}`),
  },
];

/** Applies the migrations not yet recorded; returns the versions it applied. */
export async function migrate(client: ClickHouseClient, migrations: Migration[] = MIGRATIONS): Promise<number[]> {
  await client.command({ query: 'CREATE DATABASE IF NOT EXISTS spot' });
  await client.command({
    query: `CREATE TABLE IF NOT EXISTS spot.schema_migrations (
  version UInt32,
  name String,
  applied_at ${TIME} DEFAULT now64(3)
) ENGINE = ReplacingMergeTree ORDER BY version`,
  });
  const result = await client.query({
    query: 'SELECT DISTINCT version FROM spot.schema_migrations',
    format: 'JSONEachRow',
  });
  const applied = new Set((await result.json<{ version: number }>()).map((row) => Number(row.version)));
  const done: number[] = [];
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    if (applied.has(migration.version)) continue;
    for (const statement of migration.statements) await client.command({ query: statement });
    await client.insert({
      table: 'spot.schema_migrations',
      values: [{ version: migration.version, name: migration.name }],
      format: 'JSONEachRow',
    });
    done.push(migration.version);
  }
  return done;
}
