// Solana source: logsSubscribe (one subscription per followed program) names the signatures,
// getTransaction fetches them (a few in flight), and records are published in arrival order.
// On every (re)connect the gap since the last signature is filled with getSignaturesForAddress,
// oldest first; a set of seen signatures keeps a transaction from being processed twice.
import type { Context } from '../../core/context.ts';
import type { CursorStore, SolanaCursor } from '../cursor-store.ts';
import type { IngestPublisher, IngestRecords } from '../publisher.ts';
import {
  createHttpRpc,
  isWsUrl,
  keepConnected,
  redactUrl,
  swapScheme,
  withRetry,
  sleep,
  type KeptConnection,
  type RpcCaller,
  type WsRpcConnection,
} from './json-rpc.ts';

export interface SolanaTransactionDecoder {
  /** Takes a getTransaction result (json encoding). */
  decodeTransaction(transaction: any): IngestRecords;
}

export interface ChainSource {
  start(): Promise<void>;
  /** Stops following, waits for what is in flight to be acknowledged and its cursor saved. */
  stop(): Promise<void>;
}

export interface SolanaRpcSourceOptions {
  /** HTTP(S) endpoint; a ws(s) URL also works (the other scheme is derived on the same host). */
  url: string;
  /** WebSocket endpoint when it is not `url` with the ws scheme (solana-test-validator: port + 1). */
  wsUrl?: string;
  decoder: SolanaTransactionDecoder;
  publisher: IngestPublisher;
  /** Program ids to follow. */
  programs: string[];
  commitment?: 'confirmed' | 'finalized';
  cursors?: CursorStore;
  /** Cursor key; defaults to "solana". */
  sourceId?: string;
  /** getTransaction calls in flight. */
  fetchConcurrency?: number;
  /** Attempts while getTransaction answers null (just confirmed, not yet served) or fails. */
  fetchAttempts?: number;
  fetchRetryDelayMs?: number;
  /** getSignaturesForAddress page size (the RPC maximum is 1000). */
  gapPageSize?: number;
  /** Upper bound of one gap fill per program; older signatures beyond it are reported lost. */
  maxGapSignatures?: number;
  /** Published but unacknowledged transactions before the source waits for the publisher. */
  maxUnacknowledged?: number;
}

interface SignatureInfo {
  signature: string;
  slot: number;
  err: unknown;
}

interface Entry {
  signature: string;
  slot: number;
  programs: Set<string>;
  /** Failed transactions are not fetched: they only move the cursor. */
  fetch: boolean;
  started: boolean;
  result: Promise<unknown | null>;
  settle: (value: unknown | null) => void;
}

const SEEN_CAPACITY = 200_000;

