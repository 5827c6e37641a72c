// SpotStore over @clickhouse/client: typed inserts in JSONEachRow batches and named, parameterised
// queries ({name:Type} binding; no value is ever spliced into SQL text).
import type { Chain } from '../core/chains.ts';
import type { Context } from '../core/context.ts';
import type { Token } from '../core/schemas.ts';
import type { ClickHouseClient } from './client.ts';
import { queryCandles, candleRecord } from './candles.ts';
import { DERIVED_TABLES, migrate } from './migrations.ts';
import { allTrades, identityRecords, queryIdentityTrades, queryTokenTrades, tradeRecord } from './trades.ts';
import type { BalanceRow, SpotStore, TokenEventRow, WalletLabelRow } from './types.ts';

/** Rows per INSERT: large enough to amortise a round trip, small enough to bound memory. */
export const INSERT_BATCH = 10_000;

/** Token → spot.tokens row: the full JSON body plus the columns analysts filter and sort on. */
export function tokenRecord(token: Token): Record<string, unknown> {
  return {
    chain: token.chain,
    address: token.address,
    name: token.name,
    symbol: token.symbol,
    created_at: token.createdAt,
    launchpad: token.launchpad ?? null,
    market_cap_usd: token.marketCap.usd,
    liquidity_usd: token.liquidity.usd,
    volume_24h_usd: token.stats['24h'].volume.usd,
    holders_count: token.holders.count,
    bonding_curve_pct: token.bondingCurvePct ?? null,
    graduated_at: token.graduatedAt ?? null,
    updated_at: token.updatedAt,
    body: JSON.stringify(token),
  };
}

export function createStore(ctx: Context, client: ClickHouseClient): SpotStore {
  const logger = ctx.logger.child({ component: 'clickhouse-store' });

  async function insert(table: string, records: Record<string, unknown>[]): Promise<void> {
    for (let start = 0; start < records.length; start += INSERT_BATCH) {
      await client.insert({ table: `spot.${table}`, values: records.slice(start, start + INSERT_BATCH), format: 'JSONEachRow' });
    }
    if (records.length > 0) ctx.metrics.inc(`clickhouse.rows.${table}`, records.length);
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
      await insert('trades', rows.map(tradeRecord));
      await insert('identity_trades', rows.flatMap(identityRecords));
    },

    upsertTokens: (tokens) => insert('tokens', tokens.map(tokenRecord)),

    upsertCandles: (rows) => insert('candles', rows.map(candleRecord)),

    insertTokenEvents: (rows: TokenEventRow[]) =>
      insert('token_events', rows.map((r) => ({ id: r.id, chain: r.chain, token: r.token, kind: r.kind, block_time: r.blockTime, body: r.body }))),

    upsertWalletLabels: (rows: WalletLabelRow[]) =>
      insert('wallet_labels', rows.map((r) => ({ chain: r.chain, wallet: r.wallet, labels: r.labels, name: r.name, updated_at: r.updatedAt }))),

    upsertBalances: (rows: BalanceRow[]) =>
      insert('balances', rows.map((r) => ({ chain: r.chain, token: r.token, wallet: r.wallet, amount: r.amount, updated_at: r.updatedAt }))),

    async getToken(chain: Chain, address: string) {
      const result = await client.query({
        query: `SELECT body FROM spot.tokens WHERE chain = {chain:String} AND address = {address:String}
ORDER BY updated_at DESC LIMIT 1`,
        query_params: { chain, address },
        format: 'JSONEachRow',
      });
      const [row] = await result.json<{ body: string }>();
      return row ? (JSON.parse(row.body) as Token) : null;
    },

    queryCandles: (query) => queryCandles(client, query),
    queryTokenTrades: (chain, token, limit, before) => queryTokenTrades(client, chain, token, limit, before),
    queryIdentityTrades: (identity, chains, limit, before) => queryIdentityTrades(client, identity, chains, limit, before),
    allTrades: (chain, token) => allTrades(client, chain, token),

    async truncateDerived() {
      for (const table of DERIVED_TABLES) await client.command({ query: `TRUNCATE TABLE IF EXISTS spot.${table}` });
      logger.info('emptied the derived ClickHouse tables');
    },

    close: () => client.close(),
  };
}
