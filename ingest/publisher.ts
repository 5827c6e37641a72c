// Puts decoded records on the log: token events first, acknowledged, then swaps (the aggregator
// relies on a token's `created` event being on spot.token-events.v1 before any of its swaps).
// Nagle-style batching: an idle publisher sends at the end of the current turn (what one burst of
// calls published goes out together, a lone record without delay); while a send is in flight the
// records pile up and go out together as soon as it finished, so batches grow only under load.
// A failed produce is retried with backoff, never dropped.
// Progress marks (core/topics.ts, ChainMark): after a publish call carrying swaps or a source's
// block progress (enrichment, labels and promotions publish events alone, stamped with other
// times), every markAfterMs of a chain's event time, each partition of both input topics gets a
// mark with the chain's latest block time, so the aggregator's merge never reads far ahead for a
// quiet chain, nor for one whose blocks hold none of its records.
import type { Context } from '../core/context.ts';
import type { ProduceMessage, EventLog } from '../core/eventlog/types.ts';
import { TOPICS, assertTopicValue, type ChainMark, type RawSwap, type TokenEvent } from '../core/topics.ts';
import { normalizeAddress, tokenKey } from '../core/chains.ts';
import { partitionFor } from '../core/eventlog/partitioner.ts';

export interface IngestRecords {
  swaps: RawSwap[];
  events: TokenEvent[];
  /**
   * A block source's progress: it has read its chain's blocks through this block time, empty ones
   * too, and what it publishes later is no earlier. It makes marks when the chain publishes nothing.
   */
  progress?: { chain: ChainMark['chain']; blockTime: number };
}

export interface IngestPublisher {
  /**
   * Validates every record (throws, publishing none of them, when one breaks its topic
   * schema) and resolves once all of them are acknowledged. Calls resolve in call order.
   */
  publish(records: IngestRecords): Promise<void>;
  /** Sends what is pending now and resolves once everything published so far is acknowledged. */
  flush(): Promise<void>;
}

export interface IngestPublisherOptions {
  log: EventLog;
  /** Records that trigger a send without waiting for the linger time. */
  maxBatch?: number;
  /** How long the first record of an idle publisher waits for company, ms (default 0: sent at the end of the turn). */
  lingerMs?: number;
  /** Messages per produce call (keeps Kafka requests under the broker's size limit). */
  produceChunk?: number;
  retryMinDelayMs?: number;
  retryMaxDelayMs?: number;
  /**
   * Event time (ms) of a chain between its progress marks on every partition of the input topics
   * (SPOT_INPUT_MARK_MS); 0 or unset writes none. Only a chain source's publisher sets it: marks
   * state its chain's event-time order.
   */
  markAfterMs?: number;
}

/**
 * Token-scoped records are keyed by chain:token; wallet-level ones (token null) by chain:wallet.
 * Addresses normalised: all of a token's records share one partition, which owns its state.
 */
export function tokenEventKey(event: TokenEvent): string {
  const address = event.token ?? (event.kind === 'funding' ? event.to : event.wallet);
  return tokenKey(event.chain, normalizeAddress(event.chain, address));
}

export const swapKey = (swap: RawSwap): string => tokenKey(swap.chain, normalizeAddress(swap.chain, swap.token));

interface Batch {
  events: ProduceMessage[];
  swaps: ProduceMessage[];
  /** Progress marks among events and among swaps. */
  eventMarks: number;
  swapMarks: number;
  /** Resolvers of the publish calls whose records the batch holds. */
  waiters: Array<() => void>;
}

const emptyBatch = (): Batch => ({ events: [], swaps: [], eventMarks: 0, swapMarks: 0, waiters: [] });

/** A key of the chain that lands on the partition (`chain:~mark:n`, the first n that does). */
function markKeyFinder(): (chain: string, partition: number, partitions: number) => string {
  const keys = new Map<string, string>();
  return (chain, partition, partitions) => {
    const slot = `${chain}:${partitions}:${partition}`;
    let key = keys.get(slot);
    if (key === undefined) {
      for (let n = 0; ; n++) {
        const candidate = `${chain}:~mark:${n}`;
        if (partitionFor(candidate, partitions) === partition) {
          key = candidate;
          break;
        }
      }
      keys.set(slot, key);
    }
    return key;
  };
}

type Chain = ChainMark['chain'];

interface MarkTracker {
  /** Notes a record of the chain (its block time). */
  record(chain: Chain, blockTime: number): void;
  /** Appends marks for the chains recorded since the last call that are due one. */
  mark(batch: Batch): void;
}

/**
 * Every afterMs of a chain's event time, a mark on every partition of both input topics: a
 * partition that had the chain's records meanwhile does not need it, but telling which would
 * cost a partition lookup per record, for about 4 marks a second a chain.
 */
