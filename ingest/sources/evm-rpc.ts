// EVM source: follows the chain up to head − confirmations with eth_getLogs over bounded block
// ranges, groups logs by transaction into receipt-shaped objects, decodes and publishes them,
// and remembers the last block and recent block hashes in the cursor store.
//
// Reorgs: before a range is processed, the parentHash of its first block must be the hash we
// processed for the block before it. When it is not, the source walks back its remembered
// hashes to the fork point, rolls the cursor back and re-processes from there. Records of the
// orphaned blocks were already published and cannot be taken back from an append-only log:
// the confirmation depth is the defence, so such a reorg is logged as an error with its fork
// point. Re-published canonical records are harmless: every sink is idempotent on the trade id.
//
// By block: every block of a range is read with its full transactions (batched JSON-RPC), so
// plain value transfers become funding; ERC-20 Transfer logs of the tokens seen traded or
// created are fetched with the range's logs, so holder balances follow wallet-to-wallet moves.
// Calls per block stay bounded: one eth_getBlockByNumber per block, eth_getLogs per range, one
// eth_getBlockReceipts per block with creations, a few Multicall3 eth_calls per range for new pools
// and tokens (evm-resolver.ts).
// Answers of the wrong shape are node faults: retried with backoff and jitter like 429/5xx.
//
// ws(s):// URLs: newHeads notifications wake the loop at once and calls go over the socket;
// while it is down, calls use the same endpoint over http(s) and the loop polls.
import { hexToNumber, type Hex } from 'viem';
import { CHAIN_INFO, EVM_NATIVE_ADDRESS, type Chain } from '../../core/chains.ts';
import type { Context } from '../../core/context.ts';
import type { TokenEvent } from '../../core/topics.ts';
import {
  eventNameOfTopic,
  TOPIC0,
  type EventName,
  type EvmDecoder,
  type EvmLog,
  type EvmReceipt,
  type EvmTransaction,
} from '../evm/index.ts';
import type { CursorStore, EvmCursor } from '../cursor-store.ts';
import type { IngestPublisher } from '../publisher.ts';
import { createEvmResolver } from './evm-resolver.ts';
import {
  createWakeableSleep,
  createHttpRpc,
  isTransient,
  jittered,
  MalformedAnswerError,
  isWsUrl,
  JsonRpcError,
  RpcTransportError,
  keepConnected,
  redactUrl,
  sleep,
  swapScheme,
  withRetry,
  type KeptConnection,
  type RpcCaller,
} from './json-rpc.ts';
import type { ChainSource } from './solana-rpc.ts';

export interface EvmRpcSourceOptions {
  chain: Chain;
  url: string;
  decoder: EvmDecoder;
  publisher: IngestPublisher;
  /** Blocks behind the head that are processed; the defence against reorgs. */
  confirmations?: number;
  pollIntervalMs?: number;
  /** First block when no cursor is stored; default: the confirmed head at start. */
  fromBlock?: number;
  /** Contracts whose every log is fetched (factories, PoolManager, four.meme TokenManager…). */
  addresses?: string[];
  /** topic0 values fetched from any contract (pool Swap/Sync events); default: every event the decoder reads but Transfer. */
  topics?: string[];
  cursors?: CursorStore;
  /** Cursor key; defaults to "evm:<chain>". */
  sourceId?: string;
  /** Largest eth_getLogs block range; halved while the node answers "too many results". */
  maxRange?: number;
  /** Remembered block hashes: how deep a reorg can be traced to its fork point. */
  reorgWindow?: number;
  /** Read every block with its full transactions: plain value transfers → funding (default true). */
  nativeTransfers?: boolean;
  /** ERC-20 Transfer logs of tokens seen traded or created (holder balances); default true, at most this many tokens followed. */
  maxTrackedTokens?: number;
  /** Blocks per batched eth_getBlockByNumber request. */
  blockBatch?: number;
}

interface RpcTransaction {
  hash: string;
  from: string;
  to: string | null;
  value?: Hex;
  input?: string;
  transactionIndex?: Hex;
}

interface RpcBlock {
  number: Hex;
  hash: string;
  parentHash: string;
  timestamp: Hex;
  transactions: Array<string | RpcTransaction>;
}

