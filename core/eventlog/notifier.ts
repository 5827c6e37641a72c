// Wakes consumers the moment a produce commits: in this thread directly, in the process's other
// threads (and other log instances on the same file) through a BroadcastChannel named after the
// file. No timers: an idle consumer sleeps until something is appended. `version` moves on every
// notify, so a consumer that read it before fetching never sleeps through a commit it raced with.
import { BroadcastChannel } from 'node:worker_threads';

export interface Notifier {
  readonly version: number;
  /** A commit by this instance: wakes local waiters and tells the other instances on the channel. */
  notify(): void;
  /** Resolves when `version` differs from `seen`, or after `timeoutMs` when one is given (a cross-process poll). */
  wait(seen: number, timeoutMs?: number): Promise<void>;
  close(): void;
}

/** `channel`: one name per log file; every instance in the process that uses it hears the others' commits. */
export function createNotifier(channel?: string): Notifier {
  let version = 0;
  const waiters = new Set<() => void>();
  const wakeLocal = () => {
    version++;
    const woken = [...waiters];
    waiters.clear();
    for (const wake of woken) wake();
  };
  const broadcast = channel === undefined ? null : new BroadcastChannel(channel);
  if (broadcast) {
    broadcast.onmessage = wakeLocal;
    // Listening alone must not keep a process (or worker) alive.
    broadcast.unref();
  }
  return {
    get version() {
      return version;
    },
    notify() {
      wakeLocal();
      broadcast?.postMessage(0);
    },
    wait(seen, timeoutMs) {
      if (version !== seen) return Promise.resolve();
      return new Promise((resolve) => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const done = () => {
          if (timer) clearTimeout(timer);
          waiters.delete(done);
          resolve();
        };
        if (timeoutMs !== undefined && timeoutMs > 0) timer = setTimeout(done, timeoutMs);
        waiters.add(done);
      });
    },
    close() {
      broadcast?.close();
    },
  };
}