function createMarkTracker(log: EventLog, afterMs: number): MarkTracker {
  const partitions = new Map<string, number>([
    [TOPICS.tokenEvents.name, TOPICS.tokenEvents.partitions],
    [TOPICS.swaps.name, TOPICS.swaps.partitions],
  ]);
  // The log's own counts replace the contract's once known (a Kafka topic may have more).
  for (const topic of partitions.keys())
    void log.endOffsets(topic).then(
      (ends) => {
        if (ends.size > 0) partitions.set(topic, ends.size);
      },
      () => undefined,
    );
  /** Per chain: its latest block time, and the one its last marks carried. */
  const chains = new Map<Chain, { latest: number; marked: number }>();
  const touched = new Set<Chain>();
  const markKey = markKeyFinder();

  return {
    record(chain, blockTime) {
      const times = chains.get(chain);
      if (!times) chains.set(chain, { latest: blockTime, marked: 0 });
      else if (blockTime > times.latest) times.latest = blockTime;
      touched.add(chain);
    },
    mark(batch) {
      for (const chain of touched) {
        const times = chains.get(chain)!;
        if (times.latest - times.marked < afterMs) continue;
        times.marked = times.latest;
        const mark: ChainMark = { mark: 'progress', chain, blockTime: times.latest };
        const value = JSON.stringify(mark);
        for (const [topic, count] of partitions) {
          const into = topic === TOPICS.swaps.name ? batch.swaps : batch.events;
          for (let partition = 0; partition < count; partition++)
            into.push({ key: markKey(chain, partition, count), value, timestamp: times.latest });
          if (into === batch.swaps) batch.swapMarks += count;
          else batch.eventMarks += count;
        }
      }
      touched.clear();
    },
  };
}

export function createIngestPublisher(ctx: Context, options: IngestPublisherOptions): IngestPublisher {
  const logger = ctx.logger.child({ component: 'ingest-publisher' });
  const { log } = options;
  const maxBatch = options.maxBatch ?? 5_000;
  const lingerMs = options.lingerMs ?? 0;
  const chunk = options.produceChunk ?? 1_000;
  const minDelay = options.retryMinDelayMs ?? 100;
  const maxDelay = options.retryMaxDelayMs ?? 5_000;
  const marks = options.markAfterMs ? createMarkTracker(log, options.markAfterMs) : null;

  let pending = emptyBatch();
  let timer: NodeJS.Timeout | null = null;
  let sending: Promise<void> | null = null;

  async function produceUntilAcknowledged(topic: string, messages: ProduceMessage[]): Promise<void> {
    for (let start = 0; start < messages.length; start += chunk) {
      const part = messages.slice(start, start + chunk);
      let delay = minDelay;
      for (;;) {
        try {
          await log.produce(topic, part);
          break;
        } catch (error) {
          ctx.metrics.inc('ingest.produce_retries');
          logger.warn(
            { err: (error as Error).message, topic, messages: part.length, retryInMs: delay },
            'produce failed; retrying',
          );
          await new Promise((resolve) => setTimeout(resolve, delay));
          delay = Math.min(maxDelay, delay * 2);
        }
      }
    }
  }

  async function send(batch: Batch): Promise<void> {
    await produceUntilAcknowledged(TOPICS.tokenEvents.name, batch.events);
    await produceUntilAcknowledged(TOPICS.swaps.name, batch.swaps);
    ctx.metrics.inc('ingest.published.events', batch.events.length - batch.eventMarks);
    ctx.metrics.inc('ingest.published.swaps', batch.swaps.length - batch.swapMarks);
    const marked = batch.eventMarks + batch.swapMarks;
    if (marked > 0) ctx.metrics.inc('ingest.published.marks', marked);
    for (const resolve of batch.waiters) resolve();
  }

  /** One send at a time; what piles up meanwhile goes out together in the next one. */
  function startSend(): void {
    if (timer) {
      clearTimeout(timer);
      timer = null;
    }
    if (sending || pending.waiters.length === 0) return;
    const batch = pending;
    pending = emptyBatch();
    // Records that waited for this send go out as soon as it is done.
    sending = send(batch).finally(() => {
      sending = null;
      startSend();
    });
  }

  let turnScheduled = false;
  const endOfTurn = () => {
    turnScheduled = false;
    startSend();
  };

  /** An idle publisher: send once the caller's current burst of publish calls is in (or after the linger). */
  function scheduleSend(): void {
    if (lingerMs > 0) {
      if (!timer) timer = setTimeout(startSend, lingerMs);
    } else if (!turnScheduled) {
      turnScheduled = true;
      queueMicrotask(endOfTurn);
    }
  }

  return {
    publish(records) {
      for (const event of records.events) assertTopicValue(TOPICS.tokenEvents, event);
      for (const swap of records.swaps) assertTopicValue(TOPICS.swaps, swap);
      const tracker = records.swaps.length > 0 || records.progress ? marks : null;
      return new Promise<void>((resolve) => {
        for (const event of records.events) {
          pending.events.push({ key: tokenEventKey(event), value: JSON.stringify(event), timestamp: event.blockTime });
          tracker?.record(event.chain, event.blockTime);
        }
        for (const swap of records.swaps) {
          pending.swaps.push({ key: swapKey(swap), value: JSON.stringify(swap), timestamp: swap.blockTime });
          tracker?.record(swap.chain, swap.blockTime);
          ctx.metrics.ingestProcessed(swap.chain, swap.blockNumber, swap.blockTime);
        }
        if (records.progress) tracker?.record(records.progress.chain, records.progress.blockTime);
        tracker?.mark(pending);
        pending.waiters.push(resolve);
        if (sending) return;
        if (pending.events.length + pending.swaps.length >= maxBatch) startSend();
        else scheduleSend();
      });
    },
    async flush() {
      while (sending || pending.waiters.length > 0) {
        if (!sending) startSend();
        await sending;
      }
    },
  };
}