const isHex = (value: unknown): value is Hex => typeof value === 'string' && /^0x[0-9a-fA-F]*$/.test(value);

/** eth_getBlockByNumber checked field by field (null = not served yet). */
function checkBlock(value: unknown, n: number): RpcBlock | null {
  if (value === null) return null;
  const block = value as RpcBlock;
  if (
    typeof value !== 'object' ||
    !isHex(block.number) ||
    hexToNumber(block.number) !== n ||
    !isHex(block.hash) ||
    !isHex(block.parentHash) ||
    !isHex(block.timestamp) ||
    !Array.isArray(block.transactions)
  )
    throw new MalformedAnswerError(`eth_getBlockByNumber ${n}: not a block`);
  for (const tx of block.transactions) {
    if (typeof tx === 'string') continue;
    if (typeof tx !== 'object' || tx === null || !isHex(tx.hash) || typeof tx.from !== 'string')
      throw new MalformedAnswerError(`eth_getBlockByNumber ${n}: a transaction lacks hash or from`);
  }
  return block;
}

function checkLogs(value: unknown): RpcLog[] {
  if (!Array.isArray(value)) throw new MalformedAnswerError('eth_getLogs: not a list');
  for (const log of value as RpcLog[]) {
    if (
      typeof log !== 'object' ||
      log === null ||
      typeof log.address !== 'string' ||
      !Array.isArray(log.topics) ||
      !isHex(log.blockNumber) ||
      !isHex(log.transactionIndex) ||
      !isHex(log.logIndex) ||
      typeof log.transactionHash !== 'string' ||
      typeof log.blockHash !== 'string'
    )
      throw new MalformedAnswerError('eth_getLogs: a log lacks its position');
  }
  return value as RpcLog[];
}

type FullReceipt = EvmReceipt & { blockHash: string };

/** eth_getBlockReceipts of block `n` checked field by field (null = not served yet). */
function checkReceipts(value: unknown, n: number): FullReceipt[] {
  if (value === null) throw new ForkedMidRange(`receipts of block ${n} not served yet`);
  if (!Array.isArray(value)) throw new MalformedAnswerError(`eth_getBlockReceipts ${n}: not a list`);
  for (const receipt of value as FullReceipt[]) {
    if (
      typeof receipt !== 'object' ||
      receipt === null ||
      typeof receipt.transactionHash !== 'string' ||
      typeof receipt.blockHash !== 'string' ||
      !Array.isArray(receipt.logs)
    )
      throw new MalformedAnswerError(`eth_getBlockReceipts ${n}: a receipt lacks its hash or logs`);
  }
  return value as FullReceipt[];
}

/** A plain value transfer (value, no calldata): what funds a wallet. */
function isValueTransfer(tx: string | RpcTransaction): tx is RpcTransaction & { value: Hex } {
  return (
    typeof tx !== 'string' &&
    !!tx.to &&
    isHex(tx.value) &&
    BigInt(tx.value) > 0n &&
    (tx.input === '0x' || tx.input === '' || tx.input === undefined)
  );
}

/** Addresses per eth_getLogs filter when Transfers of tracked tokens are asked. */
const ADDRESS_CHUNK = 500;

interface RpcLog extends EvmLog {
  blockHash: string;
  blockNumber: Hex;
  transactionHash: string;
  transactionIndex: Hex;
  logIndex: Hex;
}

/** Receipts with creations need every log of the transaction (the launched token's mint). */
const FULL_RECEIPT_EVENTS = new Set<EventName>([
  'pairCreated',
  'v3PoolCreated',
  'aerodromePoolCreated',
  'slipstreamPoolCreated',
  'v4Initialize',
  'infinityClInitialize',
  'infinityBinInitialize',
]);

class ForkedMidRange extends Error {}

function isTooManyResults(error: unknown): boolean {
  if (!(error instanceof JsonRpcError)) return false;
  return error.code === -32005 || /too many|limit|range|exceed|10000|response size/i.test(error.message);
}

