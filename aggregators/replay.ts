// `spot replay`: empties the derived tables, drops the snapshots and rebuilds every table and
// compacted topic (spot.tokens.v1, spot.candles.v1) from spot.swaps.v1 and spot.token-events.v1
// from offset 0. spot.trades.v1 is not re-published: its consumers already saw those trades.
import type { Context } from '../core/context.ts';
import type { EventLog } from '../core/eventlog/types.ts';
import { TOPICS } from '../core/topics.ts';
import type { SpotStore } from '../clickhouse/types.ts';
import type { EvictedTokenStore } from '../clickhouse/aggregator-state.ts';
import { createAggregator } from './aggregator.ts';
import { dropSnapshots } from './snapshot.ts';

export interface ReplayOptions {
  log: EventLog;
  store: SpotStore;
  /** Snapshot name the rebuilt state is saved under, so `spot aggregate` resumes after it (default 'default'). */
  name?: string;
  progress?: (done: number, total: number) => void;
  /** Where the progress bar goes (default process.stderr); null prints nothing. */
  output?: NodeJS.WriteStream | null;
  /** Where idle tokens leave memory for (aggregators/eviction.ts); none keeps every token. */
  evictedStore?: EvictedTokenStore;
}

export interface ReplayResult {
  messages: number;
  ms: number;
}

export function progressBar(done: number, total: number, rate: number, width = 30): string {
  const ratio = total > 0 ? Math.min(1, done / total) : 1;
  const filled = Math.round(ratio * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(ratio * 100).toFixed(1)}% ${done}/${total} messages ${Math.round(rate)}/s`;
}

export async function runReplay(ctx: Context, options: ReplayOptions): Promise<ReplayResult> {
  const { log, store } = options;
  const output = options.output === undefined ? process.stderr : options.output;
  const started = Date.now();
  await store.truncateDerived();
  dropSnapshots(ctx);
  let total = 0;
  for (const topic of [TOPICS.swaps.name, TOPICS.tokenEvents.name]) {
    for (const end of (await log.endOffsets(topic)).values()) total += end;
  }
  const aggregator = createAggregator(ctx, {
    log,
    store,
    name: options.name ?? 'default',
    publish: true,
    publishTrades: false,
    evictedStore: options.evictedStore,
  });
  let lastLine = 0;
  const report = (final: boolean) => {
    const done = aggregator.processed();
    options.progress?.(done, total);
    if (!output) return;
    const rate = done / Math.max(0.001, (Date.now() - started) / 1000);
    if (output.isTTY) {
      output.write(`\r${progressBar(done, total, rate)}${final ? '\n' : ''}`);
    } else if (final || Date.now() - lastLine >= 5000) {
      lastLine = Date.now();
      output.write(`replay: ${progressBar(done, total, rate)}\n`);
    }
  };
  const timer = setInterval(() => report(false), output?.isTTY ? 200 : 1000);
  try {
    await aggregator.start();
    await aggregator.drain();
  } finally {
    clearInterval(timer);
    await aggregator.stop();
  }
  report(true);
  return { messages: aggregator.processed(), ms: Date.now() - started };
}
