// Solana by block: getSlot names the confirmed tip, getBlocks lists the produced slots after the
// cursor (skipped slots are simply absent), getBlock (full transactions, json, version 0) is
// fetched for them in batched JSON-RPC requests, and every transaction of every block goes through
// the decoder and the transfer extractor (funding, balances). Calls per slot stay ~1 whatever the
// volume: one getBlock per produced slot, getSlot/getBlocks once per step.
//
// Order and exactly-once: blocks are processed in slot order; one publish per batch of blocks,
// and the cursor {slot, recent hashes} is saved only after that publish is acknowledged, so a
// restart (even in the middle of a block) re-fetches from the first unacknowledged block.
// Forks: a block whose previousBlockhash is not the hash processed for its parent slot means the
// processed one was orphaned: the remembered hashes are walked back to the newest still on the
// canonical chain and processing resumes there (as the EVM source does). Orphaned records were
// already published: the commitment level is the defence, so a fork is logged as an error.
// Bad answers (transport faults, 429/5xx, malformed JSON, wrong shapes, a node behind the cursor)
// are logged and retried with backoff and jitter; nothing is skipped but a slot the node reports
// skipped.
//
// A WebSocket endpoint (ws(s) URL or `wsUrl`) adds blockSubscribe where the endpoint offers it:
// pushed blocks are kept (a bounded window) and used instead of getBlock, in the same slot-ordered
// loop; a block not pushed, or pushed malformed, is fetched. Endpoints without blockSubscribe get
// slotSubscribe as a wake-up: the loop polls at once on each new slot.
import type { Context } from '../../core/context.ts';
import type { Logger } from '../../core/logger.ts';
import type { TokenEvent } from '../../core/topics.ts';
import type { CursorStore } from '../cursor-store.ts';
import type { IngestPublisher, IngestRecords } from '../publisher.ts';
import type { SolanaTransaction } from '../solana/transaction.ts';
import { createSolanaTransferExtractor, type SolanaTransferExtractor } from '../transfers/solana-transfers.ts';
import {
  createHttpRpc,
  createWakeableSleep,
  isTransient,
  isWsUrl,
  jittered,
  JsonRpcError,
  keepConnected,
  MalformedAnswerError,
  redactUrl,
  sleep,
  swapScheme,
  withRetry,
  type KeptConnection,
} from './json-rpc.ts';
import type { ChainSource, SolanaTransactionDecoder } from './solana-rpc.ts';

export interface SolanaBlockCursor {
  /** Last processed slot (processed = published and acknowledged). */
  slot: number;
  /** [slot, blockhash] of recent processed blocks, ascending: how a fork is traced. */
  hashes: Array<[number, string]>;
}

export interface SolanaBlockSourceOptions {
  /** HTTP(S) endpoint; a ws(s) URL also works (the other scheme is derived on the same host). */
  url: string;
  /** WebSocket endpoint for slotSubscribe; default: `url` with the ws scheme when `url` is ws(s), else none. */
  wsUrl?: string;
  decoder: SolanaTransactionDecoder;
  publisher: Pick<IngestPublisher, 'publish'>;
  commitment?: 'confirmed' | 'finalized';
  cursors?: CursorStore;
  /** Cursor key; default "solana-blocks". */
  sourceId?: string;
  /** First slot when no cursor is stored; default: the tip at start. */
  fromSlot?: number;
  /** getBlock calls per batched request (and blocks per publish). */
  batchSize?: number;
  /** Slots asked of getBlocks per step. */
  slotsPerStep?: number;
  pollIntervalMs?: number;
  /** Remembered block hashes: how deep a fork can be traced. */
  forkWindow?: number;
  transfers?: SolanaTransferExtractor;
}

/** getBlock answers for a slot that never had a block (skipped, or pruned from long-term storage). */
const SKIPPED_CODES = new Set([-32007, -32009]);

export interface RpcBlock {
  blockhash: string;
  previousBlockhash: string;
  parentSlot: number;
  blockTime: number | null;
  transactions: Array<Omit<SolanaTransaction, 'slot' | 'blockTime'>>;
}

/** Pushed blocks kept for the loop; older ones are fetched again if still needed. */
const MAX_PUSHED = 2_000;
/** Longest wait for a block whose notification may be in flight, and how recent a push must be to wait at all. */
const PUSH_WAIT_MS = 300;
const PUSH_FLOWING_MS = 2_000;

const isInt = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

function malformed(what: string): never {
  throw new MalformedAnswerError(what);
}

