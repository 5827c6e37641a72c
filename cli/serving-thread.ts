// The serving thread of `spot up`: the REST API and the stream edge on a worker thread of their
// own, so requests and frames never queue behind ingest, decoding, aggregation or store writes on
// the main thread. It reads the embedded log through a read-only connection (appends wake it
// through the log's BroadcastChannel) and reaches chDB, which binds one data dir per process,
// through the main thread's SQL endpoint on loopback (cold reads only: hot views are in this thread).
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { ConfigError, type Config } from '../core/config.ts';
import { createContext } from '../core/context.ts';
import { createEmbeddedLog, embeddedLogPath } from '../core/eventlog/index.ts';
import { createLogger } from '../core/logger.ts';
import type { OpsPeer } from '../query-api/ops-routes.ts';
import { startApi, startEdge } from './roles.ts';
import { currentThreadId } from './thread-priority.ts';
import { createRuntime, type Endpoints } from './runtime.ts';

export interface ServingThreadData {
  config: Config;
}

/** Messages the serving thread posts to the main thread. */
export type ServingThreadMessage =
  /** threadId: this thread's kernel id (Linux), so the main thread can leave its priority alone. */
  | { type: 'ready'; endpoints: Endpoints; threadId: number | null }
  | { type: 'failed'; message: string; variable?: string }
  | { type: 'stopped' }
  | { type: 'ops-request'; id: number; what: 'metrics' | 'readiness' };

/** Messages the main thread posts to the serving thread: stop, or the answer to an ops request. */
export type MainThreadMessage = 'stop' | { type: 'ops-answer'; id: number; answer: unknown };

const port = parentPort!;
const { config } = workerData as ServingThreadData;
const ctx = createContext(
  config,
  createLogger(config.logLevel, process.stderr, config.logFormat).child({ thread: 'serving' }),
);
const post = (message: ServingThreadMessage) => port.postMessage(message);

/** How often the thread logs its event-loop delay and utilisation (what a request may wait behind). */
const LOOP_REPORT_MS = 30_000;
const loopDelay = monitorEventLoopDelay({ resolution: 5 });
loopDelay.enable();
let lastUtilization = performance.eventLoopUtilization();
// This thread's GC pauses: what its event loop may stop for beside the work it does.
const gcPauses = { count: 0, totalMs: 0, maxMs: 0 };
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcPauses.count++;
    gcPauses.totalMs += entry.duration;
    if (entry.duration > gcPauses.maxMs) gcPauses.maxMs = entry.duration;
  }
});
gcObserver.observe({ entryTypes: ['gc'] });
const loopReport = setInterval(() => {
  const utilization = performance.eventLoopUtilization(lastUtilization);
  lastUtilization = performance.eventLoopUtilization();
  const ms = (ns: number) => Math.round(ns / 1e4) / 100;
  const heap = getHeapStatistics();
  ctx.logger.info(
    {
      component: 'serving-loop',
      delayMs: { p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) },
      utilization: Math.round(utilization.utilization * 1000) / 1000,
      // This thread's own V8 heap (process RSS covers every thread): what the hot views cost.
      heapMB: Math.round(heap.used_heap_size / 1e6),
      heapCommittedMB: Math.round(heap.total_heap_size / 1e6),
      // Both semi-spaces as they stand (the thread's young generation is sized in serving-role.ts).
      newSpaceMB: Math.round(
        (getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0) / 1e6,
      ),
      gc: { count: gcPauses.count, totalMs: Math.round(gcPauses.totalMs), maxMs: Math.round(gcPauses.maxMs) },
    },
    'serving thread event loop',
  );
  loopDelay.reset();
  gcPauses.count = gcPauses.totalMs = gcPauses.maxMs = 0;
}, LOOP_REPORT_MS);
loopReport.unref();

// On Kafka the thread is one more client of the cluster; embedded, a read-only reader of the file.
// /metrics and /readyz on the REST and stream ports also cover the main thread (ingest, aggregator,
// store): asked for over the thread's port and merged with this thread's own.
const pendingOps = new Map<number, (answer: unknown) => void>();
let nextOpsRequest = 0;
const askMainThread = <T>(what: 'metrics' | 'readiness') =>
  new Promise<T>((resolve) => {
    const id = nextOpsRequest++;
    pendingOps.set(id, resolve as (answer: unknown) => void);
    post({ type: 'ops-request', id, what });
  });
const opsPeer: OpsPeer = {
  metrics: () => askMainThread('metrics'),
  readiness: () => askMainThread('readiness'),
};
const runtime = await createRuntime(ctx, {
  ...(config.kafkaBrokers
    ? {}
    : { log: createEmbeddedLog(ctx, { path: embeddedLogPath(config.dataDir), readonly: true }) }),
  opsPeer,
});
port.on('message', (message: MainThreadMessage) => {
  if (typeof message === 'object' && message.type === 'ops-answer') {
    pendingOps.get(message.id)?.(message.answer);
    pendingOps.delete(message.id);
    return;
  }
  if (message !== 'stop') return;
  // Exits the thread once stopped: a handle some part left open must not hold the process's shutdown.
  void runtime.stop().finally(() => {
    post({ type: 'stopped' });
    process.exit(0);
  });
});
try {
  const api = await startApi(runtime);
  await startEdge(runtime, api.views);
  post({ type: 'ready', endpoints: runtime.endpoints, threadId: currentThreadId() });
} catch (error) {
  await runtime.stop();
  post(
    error instanceof ConfigError
      ? { type: 'failed', message: error.message.slice(error.variable.length + 2), variable: error.variable }
      : { type: 'failed', message: (error as Error).stack ?? String(error) },
  );
}
