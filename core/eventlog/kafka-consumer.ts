// A consumer-group member over kafkajs with the EventLog contract:
// - eachBatch with autoCommit off; a batch's offsets are committed only after the handler resolved
//   (kafkajs batches are cut into maxBatchSize chunks, each committed on its own), or, with commit
//   'manual', only by commit().
// - onAssign/onRevoke come from kafkajs GROUP_JOIN events (best effort): each join's assignment is
//   diffed with the previous one; onRevoke(lost) then onAssign(gained) run after the batch in
//   flight finished and before the next batch is handed over. On stop, onRevoke gets everything.
// - seek before the group assigned a partition is kept and applied at the GROUP_JOIN that
//   assigns it (synchronously, so before its first fetch).
// - seekToTime uses ListOffsets by timestamp. A broker without a time index (librdkafka's mock)
//   answers "end" for every timestamp; that is detected by also asking for timestamp 0, and those
//   partitions are rewound to their start with a filter that drops records older than the target.
// - The group leader waits LEADER_SYNC_DELAY_MS before it sends the assignment (see there).
import kafkajs from 'kafkajs';
import type { Logger } from '../logger.ts';
import type { Batch, Consumer, ConsumerOptions, LogMessage, TopicPartition } from './types.ts';

const DEFAULT_MAX_BATCH = 1000;
export const FETCH_WAIT_MS = 500;
/**
 * librdkafka's mock cluster completes a rebalance as soon as the leader's SyncGroup arrives and
 * answers a follower's later SyncGroup with INVALID_REQUEST, which ends a kafkajs consumer (a
 * real broker holds that request until the leader's arrives). Followers send theirs right after
 * the JoinGroup response, so a leader that waits this long lets them go first; on a real broker
 * it only adds this to each rebalance.
 */
export const LEADER_SYNC_DELAY_MS = 500;

/** kafkajs' round-robin assignment, handed to the coordinator LEADER_SYNC_DELAY_MS late. */
const patientRoundRobin: kafkajs.PartitionAssigner = (config) => {
  const inner = kafkajs.PartitionAssigners.roundRobin(config);
  return {
    name: inner.name,
    version: inner.version,
    protocol: (subscription) => inner.protocol(subscription),
    async assign(group) {
      await new Promise((resolve) => setTimeout(resolve, LEADER_SYNC_DELAY_MS));
      return inner.assign(group);
    },
  };
};

export interface KafkaConsumerDeps {
  kafka: kafkajs.Kafka;
  admin(): Promise<kafkajs.Admin>;
  logger: Logger;
  sessionTimeoutMs: number;
}

const tpKey = (topic: string, partition: number) => `${topic}/${partition}`;

export function toLogMessage(topic: string, partition: number, message: kafkajs.KafkaMessage): LogMessage {
  return {
    topic,
    partition,
    offset: Number(message.offset),
    key: message.key?.toString('utf8') ?? '',
    value: message.value?.toString('utf8') ?? '',
    timestamp: Number(message.timestamp),
  };
}