/** The getBlock answer checked field by field: a wrong shape is a node fault, not a crash. */
export function checkBlock(value: unknown, slot: number): RpcBlock {
  const block = value as RpcBlock;
  if (typeof value !== 'object' || value === null) malformed(`getBlock ${slot}: not an object`);
  if (typeof block.blockhash !== 'string' || typeof block.previousBlockhash !== 'string')
    malformed(`getBlock ${slot}: blockhash missing`);
  if (!isInt(block.parentSlot)) malformed(`getBlock ${slot}: parentSlot missing`);
  if (block.blockTime !== null && !isInt(block.blockTime)) malformed(`getBlock ${slot}: blockTime not a number`);
  if (!Array.isArray(block.transactions)) malformed(`getBlock ${slot}: transactions missing`);
  for (const tx of block.transactions) {
    const message = tx?.transaction?.message;
    if (
      !Array.isArray(tx?.transaction?.signatures) ||
      !Array.isArray(message?.accountKeys) ||
      !Array.isArray(message?.instructions) ||
      (tx.meta !== null && typeof tx.meta !== 'object')
    )
      malformed(`getBlock ${slot}: a transaction lacks signatures, accountKeys, instructions or meta`);
    for (const balances of [tx.meta?.preTokenBalances, tx.meta?.postTokenBalances]) {
      for (const balance of balances ?? []) {
        if (typeof balance?.mint !== 'string' || !/^[0-9]+$/.test(String(balance?.uiTokenAmount?.amount)))
          malformed(`getBlock ${slot}: a token balance lacks mint or amount`);
      }
    }
  }
  return block;
}

/**
 * Every transaction of a block through the decoder and the transfer extractor (funding, balances);
 * one that fails to decode is logged and skipped. Shared by the getBlock and Geyser sources.
 */
export function decodeBlockRecords(
  ctx: Context,
  logger: Logger,
  parts: { decoder: SolanaTransactionDecoder; transfers: SolanaTransferExtractor },
  slot: number,
  block: RpcBlock,
): IngestRecords {
  const out: IngestRecords = { swaps: [], events: [] };
  for (const entry of block.transactions) {
    const tx = Object.assign({ slot, blockTime: block.blockTime }, entry) as SolanaTransaction;
    try {
      const decoded = parts.decoder.decodeTransaction(tx);
      const extra: TokenEvent[] = parts.transfers.extract(tx, decoded);
      for (const swap of decoded.swaps) out.swaps.push(swap);
      for (const event of decoded.events) out.events.push(event);
      for (const event of extra) out.events.push(event);
    } catch (error) {
      ctx.metrics.inc('ingest.solana.decode_failures');
      logger.error(
        { err: (error as Error).message, slot, signature: tx.transaction.signatures[0] },
        'decode failed; transaction skipped',
      );
    }
  }
  return out;
}

class NotServedYet extends Error {}

