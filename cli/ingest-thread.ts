// The ingest thread of `spot up`: block sources (or the simulator's chain node), decoders,
// enrichment, promotions and the ingest publisher on a worker thread of their own. It appends to
// the embedded log through its own connection (SQLite serialises the two writers; its commits wake
// the other threads' consumers through the log's BroadcastChannel), so RPC reads and decoding run
// beside the aggregator instead of taking turns with it on the main thread.
import { parentPort } from 'node:worker_threads';
import { createEventLog } from '../core/eventlog/index.ts';
import type { MetricsJSON } from '../core/metrics.ts';
import { startIngest } from './ingest-role.ts';
import { createRuntime } from './runtime.ts';
import { reportThreadLoop } from './thread-report.ts';
import { startFailure, threadContext, type StartFailure, type ThreadData } from './worker-thread.ts';

export type IngestThreadData = ThreadData;

/** Messages the ingest thread posts to the main thread. */
export type IngestThreadMessage =
  | { type: 'ready' }
  | StartFailure
  /** A part of ingest cannot go on (runtime.fail in this thread): the process shuts down. */
  | { type: 'fatal'; part: string; message: string }
  | { type: 'metrics'; id: number; metrics: MetricsJSON };

/** Messages the main thread posts to the ingest thread: stop, or a request for its metrics. */
export type IngestThreadRequest = 'stop' | { type: 'metrics'; id: number };

const port = parentPort!;
const { ctx, post } = threadContext<IngestThreadMessage>('ingest');
reportThreadLoop(ctx.logger, 'ingest-loop', 'ingest thread event loop');

// The main thread created the topics and runs the log's retention; this connection only appends.
const runtime = await createRuntime(ctx, { log: createEventLog(ctx, { retention: false }) });
void runtime.failed.then(({ part, error }) => post({ type: 'fatal', part, message: error.stack ?? error.message }));

port.on('message', (message: IngestThreadRequest) => {
  if (typeof message === 'object' && message.type === 'metrics') {
    void ctx.metrics.exposeJSON().then((metrics) => post({ type: 'metrics', id: message.id, metrics }));
    return;
  }
  if (message !== 'stop') return;
  // Exits once stopped (the publisher flushed, the log closed): a handle some part left open must
  // not hold the process's shutdown.
  void runtime.stop().finally(() => process.exit(0));
});

try {
  await startIngest(runtime);
  post({ type: 'ready' });
} catch (error) {
  await runtime.stop();
  post(startFailure(error));
}
