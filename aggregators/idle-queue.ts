// Items in the order they may go idle (wallets in memory per chain, holder records), each at a
// lower bound of its last activity: the park takes the due ones from the front instead of a pass
// through every one in memory, which took about two and a half minutes of a busy main thread on the
// spread mainnet market (docs/memory.md, "Parked wallets"). One active since goes back in at its
// newer time when it comes up.

export interface IdleQueue<T> {
  /** Queues `item` at `time`, or at the newest time queued if that is later: the queue stays in order. */
  push(item: T, time: number): void;
  /** The front item if its time is at or before `bound`, removed; undefined otherwise. */
  takeDue(bound: number): T | undefined;
  readonly size: number;
}

/** Room kept in front of the queue before it is compacted, so a take is O(1) amortised. */
const COMPACT_FROM = 1024;

/** A FIFO of (item, time) in two arrays; times never decrease from front to back. */
export function createIdleQueue<T>(): IdleQueue<T> {
  let items: T[] = [];
  let times: number[] = [];
  let head = 0;
  return {
    push(item, time) {
      const last = times.length > head ? times[times.length - 1]! : time;
      items.push(item);
      times.push(time > last ? time : last);
    },
    takeDue(bound) {
      if (head === items.length || times[head]! > bound) return undefined;
      const item = items[head]!;
      // Not kept alive by the room in front.
      items[head++] = undefined as T;
      if (head === items.length) {
        items = [];
        times = [];
        head = 0;
      } else if (head >= COMPACT_FROM && head * 2 >= items.length) {
        items = items.slice(head);
        times = times.slice(head);
        head = 0;
      }
      return item;
    },
    get size() {
      return items.length - head;
    },
  };
}
