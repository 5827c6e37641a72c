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

function candleSql(query: CandleQuery): string {
  const prefix = COLUMNS[query.metric][query.denomination];
  const volume = query.denomination === 'usd' ? 'volume_usd' : 'volume_native';
  const bounds = [
    query.from !== undefined ? "AND time >= fromUnixTimestamp64Milli({lo:Int64}, 'UTC')" : '',
    query.to !== undefined ? "AND time < fromUnixTimestamp64Milli({hi:Int64}, 'UTC')" : '',
  ].join(' ');
  return `
SELECT bucket,
  toString(argMin(row.1, t)) AS open,
  toString(max(row.2)) AS high,
  toString(min(row.3)) AS low,
  toString(argMax(row.4, t)) AS close,
  toString(sum(row.5)) AS volume
FROM (
  SELECT toUnixTimestamp64Milli(time) AS t,
    argMax(tuple(${prefix}_open, ${prefix}_high, ${prefix}_low, ${prefix}_close, ${volume}), seq) AS row
  FROM spot.candles
  WHERE chain = {chain:String} AND token = {token:String} AND granularity = {granularity:String} ${bounds}
  GROUP BY time
)
GROUP BY t - positiveModulo(t - {offset:Int64}, {size:Int64}) AS bucket
ORDER BY bucket DESC
LIMIT {limit:UInt32}`;
}

interface CandleResultRow {
  bucket: string | number;
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
}

/** The newest `limit` traded buckets of the window, oldest first. */
export async function queryCandles(client: ClickHouseClient, query: CandleQuery): Promise<Candle[]> {
  if (query.limit <= 0) return [];
  const params: Record<string, unknown> = {
    chain: query.chain,
    token: query.token,
    granularity: BASE_OF[query.timeframe],
    offset: alignmentOffsetMs(query.timeframe),
    size: TIMEFRAME_MS[query.timeframe],
    limit: Math.floor(query.limit),
  };
  // A bucket is in the window when its open time is in [from, to): that is exactly the base
  // rows in [first bucket at or after from, first bucket at or after to).
  if (query.from !== undefined) params.lo = bucketStartAtOrAfter(query.timeframe, query.from);
  if (query.to !== undefined) params.hi = bucketStartAtOrAfter(query.timeframe, query.to);
  const result = await client.query({ query: candleSql(query), query_params: params, format: 'JSONEachRow' });
  const rows = await result.json<CandleResultRow>();
  return rows.reverse().map((row) => ({
    time: Number(row.bucket),
    open: Number(row.open),
    high: Number(row.high),
    low: Number(row.low),
    close: Number(row.close),
    volume: Number(row.volume),
  }));
}
