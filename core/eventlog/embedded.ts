// The embedded event log: Kafka's model (topics, keyed partitions, offsets, consumer groups,
// compaction) on one SQLite file. One process writes the file; others may read it. Consumers are
// woken by appends (notifier.ts), also across the process's threads: no polling unless asked for.
import path from 'node:path';
import type { Context } from '../context.ts';
import type { Consumer, EventLog, LogMessage, TopicSpec } from './types.ts';
import { DEFAULT_PARTITIONS, openStore, type TopicMeta } from './embedded-store.ts';
import { createEmbeddedConsumer, createGroupCoordinator } from './embedded-consumer.ts';
import { createNotifier } from './notifier.ts';

export interface EmbeddedLogOptions {
  /** The SQLite file, e.g. `<dataDir>/log/events.sqlite`. */
  path: string;
  /**
   * Open an existing file read-only (another thread or process writes it): produce does not work;
   * consumers do, with their groups' offsets kept in memory (groups that start anew with the reader).
   */
  readonly?: boolean;
  /** 'normal' (default) survives a killed process; 'full' also survives an OS crash, at one fsync per produce. */
  synchronous?: 'normal' | 'full';
  /** Poll for messages written by other processes, ms (default none: appends in this process wake consumers). */
  pollMs?: number;
  /** Appended key and value UTF-16 units between WAL checkpoints, which run on a worker thread (default 32 Mi). */
  checkpointAfter?: number;
  /** WAL bytes past which a checkpoint also truncates the WAL, so a steady writer cannot grow it without bound (default 512 MiB). */
  walLimit?: number;
  /** Caps every non-compacted topic's retention, ms (SPOT_LOG_RETENTION_HOURS; default: each topic's own). */
  maxRetentionMs?: number;
  /** Stores new record batches deflated where that is smaller (SPOT_LOG_COMPRESSION; default true). */
  deflate?: boolean;
  /** How often retention runs on non-compacted topics, ms (default 60 s; 0 disables). */
  retentionIntervalMs?: number;
  /** Consumers of this log read the same messages moments apart: decode each batch once for all (read-share.ts). */
  shareReads?: boolean;
}

const READ_CHUNK = 5000;

/** Appends tried while the file stays busy (each after the 5 s busy timeout, then a pause). */
const BUSY_ATTEMPTS = 5;

export function createEmbeddedLog(ctx: Context, options: EmbeddedLogOptions): EventLog {
  const logger = ctx.logger.child({ component: 'eventlog', transport: 'embedded' });
  const store = openStore(options);
  const notifier = createNotifier(`spot-eventlog:${path.resolve(options.path)}`);
  const coordinator = createGroupCoordinator();
  const consumers = new Set<Consumer>();
  let closed = false;

  function topicFor(name: string): TopicMeta {
    const existing = store.lookup(name);
    if (existing) return existing;
    if (options.readonly) throw new Error(`topic ${name} does not exist in ${options.path}`);
    logger.info({ topic: name, partitions: DEFAULT_PARTITIONS }, 'auto-creating topic');
    return store.ensureTopic({ name, partitions: DEFAULT_PARTITIONS, compacted: false });
  }

  const retentionEvery = options.retentionIntervalMs ?? 60_000;
  const retentionTimer =
    options.readonly || retentionEvery <= 0
      ? null
      : setInterval(() => {
          try {
            for (const name of store.topicNames()) {
              const deleted = store.applyRetention(store.lookup(name)!, Date.now(), options.maxRetentionMs);
              if (deleted > 0) logger.debug({ topic: name, deleted }, 'retention dropped old record batches');
            }
          } catch (error) {
            logger.warn({ err: error }, 'retention pass failed');
          }
        }, retentionEvery);
  retentionTimer?.unref();

  return {
    kind: 'embedded',

    async ensureTopics(specs: TopicSpec[]) {
      for (const spec of specs) {
        const meta = store.ensureTopic(spec);
        if (meta.partitions !== spec.partitions || meta.compacted !== spec.compacted) {
          logger.warn(
            { topic: spec.name, existing: { partitions: meta.partitions, compacted: meta.compacted }, wanted: spec },
            'topic exists with other settings; keeping them',
          );
        }
      }
    },

    async produce(topic, messages) {
      if (closed) throw new Error('event log is closed');
      if (messages.length === 0) return;
      const meta = topicFor(topic);
      const checkpointBehind = store.checkpointBehind();
      if (checkpointBehind) await checkpointBehind;
      // The file stays locked past the busy timeout only while a checkpoint or another process
      // holds it: waited out here, off the event loop, rather than failing the producer.
      for (let attempt = 1; ; attempt++) {
        try {
          store.append(meta, messages);
          break;
        } catch (error) {
          if ((error as { code?: string }).code !== 'SQLITE_BUSY' || attempt >= BUSY_ATTEMPTS || closed) throw error;
          logger.warn({ topic, attempt }, 'event log file busy; retrying the append');
          await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
        }
      }
      ctx.metrics.inc('eventlog.produced', messages.length);
      notifier.notify(meta.name);
    },

    consumer(consumerOptions) {
      const consumer = createEmbeddedConsumer(
        { store, notifier, coordinator, logger, topicFor, ...(options.pollMs ? { pollMs: options.pollMs } : {}) },
        consumerOptions,
      );
      consumers.add(consumer);
      return consumer;
    },

    async readToEnd(topic, onMessage: (message: LogMessage) => void) {
      const meta = store.lookup(topic);
      if (!meta) return;
      for (const [partition, end] of store.endOffsets(meta)) {
        let position = 0;
        while (position < end) {
          const messages = store.fetch(meta, partition, position, Math.min(READ_CHUNK, end - position));
          if (messages.length === 0) break;
          for (const message of messages) if (message.offset < end) onMessage(message);
          position = messages[messages.length - 1]!.offset + 1;
          // Yield between chunks so a long replay does not starve the event loop.
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    },

    async endOffsets(topic) {
      const meta = store.lookup(topic);
      if (!meta) return new Map();
      return store.endOffsets(meta);
    },

    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...consumers].map((consumer) => consumer.stop()));
      if (retentionTimer) clearInterval(retentionTimer);
      notifier.close();
      await store.close();
    },
  };
}