export function createSolanaBlockSource(ctx: Context, options: SolanaBlockSourceOptions): ChainSource {
  const sourceId = options.sourceId ?? 'solana-blocks';
  const logger = ctx.logger.child({ component: 'solana-block-source', source: sourceId });
  const commitment = options.commitment ?? 'confirmed';
  const batchSize = options.batchSize ?? 20;
  const slotsPerStep = options.slotsPerStep ?? 1_000;
  const pollInterval = options.pollIntervalMs ?? 400;
  const window = options.forkWindow ?? 256;
  const httpUrl = isWsUrl(options.url) ? swapScheme(options.url, 'http') : options.url;
  const wsUrl = options.wsUrl ?? (isWsUrl(options.url) ? options.url : null);
  const http = createHttpRpc({ url: httpUrl });
  const transfers = options.transfers ?? createSolanaTransferExtractor();
  const blockParams = (slot: number, details: 'full' | 'none') => [
    slot,
    { encoding: 'json', transactionDetails: details, rewards: false, maxSupportedTransactionVersion: 0, commitment },
  ];

  let cursor = options.cursors?.get<SolanaBlockCursor>(sourceId);
  let stopped = false;
  const pause = createWakeableSleep();
  let socket: KeptConnection | null = null;
  let loop: Promise<void> | null = null;
  /** Blocks pushed by blockSubscribe, by slot, not processed yet. */
  const pushed = new Map<number, RpcBlock>();
  let maxPushed = -1;
  let lastPushAt = 0;

  function onPushedBlock(result: unknown): void {
    const value = (result as { value?: { slot?: unknown; block?: unknown } } | null)?.value;
    if (!value || !isInt(value.slot) || !value.block) return;
    try {
      if (value.slot > (cursor?.slot ?? -1)) pushed.set(value.slot, checkBlock(value.block, value.slot));
    } catch {
      ctx.metrics.inc('ingest.solana.pushed_malformed');
    }
    if (pushed.size > MAX_PUSHED) pushed.delete(pushed.keys().next().value as number);
    maxPushed = Math.max(maxPushed, value.slot);
    lastPushAt = Date.now();
    pause.wake();
  }

  /** Slots after the newest pushed one may still be on their way while pushes flow: waited for briefly. */
  async function awaitPushes(slots: number[]): Promise<void> {
    const deadline = Date.now() + PUSH_WAIT_MS;
    while (
      !stopped &&
      Date.now() < deadline &&
      Date.now() - lastPushAt < PUSH_FLOWING_MS &&
      slots.some((slot) => slot > maxPushed && !pushed.has(slot))
    )
      await sleep(5);
  }

  const call = <T>(method: string, params: unknown[]) =>
    withRetry(() => http.call<T>(method, params), { stopped: () => stopped });

  async function tip(): Promise<number> {
    const slot = await call<unknown>('getSlot', [{ commitment }]);
    if (!isInt(slot)) throw new MalformedAnswerError(`getSlot: ${JSON.stringify(slot)} is not a slot`);
    return slot;
  }

  async function producedSlots(from: number, to: number): Promise<number[]> {
    const slots = await call<unknown>('getBlocks', [from, to, { commitment }]);
    if (!Array.isArray(slots) || !slots.every(isInt)) throw new MalformedAnswerError('getBlocks: not a list of slots');
    // Only what was asked, ascending, once: a confused node cannot move the cursor backwards.
    return [...new Set(slots.filter((slot) => slot >= from && slot <= to))].sort((a, b) => a - b);
  }

  /** getBlock for each slot in one batched request; null = skipped. */
  async function fetchBlocks(slots: number[]): Promise<Array<RpcBlock | null>> {
    await awaitPushes(slots);
    const missing = slots.filter((slot) => !pushed.has(slot));
    const answers = await withRetry(
      () =>
        http.batch<unknown>(
          'getBlock',
          missing.map((slot) => blockParams(slot, 'full')),
        ),
      { stopped: () => stopped },
    );
    ctx.metrics.inc('ingest.solana.rpc_calls', missing.length);
    ctx.metrics.inc('ingest.solana.pushed_blocks', slots.length - missing.length);
    const fetched = new Map(missing.map((slot, i) => [slot, answers[i]!]));
    return slots.map((slot) => {
      const block = pushed.get(slot);
      if (block) return block;
      const answer = fetched.get(slot)!;
      if (!answer.ok) {
        if (SKIPPED_CODES.has(answer.error.code)) return null;
        // -32004 "block not available", rate limits, internal errors: not there yet; the step is retried.
        throw isTransient(answer.error) || answer.error.code === -32004
          ? new NotServedYet(`getBlock ${slot}: ${answer.error.message}`)
          : answer.error;
      }
      if (answer.result === null) throw new NotServedYet(`getBlock ${slot}: not served yet`);
      return checkBlock(answer.result, slot);
    });
  }

  const decodeBlock = (slot: number, block: RpcBlock) =>
    decodeBlockRecords(ctx, logger, { decoder: options.decoder, transfers }, slot, block);

  /** Walks back the remembered hashes to the newest still canonical and rolls the cursor back to it. */
  async function rollBack(current: SolanaBlockCursor, at: number): Promise<void> {
    let forkPoint: number | null = null;
    for (let i = current.hashes.length - 1; i >= 0 && !stopped; i--) {
      const [slot, hash] = current.hashes[i]!;
      try {
        const block = await call<{ blockhash?: unknown } | null>('getBlock', blockParams(slot, 'none'));
        if (block?.blockhash === hash) {
          forkPoint = slot;
          break;
        }
      } catch (error) {
        if (!(error instanceof JsonRpcError && SKIPPED_CODES.has(error.code))) throw error;
      }
    }
    const to = forkPoint ?? Math.max(0, (current.hashes[0]?.[0] ?? current.slot) - 1);
    ctx.metrics.inc('ingest.solana.forks');
    logger.error(
      { forkPoint: to, traced: forkPoint !== null, lastProcessed: current.slot, at, commitment },
      'fork: processed blocks were orphaned (records already published); re-processing from the fork point',
    );
    cursor = { slot: to, hashes: current.hashes.filter(([slot]) => slot <= to) };
    pushed.clear();
    options.cursors?.set(sourceId, cursor);
  }

  /** One batch of blocks; true when caught up with the tip. */
  async function step(): Promise<boolean> {
    const head = await tip();
    if (!cursor) {
      cursor = { slot: (options.fromSlot ?? head) - 1, hashes: [] };
      logger.info({ fromSlot: cursor.slot + 1 }, 'no stored cursor: starting');
    }
    if (head < cursor.slot) {
      ctx.metrics.inc('ingest.solana.node_behind');
      logger.warn({ tip: head, cursor: cursor.slot }, 'node is behind the processed slot; waiting for it');
      return true;
    }
    if (head === cursor.slot) return true;
    const to = Math.min(head, cursor.slot + slotsPerStep);
    const produced = await producedSlots(cursor.slot + 1, to);
    const slots = produced.slice(0, batchSize);
    // Slots up to `reach` are settled by this step: produced ones fetched, the others skipped.
    const reach = produced.length > batchSize ? slots[slots.length - 1]! : to;
    const blocks = await fetchBlocks(slots);
    const records: IngestRecords = { swaps: [], events: [] };
    const hashes = [...cursor.hashes];
    let settled = reach;
    for (let i = 0; i < slots.length; i++) {
      const block = blocks[i]!;
      const slot = slots[i]!;
      if (!block) {
        ctx.metrics.inc('ingest.solana.skipped_slots');
        continue;
      }
      const parent = hashes[hashes.length - 1];
      if (parent && (block.parentSlot !== parent[0] || block.previousBlockhash !== parent[1])) {
        if (i === 0) {
          await rollBack(cursor, slot);
          return false;
        }
        // Publish what linked; the next step traces the fork from the last linked block.
        settled = parent[0];
        break;
      }
      const decoded = decodeBlock(slot, block);
      for (const swap of decoded.swaps) records.swaps.push(swap);
      for (const event of decoded.events) records.events.push(event);
      hashes.push([slot, block.blockhash]);
      // The newest linked block's time marks the chain's progress, records or none.
      if (block.blockTime !== null) records.progress = { chain: 'solana', blockTime: block.blockTime * 1000 };
    }
    if (records.swaps.length + records.events.length > 0 || records.progress) {
      try {
        await options.publisher.publish(records);
      } catch (error) {
        // Only a schema violation rejects: a decoder bug, reported and skipped rather than retried forever.
        ctx.metrics.inc('ingest.invalid_records');
        logger.error(
          { err: (error as Error).message, slots: `${cursor.slot + 1}..${settled}` },
          'decoded records break the topic schema; blocks skipped',
        );
      }
    }
    ctx.metrics.inc('ingest.solana.blocks', hashes.length - cursor.hashes.length);
    cursor = { slot: settled, hashes: hashes.filter(([slot]) => slot > settled - window).slice(-window) };
    options.cursors?.set(sourceId, cursor);
    for (const slot of pushed.keys()) if (slot <= settled) pushed.delete(slot);
    ctx.metrics.set('ingest.solana.slot', settled);
    return settled >= head;
  }

  async function run(): Promise<void> {
    let failures = 0;
    while (!stopped) {
      let caughtUp = false;
      try {
        caughtUp = await step();
        failures = 0;
      } catch (error) {
        if (stopped) break;
        failures++;
        ctx.metrics.inc('ingest.solana.step_failures');
        const level = error instanceof NotServedYet ? 'debug' : 'warn';
        logger[level]({ err: (error as Error).message, failures }, 'block step failed; retrying');
        await pause.sleep(jittered(Math.min(10_000, 100 * 2 ** Math.min(failures, 7))));
        continue;
      }
      if (caughtUp && !stopped) await pause.sleep(pollInterval);
    }
  }

  return {
    async start() {
      logger.info(
        { url: redactUrl(httpUrl), commitment, from: cursor ? cursor.slot + 1 : options.fromSlot },
        'solana block source starting',
      );
      if (wsUrl) {
        socket = keepConnected(ctx, {
          url: wsUrl,
          name: 'solana-slots',
          onOpen: async (connection) => {
            try {
              await connection.subscribe(
                'blockSubscribe',
                [
                  'all',
                  {
                    commitment,
                    encoding: 'json',
                    transactionDetails: 'full',
                    maxSupportedTransactionVersion: 0,
                    showRewards: false,
                  },
                ],
                onPushedBlock,
              );
            } catch (error) {
              // Most endpoints do not offer it (it needs --rpc-pubsub-enable-block-subscription).
              if (!(error instanceof JsonRpcError)) throw error;
              await connection.subscribe('slotSubscribe', [], () => pause.wake());
            }
            pause.wake();
          },
        });
      }
      loop = run();
    },
    async stop() {
      stopped = true;
      pause.wake();
      await socket?.stop();
      await loop;
    },
  };
}
