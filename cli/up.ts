// `spot up`: every role in one process on the embedded default (or the configured transports).
// REST and the stream edge run on a serving thread of their own, ingest (sources, decoders,
// enrichment) on an ingest thread; the aggregator and the store on the main thread.
import type { Context } from '../core/context.ts';
import { runRole, startAggregator, startSqlEndpoint } from './roles.ts';
import { startIngestThread } from './ingest-thread-role.ts';
import { printBanner } from './banner.ts';
import { watchStartup } from './progress.ts';
import { startServingThread } from './serving-role.ts';
import { reportThreadLoop } from './thread-report.ts';

export function upCommand(ctx: Context): Promise<number> {
  return runRole(ctx, async (runtime) => {
    // The aggregator's and the store's thread: its loop delay and GC pauses are what a trade waits behind.
    reportThreadLoop(ctx.logger, 'main-loop', 'main thread event loop');
    // Readers first, intake last: nothing produced is waiting on a reader that is not there.
    const sqlPort = await startSqlEndpoint(runtime);
    await startAggregator(runtime);
    await startServingThread(runtime, sqlPort);
    await startIngestThread(runtime);
    if (ctx.config.apiKeys.length === 0) {
      ctx.logger.warn('no API key registered: create one with `spot keys create` or start with SPOT_API_KEYS=<key>');
    }
    printBanner(runtime);
    watchStartup(runtime);
  });
}
