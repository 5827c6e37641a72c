// The event log over Apache Kafka (kafkajs). Topic creation and idempotence are optional: some
// brokers (librdkafka's mock cluster in tests, locked-down clusters) refuse them, and topics are
// then auto-created on first use with the broker's default partition count.
import { randomUUID } from 'node:crypto';
import kafkajs from 'kafkajs';
import type { Context } from '../context.ts';
import type { Logger } from '../logger.ts';
import type { EventLog, LogMessage, TopicSpec } from './types.ts';
import { createKafkaConsumer, FETCH_WAIT_MS, toLogMessage } from './kafka-consumer.ts';

const { Kafka, Partitioners, logLevel } = kafkajs;

export interface KafkaLogOptions {
  brokers: string[];
  clientId?: string;
  /** Idempotent producer; off by default because some brokers (the test mock) refuse it. */
  idempotent?: boolean;
  /** Consumer group session timeout, ms (default 30 s). */
  sessionTimeoutMs?: number;
}

/** Errors a topic being created or a leader moving can show; worth a retry. */
const TRANSIENT = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION',
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_FOR_PARTITION',
  'NOT_LEADER_OR_FOLLOWER',
]);

function isTransient(error: unknown): boolean {
  for (
    let e = error as { type?: string; cause?: unknown; originalError?: unknown } | undefined;
    e;
    e = (e.cause ?? e.originalError) as typeof e
  ) {
    if (e.type && TRANSIENT.has(e.type)) return true;
  }
  return false;
}

