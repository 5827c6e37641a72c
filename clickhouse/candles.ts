// Candle queries: every timeframe is rolled up at query time from one base granularity that the
// aggregator writes (1s, 1m, 1h, 1d), reading each base bucket's newest version (highest seq).
import type { Candle, Timeframe } from '../core/schemas.ts';
import type { ClickHouseClient } from './client.ts';
import type { BaseGranularity, CandleQuery, CandleRow } from './types.ts';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Bucket size and the base granularity each timeframe is rolled up from. */
export const TIMEFRAME_SPEC: Record<Timeframe, { sizeMs: number; base: BaseGranularity }> = {
  '1s': { sizeMs: SECOND, base: '1s' },
  '5s': { sizeMs: 5 * SECOND, base: '1s' },
  '15s': { sizeMs: 15 * SECOND, base: '1s' },
  '30s': { sizeMs: 30 * SECOND, base: '1s' },
  '1m': { sizeMs: MINUTE, base: '1m' },
  '3m': { sizeMs: 3 * MINUTE, base: '1m' },
  '5m': { sizeMs: 5 * MINUTE, base: '1m' },
  '15m': { sizeMs: 15 * MINUTE, base: '1m' },
  '30m': { sizeMs: 30 * MINUTE, base: '1m' },
  '1h': { sizeMs: HOUR, base: '1h' },
  '4h': { sizeMs: 4 * HOUR, base: '1h' },
  '6h': { sizeMs: 6 * HOUR, base: '1h' },
  '12h': { sizeMs: 12 * HOUR, base: '1h' },
  '1d': { sizeMs: DAY, base: '1d' },
  '7d': { sizeMs: 7 * DAY, base: '1d' },
};

/** 1970-01-05 00:00 UTC, the first Monday: 7d buckets start on Mondays; all others on the epoch. */
const MONDAY_OFFSET_MS = 4 * DAY;

function alignmentOffset(timeframe: Timeframe): number {
  return timeframe === '7d' ? MONDAY_OFFSET_MS : 0;
}

const positiveMod = (a: number, b: number) => ((a % b) + b) % b;

/** Open time of the bucket holding `time` (Unix ms). */
export function bucketStart(timeframe: Timeframe, time: number): number {
  const { sizeMs } = TIMEFRAME_SPEC[timeframe];
  return time - positiveMod(time - alignmentOffset(timeframe), sizeMs);
}

/** First bucket open time at or after `time`. */
function bucketStartAtOrAfter(timeframe: Timeframe, time: number): number {
  const start = bucketStart(timeframe, time);
  return start === time ? start : start + TIMEFRAME_SPEC[timeframe].sizeMs;
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
  const spec = TIMEFRAME_SPEC[query.timeframe];
  if (query.limit <= 0) return [];
  const params: Record<string, unknown> = {
    chain: query.chain,
    token: query.token,
    granularity: spec.base,
    offset: alignmentOffset(query.timeframe),
    size: spec.sizeMs,
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

/** CandleRow → spot.candles JSONEachRow row. */
export function candleRecord(row: CandleRow): Record<string, unknown> {
  const record: Record<string, unknown> = {
    chain: row.chain,
    token: row.token,
    granularity: row.granularity,
    time: row.time,
    seq: row.seq,
    volume_native: row.volumeNative,
    volume_usd: row.volumeUsd,
    trades: row.trades,
  };
  const sets = { price_native: row.priceNative, price_usd: row.priceUsd, market_cap_native: row.marketCapNative, market_cap_usd: row.marketCapUsd };
  for (const [prefix, value] of Object.entries(sets)) {
    record[`${prefix}_open`] = value.open;
    record[`${prefix}_high`] = value.high;
    record[`${prefix}_low`] = value.low;
    record[`${prefix}_close`] = value.close;
  }
  return record;
}
