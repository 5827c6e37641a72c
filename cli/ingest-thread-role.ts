// Runs the ingest role on a worker thread of its own (ingest-thread.ts): RPC reads, decoding and
// enrichment run beside the aggregator on the main thread instead of taking turns with it.
import type { MetricsJSON } from '../core/metrics.ts';
import type { Runtime } from './runtime.ts';
import type { IngestThreadData, IngestThreadMessage, IngestThreadRequest } from './ingest-thread.ts';
import { startWorkerWithHeap } from './worker-heap.ts';
import { createPortRequests, startError, stopWorker } from './worker-thread.ts';

/**
 * How long the stopping thread may take to stop its sources, flush the publisher and close its log
 * connection (about 1 s at 2,000 swaps/s); then it is terminated, and what it had not published is
 * read again from the chain from its cursors on the next start.
 */
const STOP_TIMEOUT_MS = 6000;

/**
 * The ingest thread's old-generation limit, MB. V8 lets a heap grow to up to 4x its live size
 * between full collections when the limit is 2 GB or more (a process's default here is 4 GB), and
 * less below: at 1 GB up to 1.6x. The thread keeps about 100 MB live (sources, decoders' registries,
 * enrichment), so the limit leaves 10x room and what it saves is garbage. It holds under the
 * process's --max-old-space-size too (worker-heap.ts).
 */
const INGEST_OLD_GENERATION_MB = 1024;

export async function startIngestThread(runtime: Runtime): Promise<void> {
  const { ctx } = runtime;
  const data: IngestThreadData = { config: ctx.config };
  const worker = startWorkerWithHeap(
    new URL('./ingest-thread.mjs', import.meta.url),
    { workerData: data },
    { oldGenerationMb: INGEST_OLD_GENERATION_MB },
  );
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
  let stopping: Promise<void> | null = null;

  const started = new Promise<void>((resolve, reject) => {
    worker.on('message', (message: IngestThreadMessage) => {
      if (message.type === 'ready') resolve();
      if (message.type === 'failed') reject(startError(message));
    });
    worker.once('error', reject);
    void exited.then((code) => reject(new Error(`the ingest thread exited during start-up (code ${code})`)));
  });
  try {
    await started;
  } catch (error) {
    await worker.terminate();
    throw error;
  }

  const metricsRequests = createPortRequests<MetricsJSON>();
  const request = (message: IngestThreadRequest) => worker.postMessage(message);
  worker.on('message', (message: IngestThreadMessage) => {
    if (message.type === 'metrics') metricsRequests.answer(message.id, message.metrics);
    if (message.type === 'fatal') runtime.fail(`ingest:${message.part}`, new Error(message.message));
  });
  worker.on('error', (error) => runtime.fail('ingest-thread', error));
  void exited.then((code) => {
    // Metrics asked for after the thread ended are answered empty rather than never.
    metricsRequests.abandon([]);
    if (!stopping) runtime.fail('ingest-thread', new Error(`the ingest thread exited (code ${code})`));
  });
  runtime.addMetricsThread({
    metrics: async () => (stopping ? [] : metricsRequests.ask((id) => request({ type: 'metrics', id }))),
  });
  runtime.add({
    name: 'ingest',
    alongside: true,
    stop() {
      stopping ??= stopWorker(worker, exited, {
        name: 'ingest thread',
        timeoutMs: STOP_TIMEOUT_MS,
        logger: ctx.logger,
      });
      return stopping;
    },
  });
}
