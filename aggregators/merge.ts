// Deterministic order over the input partitions, per chain. Each chain's sources publish in event
// time, but several sources (one per chain, node mode or RPC) interleave a partition's chains in
// an order that depends on timing. So a partition is split into one queue per chain, and the
// heads of a chain's queues are merged by (event time, token events before swaps, topic,
// partition, offset). A chain waits while some partition that may still deliver messages has
// none of that chain buffered (its next message may be an earlier one of that chain). Every
// chain's order is then a function of the log alone, whatever the cross-chain interleaving:
// replays, restarts, Kafka and the embedded log see the same order per chain (the state of one
// chain never reads another's). A partition is thus processed out of offset order: its position
// is a low watermark plus, per chain, the offset after the last message of that chain processed
// (aggregators/positions.ts). Messages that break their schema (chain '') wait for nothing.
// A quiet chain would keep a partition without it fetched far ahead (every message read while
// the chain waits is buffered); the publisher's progress marks (core/topics.ts, ChainMark) give it
// a head there every few seconds of event time. A mark ranks before its time's events and swaps.
export interface MergeItem<T> {
  topic: string;
  partition: number;
  offset: number;
  /** The message's chain; '' for one that breaks its schema. */
  chain: string;
  time: number;
  /** -1 a progress mark, 0 a token event, 1 a swap: the order at equal times. */
  rank: number;
  value: T;
  raw: string;
}

interface ChainQueue<T> {
  /** Taken items' slots are cleared: the queue keeps no message it has handed on alive. */
  items: Array<MergeItem<T> | undefined>;
  head: number;
}

interface Queue<T> {
  topic: string;
  partition: number;
  chains: Map<string, ChainQueue<T>>;
  /** Next offset expected from the consumer. */
  delivered: number;
  /** End offset of the partition as last read from the log. */
  end: number;
  /** Per chain: messages below this offset were processed before a restart (skipped when delivered again). */
  skip: Record<string, number>;
}

export interface MergerOptions {
  /**
   * Buffered messages past which a chain waiting for a partition is released anyway (its order
   * may then depend on timing; counted by forced()). Reached only when one partition holds a long
   * stretch without a chain that other partitions carry (default 200,000).
   */
  maxBuffered?: number;
}

export interface Merger<T> {
  /** Registers a partition, the offset its delivery starts at, and per chain the offsets already processed below. */
  init(topic: string, partition: number, offset: number, skip?: Record<string, number>): void;
  /** Buffers delivered messages (offsets at or past the expected one and not processed before; others are dropped). */
  push(items: MergeItem<T>[]): void;
  setEnd(topic: string, partition: number, end: number): void;
  /** The next message in merge order, or null when none can be taken yet. */
  next(): MergeItem<T> | null;
  /** The smallest offset of the partition not yet taken (buffered or still to be delivered). */
  low(topic: string, partition: number): number;
  /** Messages buffered and not yet taken. */
  buffered(): number;
  /** Messages taken past a waiting partition because the buffer was full. */
  forced(): number;
  /** Messages of one partition buffered and not yet taken. */
  bufferedIn(topic: string, partition: number): number;
  /** True when a chain waits for this partition (it may still deliver and holds none of that chain). */
  awaited(topic: string, partition: number): boolean;
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

const hasItems = <T>(c: ChainQueue<T> | undefined): c is ChainQueue<T> => c !== undefined && c.head < c.items.length;

export function createMerger<T>(options: MergerOptions = {}): Merger<T> {
  const maxBuffered = options.maxBuffered ?? 200_000;
  const queues = new Map<string, Queue<T>>();
  let list: Queue<T>[] = [];
  const chains: string[] = [];
  let count = 0;
  let forcedCount = 0;

  function queue(topic: string, partition: number): Queue<T> {
    const key = keyOf(topic, partition);
    let q = queues.get(key);
    if (!q) {
      queues.set(key, (q = { topic, partition, chains: new Map(), delivered: 0, end: 0, skip: {} }));
      list = [...queues.values()];
    }
    return q;
  }

  /** True when a partition that may still deliver holds none of the chain: it may hold an earlier one. */
  function waits(chain: string): boolean {
    if (chain === '') return false;
    for (const q of list) if (q.delivered < q.end && !hasItems(q.chains.get(chain))) return true;
    return false;
  }

  /** The queue whose head comes first among the given chains (all when `ready` is null). */
  function first(ready: ((chain: string) => boolean) | null): ChainQueue<T> | null {
    let best: ChainQueue<T> | null = null;
    for (const chain of chains) {
      if (ready && !ready(chain)) continue;
      for (const q of list) {
        const c = q.chains.get(chain);
        if (hasItems(c) && (!best || earlier(c.items[c.head]!, best.items[best.head]!))) best = c;
      }
    }
    return best;
  }

  function take(c: ChainQueue<T>): MergeItem<T> {
    const item = c.items[c.head]!;
    // Until the array is compacted below, the slot would keep a processed message (its parsed
    // value and raw text) alive: 35,000 of them, about 35 MB, on the spread mainnet market.
    c.items[c.head++] = undefined;
    if (c.head >= c.items.length) {
      c.items = [];
      c.head = 0;
    } else if (c.head > 4096 && c.head * 2 > c.items.length) {
      c.items = c.items.slice(c.head);
      c.head = 0;
    }
    count--;
    return item;
  }

  return {
    init(topic, partition, offset, skip = {}) {
      const q = queue(topic, partition);
      q.chains.clear();
      q.delivered = offset;
      q.end = Math.max(q.end, offset);
      q.skip = { ...skip };
    },
    push(items) {
      for (const item of items) {
        const q = queue(item.topic, item.partition);
        if (item.offset < q.delivered) continue; // redelivered
        q.delivered = item.offset + 1;
        if (q.delivered > q.end) q.end = q.delivered;
        if (item.offset < (q.skip[item.chain] ?? 0)) continue; // processed before the restart
        let c = q.chains.get(item.chain);
        if (!c) {
          q.chains.set(item.chain, (c = { items: [], head: 0 }));
          if (!chains.includes(item.chain)) chains.push(item.chain);
        }
        c.items.push(item);
        count++;
      }
    },
    setEnd(topic, partition, end) {
      const q = queue(topic, partition);
      q.end = Math.max(end, q.delivered);
    },
    next() {
      if (count === 0) return null;
      const best = first((chain) => !waits(chain));
      if (best) return take(best);
      if (count < maxBuffered) return null;
      forcedCount++;
      return take(first(null)!);
    },
    low(topic, partition) {
      const q = queues.get(keyOf(topic, partition));
      if (!q) return 0;
      let low = q.delivered;
      for (const c of q.chains.values())
        if (hasItems(c) && c.items[c.head]!.offset < low) low = c.items[c.head]!.offset;
      return low;
    },
    buffered: () => count,
    forced: () => forcedCount,
    bufferedIn(topic, partition) {
      const q = queues.get(keyOf(topic, partition));
      let n = 0;
      if (q) for (const c of q.chains.values()) n += c.items.length - c.head;
      return n;
    },
    awaited(topic, partition) {
      const q = queues.get(keyOf(topic, partition));
      if (!q || q.delivered >= q.end) return false;
      return chains.some((chain) => !hasItems(q.chains.get(chain)) && list.some((o) => hasItems(o.chains.get(chain))));
    },
    caughtUp() {
      return count === 0 && list.every((q) => q.delivered >= q.end);
    },
  };
}
