// `spot replay`: rebuild every table and compacted topic from the raw topics. On the embedded
// default, stop `spot up` first: chDB opens one data dir in one process.
import type { Context } from '../core/context.ts';
import { runReplay } from '../aggregators/replay.ts';
import { createEvictedTokenStore } from '../clickhouse/aggregator-state.ts';
import { createRuntime } from './runtime.ts';
import { storeBusy } from './errors.ts';

export async function replayCommand(ctx: Context): Promise<number> {
  const runtime = await createRuntime(ctx);
  try {
    const { store, client } = await runtime.store();
    const result = await runReplay(ctx, { log: runtime.log, store, evictedStore: createEvictedTokenStore(client) });
    const rate = Math.round(result.messages / Math.max(0.001, result.ms / 1000));
    ctx.logger.info({ messages: result.messages, ms: result.ms, messagesPerSecond: rate }, 'replay finished');
    return 0;
  } catch (error) {
    const busy = storeBusy('replay', error);
    if (busy) {
      process.stderr.write(`${busy}\n`);
      return 1;
    }
    ctx.logger.error({ err: error }, 'replay failed');
    return 1;
  } finally {
    await runtime.stop();
  }
}
