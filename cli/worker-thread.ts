// What `spot up`'s worker threads (serving, ingest) share: the thread's context from the config the
// main thread handed it, a start-up failure carried across the port (a configuration error keeps
// the variable it names), and the main thread's bounded stop.
import { parentPort, workerData, type Worker } from 'node:worker_threads';
import { ConfigError, type Config } from '../core/config.ts';
import { createContext, type Context } from '../core/context.ts';
import { createLogger, type Logger } from '../core/logger.ts';

export interface ThreadData {
  config: Config;
}

export type StartFailure = { type: 'failed'; message: string; variable?: string };

/** In the worker: its context (logs tagged with `thread`) and a typed post to the main thread. */
export function threadContext<Message>(thread: string): { ctx: Context; post(message: Message): void } {
  const { config } = workerData as ThreadData;
  const ctx = createContext(config, createLogger(config.logLevel, process.stderr, config.logFormat).child({ thread }));
  return { ctx, post: (message) => parentPort!.postMessage(message) };
}

/** In the worker: the message for a start that threw. */
export function startFailure(error: unknown): StartFailure {
  return error instanceof ConfigError
    ? { type: 'failed', message: error.message.slice(error.variable.length + 2), variable: error.variable }
    : { type: 'failed', message: (error as Error).stack ?? String(error) };
}

/** In the main thread: the error a start failure stands for. */
export function startError(failure: StartFailure): Error {
  return failure.variable ? new ConfigError(failure.variable, failure.message) : new Error(failure.message);
}

/** In the main thread: asks the worker to stop, terminates it after `timeoutMs`, resolves once it exited. */
export async function stopWorker(
  worker: Worker,
  exited: Promise<number>,
  options: { name: string; timeoutMs: number; logger: Logger },
): Promise<void> {
  worker.postMessage('stop');
  const timeout = setTimeout(() => {
    options.logger.warn({ timeoutMs: options.timeoutMs }, `${options.name} did not stop in time; terminating it`);
    void worker.terminate();
  }, options.timeoutMs);
  await exited;
  clearTimeout(timeout);
}

/**
 * Requests to the thread on the other side of a port, each answered by a message carrying its id.
 * `abandon` answers what is still pending (the other side is gone) so no caller waits forever.
 */
export function createPortRequests<Answer>() {
  const pending = new Map<number, (answer: Answer) => void>();
  let next = 0;
  return {
    /** `send` posts the request with its id. */
    ask(send: (id: number) => void): Promise<Answer> {
      return new Promise((resolve) => {
        const id = next++;
        pending.set(id, resolve);
        send(id);
      });
    },
    answer(id: number, value: Answer): void {
      pending.get(id)?.(value);
      pending.delete(id);
    },
    abandon(value: Answer): void {
      for (const resolve of pending.values()) resolve(value);
      pending.clear();
    },
  };
}
