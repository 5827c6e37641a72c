// The aggregate role. Embedded: one aggregator. Kafka: one instance of a scaled-out set: it keeps
// the token state of the partitions the ownership group gives it (aggregators/ownership.ts).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Context } from '../core/context.ts';
import { createKafkaLog } from '../core/eventlog/kafka.ts';
import { createAggregator } from '../aggregators/aggregator.ts';
import { createEvictedTokenStore } from '../clickhouse/aggregator-state.ts';
import { createOwnership } from '../aggregators/ownership.ts';
import { snapshotDir } from '../aggregators/snapshot.ts';
import type { Runtime } from './runtime.ts';

/** SPOT_AGGREGATOR_ID, else an id generated once into the data dir (a restart keeps its snapshot). */
export function aggregatorInstanceId(ctx: Context): string {
  if (ctx.config.aggregatorId) return ctx.config.aggregatorId;
  const file = path.join(snapshotDir(ctx), 'instance-id');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  try {
    fs.writeFileSync(file, `agg-${crypto.randomBytes(6).toString('hex')}\n`, { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return fs.readFileSync(file, 'utf8').trim();
}

export async function startAggregator(runtime: Runtime, name = 'default'): Promise<void> {
  const { ctx, log } = runtime;
  const { store, client } = await runtime.store();
  if (log.kind !== 'kafka' || !ctx.config.kafkaBrokers) {
    const aggregator = createAggregator(ctx, {
      log,
      store,
      name,
      snapshotEveryMs: ctx.config.aggregateSnapshotMs,
      evictedStore: createEvictedTokenStore(client),
      flushAfterMs: ctx.config.storeFlushMs,
      onFailure: (error) => runtime.fail('aggregator', error),
    });
    await aggregator.start();
    runtime.add({ name: 'aggregator', stop: () => aggregator.stop() });
    return;
  }
  const instance = aggregatorInstanceId(ctx);
  const ownersLog = createKafkaLog(ctx, {
    brokers: ctx.config.kafkaBrokers,
    clientId: `spot-owners-${instance}`,
    sessionTimeoutMs: ctx.config.aggregateSessionMs,
  });
  const ownership = createOwnership(ctx, { log, ownersLog, client, instance });
  // The instance's own input group (`spot-aggregator-<id>`) reads every partition; its snapshot is snapshot-<id>.bin.
  const aggregator = createAggregator(ctx, {
    log,
    store,
    name: instance,
    snapshotEveryMs: ctx.config.aggregateSnapshotMs,
    flushAfterMs: ctx.config.storeFlushMs,
    partitioned: ownership.hooks,
    onFailure: (error) => runtime.fail('aggregator', error),
  });
  await ownership.start();
  runtime.add({ name: 'aggregator-ownership', stop: () => ownership.stop() });
  // Merging starts once the instance knows what it owns: every instance of a starting set begins
  // together instead of one racing through the log during the join.
  const waitMs = Math.max(30_000, 3 * ctx.config.aggregateSessionMs);
  const outcome = await ownership.firstAssignment(waitMs);
  if (outcome === 'stopped') return; // a shutdown signal came during the wait
  if (outcome === 'timeout') {
    ctx.logger.warn(
      { instance, waitedMs: waitMs },
      'no partitions assigned yet; merging anyway (inputs of partitions not owned are journaled)',
    );
  }
  await aggregator.start();
  runtime.add({ name: 'aggregator', stop: () => aggregator.stop() });
  ctx.logger.info(
    { instance },
    'aggregator instance started (Kafka: partitions owned through group spot-aggregate-owners)',
  );
}
