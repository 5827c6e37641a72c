// Candle queries: every timeframe is rolled up at query time from one base granularity that the
// aggregator writes (1s, 1m, 1h, 1d), reading each base bucket's newest version (highest seq).
import type { Candle, Timeframe } from '../core/schemas.ts';
import type { ClickHouseClient } from './client.ts';
import type { BaseGranularity, CandleQuery } from './types.ts';
import { alignmentOffsetMs, bucketStart, TIMEFRAME_MS } from '../core/timeframes.ts';

/** The base granularity each timeframe is rolled up from (the largest that divides it). */
const BASE_OF: Record<Timeframe, BaseGranularity> = {
  '1s': '1s',
  '5s': '1s',
  '15s': '1s',
  '30s': '1s',
  '1m': '1m',
  '3m': '1m',
  '5m': '1m',
  '15m': '1m',
  '30m': '1m',
  '1h': '1h',
  '4h': '1h',
  '6h': '1h',
  '12h': '1h',
  '1d': '1d',
  '7d': '1d',
};

/** First bucket open time at or after `time`. */
function bucketStartAtOrAfter(timeframe: Timeframe, time: number): number {
  const start = bucketStart(timeframe, time);
  return start === time ? start : start + TIMEFRAME_MS[timeframe];
}

// Column names come from this fixed map (never from input); values are always bound parameters.
const COLUMNS = {
  price: { usd: 'price_usd', native: 'price_native' },
  marketCap: { usd: 'market_cap_usd', native: 'market_cap_native' },
} as const;

function candleSql(query: CandleQuery, newest: boolean): string {
  const prefix = COLUMNS[query.metric][query.denomination];
  const volume = query.denomination === 'usd' ? 'volume_usd' : 'volume_native';
  const values = `${prefix}_open, ${prefix}_high, ${prefix}_low, ${prefix}_close, ${volume}`;
  const bounds = [
    query.from !== undefined ? "AND time >= fromUnixTimestamp64Milli({lo:Int64}, 'UTC')" : '',
    query.to !== undefined ? "AND time < fromUnixTimestamp64Milli({hi:Int64}, 'UTC')" : '',
  ].join(' ');
  const where = `chain = {chain:String} AND token = {token:String} AND granularity = {granularity:String} ${bounds}`;
  // The newest `bases` base rows, read in key order and ended by the LIMIT; the buckets read and
  // the rows read (before the outer LIMIT) tell whether the oldest, maybe partial, bucket matters.
  const source = newest
    ? `(SELECT time, seq, ${values} FROM spot.candles WHERE ${where} ORDER BY time DESC LIMIT {bases:UInt32})`
    : `spot.candles WHERE ${where}`;
  return `
SELECT bucket,${newest ? ' count() OVER () AS buckets_read, sum(sum(versions)) OVER () AS rows_read,' : ''}
  toString(argMin(row.1, t)) AS open,
  toString(max(row.2)) AS high,
  toString(min(row.3)) AS low,
  toString(argMax(row.4, t)) AS close,
  toString(sum(row.5)) AS volume
FROM (
  SELECT toUnixTimestamp64Milli(time) AS t, argMax(tuple(${values}), seq) AS row, count() AS versions
  FROM ${source}
  GROUP BY time
)
GROUP BY t - positiveModulo(t - {offset:Int64}, {size:Int64}) AS bucket
ORDER BY bucket DESC
LIMIT {limit:UInt32}`;
}

interface CandleResultRow {
  bucket: string | number;
  buckets_read?: string | number;
  rows_read?: string | number;
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
}

/** The newest-rows read takes this many times the base rows `limit` buckets hold: room for versions. */
const VERSION_ROOM = 2;

/**
 * The newest `limit` traded buckets of the window, oldest first. With no `from` (countBack, or
 * the newest 500) or a wide one (`from=0`) a read went back to the token's first trade: a week of
 * 1s rows took about 330 ms for 500 candles. Such a query reads only the newest `limit` × (base
 * rows per bucket) × VERSION_ROOM base rows. The answer stands when they were every row, or when
 * they spanned more than `limit` buckets (only the oldest bucket read can miss rows); otherwise
 * (versions crowding the newest rows) it is read again whole.
 */
export async function queryCandles(client: ClickHouseClient, query: CandleQuery): Promise<Candle[]> {
  if (query.limit <= 0) return [];
  // A window of `limit` buckets or fewer is read whole anyway, and so are hourly and daily base
  // rows (24 a day at most): there the bounded read's window functions cost more than they save.
  const base = BASE_OF[query.timeframe];
  const buckets =
    query.from === undefined || query.to === undefined
      ? Infinity
      : (query.to - query.from) / TIMEFRAME_MS[query.timeframe];
  if (buckets > query.limit && base !== '1h' && base !== '1d') {
    const newest = await readCandles(client, query, true);
    if (newest.complete) return newest.candles;
  }
  return queryCandleWindow(client, query);
}

/** The newest `limit` traded buckets of exactly the query's window, oldest first (one read). */
export async function queryCandleWindow(client: ClickHouseClient, query: CandleQuery): Promise<Candle[]> {
  if (query.limit <= 0) return [];
  return (await readCandles(client, query, false)).candles;
}

/** One read; `complete` when its newest `limit` buckets are the window's (always for a whole read). */
async function readCandles(
  client: ClickHouseClient,
  query: CandleQuery,
  newest: boolean,
): Promise<{ candles: Candle[]; complete: boolean }> {
  const size = TIMEFRAME_MS[query.timeframe];
  const base = BASE_OF[query.timeframe];
  const params: Record<string, unknown> = {
    chain: query.chain,
    token: query.token,
    granularity: base,
    offset: alignmentOffsetMs(query.timeframe),
    size,
    limit: Math.floor(query.limit),
    bases: Math.floor(query.limit) * (size / TIMEFRAME_MS[base]) * VERSION_ROOM,
  };
  // A bucket is in the window when its open time is in [from, to): that is exactly the base
  // rows in [first bucket at or after from, first bucket at or after to).
  if (query.from !== undefined) params.lo = bucketStartAtOrAfter(query.timeframe, query.from);
  if (query.to !== undefined) params.hi = bucketStartAtOrAfter(query.timeframe, query.to);
  const result = await client.query({ query: candleSql(query, newest), query_params: params, format: 'JSONEachRow' });
  const rows = await result.json<CandleResultRow>();
  const candles = rows.reverse().map((row) => ({
    time: Number(row.bucket),
    open: Number(row.open),
    high: Number(row.high),
    low: Number(row.low),
    close: Number(row.close),
    volume: Number(row.volume),
  }));
  // No row at all: the window has no base row, so nothing was left out.
  const read = rows[0];
  const complete =
    !newest ||
    read === undefined ||
    Number(read.rows_read) < Number(params.bases) ||
    Number(read.buckets_read) > query.limit;
  return { candles, complete };
}
