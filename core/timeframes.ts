// Candle timeframes and bucket alignment, shared by the aggregator (open buckets), the store
// (query-time rollups) and the API, so every part opens a bucket at the same instant.
import type { Timeframe } from './schemas.ts';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export const TIMEFRAME_MS: Record<Timeframe, number> = {
  '1s': SECOND,
  '5s': 5 * SECOND,
  '15s': 15 * SECOND,
  '30s': 30 * SECOND,
  '1m': MINUTE,
  '3m': 3 * MINUTE,
  '5m': 5 * MINUTE,
  '15m': 15 * MINUTE,
  '30m': 30 * MINUTE,
  '1h': HOUR,
  '4h': 4 * HOUR,
  '6h': 6 * HOUR,
  '12h': 12 * HOUR,
  '1d': DAY,
  '7d': 7 * DAY,
};

/** 1970-01-05 00:00 UTC, the first Monday after the epoch. */
const FIRST_MONDAY_MS = 4 * DAY;

/** Where a timeframe's buckets are anchored: 7d on Mondays 00:00 UTC, the others on the epoch. */
export function alignmentOffsetMs(timeframe: Timeframe): number {
  return timeframe === '7d' ? FIRST_MONDAY_MS : 0;
}

/** Open time of the bucket holding `time` (Unix ms). */
export function bucketStart(timeframe: Timeframe, time: number): number {
  const size = TIMEFRAME_MS[timeframe];
  return time - ((((time - alignmentOffsetMs(timeframe)) % size) + size) % size);
}
