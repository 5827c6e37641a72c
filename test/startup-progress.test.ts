// spot up's start-up progress: the warm start is over only once the aggregator is near the log's
// end and every followed chain's newest block is near the wall clock, as read from the metrics of
// every thread (the ingest thread's included).
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { loadConfig } from '../core/config.ts';
import { createContext } from '../core/context.ts';
import type { MetricsJSON } from '../core/metrics.ts';
import { TOPICS } from '../core/topics.ts';
import { watchStartup } from '../cli/progress.ts';
import { captureLog } from './helpers/log-lines.ts';
import type { Runtime, Stoppable } from '../cli/runtime.ts';

/** A runtime whose log holds `inLog` input messages and whose other threads report `behind` seconds. */
function fakeRuntime(state: { inLog: number; behindSeconds: number | null; history?: number }) {
  const { logger, lines } = captureLog();
  const ctx = createContext(loadConfig({ SPOT_LOG_FORMAT: 'json' }), logger);
  const parts: Stoppable[] = [];
  const threadMetrics = (): MetricsJSON =>
    [
      ...(state.behindSeconds === null
        ? []
        : [
            {
              name: 'spot_ingest_behind_seconds',
              help: '',
              type: 'gauge' as never,
              aggregator: 'sum' as const,
              values: [
                { labels: { chain: 'solana' }, value: 1 },
                { labels: { chain: 'base' }, value: state.behindSeconds },
              ],
            },
          ]),
      ...(state.history === undefined
        ? []
        : [
            {
              name: 'spot_named_counter',
              help: '',
              type: 'gauge' as never,
              aggregator: 'sum' as const,
              values: [{ labels: { name: 'ingest.simulator.history_progress' }, value: state.history }],
            },
          ]),
    ] as unknown as MetricsJSON;
  const runtime = {
    ctx,
    log: {
      endOffsets: async (topic: string) =>
        new Map([[0, topic === TOPICS.swaps.name ? state.inLog : 0]]) as Map<number, number>,
    },
    add: (part: Stoppable) => parts.push(part),
    metricsJSON: async () => threadMetrics(),
  } as unknown as Runtime;
  const output = Object.assign(new Writable({ write: (_c, _e, done) => done() }), { isTTY: false });
  return { runtime, lines, parts, output: output as unknown as NodeJS.WriteStream };
}

const caughtUp = (lines: Array<Record<string, unknown>>) =>
  lines.some((line) => line.msg === 'caught up with the event log');
const tick = () => new Promise((resolve) => setTimeout(resolve, 1200));

describe('start-up progress (spot up)', function () {
  this.timeout(15_000);

  it('waits for the furthest-behind chain to come within two minutes of the wall clock', async () => {
    const state = { inLog: 500, behindSeconds: (6 * 3600) as number | null };
    const { runtime, lines, parts, output } = fakeRuntime(state);
    runtime.ctx.metrics.set('aggregator.processed', 500);
    watchStartup(runtime, output);
    try {
      await tick();
      // The aggregator has read all there is, but ingest is still reading the chains' history.
      assert.equal(caughtUp(lines), false);
      const catching = lines.find((line) => line.msg === 'catching up');
      assert.equal(catching?.ingestBehindS, 6 * 3600);
      state.behindSeconds = 3;
      await tick();
      assert.equal(caughtUp(lines), true);
    } finally {
      for (const part of parts) await part.stop();
    }
  });

  it('waits for the simulator history and the aggregator in turn', async () => {
    const state = { inLog: 5000, behindSeconds: null as number | null, history: 0.4 };
    const { runtime, lines, parts, output } = fakeRuntime(state);
    runtime.ctx.metrics.set('aggregator.processed', 5000);
    watchStartup(runtime, output);
    try {
      await tick();
      assert.equal(caughtUp(lines), false, 'history at 40 %');
      state.history = 1;
      state.inLog = 9000; // the history's last messages, not yet aggregated
      await tick();
      assert.equal(caughtUp(lines), false, 'aggregator 4,000 behind');
      runtime.ctx.metrics.set('aggregator.processed', 8500);
      await tick();
      assert.equal(caughtUp(lines), true);
    } finally {
      for (const part of parts) await part.stop();
    }
  });
});