export function createKafkaConsumer(deps: KafkaConsumerDeps, options: ConsumerOptions): Consumer {
  const logger = deps.logger.child({ group: options.group });
  const maxBatch = options.maxBatchSize ?? DEFAULT_MAX_BATCH;
  const manual = options.commit === 'manual';
  const consumer = deps.kafka.consumer({
    groupId: options.group,
    sessionTimeout: deps.sessionTimeoutMs,
    heartbeatInterval: Math.min(3000, Math.floor(deps.sessionTimeoutMs / 3)),
    // How long the coordinator waits for every member to rejoin a rebalance. kafkajs' default
    // (60 s) lets one member that learns of the rebalance late hold the whole group that long;
    // members rejoin between batches, and a batch takes well under this.
    rebalanceTimeout: Math.max(10_000, 2 * deps.sessionTimeoutMs),
    allowAutoTopicCreation: true,
    partitionAssigners: [patientRoundRobin],
    // A fetch returns as soon as data arrives; the wait only bounds how long stop() waits for an idle fetch.
    maxWaitTimeInMs: FETCH_WAIT_MS,
    ...(options.maxFetchBytes === undefined ? {} : { maxBytesPerPartition: options.maxFetchBytes }),
  });
  let assigned: TopicPartition[] = [];
  let joined = false;
  /** onRevoke/onAssign of the latest join; batches wait for it. */
  let assignment: Promise<void> = Promise.resolve();
  let inFlight: Promise<void> = Promise.resolve();
  const pendingSeeks = new Map<string, number>();
  /** Bumped by every seek: a batch fetched before a seek must not commit over it. */
  const seekGeneration = new Map<string, number>();
  /** Partitions rewound for a time seek: records older than the target are dropped until one is not. */
  const skipBefore = new Map<string, number>();
  let failure: unknown = null;
  let stopping = false;
  let lifetime: Promise<void> | null = null;
  let finish: (error?: unknown) => void = () => {};

  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const next = Object.entries(payload.memberAssignment).flatMap(([topic, partitions]) =>
      partitions.map((partition) => ({ topic, partition })),
    );
    const has = (list: TopicPartition[], tp: TopicPartition) =>
      list.some((x) => x.topic === tp.topic && x.partition === tp.partition);
    const revoked = assigned.filter((tp) => !has(next, tp));
    const gained = next.filter((tp) => !has(assigned, tp));
    assigned = next;
    joined = true;
    for (const tp of next) {
      const offset = pendingSeeks.get(tpKey(tp.topic, tp.partition));
      if (offset === undefined) continue;
      consumer.seek({ topic: tp.topic, partition: tp.partition, offset: String(offset) });
      pendingSeeks.delete(tpKey(tp.topic, tp.partition));
    }
    const previous = assignment;
    assignment = (async () => {
      await previous;
      await inFlight.catch(() => {});
      if (revoked.length > 0) await options.onRevoke?.(revoked);
      if (gained.length > 0) await options.onAssign?.(gained);
    })();
    assignment.catch((error) => fail(error));
  });
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (!payload.restart) fail(payload.error);
  });

  function fail(error: unknown): void {
    if (failure || stopping) return;
    failure = error;
    logger.error({ err: error }, 'consumer stopped on an error; the batch in flight was not committed');
    // Not awaited here: kafkajs waits for the eachBatch that called us before it disconnects.
    void consumer.disconnect().finally(() => finish(error));
  }

  function seek(topic: string, partition: number, offset: number): void {
    const key = tpKey(topic, partition);
    seekGeneration.set(key, (seekGeneration.get(key) ?? 0) + 1);
    skipBefore.delete(key);
    if (joined && assigned.some((tp) => tp.topic === topic && tp.partition === partition)) {
      consumer.seek({ topic, partition, offset: String(offset) });
    } else {
      pendingSeeks.set(key, offset);
    }
  }

  async function handleBatch(
    eachBatch: (batch: Batch) => Promise<void>,
    payload: kafkajs.EachBatchPayload,
  ): Promise<void> {
    const { batch } = payload;
    if (failure || stopping || batch.isEmpty()) return;
    try {
      await assignment;
    } catch {
      return; // onAssign/onRevoke failed: fail() is already stopping the consumer
    }
    const key = tpKey(batch.topic, batch.partition);
    const generation = seekGeneration.get(key);
    const stale = () =>
      payload.isStale() || !payload.isRunning() || seekGeneration.get(key) !== generation || failure !== null;
    let messages = batch.messages.map((m) => toLogMessage(batch.topic, batch.partition, m));
    const skipTs = skipBefore.get(key);
    if (skipTs !== undefined) {
      const first = messages.findIndex((m) => m.timestamp >= skipTs);
      messages = first === -1 ? [] : messages.slice(first);
      if (first !== -1) skipBefore.delete(key);
    }
    if (messages.length === 0) {
      if (manual) return;
      await consumer.commitOffsets([
        { topic: batch.topic, partition: batch.partition, offset: String(Number(batch.lastOffset()) + 1) },
      ]);
      return;
    }
    for (let from = 0; from < messages.length; from += maxBatch) {
      if (stale()) return;
      const chunk = messages.slice(from, from + maxBatch);
      inFlight = eachBatch({ topic: batch.topic, partition: batch.partition, messages: chunk });
      try {
        await inFlight;
      } catch (error) {
        fail(error);
        return;
      }
      if (seekGeneration.get(key) !== generation) return; // a seek during the batch wins over its commit
      if (!manual)
        await consumer.commitOffsets([
          { topic: batch.topic, partition: batch.partition, offset: String(chunk[chunk.length - 1]!.offset + 1) },
        ]);
      await payload.heartbeat();
    }
    if (options.ready && !options.ready(batch.topic, batch.partition)) pauseUntilReady(batch.topic, batch.partition);
  }

  /** Partitions the gate refused, resumed as soon as it accepts them again. */
  const paused = new Map<string, { topic: string; partition: number }>();
  let resumeTimer: NodeJS.Timeout | null = null;
  function pauseUntilReady(topic: string, partition: number): void {
    consumer.pause([{ topic, partitions: [partition] }]);
    paused.set(tpKey(topic, partition), { topic, partition });
    resumeTimer ??= setInterval(() => {
      for (const [key, tp] of paused) {
        if (!stopping && !options.ready!(tp.topic, tp.partition)) continue;
        paused.delete(key);
        consumer.resume([{ topic: tp.topic, partitions: [tp.partition] }]);
      }
      if (paused.size === 0 && resumeTimer) {
        clearInterval(resumeTimer);
        resumeTimer = null;
      }
    }, 20);
  }

  return {
    async run(eachBatch) {
      if (lifetime) throw new Error(`consumer of group ${options.group} is already running`);
      lifetime = new Promise<void>((resolve, reject) => {
        finish = (error?: unknown) => (error ? reject(error) : resolve());
      });
      await consumer.connect();
      await consumer.subscribe({ topics: options.topics, fromBeginning: options.start !== 'latest' });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: true,
        eachBatch: (payload) => handleBatch(eachBatch, payload),
      });
      return lifetime;
    },
    async seek(topic, partition, offset) {
      seek(topic, partition, offset);
    },
    async seekToTime(topic, timestamp) {
      const admin = await deps.admin();
      const [atTime, atZero, bounds] = await Promise.all([
        admin.fetchTopicOffsetsByTimestamp(topic, timestamp),
        admin.fetchTopicOffsetsByTimestamp(topic, 0),
        admin.fetchTopicOffsets(topic),
      ]);
      for (const { partition, offset } of atTime) {
        const range = bounds.find((b) => b.partition === partition);
        const zero = atZero.find((z) => z.partition === partition);
        const unindexed = range && zero && Number(range.high) > Number(range.low) && zero.offset === range.high;
        if (unindexed) {
          seek(topic, partition, Number(range.low));
          skipBefore.set(tpKey(topic, partition), timestamp);
        } else {
          seek(topic, partition, Number(offset));
        }
      }
    },
    async commit(positions) {
      // Offsets are committed through the member's group session.
      if (!lifetime || !joined || stopping || failure)
        throw new Error(`consumer of group ${options.group} is not running; nothing committed`);
      if (positions.length === 0) return;
      await consumer.commitOffsets(
        positions.map((p) => ({ topic: p.topic, partition: p.partition, offset: String(p.offset) })),
      );
    },
    async committed(topic) {
      const admin = await deps.admin();
      const [offsets] = await admin.fetchOffsets({ groupId: options.group, topics: [topic] });
      const result = new Map<number, number>();
      for (const { partition, offset } of offsets?.partitions ?? []) result.set(partition, Number(offset));
      return result;
    },
    async stop() {
      if (!lifetime || stopping) {
        await lifetime?.catch(() => {});
        return;
      }
      stopping = true;
      if (!failure) {
        await consumer.disconnect();
        await assignment.catch(() => {});
        const released = assigned;
        assigned = [];
        try {
          if (released.length > 0) await options.onRevoke?.(released);
        } catch (error) {
          logger.warn({ err: error }, 'onRevoke failed while stopping');
        }
        finish();
      }
      await lifetime.catch(() => {});
    },
  };
}
