// Turns new tokens' metadata URIs into `metadata` token events, off the ingest path (a bounded
// work queue: `submit` never waits). The persistent cache is asked before the network.
import type { Context } from '../../core/context.ts';
import type { TokenEvent } from '../../core/topics.ts';
import type { MetadataFetcher } from './fetcher.ts';
import type { MetadataCache } from './metadata-cache.ts';
import { normaliseMetadata, type TokenMetadata } from './metadata-json.ts';
import { createWorkQueue } from './work-queue.ts';

type Created = Extract<TokenEvent, { kind: 'created' }>;
export type MetadataEvent = Extract<TokenEvent, { kind: 'metadata' }>;

export interface MetadataResolver {
  /** Queues the metadata of every `created` event with a URI; returns at once. */
  submit(events: readonly TokenEvent[]): void;
  /** Resolves when the queue is empty and no fetch is running (tests, shutdown). */
  idle(): Promise<void>;
  readonly queued: number;
}

export interface MetadataResolverDeps {
  ctx: Context;
  fetcher: MetadataFetcher;
  cache: MetadataCache;
  publish(event: MetadataEvent): void | Promise<void>;
  concurrency?: number;
  maxQueued?: number;
  /** The URI of a token whose creation carried none, read from the chain (Solana metadata accounts); null when none. */
  resolveUri?(created: Created): Promise<string | null>;
}

/** The metadata event of a token, placed at its creation (the chain fact its URI comes from). */
export function metadataEvent(created: Created, metadata: TokenMetadata): MetadataEvent {
  return {
    id: `${created.id}:metadata`,
    chain: created.chain,
    transactionHash: created.transactionHash,
    eventIndex: created.eventIndex,
    blockNumber: created.blockNumber,
    blockTime: created.blockTime,
    kind: 'metadata',
    token: created.token,
    ...metadata,
  };
}

export function createMetadataResolver(deps: MetadataResolverDeps): MetadataResolver {
  const { ctx, fetcher, cache } = deps;
  const logger = ctx.logger.child({ component: 'metadata-resolver' });
  const work = createWorkQueue(ctx, {
    name: 'enrichment_metadata',
    concurrency: deps.concurrency,
    maxQueued: deps.maxQueued,
  });

  async function resolve(event: Created): Promise<void> {
    let created = event;
    if (created.uri.trim() === '') {
      const uri = deps.resolveUri ? await deps.resolveUri(created) : null;
      if (!uri) return;
      created = { ...created, uri };
    }
    const cached = cache.get(created.uri);
    let metadata: TokenMetadata | null = null;
    if (cached) {
      ctx.metrics.inc('enrichment_metadata_cache_hits');
      if (cached.ok) metadata = cached.metadata;
    } else {
      const outcome = await fetcher.fetchJson(created.uri);
      if (outcome.ok) {
        metadata = normaliseMetadata(outcome.json);
        cache.set(created.uri, { ok: true, metadata, fetchedAt: Date.now() });
        ctx.metrics.inc('enrichment_metadata_fetched');
      } else {
        const { reason, transient } = outcome;
        cache.set(created.uri, { ok: false, reason, transient, fetchedAt: Date.now() });
        ctx.metrics.inc('enrichment_metadata_failed');
        logger.debug({ token: created.token, chain: created.chain, reason }, 'metadata not fetched');
      }
    }
    if (metadata) await deps.publish(metadataEvent(created, metadata));
  }

  return {
    submit(events) {
      for (const event of events) {
        if (event.kind !== 'created' || (event.uri.trim() === '' && !deps.resolveUri)) continue;
        work.submit(`${event.chain}:${event.token}`, () => resolve(event));
      }
    },
    idle: () => work.idle(),
    get queued() {
      return work.queued;
    },
  };
}
