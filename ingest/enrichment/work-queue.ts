// The enrichment stage's one scheduling primitive: keyed jobs run by a fixed number of workers off
// the ingest path. `submit` never waits; a key already queued or running is not queued twice; the
// queue is bounded and overflow is dropped and counted, so memory is the cap, not the flood.
import type { Context } from '../../core/context.ts';

export interface WorkQueue {
  /** Queues `job` under `key`; false when dropped (queue full) or already pending. Returns at once. */
  submit(key: string, job: () => Promise<void>): boolean;
  /** Resolves when nothing is queued or running (tests, shutdown). */
  idle(): Promise<void>;
  readonly queued: number;
}

export function createWorkQueue(
  ctx: Context,
  options: { name: string; concurrency?: number; maxQueued?: number },
): WorkQueue {
  const logger = ctx.logger.child({ component: options.name });
  const concurrency = options.concurrency ?? 4;
  const maxQueued = options.maxQueued ?? 10_000;
  const queue: Array<{ key: string; job: () => Promise<void> }> = [];
  const pending = new Set<string>();
  let running = 0;
  let waiters: Array<() => void> = [];

  function pump(): void {
    while (running < concurrency && queue.length > 0) {
      const { key, job } = queue.shift()!;
      running++;
      job()
        .catch((error: Error) => logger.warn({ key, err: error.message }, 'enrichment job failed'))
        .finally(() => {
          running--;
          pending.delete(key);
          pump();
        });
    }
    if (running === 0 && queue.length === 0 && waiters.length > 0) {
      const done = waiters;
      waiters = [];
      for (const wake of done) wake();
    }
  }

  return {
    submit(key, job) {
      if (pending.has(key)) return false;
      if (queue.length >= maxQueued) {
        ctx.metrics.inc(`${options.name}_dropped`);
        return false;
      }
      pending.add(key);
      queue.push({ key, job });
      pump(); // free workers take it now, so the cap counts waiting jobs only
      return true;
    },
    idle() {
      if (running === 0 && queue.length === 0) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
    get queued() {
      return queue.length;
    },
  };
}
