// Deterministic order over the input partitions: a merge of their heads by (event time, token
// events before swaps, topic, partition, offset). A partition that may still deliver an earlier
// message (its buffer is empty but the log holds more) blocks the merge, so the order is a
// function of the log alone: replays, restarts and live runs that caught up see the same order.
export interface MergeItem<T> {
  topic: string;
  partition: number;
  offset: number;
  time: number;
  rank: number;
  value: T;
  raw: string;
}

interface Queue<T> {
  topic: string;
  partition: number;
  items: MergeItem<T>[];
  head: number;
  /** Next offset expected from the consumer. */
  delivered: number;
  /** End offset of the partition as last read from the log. */
  end: number;
}

export interface Merger<T> {
  /** Registers a partition and the offset its delivery starts at. */
  init(topic: string, partition: number, offset: number): void;
  /** Buffers delivered messages (offsets at or past the expected one; earlier ones are dropped). */
  push(items: MergeItem<T>[]): void;
  setEnd(topic: string, partition: number, end: number): void;
  /** The next message in merge order, or null when none can be taken yet. */
  next(): MergeItem<T> | null;
  /** Messages buffered and not yet taken. */
  buffered(): number;
  /** Messages of one partition buffered and not yet taken. */
  bufferedIn(topic: string, partition: number): number;
  /** True when every partition delivered up to its known end and nothing is buffered. */
  caughtUp(): boolean;
}

const keyOf = (topic: string, partition: number) => `${topic}:${partition}`;

function earlier<T>(a: MergeItem<T>, b: MergeItem<T>): boolean {
  if (a.time !== b.time) return a.time < b.time;
  if (a.rank !== b.rank) return a.rank < b.rank;
  if (a.topic !== b.topic) return a.topic < b.topic;
  if (a.partition !== b.partition) return a.partition < b.partition;
  return a.offset < b.offset;
}

export function createMerger<T>(): Merger<T> {
  const queues = new Map<string, Queue<T>>();
  let list: Queue<T>[] = [];
  let count = 0;

  function queue(topic: string, partition: number): Queue<T> {
    const key = keyOf(topic, partition);
    let q = queues.get(key);
    if (!q) {
      queues.set(key, (q = { topic, partition, items: [], head: 0, delivered: 0, end: 0 }));
      list = [...queues.values()];
    }
    return q;
  }

  return {
    init(topic, partition, offset) {
      const q = queue(topic, partition);
      q.items = [];
      q.head = 0;
      q.delivered = offset;
      q.end = Math.max(q.end, offset);
    },
    push(items) {
      for (const item of items) {
        const q = queue(item.topic, item.partition);
        if (item.offset < q.delivered) continue; // redelivered
        q.items.push(item);
        q.delivered = item.offset + 1;
        if (q.delivered > q.end) q.end = q.delivered;
        count++;
      }
    },
    setEnd(topic, partition, end) {
      const q = queue(topic, partition);
      q.end = Math.max(end, q.delivered);
    },
    next() {
      let best: Queue<T> | null = null;
      for (const q of list) {
        if (q.head >= q.items.length) {
          if (q.delivered < q.end) return null; // it may hold an earlier message
          continue;
        }
        if (!best || earlier(q.items[q.head]!, best.items[best.head]!)) best = q;
      }
      if (!best) return null;
      const item = best.items[best.head++]!;
      if (best.head > 4096 && best.head * 2 > best.items.length) {
        best.items = best.items.slice(best.head);
        best.head = 0;
      }
      count--;
      return item;
    },
    buffered: () => count,
    bufferedIn(topic, partition) {
      const q = queues.get(keyOf(topic, partition));
      return q ? q.items.length - q.head : 0;
    },
    caughtUp() {
      return count === 0 && list.every((q) => q.delivered >= q.end);
    },
  };
}
