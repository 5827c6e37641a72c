// Puts decoded records on the log: token events first, acknowledged, then swaps (the aggregator
// relies on a token's `created` event being on spot.token-events.v1 before any of its swaps).
// Nagle-style batching: an idle publisher sends at the end of the current turn (what one burst of
// calls published goes out together, a lone record without delay); while a send is in flight the
// records pile up and go out together as soon as it finished, so batches grow only under load.
// A failed produce is retried with backoff, never dropped.
import type { Context } from '../core/context.ts';
import type { ProduceMessage, EventLog } from '../core/eventlog/types.ts';
import { TOPICS, assertTopicValue, type RawSwap, type TokenEvent } from '../core/topics.ts';
import { normalizeAddress, tokenKey } from '../core/chains.ts';

export interface IngestRecords {
  swaps: RawSwap[];
  events: TokenEvent[];
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
  /** Resolvers of the publish calls whose records the batch holds. */
  waiters: Array<() => void>;
}

const emptyBatch = (): Batch => ({ events: [], swaps: [], waiters: [] });

export function createIngestPublisher(ctx: Context, options: IngestPublisherOptions): IngestPublisher {
  const logger = ctx.logger.child({ component: 'ingest-publisher' });
  const { log } = options;
  const maxBatch = options.maxBatch ?? 5_000;
  const lingerMs = options.lingerMs ?? 0;
  const chunk = options.produceChunk ?? 1_000;
  const minDelay = options.retryMinDelayMs ?? 100;
  const maxDelay = options.retryMaxDelayMs ?? 5_000;

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
    ctx.metrics.inc('ingest.published.events', batch.events.length);
    ctx.metrics.inc('ingest.published.swaps', batch.swaps.length);
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
      return new Promise<void>((resolve) => {
        for (const event of records.events) {
          pending.events.push({ key: tokenEventKey(event), value: JSON.stringify(event), timestamp: event.blockTime });
        }
        for (const swap of records.swaps) {
          pending.swaps.push({ key: swapKey(swap), value: JSON.stringify(swap), timestamp: swap.blockTime });
          ctx.metrics.ingestProcessed(swap.chain, swap.blockNumber, swap.blockTime);
        }
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
