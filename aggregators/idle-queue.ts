// Wallets in memory in the order they may go idle, one queue per chain: the wallet park takes the
// due ones from the front instead of a pass through every wallet in memory, which took about two
// and a half minutes of a busy main thread on the spread mainnet market (docs/memory.md, "Parked
// wallets"). A key's time is a lower bound of its last activity; a wallet active since goes back
// in at its newer time when it comes up.

export interface IdleQueue {
  /** Queues `key` at `time`, or at the newest time queued if that is later: the queue stays in order. */
  push(key: string, time: number): void;
  /** The front key if its time is at or before `bound`, removed; undefined otherwise. */
  takeDue(bound: number): string | undefined;
  readonly size: number;
}

/** Room kept in front of the queue before it is compacted, so a take is O(1) amortised. */
const COMPACT_FROM = 1024;

/** A FIFO of (key, time) in two arrays; times never decrease from front to back. */
export function createIdleQueue(): IdleQueue {
  let keys: string[] = [];
  let times: number[] = [];
  let head = 0;
  return {
    push(key, time) {
      const last = times.length > head ? times[times.length - 1]! : time;
      keys.push(key);
      times.push(time > last ? time : last);
    },
    takeDue(bound) {
      if (head === keys.length || times[head]! > bound) return undefined;
      const key = keys[head++]!;
      if (head === keys.length) {
        keys = [];
        times = [];
        head = 0;
      } else if (head >= COMPACT_FROM && head * 2 >= keys.length) {
        keys = keys.slice(head);
        times = times.slice(head);
        head = 0;
      }
      return key;
    },
    get size() {
      return keys.length - head;
    },
  };
}
