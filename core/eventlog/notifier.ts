// Wakes consumers the moment a produce commits: in this thread directly, in the process's other
// threads (and other log instances on the same file) through one BroadcastChannel per topic, named
// after the file and the topic. No timers, and per topic: a consumer sleeps until one of its own
// topics gets an append, so an idle one costs nothing while other topics are written, and a thread
// that reads none of a topic is not woken by its appends at all (a channel delivers to its
// listeners only: the ingest thread's raw swaps reach the aggregator, not the serving thread). A
// topic's version moves on every notify, so a consumer that read its stamp before fetching never
// sleeps through a commit it raced with.
import { BroadcastChannel } from 'node:worker_threads';

export interface Notifier {
  /** Moves whenever one of `topics` is notified: read it before fetching, then wait with it. */
  stamp(topics: readonly string[]): number;
  /** A commit to `topic` by this instance: wakes local waiters and tells the other instances on the channel. */
  notify(topic: string): void;
  /**
   * Resolves when `stamp(topics)` differs from `seen`, or after `timeoutMs` when one is given (a
   * cross-process poll).
   */
  wait(topics: readonly string[], seen: number, timeoutMs?: number): Promise<void>;
  close(): void;
}

/** `channel`: one name per log file; every instance in the process that uses it hears the others' commits. */
export function createNotifier(channel?: string): Notifier {
  const versions = new Map<string, number>();
  const waiters = new Map<string, Set<() => void>>();
  // One channel object per topic, for posting and, once this instance reads the topic, listening:
  // a BroadcastChannel does not hear its own posts, other instances' objects do.
  const channels = new Map<string, BroadcastChannel>();
  const listened = new Set<string>();
  const channelOf = (topic: string): BroadcastChannel => {
    let topicChannel = channels.get(topic);
    if (!topicChannel) {
      topicChannel = new BroadcastChannel(`${channel}#topic:${topic}`);
      // Listening alone must not keep a process (or worker) alive.
      topicChannel.unref();
      channels.set(topic, topicChannel);
    }
    return topicChannel;
  };
  // Listening starts when a topic is first stamped, before the fetch that stamp guards: a commit
  // after the stamp is heard, one before it is seen by the fetch.
  const listen = (topics: readonly string[]) => {
    if (channel === undefined) return;
    for (const topic of topics) {
      if (listened.has(topic)) continue;
      listened.add(topic);
      const topicChannel = channelOf(topic);
      topicChannel.onmessage = () => wakeLocal(topic);
      // Setting onmessage refs the channel again.
      topicChannel.unref();
    }
  };
  const stamp = (topics: readonly string[]) => {
    listen(topics);
    let sum = 0;
    for (const topic of topics) sum += versions.get(topic) ?? 0;
    return sum;
  };
  const wakeLocal = (topic: string) => {
    versions.set(topic, (versions.get(topic) ?? 0) + 1);
    const woken = waiters.get(topic);
    if (!woken || woken.size === 0) return;
    // Each waker takes itself out of every topic's set.
    for (const wake of [...woken]) wake();
  };
  return {
    stamp,
    notify(topic) {
      wakeLocal(topic);
      if (channel !== undefined) channelOf(topic).postMessage(null);
    },
    wait(topics, seen, timeoutMs) {
      if (stamp(topics) !== seen) return Promise.resolve();
      return new Promise((resolve) => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const done = () => {
          if (timer) clearTimeout(timer);
          for (const topic of topics) waiters.get(topic)?.delete(done);
          resolve();
        };
        if (timeoutMs !== undefined && timeoutMs > 0) timer = setTimeout(done, timeoutMs);
        for (const topic of topics) {
          let set = waiters.get(topic);
          if (!set) waiters.set(topic, (set = new Set()));
          set.add(done);
        }
      });
    },
    close() {
      for (const topicChannel of channels.values()) topicChannel.close();
      channels.clear();
    },
  };
}
