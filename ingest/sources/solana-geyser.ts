// Solana over a Yellowstone gRPC (Geyser) stream: confirmed blocks with their transactions are
// pushed (plus confirmed slot updates: the head), turned into the getBlock shape
// (solana-geyser-block.ts) and sent down the block source's path: the same checks, decoder and
// transfer extractor, one publish per batch of blocks, and the same cursor ({slot, hashes} under
// "solana-blocks", so the two sources can replace each other) saved only after acknowledgement.
//
// Resume: every (re)subscription asks `fromSlot` = cursor + 1, so the server replays what was
// pushed but not acknowledged: nothing lost, nothing published twice. A node that no longer holds
// that slot refuses it; the source then follows from the tip and logs the slots it lost.
// Links: a block must name the last processed one as its parent. A parent among the remembered
// hashes means a fork (the cursor rolls back to it, logged as an error: records already published
// stay); an unknown parent after the cursor means blocks were missed, and the stream is reopened
// from the cursor; an unknown one before it walks the remembered hashes back the same way.
// Stream errors, malformed messages and a stream silent past the stall timeout reopen the stream
// with exponential backoff and jitter.
import * as yellowstone from '@triton-one/yellowstone-grpc';
import {
  CommitmentLevel,
  SubscribeRequest,
  type ClientDuplexStream,
  type SubscribeUpdate,
  type SubscribeUpdateBlock,
} from '@triton-one/yellowstone-grpc';
import type { Context } from '../../core/context.ts';
import type { CursorStore } from '../cursor-store.ts';
import type { IngestPublisher, IngestRecords } from '../publisher.ts';
import { createSolanaTransferExtractor, type SolanaTransferExtractor } from '../transfers/solana-transfers.ts';
import { createWakeableSleep, jittered, redactUrl } from './json-rpc.ts';
import { decodeBlockRecords, type RpcBlock, type SolanaBlockCursor } from './solana-blocks.ts';
import { geyserBlock } from './solana-geyser-block.ts';
import type { ChainSource, SolanaTransactionDecoder } from './solana-rpc.ts';

// TypeScript reads the package's types as CommonJS (its package.json has no "type"); Node loads
// its ESM build, whose default export is the client class.
const GeyserClient = yellowstone.default as unknown as typeof yellowstone.default.default;

export interface SolanaGeyserSourceOptions {
  /** gRPC endpoint: https://… (TLS) or http://… (plaintext h2c). */
  url: string;
  /** Sent as the x-token header; never logged. */
  token?: string | null;
  decoder: SolanaTransactionDecoder;
  publisher: Pick<IngestPublisher, 'publish'>;
  commitment?: 'confirmed' | 'finalized';
  cursors?: CursorStore;
  /** Cursor key; default "solana-blocks" (the getBlock source's: either one resumes the other). */
  sourceId?: string;
  /** First slot when no cursor is stored; default: the tip at start. */
  fromSlot?: number;
  /** Blocks per publish at most. */
  batchSize?: number;
  /** Remembered block hashes: how deep a fork can be traced. */
  forkWindow?: number;
  /** A stream that delivers nothing (no block, slot, ping) for this long is reopened. */
  stallTimeoutMs?: number;
  /** Blocks received and not processed before the stream is paused. */
  maxBuffered?: number;
  transfers?: SolanaTransferExtractor;
}

/** Reopenings at one cursor after which a gap is taken as lost rather than asked again. */
const GAP_RETRIES = 3;

interface Received {
  generation: number;
  update: SubscribeUpdateBlock;
}

/** The messages of an error and its causes: the native client nests the gRPC status in `cause`. */
function errorText(error: unknown): string {
  const parts: string[] = [];
  for (
    let e = error as { message?: unknown; cause?: unknown } | undefined, i = 0;
    e && i < 5;
    e = e.cause as typeof e, i++
  )
    parts.push(String(e.message ?? e));
  return parts.join(': ');
}

