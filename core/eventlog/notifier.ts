// Wakes in-process consumers the moment a produce commits. `version` moves on every notify,
// so a consumer that read it before fetching never sleeps through a commit it raced with.

export interface Notifier {
  readonly version: number;
  notify(): void;
  /** Resolves when `version` differs from `seen`, or after `timeoutMs` (the cross-process poll). */
  wait(seen: number, timeoutMs: number): Promise<void>;
}

export function createNotifier(): Notifier {
  let version = 0;
  const waiters = new Set<() => void>();
  return {
    get version() {
      return version;
    },
    notify() {
      version++;
      const woken = [...waiters];
      waiters.clear();
      for (const wake of woken) wake();
    },
    wait(seen, timeoutMs) {
      if (version !== seen) return Promise.resolve();
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        waiters.add(done);
      });
    },
  };
}
