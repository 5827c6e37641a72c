// Latency summary for the plain-JavaScript child programs (same rule as stats.ts summarize():
// nearest-rank percentiles over every sample).
export function summarize(samples) {
  const sorted = Float64Array.from(samples).sort();
  const at = (p) =>
    sorted.length
      ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
      : Number.NaN;
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: sorted.length,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
    p50: at(50),
    p99: at(99),
    p999: at(99.9),
    max: sorted.length ? sorted[sorted.length - 1] : Number.NaN,
  };
}
