// Counters and gauges kept in memory; roles read them for logs and benchmarks.
export interface Metrics {
  inc(name: string, by?: number): void;
  set(name: string, value: number): void;
  get(name: string): number;
  snapshot(): Record<string, number>;
}

export function createMetrics(): Metrics {
  const values = new Map<string, number>();
  return {
    inc(name, by = 1) {
      values.set(name, (values.get(name) ?? 0) + by);
    },
    set(name, value) {
      values.set(name, value);
    },
    get(name) {
      return values.get(name) ?? 0;
    },
    snapshot() {
      return Object.fromEntries(values);
    },
  };
}