export function createEvmRpcSource(ctx: Context, options: EvmRpcSourceOptions): ChainSource {
  const { chain, decoder, publisher } = options;
  if (CHAIN_INFO[chain].family !== 'evm') throw new TypeError(`${chain} is not an EVM chain`);
  const sourceId = options.sourceId ?? `evm:${chain}`;
  const logger = ctx.logger.child({ component: 'evm-source', chain });
  const confirmations = options.confirmations ?? 3;
  const pollInterval = options.pollIntervalMs ?? 2_000;
  const maxRange = options.maxRange ?? 500;
  const window = options.reorgWindow ?? 128;
  const nativeTransfers = options.nativeTransfers ?? true;
  const maxTracked = options.maxTrackedTokens ?? 10_000;
  const blockBatch = options.blockBatch ?? 50;
  /** Tokens whose Transfer logs are fetched: seen traded or created, oldest dropped first. */
  const tracked = new Set<string>();
  const track = (token: string) => {
    const address = token.toLowerCase();
    if (address === EVM_NATIVE_ADDRESS || tracked.has(address)) return;
    tracked.add(address);
    if (tracked.size > maxTracked) tracked.delete(tracked.values().next().value as string);
  };
  const addresses = options.addresses?.map((address) => address.toLowerCase()) ?? [];
  const topics =
    options.topics ??
    (addresses.length > 0
      ? []
      : Object.entries(TOPIC0)
          .filter(([name]) => name !== 'transfer')
          .map(([, topic]) => topic));
  const http = createHttpRpc({ url: isWsUrl(options.url) ? swapScheme(options.url, 'http') : options.url });
  let socket: KeptConnection | null = null;
  const rpc: RpcCaller = {
    call: (method, params) => (socket?.current() ?? http).call(method, params),
  };
  const call = <T>(method: string, params: unknown[]) =>
    withRetry(() => rpc.call<T>(method, params), { stopped: () => stopped });
  // A reverted view (not a pool, not an ERC-20) is an answer, not a failure: only transport errors are retried.
  const resolverRpc: RpcCaller = {
    call: (method, params) =>
      withRetry(() => rpc.call(method, params), {
        isRetryable: (error) => error instanceof RpcTransportError,
        stopped: () => stopped,
      }),
  };
  const resolver = createEvmResolver(ctx, { chain, rpc: resolverRpc, decoder });

  /** Cleared once the node answers eth_getBlockReceipts "method not found". */
  let blockReceipts = true;
  let cursor: EvmCursor | undefined = options.cursors?.get<EvmCursor>(sourceId);
  let range = maxRange;
  /** Ranges done since the last halving: the range grows back only after a quiet stretch. */
  let rangeStreak = 0;
  let stopped = false;
  const pause = createWakeableSleep();
  let loop: Promise<void> | null = null;

  const hex = (n: number) => `0x${n.toString(16)}`;
  const getBlock = async (n: number, full: boolean) =>
    checkBlock(await call<unknown>('eth_getBlockByNumber', [hex(n), full]), n);

  /** Blocks in batched requests over HTTP (one eth_getBlockByNumber each); a missing one fails the range. */
  async function getBlocks(numbers: number[], full: (n: number) => boolean): Promise<Map<number, RpcBlock>> {
    const out = new Map<number, RpcBlock>();
    for (let start = 0; start < numbers.length; start += blockBatch) {
      const part = numbers.slice(start, start + blockBatch);
      const answers =
        part.length === 1
          ? [
              {
                ok: true as const,
                result: await call<unknown>('eth_getBlockByNumber', [hex(part[0]!), full(part[0]!)]),
              },
            ]
          : await withRetry(
              () =>
                http.batch<unknown>(
                  'eth_getBlockByNumber',
                  part.map((n) => [hex(n), full(n)]),
                ),
              { stopped: () => stopped },
            );
      answers.forEach((answer, i) => {
        const n = part[i]!;
        if (!answer.ok) throw answer.error;
        const block = checkBlock(answer.result, n);
        if (!block) throw new ForkedMidRange(`block ${n} not served yet`);
        out.set(n, block);
      });
    }
    return out;
  }

  async function getLogs(from: number, to: number): Promise<RpcLog[]> {
    const filters: object[] = [];
    if (addresses.length > 0) filters.push({ address: addresses });
    if (topics.length > 0) filters.push({ topics: [topics] });
    const followed = [...tracked];
    for (let start = 0; start < followed.length; start += ADDRESS_CHUNK)
      filters.push({ address: followed.slice(start, start + ADDRESS_CHUNK), topics: [[TOPIC0.transfer]] });
    const all = new Map<string, RpcLog>();
    for (const filter of filters) {
      const params = [{ ...filter, fromBlock: hex(from), toBlock: hex(to) }];
      const found = await withRetry(async () => checkLogs(await rpc.call<unknown>('eth_getLogs', params)), {
        // Some nodes send "too many results" as -32005 (limit exceeded): halve the range instead.
        isRetryable: (error) => isTransient(error) && !isTooManyResults(error),
        stopped: () => stopped,
      });
      for (const log of found) {
        if (!log.removed) all.set(`${log.transactionHash}:${log.logIndex}`, log);
      }
    }
    return [...all.values()].sort(
      (a, b) =>
        hexToNumber(a.blockNumber) - hexToNumber(b.blockNumber) ||
        hexToNumber(a.transactionIndex) - hexToNumber(b.transactionIndex) ||
        hexToNumber(a.logIndex) - hexToNumber(b.logIndex),
    );
  }

  /** Walks back the remembered hashes to the newest one still canonical; rolls the cursor back to it. */
  async function rollBack(current: EvmCursor): Promise<void> {
    let forkPoint: number | null = null;
    for (let i = current.hashes.length - 1; i >= 0; i--) {
      const [number, hash] = current.hashes[i]!;
      const block = await getBlock(number, false);
      if (block && block.hash === hash) {
        forkPoint = number;
        break;
      }
    }
    const oldest = current.hashes[0]?.[0];
    const to = forkPoint ?? Math.max(0, (oldest ?? current.block) - 1);
    ctx.metrics.inc(`ingest.evm.${chain}.reorgs`);
    logger.error(
      {
        forkPoint: to,
        traced: forkPoint !== null,
        lastProcessed: current.block,
        depth: current.block - to,
        confirmations,
      },
      'chain reorganised below the confirmation depth: records of orphaned blocks were already published; re-processing from the fork point',
    );
    cursor = { block: to, hashes: current.hashes.filter(([number]) => number <= to) };
    options.cursors?.set(sourceId, cursor);
  }

  async function processRange(current: EvmCursor, from: number, to: number): Promise<void> {
    const logs = await getLogs(from, to);
    const withLogs = new Set(logs.map((log) => hexToNumber(log.blockNumber)));
    const wanted = new Set<number>([from, to, ...withLogs]);
    // Near the head (small ranges) every header is read, so a reorg is traced block by block.
    if (to - from < 32) for (let n = from; n <= to; n++) wanted.add(n);
    // Value transfers need every block's transactions.
    if (nativeTransfers) for (let n = from; n <= to; n++) wanted.add(n);
    const numbers = [...wanted].sort((a, b) => a - b);
    const blocks = await getBlocks(numbers, (n) => nativeTransfers || withLogs.has(n));

    const previous = current.hashes[current.hashes.length - 1];
    if (previous && previous[0] === from - 1 && blocks.get(from)!.parentHash !== previous[1]) {
      await rollBack(current);
      return;
    }
    for (let i = 1; i < numbers.length; i++) {
      const [a, b] = [numbers[i - 1]!, numbers[i]!];
      if (b === a + 1 && blocks.get(b)!.parentHash !== blocks.get(a)!.hash)
        throw new ForkedMidRange(`blocks ${a}..${b} do not link`);
    }
    for (const log of logs) {
      if (blocks.get(hexToNumber(log.blockNumber))!.hash !== log.blockHash)
        throw new ForkedMidRange(`log of block ${hexToNumber(log.blockNumber)} from another fork`);
    }

    const receipts = await buildReceipts(logs, blocks);
    await resolver.prefetch(receipts.filter((entry) => !entry.transaction).map((entry) => entry.receipt));
    const events: TokenEvent[] = [];
    const swaps = [];
    for (const { receipt, blockTime, transaction } of receipts) {
      const learned = transaction ? [] : await resolver.prepare(receipt, blockTime);
      const decoded = decoder.decodeReceipt(receipt, blockTime, transaction);
      for (const swap of decoded.swaps) track(swap.token);
      for (const event of decoded.events) if (event.kind === 'created') track(event.token);
      const createdByDecoder = new Set<string | null>(
        decoded.events.filter((event) => event.kind === 'created').map((event) => event.token),
      );
      events.push(...learned.filter((event) => !createdByDecoder.has(event.token)), ...decoded.events);
      swaps.push(...decoded.swaps);
    }
    // Published with no records too: the range's last block time marks the chain's progress.
    const progress = { chain, blockTime: hexToNumber(blocks.get(to)!.timestamp) * 1000 };
    try {
      await publisher.publish({ swaps, events, progress });
    } catch (error) {
      // Only a schema violation rejects: a decoder bug, reported and skipped rather than retried forever.
      ctx.metrics.inc('ingest.invalid_records');
      logger.error(
        { err: (error as Error).message, from, to },
        'decoded records break the topic schema; range skipped',
      );
    }
    const hashes = [...current.hashes, ...numbers.map((n) => [n, blocks.get(n)!.hash] as [number, string])];
    cursor = { block: to, hashes: hashes.filter(([number]) => number > to - window).slice(-window) };
    options.cursors?.set(sourceId, cursor);
    ctx.metrics.set(`ingest.evm.${chain}.block`, to);
    ctx.metrics.inc(`ingest.evm.${chain}.swaps_published`, swaps.length);
  }

  /**
   * Full receipts of the transactions `wanted` names, per block: one eth_getBlockReceipts per block
   * (batched), or, on a node without it (-32601, remembered), one eth_getTransactionReceipt each.
   */
  async function getFullReceipts(
    wanted: Map<number, string[]>,
    blocks: Map<number, RpcBlock>,
  ): Promise<Map<string, EvmReceipt>> {
    const out = new Map<string, EvmReceipt>();
    const keep = (n: number, receipt: FullReceipt | null | undefined, hash: string) => {
      if (!receipt || receipt.blockHash !== blocks.get(n)!.hash)
        throw new ForkedMidRange(`receipt ${hash} not on the processed fork`);
      out.set(hash, receipt);
    };
    const numbers = [...wanted.keys()];
    if (blockReceipts && numbers.length > 0) {
      try {
        for (let start = 0; start < numbers.length; start += blockBatch) {
          const part = numbers.slice(start, start + blockBatch);
          const answers = await withRetry(
            () =>
              http.batch<unknown>(
                'eth_getBlockReceipts',
                part.map((n) => [hex(n)]),
              ),
            {
              stopped: () => stopped,
            },
          );
          answers.forEach((answer, i) => {
            const n = part[i]!;
            if (!answer.ok) throw answer.error;
            const byHash = new Map(
              checkReceipts(answer.result, n).map((receipt) => [receipt.transactionHash.toLowerCase(), receipt]),
            );
            for (const hash of wanted.get(n)!) keep(n, byHash.get(hash.toLowerCase()), hash);
          });
        }
        return out;
      } catch (error) {
        if (!(error instanceof JsonRpcError) || error.code !== -32601) throw error;
        blockReceipts = false;
        logger.info('node lacks eth_getBlockReceipts: one eth_getTransactionReceipt per creation');
      }
    }
    for (const [n, hashes] of wanted)
      for (const hash of hashes) keep(n, await call<FullReceipt | null>('eth_getTransactionReceipt', [hash]), hash);
    return out;
  }

  async function buildReceipts(
    logs: RpcLog[],
    blocks: Map<number, RpcBlock>,
  ): Promise<Array<{ receipt: EvmReceipt; blockTime: number; transaction?: EvmTransaction }>> {
    const byTx = new Map<string, RpcLog[]>();
    for (const log of logs) {
      const list = byTx.get(log.transactionHash) ?? [];
      list.push(log);
      byTx.set(log.transactionHash, list);
    }
    const needsFull = new Map<number, string[]>();
    for (const [hash, txLogs] of byTx) {
      if (!txLogs.some((log) => FULL_RECEIPT_EVENTS.has(eventNameOfTopic(log.topics[0]) as EventName))) continue;
      const n = hexToNumber(txLogs[0]!.blockNumber);
      needsFull.set(n, [...(needsFull.get(n) ?? []), hash]);
    }
    const fullReceipts = await getFullReceipts(needsFull, blocks);
    const out: Array<{ receipt: EvmReceipt; blockTime: number; transaction?: EvmTransaction; order: number[] }> = [];
    for (const [hash, txLogs] of byTx) {
      const order = [hexToNumber(txLogs[0]!.blockNumber), hexToNumber(txLogs[0]!.transactionIndex)];
      const block = blocks.get(hexToNumber(txLogs[0]!.blockNumber))!;
      const blockTime = hexToNumber(block.timestamp) * 1000;
      const full = fullReceipts.get(hash);
      if (full) {
        out.push({ receipt: full, blockTime, order });
        continue;
      }
      const tx = block.transactions.find((entry) => typeof entry !== 'string' && entry.hash === hash);
      const sender = tx && typeof tx !== 'string' ? tx : undefined;
      // A value transfer with logs (arc's native-USDC mirror Transfer) still funds its receiver.
      const transfer = nativeTransfers && tx && isValueTransfer(tx) ? { transaction: tx } : {};
      out.push({
        ...transfer,
        receipt: {
          transactionHash: hash,
          blockNumber: txLogs[0]!.blockNumber,
          logs: txLogs,
          status: '0x1',
          from: sender?.from ?? null,
          to: sender?.to ?? null,
        },
        blockTime,
        order,
      });
    }
    // Plain value transfers (no logs fetched for them): a receipt without logs and the transaction.
    if (nativeTransfers) {
      for (const [number, block] of blocks) {
        block.transactions.forEach((tx, position) => {
          if (!isValueTransfer(tx) || byTx.has(tx.hash)) return;
          const index = isHex(tx.transactionIndex) ? hexToNumber(tx.transactionIndex) : position;
          out.push({
            receipt: {
              transactionHash: tx.hash,
              blockNumber: block.number,
              logs: [],
              status: '0x1',
              from: tx.from,
              to: tx.to,
            },
            blockTime: hexToNumber(block.timestamp) * 1000,
            transaction: tx,
            order: [number, index],
          });
        });
      }
    }
    return out.sort((a, b) => a.order[0]! - b.order[0]! || a.order[1]! - b.order[1]!);
  }

  /** One range per call; true when caught up with the confirmed head. */
  async function step(): Promise<boolean> {
    const head = hexToNumber(await call<Hex>('eth_blockNumber', []));
    ctx.metrics.ingestHead(chain, head);
    const target = head - confirmations;
    if (!cursor) {
      cursor = { block: (options.fromBlock ?? target) - 1, hashes: [] };
      logger.info({ fromBlock: cursor.block + 1 }, 'no stored cursor: starting');
    }
    if (cursor.block >= target) return true;
    const from = cursor.block + 1;
    const to = Math.min(target, from + range - 1);
    try {
      await processRange(cursor, from, to);
      if (++rangeStreak >= 20 && range < maxRange) {
        range = Math.min(maxRange, range * 2);
        rangeStreak = 0;
      }
    } catch (error) {
      if (!isTooManyResults(error) || range === 1) throw error;
      range = Math.max(1, Math.floor(range / 2));
      rangeStreak = 0;
      logger.debug({ range }, 'range too large for the node: halving');
      return false;
    }
    return cursor.block >= target;
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
        ctx.metrics.inc(`ingest.evm.${chain}.range_failures`);
        const level = error instanceof ForkedMidRange ? 'debug' : 'warn';
        logger[level]({ err: (error as Error).message, failures }, 'range failed; retrying');
        await sleep(jittered(Math.min(10_000, 100 * 2 ** Math.min(failures, 7))));
        continue;
      }
      if (caughtUp && !stopped) {
        await pause.sleep(pollInterval);
      }
    }
  }

  return {
    async start() {
      logger.info(
        {
          url: redactUrl(options.url),
          confirmations,
          addresses: addresses.length,
          topics: topics.length,
          from: cursor ? cursor.block + 1 : options.fromBlock,
        },
        'evm source starting',
      );
      if (isWsUrl(options.url)) {
        socket = keepConnected(ctx, {
          url: options.url,
          name: `evm-ws-${chain}`,
          onOpen: async (connection) => {
            await connection.subscribe('eth_subscribe', ['newHeads'], () => pause.wake());
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