export function createSolanaRpcSource(ctx: Context, options: SolanaRpcSourceOptions): ChainSource {
  const sourceId = options.sourceId ?? 'solana';
  const logger = ctx.logger.child({ component: 'solana-source', source: sourceId });
  const commitment = options.commitment ?? 'confirmed';
  const concurrency = options.fetchConcurrency ?? 8;
  const attempts = options.fetchAttempts ?? 12;
  const retryDelay = options.fetchRetryDelayMs ?? 250;
  const pageSize = options.gapPageSize ?? 1000;
  const maxUnacked = options.maxUnacknowledged ?? 1000;
  const maxGap = options.maxGapSignatures ?? 100_000;
  const httpUrl = isWsUrl(options.url) ? swapScheme(options.url, 'http') : options.url;
  const wsUrl = options.wsUrl ?? (isWsUrl(options.url) ? options.url : swapScheme(options.url, 'ws'));
  const http: RpcCaller = createHttpRpc({ url: httpUrl });

  const cursor: SolanaCursor = options.cursors?.get<SolanaCursor>(sourceId) ?? { slot: 0, signatures: {} };
  /** Newest signature queued per program: where the next gap fill stops. */
  const lastQueued: Record<string, string> = { ...cursor.signatures };
  const queue: Entry[] = [];
  const queued = new Map<string, Entry>();
  const done = new Set<string>();
  let lastAck: Promise<void> = Promise.resolve();
  let unacknowledged = 0;
  let inFlight = 0;
  let stopped = false;
  let wakeDrain: (() => void) | null = null;
  let connection: KeptConnection | null = null;
  let drainLoop: Promise<void> | null = null;

  function markDone(signature: string): void {
    done.add(signature);
    if (done.size > SEEN_CAPACITY) done.delete(done.values().next().value as string);
  }

  function enqueue(info: SignatureInfo, program: string): void {
    const existing = queued.get(info.signature);
    if (existing) {
      existing.programs.add(program);
      lastQueued[program] = info.signature;
      return;
    }
    // Already processed (a late repeat, or a gap fill overlapping live notifications): its
    // position was recorded when it was processed; moving cursors back to it would regress them.
    if (done.has(info.signature)) {
      ctx.metrics.inc('ingest.solana.duplicate_signatures');
      return;
    }
    lastQueued[program] = info.signature;
    let settle!: (value: unknown | null) => void;
    const result = new Promise<unknown | null>((resolve) => (settle = resolve));
    const entry: Entry = {
      signature: info.signature,
      slot: info.slot,
      programs: new Set([program]),
      fetch: info.err == null,
      started: false,
      result,
      settle,
    };
    if (!entry.fetch) entry.settle(null);
    queue.push(entry);
    queued.set(entry.signature, entry);
    startFetches();
    wakeDrain?.();
  }

  function startFetches(): void {
    for (const entry of queue) {
      if (inFlight >= concurrency) return;
      if (!entry.fetch || entry.started) continue;
      entry.started = true;
      inFlight++;
      fetchTransaction(entry.signature)
        .then(entry.settle, (error: Error) => {
          logger.error(
            { err: error.message, signature: entry.signature },
            'getTransaction failed; transaction skipped',
          );
          ctx.metrics.inc('ingest.solana.fetch_failures');
          entry.settle(null);
        })
        .finally(() => {
          inFlight--;
          startFetches();
        });
    }
  }

  async function fetchTransaction(signature: string): Promise<unknown | null> {
    const params = [signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment }];
    for (let attempt = 1; ; attempt++) {
      const tx = await withRetry(() => http.call<unknown | null>('getTransaction', params), { stopped: () => stopped });
      if (tx !== null || attempt >= attempts || stopped) {
        if (tx === null) throw new Error(`still null after ${attempt} attempts`);
        return tx;
      }
      await sleep(retryDelay * Math.min(attempt, 8));
    }
  }

  async function drain(): Promise<void> {
    while (!stopped) {
      const entry = queue[0];
      if (!entry) {
        await new Promise<void>((resolve) => (wakeDrain = resolve));
        wakeDrain = null;
        continue;
      }
      const tx = await entry.result;
      // Stopping leaves the rest unprocessed and the cursor before it: the next start refetches.
      if (stopped) break;
      queue.shift();
      queued.delete(entry.signature);
      markDone(entry.signature);
      let records: IngestRecords = { swaps: [], events: [] };
      if (tx) {
        try {
          records = options.decoder.decodeTransaction(tx);
        } catch (error) {
          ctx.metrics.inc('ingest.solana.decode_failures');
          logger.error(
            { err: (error as Error).message, signature: entry.signature },
            'decode failed; transaction skipped',
          );
        }
      }
      for (const program of entry.programs) cursor.signatures[program] = entry.signature;
      cursor.slot = Math.max(cursor.slot, entry.slot);
      const snapshot: SolanaCursor = { slot: cursor.slot, signatures: { ...cursor.signatures } };
      let ack: Promise<void>;
      try {
        ack = records.swaps.length + records.events.length > 0 ? options.publisher.publish(records) : Promise.resolve();
      } catch (error) {
        ctx.metrics.inc('ingest.invalid_records');
        logger.error(
          { err: (error as Error).message, signature: entry.signature },
          'decoded records break the topic schema; transaction skipped',
        );
        ack = Promise.resolve();
      }
      ctx.metrics.inc('ingest.solana.transactions');
      // Acks resolve in publish order, so cursors are saved in order too.
      unacknowledged++;
      lastAck = Promise.all([lastAck, ack]).then(() => {
        unacknowledged--;
        saveCursor(snapshot);
      });
      if (unacknowledged > maxUnacked) await lastAck;
    }
  }

  function saveCursor(snapshot: SolanaCursor): void {
    try {
      options.cursors?.set(sourceId, snapshot);
    } catch (error) {
      logger.error({ err: (error as Error).message }, 'saving the cursor failed');
    }
  }

  async function listSignaturesSince(program: string, until: string): Promise<SignatureInfo[]> {
    const newestFirst: SignatureInfo[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await withRetry(() =>
        http.call<SignatureInfo[]>('getSignaturesForAddress', [
          program,
          { until, limit: pageSize, commitment, ...(before ? { before } : {}) },
        ]),
      );
      newestFirst.push(...page);
      if (page.length < pageSize) break;
      if (newestFirst.length >= maxGap) {
        ctx.metrics.inc('ingest.solana.gap_truncated');
        logger.error(
          { program, until, kept: newestFirst.length },
          'gap larger than maxGapSignatures: older signatures are not processed',
        );
        break;
      }
      before = page[page.length - 1]!.signature;
    }
    return newestFirst.reverse();
  }

  /** Subscribes first (holding notifications back), then fills the gap, then lets them through. */
  async function onOpen(ws: WsRpcConnection): Promise<void> {
    const held: Array<[SignatureInfo, string]> = [];
    let holding = true;
    for (const program of options.programs) {
      await ws.subscribe('logsSubscribe', [{ mentions: [program] }, { commitment }], (result) => {
        const notification = result as { context: { slot: number }; value: { signature: string; err: unknown } };
        const info = {
          signature: notification.value.signature,
          slot: notification.context.slot,
          err: notification.value.err,
        };
        ctx.metrics.ingestHead('solana', info.slot);
        if (holding) held.push([info, program]);
        else enqueue(info, program);
      });
    }
    const gap: Array<[SignatureInfo, string]> = [];
    for (const program of options.programs) {
      const until = lastQueued[program];
      if (!until) continue;
      for (const info of await listSignaturesSince(program, until)) gap.push([info, program]);
    }
    // Oldest first across programs; a stable sort keeps each program's own order within a slot.
    gap.sort((a, b) => a[0].slot - b[0].slot);
    if (gap.length > 0) logger.info({ signatures: gap.length }, 'filling the gap since the last signature');
    ctx.metrics.inc('ingest.solana.gap_signatures', gap.length);
    for (const [info, program] of gap) enqueue(info, program);
    holding = false;
    for (const [info, program] of held) enqueue(info, program);
  }

  return {
    async start() {
      logger.info(
        { url: redactUrl(httpUrl), programs: options.programs, commitment, fromSlot: cursor.slot },
        'solana source starting',
      );
      drainLoop = drain();
      connection = keepConnected(ctx, { url: wsUrl, name: 'solana-ws', onOpen });
    },
    async stop() {
      stopped = true;
      await connection?.stop();
      wakeDrain?.();
      await drainLoop;
      await lastAck;
    },
  };
}
