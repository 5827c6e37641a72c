// Which promotion source ingest runs: the API named by SPOT_PROMOTIONS_URL, else on the simulator
// its own feed (sim-server.ts), polled by the same poller through the same fetcher.
import type { Context } from '../../core/context.ts';
import { createMetadataFetcher } from '../enrichment/fetcher.ts';
import { createUrlGuard } from '../enrichment/url-guard.ts';
import type { IngestPublisher } from '../publisher.ts';
import { createPromotionPoller, type PromotionPoller } from './poller.ts';
import { SIM_PROMOTIONS_HOST, startSimPromotionServer, type SimPromotionServer } from './sim-server.ts';

export interface PromotionSource {
  /** A publisher through `inner` (the simulator's feed learns the market from it); the poller publishes to `inner`. */
  wrap(inner: IngestPublisher): IngestPublisher;
  start(): void;
  stop(): Promise<void>;
}

/** The source ingest runs, or null: no URL set, and not the simulator (or SPOT_ENRICHMENT=off). */
export async function startPromotionSource(
  ctx: Context,
  options: { simulated: boolean },
): Promise<PromotionSource | null> {
  const configured = ctx.config.promotionsUrl;
  if (!configured && !(options.simulated && ctx.config.enrichment === 'on')) return null;
  const sim: SimPromotionServer | null = configured
    ? null
    : await startSimPromotionServer({ seed: ctx.config.simSeed });
  const fetcher = createMetadataFetcher({
    guard: createUrlGuard({ allowHosts: ctx.config.metadataAllowHosts }),
    ipfsGateway: ctx.config.ipfsGateway,
    hostMap: sim ? { [SIM_PROMOTIONS_HOST]: sim.origin } : undefined,
    timeoutMs: 10_000,
    maxBytes: 1024 * 1024,
    // DEX Screener allows 60 requests a minute; the simulator's local feed needs no spacing.
    hostIntervalMs: sim ? 2 : 1000,
  });
  let poller: PromotionPoller | null = null;
  return {
    wrap(inner) {
      poller = createPromotionPoller(ctx, {
        fetcher,
        baseUrl: configured ?? `http://${SIM_PROMOTIONS_HOST}`,
        publisher: inner,
        intervalMs: ctx.config.promotionsIntervalMs ?? (sim ? 5000 : 60_000),
      });
      if (!sim) return inner;
      return {
        async publish(records) {
          await inner.publish(records);
          sim.observe(records);
        },
        flush: () => inner.flush(),
      };
    },
    start() {
      poller?.start();
      ctx.logger.info({ source: configured ? new URL(configured).host : 'simulator' }, 'promotion source polled');
    },
    async stop() {
      const stopping = poller?.stop();
      fetcher.close(); // a request in flight is aborted, not waited for
      await stopping;
      await sim?.close();
    },
  };
}
