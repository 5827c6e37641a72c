// Runs the REST API and the stream edge on a worker thread of their own (serving-thread.ts), so
// serving never waits behind ingest (its own thread), aggregation or store writes (the main thread).
import { writerUrl } from '../clickhouse/sql-auth.ts';
import type { Runtime } from './runtime.ts';
import { lowerIngestPriority } from './thread-priority.ts';
import { startWorkerWithHeap } from './worker-heap.ts';
import type { MainThreadMessage, ServingThreadData, ServingThreadMessage } from './serving-thread.ts';
import { startError, stopWorker } from './worker-thread.ts';

/** How long a stopping serving thread may take to close its servers and readers. */
const STOP_TIMEOUT_MS = 5000;

/**
 * The serving thread's young generation, MB: two 8 MB semi-spaces and V8's new large-object space.
 * A scavenge pauses the thread for what survives it, and the hot views' trades and token versions
 * do. Replaying a mainnet run's topics through the hot views, 32 MB semi-spaces (the main thread's)
 * paused p50 3.5 / p99 10.4 ms, 8 MB 1.6 / 4.1 ms at the same throughput (docs/performance.md).
 */
const SERVING_YOUNG_GENERATION_MB = 24;
/**
 * The serving thread's old-generation limit, MB: under 2 GB, V8 lets the heap grow to at most 1.6x
 * its live size between full collections instead of 4x. The thread keeps 150–190 MB live on the
 * mainnet profile (the hot views of a day's tokens).
 */
const SERVING_OLD_GENERATION_MB = 1024;

const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '']);

/**
 * `sqlPort`: the port of this process's SQL endpoint; the thread reaches chDB through it (chDB
 * binds one data dir per process). With a ClickHouse server configured, the thread uses that.
 */
export async function startServingThread(runtime: Runtime, sqlPort: number): Promise<void> {
  const { ctx } = runtime;
  const host = WILDCARD_HOSTS.has(ctx.config.host) ? '127.0.0.1' : ctx.config.host;
  const clickhouseUrl = ctx.config.clickhouseUrl ?? writerUrl({ ...ctx, config: { ...ctx.config, host } }, sqlPort);
  const data: ServingThreadData = { config: { ...ctx.config, clickhouseUrl } };
  const worker = startWorkerWithHeap(
    new URL('./serving-thread.mjs', import.meta.url),
    { workerData: data },
    { youngGenerationMb: SERVING_YOUNG_GENERATION_MB, oldGenerationMb: SERVING_OLD_GENERATION_MB },
  );
  let stopped: Promise<void> | null = null;
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve));

  const started = new Promise<number | null>((resolve, reject) => {
    const onMessage = (message: ServingThreadMessage) => {
      if (message.type === 'ready') {
        Object.assign(runtime.endpoints, message.endpoints);
        resolve(message.threadId);
      }
      if (message.type === 'failed') {
        reject(startError(message));
      }
    };
    worker.on('message', onMessage);
    worker.once('error', reject);
    void exited.then((code) => reject(new Error(`the serving thread exited during start-up (code ${code})`)));
  });
  let servingThreadId: number | null;
  try {
    servingThreadId = await started;
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  lowerIngestPriority(ctx.config.ingestNice, servingThreadId, ctx.logger);

  // The main thread's side of the ops endpoints the serving thread answers (its metrics, its readiness).
  const ops = runtime.ops();
  worker.on('message', (message: ServingThreadMessage) => {
    if (message.type !== 'ops-request') return;
    const answer = message.what === 'metrics' ? runtime.metricsJSON() : ops.readiness();
    void answer.then((value) => {
      const reply: MainThreadMessage = { type: 'ops-answer', id: message.id, answer: value };
      worker.postMessage(reply);
    });
  });
  worker.on('error', (error) => ctx.logger.error({ err: error }, 'serving thread failed'));
  void exited.then((code) => {
    if (!stopped) ctx.logger.error({ code }, 'serving thread exited; REST and the stream are down');
  });
  runtime.add({
    name: 'serving-thread',
    alongside: true,
    stop() {
      stopped ??= stopWorker(worker, exited, {
        name: 'serving thread',
        timeoutMs: STOP_TIMEOUT_MS,
        logger: ctx.logger,
      });
      return stopped;
    },
  });
}
