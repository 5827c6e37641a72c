// `spot up`: every role in one process on the embedded default (or the configured transports).
import type { Context } from '../core/context.ts';
import { runRole, startAggregator, startApi, startEdge, startSqlEndpoint } from './roles.ts';
import { startIngest } from './ingest-role.ts';
import { printBanner } from './banner.ts';
import { watchStartup } from './progress.ts';

export function upCommand(ctx: Context): Promise<number> {
  return runRole(ctx, async (runtime) => {
    // Readers first, intake last: nothing produced is waiting on a reader that is not there.
    await startSqlEndpoint(runtime);
    await startAggregator(runtime);
    const api = await startApi(runtime);
    await startEdge(runtime, api.views);
    await startIngest(runtime);
    if (ctx.config.apiKeys.length === 0) {
      ctx.logger.warn('no API key registered: create one with `spot keys create` or start with SPOT_API_KEYS=<key>');
    }
    printBanner(runtime);
    watchStartup(runtime);
  });
}