export function createSolanaGeyserSource(ctx: Context, options: SolanaGeyserSourceOptions): ChainSource {
  const sourceId = options.sourceId ?? 'solana-blocks';
  const logger = ctx.logger.child({ component: 'solana-geyser-source', source: sourceId });
  const commitment = options.commitment ?? 'confirmed';
  const batchSize = options.batchSize ?? 20;
  const window = options.forkWindow ?? 256;
  const stallTimeout = options.stallTimeoutMs ?? 30_000;
  const maxBuffered = options.maxBuffered ?? 200;
  const transfers = options.transfers ?? createSolanaTransferExtractor();
  const parts = { decoder: options.decoder, transfers };

  let cursor = options.cursors?.get<SolanaBlockCursor>(sourceId);
  let stopped = false;
  /** Bumped on every reopening: blocks of an earlier stream are dropped (the new one replays them). */
  let generation = 0;
  const queue: Received[] = [];
  let stream: ClientDuplexStream | null = null;
  let paused = false;
  let lastMessageAt = Date.now();
  let reopen: ((reason: string) => void) | null = null;
  const wakeProcessor = createWakeableSleep();
  const backoff = createWakeableSleep();
  let processing: Promise<void> = Promise.resolve();
  let connectLoop: Promise<void> | null = null;
  let processLoop: Promise<void> | null = null;
  /** Consecutive reopenings for a gap at the same cursor slot. */
  let gapRetries = { slot: -1, count: 0 };
  /** The node refused fromSlot (not held any more): the next subscription follows the tip. */
  let skipFromSlot = false;

  function request(fromSlot: number | null): SubscribeRequest {
    return SubscribeRequest.fromPartial({
      commitment: commitment === 'finalized' ? CommitmentLevel.FINALIZED : CommitmentLevel.CONFIRMED,
      blocks: {
        spot: { accountInclude: [], includeTransactions: true, includeAccounts: false, includeEntries: false },
      },
      slots: { spot: { filterByCommitment: true } },
      ...(fromSlot !== null ? { fromSlot: String(fromSlot) } : {}),
    });
  }

  function onUpdate(update: SubscribeUpdate, own: number): void {
    if (own !== generation) return;
    lastMessageAt = Date.now();
    if (update.block) {
      queue.push({ generation: own, update: update.block });
      if (queue.length >= maxBuffered && !paused) {
        paused = true;
        stream?.pause();
      }
      wakeProcessor.wake();
    } else if (update.slot) {
      const slot = Number(update.slot.slot);
      if (Number.isSafeInteger(slot)) ctx.metrics.ingestHead('solana', slot);
    } else if (update.ping) {
      // Load balancers on the way close streams that carry nothing from the client.
      stream?.write(SubscribeRequest.fromPartial({ ping: { id: 1 } }));
    }
  }

  /** One subscription: resolves with why it ended. */
  async function follow(): Promise<{ received: boolean; reason: string; refused: boolean }> {
    const fromSlot = skipFromSlot ? null : cursor ? cursor.slot + 1 : (options.fromSlot ?? null);
    const own = generation;
    let received = false;
    let current: ClientDuplexStream;
    const client = new GeyserClient(options.url, options.token ?? undefined, undefined);
    try {
      await client.connect();
      current = await client.subscribe(request(fromSlot));
      stream = current;
    } catch (error) {
      const text = errorText(error);
      return { received, reason: text, refused: fromSlot !== null && /invalid argument/i.test(text) };
    }
    skipFromSlot = false;
    if (stopped || own !== generation) {
      current.destroy();
      return { received, reason: 'stopping', refused: false };
    }
    logger.info({ fromSlot }, 'geyser stream open');
    lastMessageAt = Date.now();
    return await new Promise((resolve) => {
      let done = false;
      const finish = (reason: string, refused = false) => {
        if (done) return;
        done = true;
        clearInterval(watchdog);
        reopen = null;
        current.destroy();
        resolve({ received, reason, refused });
      };
      reopen = finish;
      const watchdog = setInterval(
        () => {
          if (!paused && Date.now() - lastMessageAt > stallTimeout) {
            ctx.metrics.inc('ingest.solana.geyser_stalls');
            finish(`no message for ${stallTimeout} ms`);
          }
        },
        Math.max(10, Math.min(1_000, stallTimeout / 4)),
      );
      current.on('data', (update: SubscribeUpdate) => {
        received = true;
        onUpdate(update, own);
      });
      current.on('error', (error) => {
        const text = errorText(error);
        finish(text, !received && fromSlot !== null && /invalid argument/i.test(text));
      });
      current.on('close', () => finish('stream closed'));
    });
  }

  async function runConnections(): Promise<void> {
    let failures = 0;
    while (!stopped) {
      // A batch in flight may move the cursor: the next subscription starts after it.
      await processing.catch(() => {});
      queue.length = 0;
      paused = false;
      const outcome = await follow();
      stream = null;
      generation++;
      if (stopped) break;
      if (outcome.refused) {
        skipFromSlot = true;
        ctx.metrics.inc('ingest.solana.geyser_resume_refused');
        logger.error(
          { fromSlot: cursor ? cursor.slot + 1 : options.fromSlot, err: outcome.reason },
          'the node no longer holds the slots after the cursor: following from its tip; the slots between are lost',
        );
      }
      failures = outcome.received ? 1 : failures + 1;
      ctx.metrics.inc('ingest.solana.geyser_reconnects');
      logger.warn({ err: outcome.reason, failures }, 'geyser stream ended; reopening');
      await backoff.sleep(jittered(Math.min(10_000, 100 * 2 ** Math.min(failures, 7))));
    }
  }

  function restart(reason: string): void {
    generation++;
    queue.length = 0;
    reopen?.(reason);
  }

  function remember(hashes: Array<[number, string]>): Array<[number, string]> {
    return hashes.slice(-window);
  }

  /** Whether a block links to what was processed; rolls the cursor back on a fork. false: the block is dropped. */
  function link(slot: number, block: RpcBlock, hashes: Array<[number, string]>): 'link' | 'duplicate' | 'reopen' {
    const last = hashes[hashes.length - 1];
    if (!last || (block.parentSlot === last[0] && block.previousBlockhash === last[1])) return 'link';
    if (hashes.some(([s, h]) => s === slot && h === block.blockhash)) return 'duplicate';
    const parentAt = hashes.findIndex(([s, h]) => s === block.parentSlot && h === block.previousBlockhash);
    if (parentAt >= 0) {
      ctx.metrics.inc('ingest.solana.forks');
      logger.error(
        { forkPoint: block.parentSlot, lastProcessed: last[0], at: slot, commitment },
        'fork: processed blocks were orphaned (records already published); re-processing from the fork point',
      );
      hashes.splice(parentAt + 1);
      return 'link';
    }
    if (block.parentSlot > last[0]) {
      if (gapRetries.slot !== last[0]) gapRetries = { slot: last[0], count: 0 };
      if (++gapRetries.count <= GAP_RETRIES) return 'reopen';
      ctx.metrics.inc('ingest.solana.geyser_lost_blocks');
      logger.error(
        { after: last[0], parentSlot: block.parentSlot, at: slot },
        'the node does not replay the blocks before this one: they are lost',
      );
      return 'link';
    }
    // The parent is an older block than the last processed one, not remembered: walk back.
    ctx.metrics.inc('ingest.solana.forks');
    const keep = hashes.findLastIndex(([s]) => s < block.parentSlot);
    logger.error(
      { parentSlot: block.parentSlot, lastProcessed: last[0], resumeAfter: hashes[keep]?.[0] ?? null },
      'fork below the last processed block: re-reading from an older block',
    );
    hashes.splice(keep + 1);
    return 'reopen';
  }

  /** Processes up to a batch of queued blocks of the current stream. */
  async function processBatch(): Promise<void> {
    const taken = queue.splice(0, batchSize).filter((item) => item.generation === generation);
    if (paused && queue.length < maxBuffered / 2) {
      paused = false;
      lastMessageAt = Date.now();
      stream?.resume();
    }
    if (taken.length === 0) return;
    const start = cursor;
    const hashes = [...(start?.hashes ?? [])];
    let slot = start?.slot ?? -1;
    const records: IngestRecords = { swaps: [], events: [] };
    let reason: string | null = null;
    for (const { update } of taken) {
      let converted: ReturnType<typeof geyserBlock>;
      try {
        converted = geyserBlock(update);
      } catch (error) {
        ctx.metrics.inc('ingest.solana.geyser_malformed');
        reason = `malformed block message: ${(error as Error).message}`;
        break;
      }
      const verdict = link(converted.slot, converted.block, hashes);
      if (verdict === 'duplicate' || (verdict === 'link' && hashes.length === 0 && converted.slot <= slot)) {
        ctx.metrics.inc('ingest.solana.geyser_duplicates');
        continue;
      }
      if (verdict === 'reopen') {
        // Every remembered block walked back: re-read from the parent itself.
        if (hashes.length === 0) slot = Math.min(slot, converted.block.parentSlot - 1);
        reason = `block ${converted.slot} does not link to slot ${hashes[hashes.length - 1]?.[0] ?? slot}`;
        break;
      }
      const decoded = decodeBlockRecords(ctx, logger, parts, converted.slot, converted.block);
      for (const swap of decoded.swaps) records.swaps.push(swap);
      for (const event of decoded.events) records.events.push(event);
      ctx.metrics.inc('ingest.solana.skipped_slots', Math.max(0, converted.slot - converted.block.parentSlot - 1));
      hashes.push([converted.slot, converted.block.blockhash]);
      slot = converted.slot;
      // The newest linked block's time marks the chain's progress, records or none.
      if (converted.block.blockTime !== null)
        records.progress = { chain: 'solana', blockTime: converted.block.blockTime * 1000 };
    }
    // A walk back leaves the cursor at the newest block still believed canonical.
    if (hashes.length > 0) slot = hashes[hashes.length - 1]![0];
    if (records.swaps.length + records.events.length > 0 || records.progress) {
      try {
        await options.publisher.publish(records);
      } catch (error) {
        ctx.metrics.inc('ingest.invalid_records');
        logger.error(
          { err: (error as Error).message, slots: `${(start?.slot ?? 0) + 1}..${slot}` },
          'decoded records break the topic schema; blocks skipped',
        );
      }
    }
    if (slot >= 0 && (slot !== start?.slot || hashes.length !== start.hashes.length)) {
      ctx.metrics.inc('ingest.solana.blocks', Math.max(0, hashes.length - (start?.hashes.length ?? 0)));
      cursor = { slot, hashes: remember(hashes) };
      options.cursors?.set(sourceId, cursor);
      ctx.metrics.set('ingest.solana.slot', slot);
    }
    if (reason !== null) {
      logger.warn({ reason, cursor: cursor?.slot }, 'reopening the geyser stream from the cursor');
      restart(reason);
    }
  }

  async function runProcessor(): Promise<void> {
    while (!stopped) {
      if (queue.length === 0) {
        await wakeProcessor.sleep(1_000);
        continue;
      }
      processing = processBatch();
      try {
        await processing;
      } catch (error) {
        logger.error({ err: (error as Error).message }, 'geyser batch failed; reopening the stream');
        restart('batch failed');
      }
    }
  }

  return {
    async start() {
      logger.info(
        { url: redactUrl(options.url), commitment, from: cursor ? cursor.slot + 1 : options.fromSlot },
        'solana geyser source starting',
      );
      processLoop = runProcessor();
      connectLoop = runConnections();
    },
    async stop() {
      stopped = true;
      wakeProcessor.wake();
      backoff.wake();
      await processLoop;
      restart('stopping');
      await connectLoop;
    },
  };
}
