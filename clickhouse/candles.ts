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

const BASE_ROWS_KEY = 'chain = {chain:String} AND token = {token:String} AND granularity = {granularity:String}';

function candleSql(query: CandleQuery, newest: boolean): string {
  const prefix = COLUMNS[query.metric][query.denomination];
  const volume = query.denomination === 'usd' ? 'volume_usd' : 'volume_native';
  const below = query.to !== undefined ? "AND time < fromUnixTimestamp64Milli({hi:Int64}, 'UTC')" : '';
  const bounds = [
    query.from !== undefined ? "AND time >= fromUnixTimestamp64Milli({lo:Int64}, 'UTC')" : '',
    below,
    // From the bucket of the oldest of the newest `bases` base rows (0 when there are fewer).
    newest
      ? "AND time >= fromUnixTimestamp64Milli(greatest(0, newest_from - positiveModulo(newest_from - {offset:Int64}, {size:Int64})), 'UTC')"
      : '',
  ].join(' ');
  // Read in key order from the newest row and ended by its LIMIT: a few ms for thousands of rows.
  const newestFrom = newest
    ? `WITH (
  SELECT if(count() < {bases:UInt32}, 0, toUnixTimestamp64Milli(min(time)))
  FROM (SELECT time FROM spot.candles WHERE ${BASE_ROWS_KEY} ${below} ORDER BY time DESC LIMIT {bases:UInt32})
) AS newest_from`
    : '';
  return `${newestFrom}
SELECT bucket,${newest ? ' any(newest_from) AS window_from,' : ''}
  toString(argMin(row.1, t)) AS open,
  toString(max(row.2)) AS high,
  toString(min(row.3)) AS low,
  toString(argMax(row.4, t)) AS close,
  toString(sum(row.5)) AS volume
FROM (
  SELECT toUnixTimestamp64Milli(time) AS t,
    argMax(tuple(${prefix}_open, ${prefix}_high, ${prefix}_low, ${prefix}_close, ${volume}), seq) AS row
  FROM spot.candles
  WHERE ${BASE_ROWS_KEY} ${bounds}
  GROUP BY time
)
GROUP BY t - positiveModulo(t - {offset:Int64}, {size:Int64}) AS bucket
ORDER BY bucket DESC
LIMIT {limit:UInt32}`;
}

interface CandleResultRow {
  bucket: string | number;
  window_from?: string | number;
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
 * 1s rows took about 330 ms for 500 candles. Such a query first reads from the bucket of the oldest of the
 * newest `limit` × (base rows per bucket) × VERSION_ROOM base rows: those span `limit` buckets at
 * least unless versions of one row crowd them, and then a short answer is read again unbounded.
 */
export async function queryCandles(client: ClickHouseClient, query: CandleQuery): Promise<Candle[]> {
  if (query.limit <= 0) return [];
  // A window of `limit` buckets or fewer is read whole anyway.
  const buckets =
    query.from === undefined || query.to === undefined
      ? Infinity
      : (query.to - query.from) / TIMEFRAME_MS[query.timeframe];
  if (buckets <= query.limit) return (await readCandles(client, query, false)).candles;
  const newest = await readCandles(client, query, true);
  // Enough buckets, or the newest rows reach back past `from` (or are every row): nothing was cut.
  if (newest.candles.length >= query.limit || newest.from! <= (query.from ?? 0)) return newest.candles;
  return (await readCandles(client, query, false)).candles;
}

/** The newest `limit` traded buckets of exactly the query's window, oldest first (one read). */
export async function queryCandleWindow(client: ClickHouseClient, query: CandleQuery): Promise<Candle[]> {
  if (query.limit <= 0) return [];
  return (await readCandles(client, query, false)).candles;
}

/** One read; `from` is where a newest-rows read began (0: every row), undefined otherwise. */
async function readCandles(
  client: ClickHouseClient,
  query: CandleQuery,
  newest: boolean,
): Promise<{ candles: Candle[]; from: number | undefined }> {
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
  // No row at all: no base row before `to` either, so nothing was left out.
  return { candles, from: newest ? (rows.length === 0 ? 0 : Number(rows[0]!.window_from)) : undefined };
}
