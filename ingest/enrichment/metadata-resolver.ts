// Turns new tokens' metadata URIs into `metadata` token events, off the ingest path: `submit` only
// queues (never awaits), a fixed number of workers fetch, and the queue is bounded — when it is full
// the newest token is dropped and counted, so a flood of creations costs memory of the cap, not of
// the flood. Results go through the persistent cache first.
import type { Context } from '../../core/context.ts';
import type { TokenEvent } from '../../core/topics.ts';
import type { MetadataFetcher } from './fetcher.ts';
import type { MetadataCache } from './metadata-cache.ts';
import { normaliseMetadata, type TokenMetadata } from './metadata-json.ts';

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
  const concurrency = deps.concurrency ?? 4;
  const maxQueued = deps.maxQueued ?? 10_000;
  const queue: Created[] = [];
  /** Token keys queued or in flight: one token is fetched once per run. */
  const pending = new Set<string>();
  let running = 0;
  let waiters: Array<() => void> = [];

  async function resolve(created: Created): Promise<void> {
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
        cache.set(created.uri, {
          ok: false,
          reason: outcome.reason,
          transient: outcome.transient,
          fetchedAt: Date.now(),
        });
        ctx.metrics.inc('enrichment_metadata_failed');
        logger.debug({ token: created.token, chain: created.chain, reason: outcome.reason }, 'metadata not fetched');
      }
    }
    if (metadata) await deps.publish(metadataEvent(created, metadata));
  }

  function pump(): void {
    while (running < concurrency && queue.length > 0) {
      const created = queue.shift()!;
      running++;
      resolve(created)
        .catch((error: Error) =>
          logger.warn({ token: created.token, err: error.message }, 'metadata resolution failed'),
        )
        .finally(() => {
          running--;
          pending.delete(`${created.chain}:${created.token}`);
          pump();
        });
    }
    if (running === 0 && queue.length === 0) {
      const done = waiters;
      waiters = [];
      for (const wake of done) wake();
    }
  }

  return {
    submit(events) {
      for (const event of events) {
        if (event.kind !== 'created' || event.uri.trim() === '') continue;
        const key = `${event.chain}:${event.token}`;
        if (pending.has(key)) continue;
        if (queue.length >= maxQueued) {
          ctx.metrics.inc('enrichment_metadata_dropped');
          continue;
        }
        pending.add(key);
        queue.push(event);
        pump(); // free workers take it now, so the cap counts waiting tokens only
      }
    },
    idle() {
      if (running === 0 && queue.length === 0) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
    get queued() {
      return queue.length;
    },
  };
}
