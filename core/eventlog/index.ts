// Picks the transport: Kafka when SPOT_KAFKA_BROKERS is set, the embedded SQLite log otherwise.
import path from 'node:path';
import type { Context } from '../context.ts';
import type { EventLog } from './types.ts';
import { createEmbeddedLog } from './embedded.ts';
import { createKafkaLog } from './kafka.ts';

export type * from './types.ts';
export { createEmbeddedLog } from './embedded.ts';
export { createKafkaLog } from './kafka.ts';

export function embeddedLogPath(dataDir: string): string {
  return path.join(dataDir, 'log', 'events.sqlite');
}

/** `retention: false`: another writer of the same embedded file (the process's main thread) runs retention. */
export function createEventLog(ctx: Context, options: { retention?: boolean } = {}): EventLog {
  if (ctx.config.kafkaBrokers) return createKafkaLog(ctx, { brokers: ctx.config.kafkaBrokers });
  return createEmbeddedLog(ctx, {
    path: embeddedLogPath(ctx.config.dataDir),
    maxRetentionMs: ctx.config.logRetentionHours * 3_600_000,
    deflate: ctx.config.logCompression === 'deflate',
    ...(options.retention === false ? { retentionIntervalMs: 0 } : {}),
  });
}
