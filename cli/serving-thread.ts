// The serving thread of `spot up`: the REST API and the stream edge on a worker thread of their
// own, so requests and frames never queue behind ingest and decoding (the ingest thread) or
// aggregation and store writes (the main thread). It reads the embedded log through a read-only connection (appends wake it
// through the log's BroadcastChannel) and reaches chDB, which binds one data dir per process,
// through the main thread's SQL endpoint on loopback (cold reads only: hot views are in this thread).
import { parentPort } from 'node:worker_threads';
import { createEmbeddedLog, embeddedLogPath } from '../core/eventlog/index.ts';
import type { OpsPeer } from '../query-api/ops-routes.ts';
import { startApi, startEdge } from './roles.ts';
import { currentThreadId } from './thread-priority.ts';
import { reportThreadLoop } from './thread-report.ts';
import { createRuntime, type Endpoints } from './runtime.ts';
import {
  createPortRequests,
  startFailure,
  threadContext,
  type StartFailure,
  type ThreadData,
} from './worker-thread.ts';

export type ServingThreadData = ThreadData;

/** Messages the serving thread posts to the main thread. */
export type ServingThreadMessage =
  /** threadId: this thread's kernel id (Linux), so the main thread can leave its priority alone. */
  | { type: 'ready'; endpoints: Endpoints; threadId: number | null }
  | StartFailure
  | { type: 'stopped' }
  | { type: 'ops-request'; id: number; what: 'metrics' | 'readiness' };

/** Messages the main thread posts to the serving thread: stop, or the answer to an ops request. */
export type MainThreadMessage = 'stop' | { type: 'ops-answer'; id: number; answer: unknown };

const port = parentPort!;
const { ctx, post } = threadContext<ServingThreadMessage>('serving');
const { config } = ctx;

reportThreadLoop(ctx.logger, 'serving-loop', 'serving thread event loop');

// On Kafka the thread is one more client of the cluster; embedded, a read-only reader of the file
// whose consumers (hot views, stream edge) decode each batch once between them (read-share.ts).
// /metrics and /readyz on the REST and stream ports also cover the main thread (aggregator, store)
// and the ingest thread: asked for over the thread's port and merged with this thread's own.
const mainThread = createPortRequests<unknown>();
const askMainThread = <T>(what: 'metrics' | 'readiness') =>
  mainThread.ask((id) => post({ type: 'ops-request', id, what })) as Promise<T>;
const opsPeer: OpsPeer = {
  metrics: () => askMainThread('metrics'),
  readiness: () => askMainThread('readiness'),
};
const runtime = await createRuntime(ctx, {
  ...(config.kafkaBrokers
    ? {}
    : { log: createEmbeddedLog(ctx, { path: embeddedLogPath(config.dataDir), readonly: true, shareReads: true }) }),
  opsPeer,
});
port.on('message', (message: MainThreadMessage) => {
  if (typeof message === 'object' && message.type === 'ops-answer') {
    mainThread.answer(message.id, message.answer);
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
  post(startFailure(error));
}
