// The simulator's market and chain node in a process of their own, as a chain node is on mainnet:
// its model, block encoding and JSON-RPC serving neither share the ingest process's heap nor take
// turns on its main thread. The ingest role reads it over JSON-RPC like any node; what still
// crosses to this process is the market's wallet labels (applied through the label import here,
// so they reach the log like any imported list) and the node's metrics (merged into this
// process's, so /metrics and the start-up progress show them). Its start, stop and exit follow
// this process: it stops when asked, and exits at once if this process goes away.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Chain } from '../../core/chains.ts';
import type { Config } from '../../core/config.ts';
import type { Context } from '../../core/context.ts';
import type { LabelImporter, LabelImportOptions, LabelImportResult } from '../labels/import.ts';

/** Messages to the node process. */
export type NodeProcessRequest =
  | { type: 'start'; config: Config; cursorsPath: string }
  | { type: 'labels-imported'; id: number; result?: LabelImportResult; error?: string }
  /** Stop the market after the batch in flight is processed; the node keeps serving its blocks. */
  | { type: 'stop' }
  /** Close the node and exit. */
  | { type: 'close' };

/** Messages from the node process. */
export type NodeProcessReport =
  | { type: 'ready'; port: number; firstBlocks: Partial<Record<Chain, number>> }
  | { type: 'labels'; id: number; text: string; options: LabelImportOptions }
  | { type: 'metrics'; values: Record<string, number> }
  | { type: 'stopped' }
  | { type: 'closed' }
  | { type: 'failed'; message: string };

export interface SimulatorNodeProcess {
  readonly pid: number;
  /** The node's WebSocket endpoint of a chain (HTTP on the same path). */
  wsUrl(chain: Chain): string;
  /** The first block (slot) served on a chain: where a reader without a cursor starts. */
  firstBlock(chain: Chain): number;
  /** Stops the market after its batch in flight was processed; the node still answers. */
  stop(): Promise<void>;
  /** Closes the node; resolves once the process exited. */
  close(): Promise<void>;
}

export interface SimulatorNodeProcessOptions {
  /** The ingest role's cursor file: the node reads where its readers are (node-cursors.ts). */
  cursorsPath: string;
  /** Where the market's wallet labels are applied. */
  labels: LabelImporter;
  /** Called when the process exits or fails unasked (the ingest role cannot go on without it). */
  onFailure(error: Error): void;
}

/** How long the node may take to start (a warm start's first history batch is generated first). */
const START_TIMEOUT_MS = 120_000;
/** How long a stop or close may take before the process is killed. */
const STOP_TIMEOUT_MS = 8_000;

export async function startSimulatorNodeProcess(
  ctx: Context,
  options: SimulatorNodeProcessOptions,
): Promise<SimulatorNodeProcess> {
  const logger = ctx.logger.child({ component: 'simulator-node-process' });
  const child: ChildProcess = fork(fileURLToPath(new URL('./node-process-main.mjs', import.meta.url)), [], {
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const send = (message: NodeProcessRequest) => {
    if (child.connected) child.send(message);
  };
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let closing = false;
  const waiters = new Map<NodeProcessReport['type'], () => void>();
  const next = (type: NodeProcessReport['type']) => new Promise<void>((resolve) => waiters.set(type, resolve));

  const ready = new Promise<Extract<NodeProcessReport, { type: 'ready' }>>((resolve, reject) => {
    child.on('message', (message: NodeProcessReport) => {
      switch (message.type) {
        case 'ready':
          resolve(message);
          break;
        case 'failed':
          reject(new Error(message.message));
          if (!closing) options.onFailure(new Error(`simulator node failed: ${message.message}`));
          break;
        case 'metrics':
          for (const [name, value] of Object.entries(message.values)) ctx.metrics.set(name, value);
          break;
        case 'labels':
          void options.labels.importText(message.text, message.options).then(
            (result) => send({ type: 'labels-imported', id: message.id, result }),
            (error: Error) => send({ type: 'labels-imported', id: message.id, error: error.message }),
          );
          break;
        default:
          waiters.get(message.type)?.();
      }
    });
    void exited.then((code) => reject(new Error(`the simulator node exited during start-up (code ${code})`)));
  });
  void exited.then((code) => {
    for (const resolve of waiters.values()) resolve();
    if (!closing) options.onFailure(new Error(`the simulator node exited (code ${code})`));
  });

  send({ type: 'start', config: ctx.config, cursorsPath: options.cursorsPath });
  let started: Extract<NodeProcessReport, { type: 'ready' }>;
  const startTimeout = setTimeout(() => child.kill('SIGKILL'), START_TIMEOUT_MS);
  try {
    started = await ready;
  } catch (error) {
    closing = true;
    child.kill('SIGKILL');
    await exited;
    throw error;
  } finally {
    clearTimeout(startTimeout);
  }
  logger.info({ pid: child.pid, port: started.port }, 'simulator node process started');

  /** Sends `request` and waits for `answer` (or the exit), killing the process after STOP_TIMEOUT_MS. */
  async function ask(request: NodeProcessRequest, answer: NodeProcessReport['type']): Promise<void> {
    const answered = next(answer);
    send(request);
    const timeout = setTimeout(() => {
      logger.warn(
        { request: request.type, timeoutMs: STOP_TIMEOUT_MS },
        'simulator node did not answer in time; killing it',
      );
      child.kill('SIGKILL');
    }, STOP_TIMEOUT_MS);
    await Promise.race([answered, exited]);
    clearTimeout(timeout);
  }

  let stopping: Promise<void> | null = null;
  let closed: Promise<void> | null = null;
  return {
    pid: child.pid!,
    wsUrl: (chain) => `ws://127.0.0.1:${started.port}/${chain}`,
    firstBlock: (chain) => {
      const first = started.firstBlocks[chain];
      if (first === undefined) throw new RangeError(`the simulator node serves no ${chain}`);
      return first;
    },
    stop() {
      stopping ??= ask({ type: 'stop' }, 'stopped');
      return stopping;
    },
    close() {
      closed ??= (async () => {
        closing = true;
        await ask({ type: 'close' }, 'closed');
        await exited;
      })();
      return closed;
    },
  };
}
