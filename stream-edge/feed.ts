// The edge's log consumer: reads the routed topics from their end (a stream is live data) in a
// group of its own, so every edge replica sees every message, and routes batch by batch.
import crypto from 'node:crypto';
import type { Context } from '../core/context.ts';
import type { Consumer, EventLog } from '../core/eventlog/types.ts';
import { SERVING_FETCH_BYTES, SLICE_MS } from '../core/slices.ts';
import { TOPICS } from '../core/topics.ts';
import type { Router } from './router.ts';

export interface LogFeed {
  /** Resolves once the consumer sits at the end of every routed topic. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createLogFeed(
  ctx: Context,
  deps: { log: EventLog; router: Router; group?: string; tradePositions: number[] },
): LogFeed {
  const log = ctx.logger.child({ component: 'stream-feed' });
  const topics = [TOPICS.trades, TOPICS.candles, TOPICS.tokens];
  let consumer: Consumer | null = null;
  let running: Promise<void> | null = null;

  return {
    async start() {
      await deps.log.ensureTopics(
        topics.map(({ name, partitions, compacted, retentionMs }) => ({ name, partitions, compacted, retentionMs })),
      );
      // End offsets taken before the consumer runs: anything produced after start() resolves is routed.
      const ends = await Promise.all(topics.map(async (t) => [t.name, await deps.log.endOffsets(t.name)] as const));
      for (const [partition, offset] of ends[0]![1]) deps.tradePositions[partition] = offset;
      consumer = deps.log.consumer({
        group: deps.group ?? `stream-edge-${crypto.randomUUID()}`,
        topics: topics.map((t) => t.name),
        start: 'latest',
        maxBatchSize: 250,
        maxFetchBytes: SERVING_FETCH_BYTES,
        sliceMs: SLICE_MS,
      });
      try {
        for (const [topic, offsets] of ends) {
          for (const [partition, offset] of offsets) await consumer.seek(topic, partition, offset);
        }
      } catch (error) {
        // A transport that cannot seek before run still starts a new group at 'latest'.
        log.debug({ err: error }, 'seek before run refused; starting from the latest offsets');
      }
      const router = deps.router;
      running = consumer.run(async (batch) => {
        for (const message of batch.messages) {
          try {
            router.routeValue(batch.topic, message.value, batch.partition, message.offset, message.key);
          } catch (error) {
            log.error({ err: error, topic: batch.topic, offset: message.offset }, 'routing a message failed');
          }
        }
        router.flushSoon(); // the consumer's other batches of this round join the same writes
        ctx.metrics.batchConsumed('stream-edge', batch);
      });
      running.catch((error) => log.error({ err: error }, 'stream feed stopped'));
    },
    async stop() {
      if (consumer) await consumer.stop();
      if (running) await running.catch(() => undefined);
      consumer = null;
      running = null;
    },
  };
}
