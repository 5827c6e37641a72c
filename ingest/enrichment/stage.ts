// The enrichment stage: what ingest publishes passes through it, and it answers — off the ingest
// path — with `metadata` and `security` token events for new tokens (metadata-resolver.ts,
// security-resolver.ts). Wiring is one wrap of the ingest publisher; see docs/token-fields.md.
import path from 'node:path';
import type { Chain } from '../../core/chains.ts';
import type { Context } from '../../core/context.ts';
import type { TokenEvent } from '../../core/topics.ts';
import { decodeMetaplexMetadata, metaplexMetadataAddress } from '../solana/mint-account.ts';
import { mintChangesOf } from '../solana/spl-token.ts';
import { accountKeysOf, instructionsOf, type SolanaTransaction } from '../solana/transaction.ts';
import type { IngestRecords } from '../publisher.ts';
import type { IngestPublisher } from '../publisher.ts';
import { createHttpRpc, type RpcCaller } from '../sources/json-rpc.ts';
import { createMetadataFetcher } from './fetcher.ts';
import { createMetadataCache } from './metadata-cache.ts';
import { createMetadataResolver } from './metadata-resolver.ts';
import { createSecurityResolver, readAccount, readSolanaMint } from './security-resolver.ts';
import { createUrlGuard } from './url-guard.ts';

export interface EnrichmentStage {
  /** A publisher that publishes through `inner`, then queues the enrichment of what it published. */
  wrap(inner: IngestPublisher): IngestPublisher;
  /**
   * Solana: a transaction the source decoded, read for token-program changes — authority changes
   * re-read the mint, an LP mint burnt in a graduation gives the LP burnt share.
   */
  observeSolana(tx: SolanaTransaction, decoded: IngestRecords): void;
  /** Resolves when no enrichment is queued or running (tests; shutdown does not wait for slow hosts). */
  idle(): Promise<void>;
  close(): void;
}

export interface EnrichmentOptions {
  /** Chain nodes the security and on-chain metadata reads go to; chains without one get metadata JSON only. */
  rpc?: Partial<Record<Chain, RpcCaller>>;
  /** Operator host map (the simulator's metadata host), see fetcher.ts. */
  hostMap?: Readonly<Record<string, string>>;
  cachePath?: string;
  fetchTimeoutMs?: number;
  /** Least time between two requests to one metadata host (default 200 ms). */
  hostIntervalMs?: number;
}

/** HTTP callers for the chains' configured endpoints (a ws(s):// endpoint is asked over http(s) at the same address). */
export function httpRpcCallers(
  urls: Partial<Record<Chain, string>>,
  chains: readonly Chain[],
): Partial<Record<Chain, RpcCaller>> {
  const out: Partial<Record<Chain, RpcCaller>> = {};
  for (const chain of chains) {
    const url = urls[chain];
    if (url) out[chain] = createHttpRpc({ url: url.replace(/^ws(s?):/i, 'http$1:'), timeoutMs: 10_000 });
  }
  return out;
}

/** A Solana token's URI from the chain: the Token-2022 metadata extension, else its Metaplex metadata account. */
async function solanaOnChainUri(rpc: RpcCaller, mint: string): Promise<string | null> {
  const facts = await readSolanaMint(rpc, mint);
  if (facts?.metadata?.uri) return facts.metadata.uri;
  const account = await readAccount(rpc, metaplexMetadataAddress(mint));
  return account ? decodeMetaplexMetadata(account).uri || null : null;
}

export function createEnrichmentStage(ctx: Context, options: EnrichmentOptions = {}): EnrichmentStage {
  const rpc = options.rpc ?? {};
  const cache = createMetadataCache({
    path: options.cachePath ?? path.join(ctx.config.dataDir, 'enrichment-metadata.sqlite'),
  });
  const fetcher = createMetadataFetcher({
    guard: createUrlGuard({ allowHosts: ctx.config.metadataAllowHosts }),
    ipfsGateway: ctx.config.ipfsGateway,
    hostMap: options.hostMap,
    timeoutMs: options.fetchTimeoutMs,
    hostIntervalMs: options.hostIntervalMs,
  });
  let target: IngestPublisher | null = null;
  let closed = false;
  const publish = async (event: TokenEvent) => {
    if (!closed) await target?.publish({ swaps: [], events: [event] }); // a closed log would be retried forever
  };
  const metadata = createMetadataResolver({
    ctx,
    fetcher,
    cache,
    publish,
    resolveUri: async (created) => {
      const node = created.chain === 'solana' ? rpc.solana : undefined;
      return node ? solanaOnChainUri(node, created.token) : null;
    },
  });
  const security = createSecurityResolver({ ctx, rpc, publish });

  return {
    wrap(inner) {
      target = inner;
      return {
        async publish(records) {
          await inner.publish(records);
          metadata.submit(records.events);
          security.submit(records.events, records.swaps);
        },
        flush: () => inner.flush(),
      };
    },
    observeSolana(tx, decoded) {
      if (!tx.meta || tx.meta.err != null) return;
      const changes = mintChangesOf(instructionsOf(tx, accountKeysOf(tx)));
      if (changes.length === 0) return;
      const signature = tx.transaction.signatures[0] ?? '';
      const at = {
        id: `solana:${signature}:0`,
        chain: 'solana' as const,
        transactionHash: signature,
        eventIndex: 0,
        blockNumber: tx.slot,
        blockTime: (tx.blockTime ?? 0) * 1000,
      };
      const graduated = decoded.events.find((e) => e.kind === 'graduated');
      security.observeMintChanges(at, changes, graduated?.token ?? null);
    },
    async idle() {
      await Promise.all([metadata.idle(), security.idle()]);
    },
    close() {
      closed = true;
      fetcher.close();
      cache.close();
    },
  };
}
