// SpotStore over @clickhouse/client: inserts as JSONCompactEachRow text (clickhouse/rows.ts) in
// batches, and named, parameterised queries ({name:Type} binding; no value is ever spliced into
// SQL text).
import type { Chain } from '../core/chains.ts';
import type { Context } from '../core/context.ts';
import type { Token } from '../core/schemas.ts';
import { insertRowText, type ClickHouseClient } from './client.ts';
import { queryCandles } from './candles.ts';
import { DERIVED_TABLES, migrate } from './migrations.ts';
import {
  balanceFormat,
  candleFormat,
  encodeRowsInSlices,
  identityTradeFormat,
  tokenEventFormat,
  tokenFormat,
  tradeFormat,
  walletLabelFormat,
  type RowFormat,
} from './rows.ts';
import { allTrades, queryIdentityTrades, queryTokenTrades } from './trades.ts';
import type { SpotStore } from './types.ts';

/** Rows per INSERT: large enough to amortise a round trip, small enough to bound memory. */
export const INSERT_BATCH = 10_000;

/**
 * Settings of every store INSERT. optimize_on_insert=0: a ReplacingMergeTree otherwise collapses
 * equal keys inside each inserted block before writing it, a sort-and-merge pass measured at ~9 %
 * of a trade insert (`spot bench store`). It buys nothing here: the sink writer already keeps one
 * row per key per write, and every read deduplicates across parts anyway (FINAL, LIMIT 1 BY id,
 * argMax by seq, a trade page dropping repeated ids), which covers duplicates inside one part too.
 */
export const STORE_INSERT_SETTINGS = { optimize_on_insert: 0 };

/** One INSERT per `INSERT_BATCH` rows, each batch encoded in slices (clickhouse/rows.ts). */
async function insertRows<Row>(
  client: ClickHouseClient,
  table: string,
  format: RowFormat<Row>,
  rows: readonly Row[],
): Promise<void> {
  for (let start = 0; start < rows.length; start += INSERT_BATCH) {
    const text = await encodeRowsInSlices(format, rows, start, Math.min(rows.length, start + INSERT_BATCH));
    await insertRowText(client, `spot.${table}`, format.columns, text, 'JSONCompactEachRow', STORE_INSERT_SETTINGS);
  }
}

export function createStore(ctx: Context, client: ClickHouseClient): SpotStore {
  const logger = ctx.logger.child({ component: 'clickhouse-store' });

  async function insert<Row>(
    table: string,
    format: RowFormat<Row>,
    rows: readonly Row[],
    count = rows.length,
  ): Promise<void> {
    const endTimer = ctx.metrics.families.storeWriteSeconds.startTimer({ table });
    await insertRows(client, table, format, rows);
    endTimer();
    if (count > 0) ctx.metrics.inc(`clickhouse.rows.${table}`, count);
    ctx.metrics.families.storeRows.inc({ table }, count);
  }

  return {
    async migrate() {
      const applied = await migrate(client);
      if (applied.length > 0) logger.info({ applied }, 'applied ClickHouse migrations');
    },

    async ping() {
      const result = await client.ping();
      return result.success;
    },

    async insertTrades(rows) {
      await insert('trades', tradeFormat, rows);
      const withIdentities = rows.filter((row) => row.identities.length > 0);
      await insert(
        'identity_trades',
        identityTradeFormat,
        withIdentities,
        withIdentities.reduce((n, row) => n + new Set(row.identities).size, 0),
      );
    },

    upsertTokens: (tokens: Token[]) => insert('tokens', tokenFormat, tokens),
    upsertCandles: (rows) => insert('candles', candleFormat, rows),
    insertTokenEvents: (rows) => insert('token_events', tokenEventFormat, rows),
    upsertWalletLabels: (rows) => insert('wallet_labels', walletLabelFormat, rows),
    upsertBalances: (rows) => insert('balances', balanceFormat, rows),

    async getToken(chain: Chain, address: string) {
      const result = await client.query({
        // FINAL, not ORDER BY updated_at: decay rewrites a token's stats with the same updatedAt, and
        // among equal versions ReplacingMergeTree keeps the last row written, unmerged parts included.
        query: `SELECT body FROM spot.tokens FINAL WHERE chain = {chain:String} AND address = {address:String} LIMIT 1`,
        query_params: { chain, address },
        format: 'JSONEachRow',
      });
      const [row] = await result.json<{ body: string }>();
      return row ? (JSON.parse(row.body) as Token) : null;
    },

    queryCandles: (query) => queryCandles(client, query),
    queryTokenTrades: (chain, token, limit, before) => queryTokenTrades(client, chain, token, limit, before),
    queryIdentityTrades: (identity, chains, limit, before) =>
      queryIdentityTrades(client, identity, chains, limit, before),
    allTrades: (chain, token) => allTrades(client, chain, token),

    async truncateDerived() {
      for (const table of DERIVED_TABLES) await client.command({ query: `TRUNCATE TABLE IF EXISTS spot.${table}` });
      logger.info('emptied the derived ClickHouse tables');
    },

    close: () => client.close(),
  };
}
