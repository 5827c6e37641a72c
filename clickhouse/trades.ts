// Trade rows: the per-token table and the identity feeds (kol, fomoscan), newest first with
// (timestamp, id) cursors. Duplicates of one trade id sit next to each other in that order, so a
// page drops them as it reads (distinctPage) while the read stays in primary-key order.
import type { Chain } from '../core/chains.ts';
import type { Identity } from '../core/schemas.ts';
import type { ClickHouseClient } from './client.ts';
import type { TradeCursor, TradeRow } from './types.ts';

const DECIMAL_FIELDS = [
  ['amount', 'amount'],
  ['quoteAmount', 'quote_amount'],
  ['priceNative', 'price_native'],
  ['priceUsd', 'price_usd'],
  ['volumeNative', 'volume_native'],
  ['volumeUsd', 'volume_usd'],
  ['marketCapNative', 'market_cap_native'],
  ['marketCapUsd', 'market_cap_usd'],
] as const;

export const TRADE_SELECT = `id, chain, token, seq, name, symbol, trader, side, transaction_hash, event_index, block_number,
  toUnixTimestamp64Milli(timestamp) AS ts, quote_asset, pool, dex, identities, flags, platforms,
  ${DECIMAL_FIELDS.map(([, column]) => `toString(${column}) AS ${column}`).join(', ')}`;

type TradeResultRow = Record<string, string | number | string[]>;

export function tradeFromResult(r: TradeResultRow): TradeRow {
  const text = (key: string) => String(r[key] ?? '');
  const row = {
    id: text('id'),
    chain: text('chain') as Chain,
    token: text('token'),
    seq: Number(r.seq),
    name: text('name'),
    symbol: text('symbol'),
    trader: text('trader'),
    side: text('side') as TradeRow['side'],
    transactionHash: text('transaction_hash'),
    eventIndex: Number(r.event_index),
    blockNumber: Number(r.block_number),
    timestamp: Number(r.ts),
    quoteAsset: text('quote_asset'),
    pool: text('pool'),
    dex: text('dex'),
    identities: (r.identities as string[]) ?? [],
    flags: (r.flags as string[]) ?? [],
    platforms: (r.platforms as string[]) ?? [],
  } as TradeRow;
  for (const [field, column] of DECIMAL_FIELDS) row[field] = text(column);
  return row;
}

export const CURSOR_CLAUSE = `AND timestamp <= fromUnixTimestamp64Milli({beforeTs:Int64}, 'UTC')
  AND (toUnixTimestamp64Milli(timestamp), id) < ({beforeTs:Int64}, {beforeId:String})`;

function cursorParams(before: TradeCursor | undefined): Record<string, unknown> {
  return before ? { beforeTs: before.timestamp, beforeId: before.id } : {};
}

async function readTrades(
  client: ClickHouseClient,
  query: string,
  params: Record<string, unknown>,
): Promise<TradeRow[]> {
  const result = await client.query({ query, query_params: params, format: 'JSONEachRow' });
  return (await result.json<TradeResultRow>()).map(tradeFromResult);
}

/**
 * Up to `limit` distinct trades, newest first, strictly older than `before`. The reads carry no
 * LIMIT 1 BY id: that clause kept ClickHouse from ending its in-order read at the limit, so a busy
 * token's page read a block of every part (75–176 ms against 13–20 ms at 124k trades). Copies of a
 * trade (a rewrite not yet merged away) are adjacent: they are dropped here, and a page they
 * shortened is topped up from its last row read, asking for as many more rows as the copies seen
 * so far say the missing trades take.
 */
async function distinctPage(
  limit: number,
  before: TradeCursor | undefined,
  read: (count: number, after: TradeCursor | undefined) => Promise<TradeRow[]>,
): Promise<TradeRow[]> {
  const page: TradeRow[] = [];
  const wanted = Math.max(0, Math.floor(limit));
  let after = before;
  let count = wanted;
  let rowsRead = 0;
  while (page.length < wanted) {
    const rows = await read(count, after);
    for (const row of rows) if (page.at(-1)?.id !== row.id) page.push(row);
    if (rows.length < count) break;
    rowsRead += rows.length;
    const last = rows.at(-1)!;
    after = { timestamp: last.timestamp, id: last.id };
    // Rows read per trade kept so far (a round keeps one trade at least), capped at ten copies.
    const missing = wanted - page.length;
    count = Math.ceil(missing * Math.min(10, rowsRead / page.length));
  }
  // A top-up round may read past what the page still needed.
  if (page.length > wanted) page.length = wanted;
  return page;
}

/** Newest first; strictly older than `before` in (timestamp, id) order when given. */
export function queryTokenTrades(
  client: ClickHouseClient,
  chain: Chain,
  token: string,
  limit: number,
  before?: TradeCursor,
): Promise<TradeRow[]> {
  return distinctPage(limit, before, (count, after) =>
    readTrades(
      client,
      `
SELECT ${TRADE_SELECT} FROM spot.trades
WHERE chain = {chain:String} AND token = {token:String} ${after ? CURSOR_CLAUSE : ''}
ORDER BY timestamp DESC, id DESC
LIMIT {limit:UInt32}`,
      { chain, token, limit: count, ...cursorParams(after) },
    ),
  );
}

/** One identity feed across tokens of the given chains, newest first. */
export function queryIdentityTrades(
  client: ClickHouseClient,
  identity: Identity,
  chains: Chain[],
  limit: number,
  before?: TradeCursor,
): Promise<TradeRow[]> {
  return distinctPage(limit, before, (count, after) =>
    readTrades(
      client,
      `
SELECT ${TRADE_SELECT} FROM spot.identity_trades
WHERE identity = {identity:String} AND has({chains:Array(String)}, chain) ${after ? CURSOR_CLAUSE : ''}
ORDER BY timestamp DESC, id DESC
LIMIT {limit:UInt32}`,
      { identity, chains, limit: count, ...cursorParams(after) },
    ),
  );
}

/** Every stored trade of a token, deduplicated, in seq order. */
export function allTrades(client: ClickHouseClient, chain: Chain, token: string): Promise<TradeRow[]> {
  return readTrades(
    client,
    `
SELECT ${TRADE_SELECT} FROM spot.trades
WHERE chain = {chain:String} AND token = {token:String}
ORDER BY seq, id
LIMIT 1 BY id`,
    { chain, token },
  );
}