async function retryTransient<T>(logger: Logger, what: string, action: () => Promise<T>, attempts = 8): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await action();
    } catch (error) {
      if (attempt >= attempts || !isTransient(error)) throw error;
      logger.debug({ err: error, attempt }, `${what}: transient broker error, retrying`);
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

/** Routes kafkajs's own log lines into pino (kafkajs is configured to emit warn and above). */
function pinoLogCreator(logger: Logger): kafkajs.logCreator {
  return () =>
    ({ namespace, level, log }) => {
      const { message, ...fields } = log;
      const entry = { namespace, ...fields };
      // A heartbeat answered "rebalancing" is how a member learns to rejoin, not a failure.
      const routine = typeof fields.error === 'string' && /rebalanc/i.test(fields.error);
      if (routine) logger.debug(entry, message);
      else if (level === logLevel.ERROR || level === logLevel.NOTHING) logger.error(entry, message);
      else if (level === logLevel.WARN) logger.warn(entry, message);
      else if (level === logLevel.INFO) logger.info(entry, message);
      else logger.debug(entry, message);
    };
}

/** A topic's settings as kafka-topics.sh would take them. */
export function topicSettings(spec: TopicSpec): string {
  const config = spec.compacted
    ? 'cleanup.policy=compact'
    : spec.retentionMs !== undefined
      ? `retention.ms=${spec.retentionMs}`
      : 'retention.ms=-1';
  return `--partitions ${spec.partitions} --config ${config}`;
}

export function createKafkaLog(ctx: Context, options: KafkaLogOptions): EventLog {
  const logger = ctx.logger.child({ component: 'eventlog', transport: 'kafka' });
  const clientId = options.clientId ?? 'spot';
  const sessionTimeoutMs = options.sessionTimeoutMs ?? 30_000;
  const kafka = new Kafka({
    clientId,
    brokers: options.brokers,
    logLevel: logLevel.WARN,
    logCreator: pinoLogCreator(ctx.logger.child({ component: 'kafkajs' })),
    retry: { retries: 8, initialRetryTime: 100 },
  });
  const consumers = new Set<ReturnType<typeof createKafkaConsumer>>();
  let adminReady: Promise<kafkajs.Admin> | null = null;
  let producerReady: Promise<kafkajs.Producer> | null = null;

  function admin(): Promise<kafkajs.Admin> {
    adminReady ??= (async () => {
      const client = kafka.admin();
      await client.connect();
      return client;
    })();
    return adminReady;
  }

  function producer(): Promise<kafkajs.Producer> {
    producerReady ??= (async () => {
      // One request in flight per broker keeps order per key even when a send is retried.
      const client = kafka.producer({
        allowAutoTopicCreation: true,
        idempotent: options.idempotent ?? false,
        maxInFlightRequests: 1,
        createPartitioner: Partitioners.DefaultPartitioner,
      });
      await client.connect();
      return client;
    })();
    return producerReady;
  }

  async function topicOffsets(topic: string) {
    const client = await admin();
    return retryTransient(logger, `offsets of ${topic}`, () => client.fetchTopicOffsets(topic));
  }

  return {
    kind: 'kafka',

    async ensureTopics(specs: TopicSpec[]) {
      const client = await admin();
      try {
        await client.createTopics({
          waitForLeaders: true,
          topics: specs.map((spec) => ({
            topic: spec.name,
            numPartitions: spec.partitions,
            configEntries: spec.compacted
              ? [{ name: 'cleanup.policy', value: 'compact' }]
              : spec.retentionMs !== undefined
                ? [{ name: 'retention.ms', value: String(spec.retentionMs) }]
                : [],
          })),
        });
      } catch (error) {
        const wanted = specs.map((spec) => `${spec.name} (${topicSettings(spec)})`);
        logger.warn(
          { err: (error as Error).message, topics: wanted },
          `the broker refused to create topics; create them by hand (docs/distributed.md): ${wanted.join('; ')}. ` +
            'Going on with whatever exists or is auto-created: partitions, compaction and retention are then the broker defaults',
        );
      }
    },

    async produce(topic, messages) {
      if (messages.length === 0) return;
      const client = await producer();
      const now = Date.now();
      await retryTransient(logger, `produce to ${topic}`, () =>
        client.send({
          topic,
          acks: -1,
          messages: messages.map((m) => ({ key: m.key, value: m.value, timestamp: String(m.timestamp ?? now) })),
        }),
      );
      ctx.metrics.inc('eventlog.produced', messages.length);
    },

    consumer(consumerOptions) {
      const consumer = createKafkaConsumer({ kafka, admin, logger, sessionTimeoutMs }, consumerOptions);
      consumers.add(consumer);
      return consumer;
    },

    async readToEnd(topic, onMessage: (message: LogMessage) => void) {
      const pending = new Map<number, number>();
      for (const { partition, high, low } of await topicOffsets(topic)) {
        if (Number(high) > Number(low)) pending.set(partition, Number(high));
      }
      if (pending.size === 0) return;
      const ends = new Map(pending);
      // A throwaway group that never commits: kafkajs has no group-less partition assignment.
      const reader = kafka.consumer({
        groupId: `${clientId}.read-to-end.${randomUUID()}`,
        sessionTimeout: sessionTimeoutMs,
        maxWaitTimeInMs: FETCH_WAIT_MS,
      });
      await reader.connect();
      try {
        await reader.subscribe({ topics: [topic], fromBeginning: true });
        await new Promise<void>((resolve, reject) => {
          reader.on(reader.events.CRASH, ({ payload }) => {
            if (!payload.restart) reject(payload.error);
          });
          void reader
            .run({
              autoCommit: false,
              eachBatch: async ({ batch }) => {
                const end = ends.get(batch.partition);
                if (end === undefined || !pending.has(batch.partition)) return;
                for (const message of batch.messages) {
                  if (Number(message.offset) < end) onMessage(toLogMessage(topic, batch.partition, message));
                }
                if (Number(batch.lastOffset()) >= end - 1) pending.delete(batch.partition);
                if (pending.size === 0) resolve();
              },
            })
            .catch(reject);
        });
      } finally {
        await reader.disconnect();
      }
    },

    async endOffsets(topic) {
      return new Map((await topicOffsets(topic)).map(({ partition, high }) => [partition, Number(high)]));
    },

    async close() {
      await Promise.all([...consumers].map((consumer) => consumer.stop()));
      await Promise.all([
        producerReady?.then((client) => client.disconnect()),
        adminReady?.then((client) => client.disconnect()),
      ]);
    },
  };
}
