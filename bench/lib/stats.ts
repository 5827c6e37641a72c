// Percentiles and rates over raw samples (no histogram bucketing: every sample is kept).

export interface LatencySummary {
  count: number;
  mean: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
}

/** Nearest-rank percentile of ascending-sorted values; NaN when empty. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function summarize(samples: ArrayLike<number>): LatencySummary {
  const sorted = Float64Array.from(samples as ArrayLike<number>).sort();
  let sum = 0;
  for (let i = 0; i < sorted.length; i++) sum += sorted[i]!;
  return {
    count: sorted.length,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    p999: percentile(sorted, 99.9),
    max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
  };
}

export const perSecond = (count: number, ms: number) => (ms > 0 ? (count * 1000) / ms : Number.NaN);

export const round = (value: number, digits = 2) => {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
};

/** Least-squares slope of y over x (y units per x unit); NaN with fewer than two distinct x. */
export function slope(points: ReadonlyArray<readonly [number, number]>): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  let sx = 0;
  let sy = 0;
  for (const [x, y] of points) {
    sx += x;
    sy += y;
  }
  const mx = sx / n;
  const my = sy / n;
  let sxy = 0;
  let sxx = 0;
  for (const [x, y] of points) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
  }
  return sxx > 0 ? sxy / sxx : Number.NaN;
}
