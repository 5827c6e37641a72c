// The simulator's node process (node-process.ts starts it): the market and its chain node, with
// the market's labels sent to the ingest process for the label import and its metrics reported
// every second. It ignores terminal signals (the ingest process stops it in order) and exits at
// once when the ingest process goes away.
import { createContext, type Context } from '../../core/context.ts';
import { createLogger } from '../../core/logger.ts';
import { createCursorStore, type CursorStore } from '../cursor-store.ts';
import type { LabelImporter, LabelImportResult } from '../labels/import.ts';
import { startSimulatorNode } from './node.ts';
import { anchorsOf, processedOf } from './node-cursors.ts';
import type { NodeProcessReport, NodeProcessRequest } from './node-process.ts';
import { createSimulatorSource, type SimulatorSource } from './runner.ts';

const METRICS_EVERY_MS = 1000;

const send = (message: NodeProcessReport, then?: () => void) => {
  if (process.connected) process.send!(message, undefined, {}, () => then?.());
  else then?.();
};

let ctx: Context | null = null;
let cursors: CursorStore | null = null;
let simulator: SimulatorSource | null = null;
let metricsTimer: NodeJS.Timeout | null = null;
let nextLabels = 1;
const labelReplies = new Map<number, (reply: Extract<NodeProcessRequest, { type: 'labels-imported' }>) => void>();

/** The label import of the ingest process, one request per batch of labels. */
const labels: LabelImporter = {
  importText(text, options) {
    const id = nextLabels++;
    return new Promise<LabelImportResult>((resolve, reject) => {
      labelReplies.set(id, (reply) => {
        labelReplies.delete(id);
        if (reply.result) resolve(reply.result);
        else reject(new Error(reply.error ?? 'no answer'));
      });
      send({ type: 'labels', id, text, options });
    });
  },
};

const reportMetrics = () => {
  if (ctx) send({ type: 'metrics', values: ctx.metrics.snapshot() });
};

async function start(request: Extract<NodeProcessRequest, { type: 'start' }>): Promise<void> {
  const { config } = request;
  ctx = createContext(
    config,
    createLogger(config.logLevel, process.stderr, config.logFormat).child({ process: 'simulator-node' }),
  );
  const store = createCursorStore(ctx, { path: request.cursorsPath });
  cursors = store;
  let firstBlocks: Partial<Record<string, number>> = {};
  let port = 0;
  const source = createSimulatorSource(ctx, {
    seed: config.simSeed,
    rate: config.simRate,
    warmHours: config.simWarmHours,
    chains: config.simChains,
    ...(config.simNow !== null ? { now: () => config.simNow! } : {}),
    labels,
    // The ingest process fails over it (exit 1, a supervisor restarts): a silent market would look like a stalled chain.
    onFailure: (error) => send({ type: 'failed', message: error.message }),
    // A history batch of five minutes keeps the readers' round trips few.
    historyChunkMs: 300_000,
    openNode: async (startTime: number) => {
      const node = await startSimulatorNode(ctx!, {
        seed: String(config.simSeed),
        chains: config.simChains,
        start: startTime,
        anchors: anchorsOf(store, config.simChains),
        processed: (chain) => processedOf(store, chain),
      });
      port = Number(new URL(node.url(config.simChains[0]!)).port);
      firstBlocks = Object.fromEntries(config.simChains.map((chain) => [chain, node.firstBlock(chain)]));
      return node;
    },
  });
  simulator = source;
  await source.start();
  metricsTimer = setInterval(reportMetrics, METRICS_EVERY_MS);
  send({ type: 'ready', port, firstBlocks });
}

async function stopMarket(): Promise<void> {
  await simulator?.stop();
  reportMetrics();
}

async function close(): Promise<void> {
  await stopMarket();
  if (metricsTimer) clearInterval(metricsTimer);
  await simulator?.node?.close();
  cursors?.close();
  reportMetrics();
}

process.on('message', (message: NodeProcessRequest) => {
  switch (message.type) {
    case 'start':
      start(message).catch((error: Error) => {
        ctx?.logger.error({ err: error }, 'simulator node failed to start');
        send({ type: 'failed', message: error.message }, () => process.exit(1));
      });
      break;
    case 'labels-imported':
      labelReplies.get(message.id)?.(message);
      break;
    case 'stop':
      void stopMarket().then(() => send({ type: 'stopped' }));
      break;
    case 'close':
      void close().then(() => send({ type: 'closed' }, () => process.exit(0)));
      break;
  }
});

// Terminal signals reach the whole process group: the ingest process stops this one in order.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => undefined);
// The ingest process went away (a crash, kill -9): nothing reads the node any more.
process.on('disconnect', () => {
  if (metricsTimer) clearInterval(metricsTimer);
  for (const reply of [...labelReplies.values()])
    reply({ type: 'labels-imported', id: 0, error: 'the ingest process went away' });
  void (simulator?.stop() ?? Promise.resolve()).finally(() => process.exit());
});
