// The simulator node's chains: the chain writer's records grouped into blocks, answering the
// JSON-RPC methods the block sources use, in the shapes a real node gives.
//
// Solana: a slot holds a block when a transaction landed in it; other slots are skipped
// (getBlocks omits them, getBlock answers -32007). EVM: every block number exists; a block
// without transactions is built on demand. Hashes derive from (seed, chain, number), so a
// restarted node continues the chain its readers saw. Records for a block that is already sealed
// (or below the `floor` the readers have passed) land in the next open block, as a late
// transaction would. Blocks older than what the readers acknowledged (minus a fork window) are
// dropped: memory follows the readers' lag, not the history.
import { createHash } from 'node:crypto';
import { decodeFunctionData, encodeFunctionResult, parseAbi, type Hex } from 'viem';
import type { Chain } from '../../core/chains.ts';
import type { EvmReceipt } from '../evm/index.ts';
import { MULTICALL3_ABI, MULTICALL3_ADDRESS } from '../sources/multicall.ts';
import { base58Encode } from '../solana/base58.ts';
import type { SolanaTransaction } from '../solana/transaction.ts';
import type { EvmChain } from './addresses.ts';
import { BLOCK_MS, blockAt } from './clock.ts';
import type { ChainRecord, TokenMetadata } from './records.ts';

/** A JSON-RPC error the node answers (code and message as real nodes send them). */
export class NodeFault extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export interface NodeChain {
  readonly chain: Chain;
  /** Last sealed block (slot): what eth_blockNumber / getSlot answer. */
  readonly tip: number;
  /** First block (slot) this node serves: where a reader without a cursor starts. */
  readonly first: number;
  /** Highest block (slot) its reader processed (its saved cursor, or what it asked past): older data is dropped. */
  readonly acknowledged: number;
  /** The reader processed up to `height`: blocks far below it are dropped (Solana: their transactions at once). */
  acknowledge(height: number): void;
  append(record: ChainRecord): void;
  /** Seals every block before the one holding `until` (event time, ms); returns the new tip. */
  seal(until: number): number;
  call(method: string, params: unknown[]): unknown;
  /** Subscribe methods this chain offers. */
  readonly subscriptions: readonly string[];
  /** What a subscription of `method` receives once the tip moved past `previousTip`. */
  notifications(method: string, previousTip: number): unknown[];
}

/** Blocks kept below the acknowledged one, for a reader tracing a fork (Solana: headers only). */
const FORK_WINDOW = 256;
/**
 * EVM blocks kept whole below the acknowledged one (older ones answer their header only): the
 * reader confirms 3 blocks deep, and 256 whole base blocks (8.5 min at 2,000 swaps/s) grew the
 * process by ~130 MB a minute.
 */
const EVM_KEPT_BLOCKS = 16;
/** The market sets itself up (exchange wallets, their labels and funding) a minute before its start: served too. */
const SETUP_LEAD_MS = 120_000;
const hex = (n: number | bigint) => `0x${n.toString(16)}`;
/** A block hash: 32 bytes derived from the text (sha256: native, and a block hash is only an identity). */
const digest = (text: string) => createHash('sha256').update(text).digest();

function quantity(value: unknown, name: string): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && /^0x[0-9a-fA-F]+$/.test(value)) return Number.parseInt(value, 16);
  throw new NodeFault(-32602, `invalid ${name}: ${JSON.stringify(value)}`);
}

function genesisOf(chain: Chain): number {
  const probe = blockAt(chain, Date.UTC(2024, 0, 1));
  return probe.timeMs - probe.number * BLOCK_MS[chain];
}

interface SolanaBlock {
  blockhash: string;
  previousBlockhash: string;
  parentSlot: number;
  blockHeight: number;
  blockTime: number | null;
  transactions: Array<Omit<SolanaTransaction, 'slot' | 'blockTime'>>;
}

export interface Anchor {
  /** Last block (slot) the readers processed: the node's blocks start after it. */
  number: number;
  /** Solana: the last block the reader processed (a skipped slot has none), which the node's first block names as its parent. */
  parent?: { slot: number; hash: string };
}

export function createSolanaNodeChain(options: { seed: string; start: number; anchor?: Anchor }): NodeChain {
  const hashOf = (slot: number) => base58Encode(digest(`spot-sim-node/${options.seed}/solana/${slot}`));
  const floor = Math.max(blockAt('solana', options.start - SETUP_LEAD_MS).number - 1, options.anchor?.number ?? -1);
  const blocks = new Map<number, SolanaBlock>();
  /** Produced slots, ascending (blocks are only ever appended at the end). */
  let order: number[] = [];
  const parent = options.anchor?.parent ?? { slot: floor, hash: hashOf(floor) };
  let last = { slot: parent.slot, hash: parent.hash, height: parent.slot, time: 0 };
  let tip = floor;
  let acknowledged = floor;

  /** Slots up to here hold headers only: a full getBlock answers "cleaned up", as a pruned node does. */
  let cleanedUpTo = floor;

  // At mainnet volume a slot holds ~500 transactions: the window's full blocks were ~450 MB (heap
  // profile), while a reader tracing a fork asks them with transactionDetails none.
  function acknowledge(height: number): void {
    if (height <= acknowledged) return;
    acknowledged = height;
    const keepFrom = acknowledged - FORK_WINDOW;
    let drop = 0;
    while (drop < order.length && order[drop]! < keepFrom) blocks.delete(order[drop++]!);
    if (drop > 0) order = order.slice(drop);
    for (let i = 0; i < order.length && order[i]! <= acknowledged; i++) {
      if (order[i]! > cleanedUpTo) blocks.get(order[i]!)!.transactions = [];
    }
    cleanedUpTo = acknowledged;
  }

  return {
    chain: 'solana',
    first: floor + 1,
    get tip() {
      return tip;
    },
    get acknowledged() {
      return acknowledged;
    },
    acknowledge,
    append(record) {
      if (record.kind !== 'solana') throw new TypeError(`a ${record.kind} record on solana`);
      const { slot: wanted, blockTime, ...entry } = record.transaction;
      const slot = Math.max(wanted, tip + 1, last.slot);
      let block = blocks.get(slot);
      if (!block) {
        const time = Math.max(blockTime ?? 0, last.time);
        block = {
          blockhash: hashOf(slot),
          previousBlockhash: last.hash,
          parentSlot: last.slot,
          blockHeight: last.height + 1,
          blockTime: time,
          transactions: [],
        };
        blocks.set(slot, block);
        order.push(slot);
        last = { slot, hash: block.blockhash, height: block.blockHeight, time };
      }
      block.transactions.push(entry);
    },
    seal(until) {
      tip = Math.max(tip, blockAt('solana', until).number - 1);
      return tip;
    },
    subscriptions: ['slotSubscribe', 'blockSubscribe'],
    notifications(method, previousTip) {
      if (method === 'slotSubscribe') return [{ slot: tip, parent: tip - 1, root: Math.max(0, tip - 32) }];
      // blockSubscribe: every block sealed since, as the notification's value.
      return order
        .filter((slot) => slot > previousTip && slot <= tip)
        .map((slot) => ({ context: { slot }, value: { slot, err: null, block: blocks.get(slot) } }));
    },
    call(method, params) {
      switch (method) {
        case 'getSlot':
        case 'getBlockHeight':
          return tip;
        case 'getBlocks': {
          const from = quantity(params[0], 'start slot');
          const to = Math.min(
            params[1] === undefined || typeof params[1] === 'object' ? tip : quantity(params[1], 'end slot'),
            tip,
          );
          acknowledge(from - 1);
          return order.filter((slot) => slot >= from && slot <= to);
        }
        case 'getBlock': {
          const slot = quantity(params[0], 'slot');
          const config = (params[1] ?? {}) as { transactionDetails?: string; maxSupportedTransactionVersion?: number };
          if (slot > tip) throw new NodeFault(-32004, `Block not available for slot ${slot}`);
          const block = blocks.get(slot);
          if (!block)
            throw new NodeFault(-32007, `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot`);
          if (config.transactionDetails === 'none') {
            const { transactions: _omitted, ...header } = block;
            return header;
          }
          if (slot <= cleanedUpTo)
            throw new NodeFault(
              -32001,
              `Block ${slot} cleaned up, does not exist on node. First available block: ${cleanedUpTo + 1}`,
            );
          return block;
        }
        case 'getHealth':
          return 'ok';
        default:
          throw new NodeFault(-32601, `Method not found: ${method}`);
      }
    },
  };
}

interface EvmTx {
  hash: string;
  from: string;
  to: string | null;
  value: Hex;
  input: string;
  receipt: EvmReceipt & { blockHash: string; transactionIndex: string };
}

const VIEWS = parseAbi([
  'function decimals() view returns (uint8)',
  'function symbol() view returns (string)',
  'function name() view returns (string)',
  'function totalSupply() view returns (uint256)',
]);

interface LogFilter {
  fromBlock?: string;
  toBlock?: string;
  address?: string | string[];
  topics?: Array<string | string[] | null>;
  blockHash?: string;
}

export function createEvmNodeChain(options: {
  seed: string;
  chain: EvmChain;
  start: number;
  anchor?: Anchor;
}): NodeChain {
  const { chain } = options;
  const interval = BLOCK_MS[chain];
  const genesis = genesisOf(chain);
  const hashOf = (n: number): Hex => `0x${digest(`spot-sim-node/${options.seed}/${chain}/${n}`).toString('hex')}`;
  const floor = Math.max(blockAt(chain, options.start - SETUP_LEAD_MS).number - 1, options.anchor?.number ?? -1);
  const blocks = new Map<number, EvmTx[]>();
  const receipts = new Map<string, EvmTx>();
  const tokens = new Map<string, TokenMetadata>();
  let tip = floor;
  let acknowledged = floor;
  let last = floor;
  let pruned = floor;

  function acknowledge(height: number): void {
    if (height <= acknowledged) return;
    acknowledged = height;
    for (let n = pruned; n < acknowledged - EVM_KEPT_BLOCKS; n++) {
      for (const tx of blocks.get(n) ?? []) receipts.delete(tx.hash);
      blocks.delete(n);
    }
    pruned = Math.max(pruned, acknowledged - EVM_KEPT_BLOCKS);
  }

  function header(n: number) {
    const txs = blocks.get(n) ?? [];
    return {
      number: hex(n),
      hash: hashOf(n),
      parentHash: hashOf(n - 1),
      timestamp: hex(Math.floor((genesis + n * interval) / 1000)),
      miner: '0x0000000000000000000000000000000000000000',
      gasLimit: hex(30_000_000),
      gasUsed: hex(txs.reduce((sum, tx) => sum + Number(tx.receipt.gasUsed ?? 0), 0)),
      baseFeePerGas: hex(1_000_000),
      txs,
    };
  }

  function block(n: number, full: boolean) {
    const { txs, ...head } = header(n);
    return {
      ...head,
      transactions: txs.map((tx, index) =>
        full
          ? {
              hash: tx.hash,
              from: tx.from,
              to: tx.to,
              value: tx.value,
              input: tx.input,
              blockNumber: head.number,
              blockHash: head.hash,
              transactionIndex: hex(index),
            }
          : tx.hash,
      ),
    };
  }

  function blockTag(value: unknown): number {
    if (value === 'latest' || value === 'safe' || value === 'finalized' || value === undefined) return tip;
    if (value === 'earliest') return 0;
    return quantity(value, 'block');
  }

  /** A filter position as a set of lowercase values; null matches anything. */
  const wantedSet = (wanted: string | string[] | null | undefined): Set<string> | null =>
    wanted === null || wanted === undefined ? null : new Set([wanted].flat().map((item) => item.toLowerCase()));

  function logs(filter: LogFilter) {
    const from = blockTag(filter.fromBlock);
    const to = Math.min(blockTag(filter.toBlock), tip);
    acknowledge(from - 1);
    // Sets built once per call: a filter names up to 500 addresses (the tracked tokens' Transfers).
    const addresses = filter.address === undefined ? null : wantedSet(filter.address);
    const topics = (filter.topics ?? []).map(wantedSet);
    const out = [];
    for (let n = from; n <= to; n++) {
      for (const tx of blocks.get(n) ?? []) {
        for (const log of tx.receipt.logs) {
          if (addresses && !addresses.has(log.address.toLowerCase())) continue;
          if (!topics.every((wanted, i) => wanted === null || wanted.has(log.topics[i]?.toLowerCase() as string)))
            continue;
          out.push(log);
        }
      }
    }
    return out;
  }

  function view(call: { to?: string; data?: Hex }): Hex {
    const token = tokens.get(String(call.to).toLowerCase());
    let functionName: 'decimals' | 'symbol' | 'name' | 'totalSupply';
    try {
      functionName = decodeFunctionData({ abi: VIEWS, data: call.data ?? '0x' }).functionName;
    } catch {
      throw new NodeFault(3, 'execution reverted');
    }
    if (!token || (functionName === 'totalSupply' && token.supply === undefined))
      throw new NodeFault(3, 'execution reverted');
    const result = {
      decimals: token.decimals,
      symbol: token.symbol,
      name: token.name,
      totalSupply: BigInt(token.supply ?? 0),
    }[functionName];
    return encodeFunctionResult({ abi: VIEWS, functionName, result } as Parameters<typeof encodeFunctionResult>[0]);
  }

  /** Multicall3's aggregate3: each sub-call through `view`; a failing one is (false, 0x) unless it may not fail. */
  function aggregate3(data: Hex): Hex {
    let calls: readonly { target: string; allowFailure: boolean; callData: Hex }[];
    try {
      const decoded = decodeFunctionData({ abi: MULTICALL3_ABI, data });
      calls = decoded.args[0];
    } catch {
      throw new NodeFault(3, 'execution reverted');
    }
    const results = calls.map((call) => {
      try {
        return { success: true, returnData: view({ to: call.target, data: call.callData }) };
      } catch (error) {
        if (!(error instanceof NodeFault)) throw error;
        if (!call.allowFailure) throw new NodeFault(3, 'execution reverted: Multicall3: call failed');
        return { success: false, returnData: '0x' as Hex };
      }
    });
    return encodeFunctionResult({ abi: MULTICALL3_ABI, functionName: 'aggregate3', result: results });
  }

  function ethCall(call: { to?: string; data?: Hex }): Hex {
    return String(call.to).toLowerCase() === MULTICALL3_ADDRESS ? aggregate3(call.data ?? '0x') : view(call);
  }

  return {
    chain,
    first: floor + 1,
    get tip() {
      return tip;
    },
    get acknowledged() {
      return acknowledged;
    },
    acknowledge,
    append(record) {
      if (record.kind !== 'evm') throw new TypeError(`a ${record.kind} record on ${chain}`);
      for (const token of record.tokens) tokens.set(token.address.toLowerCase(), token);
      const n = Math.max(quantity(record.receipt.blockNumber, 'block'), tip + 1, last);
      last = n;
      const txs = blocks.get(n) ?? [];
      blocks.set(n, txs);
      const blockHash = hashOf(n);
      const transactionIndex = hex(txs.length);
      let logIndex = txs.reduce((sum, tx) => sum + tx.receipt.logs.length, 0);
      const receipt = {
        ...record.receipt,
        blockNumber: hex(n),
        blockHash,
        transactionIndex,
        logs: record.receipt.logs.map((log) => ({
          ...log,
          blockNumber: hex(n),
          blockHash,
          transactionIndex,
          logIndex: hex(logIndex++),
        })),
      };
      const tx: EvmTx = {
        hash: record.receipt.transactionHash,
        from: record.receipt.from ?? '0x0000000000000000000000000000000000000000',
        to: record.receipt.to ?? null,
        value: (record.transaction?.value as Hex | undefined) ?? '0x0',
        // A plain transfer has no calldata; every other transaction calls a contract.
        input: record.transaction ? (record.transaction.input ?? '0x') : '0x01',
        receipt,
      };
      txs.push(tx);
      receipts.set(tx.hash, tx);
    },
    seal(until) {
      tip = Math.max(tip, blockAt(chain, until).number - 1);
      return tip;
    },
    subscriptions: ['eth_subscribe'],
    notifications() {
      const { txs: _txs, ...head } = header(tip);
      return [head];
    },
    call(method, params) {
      switch (method) {
        case 'eth_blockNumber':
          return hex(tip);
        case 'eth_chainId':
          return hex(1);
        case 'eth_getBlockByNumber': {
          const n = blockTag(params[0]);
          return n > tip ? null : block(n, params[1] === true);
        }
        case 'eth_getLogs':
          return logs((params[0] ?? {}) as LogFilter);
        case 'eth_getTransactionReceipt':
          return receipts.get(String(params[0]))?.receipt ?? null;
        case 'eth_getBlockReceipts': {
          const n = blockTag(params[0]);
          return n > tip ? null : (blocks.get(n) ?? []).map((tx) => tx.receipt);
        }
        case 'eth_call':
          return ethCall((params[0] ?? {}) as { to?: string; data?: Hex });
        default:
          throw new NodeFault(-32601, `the method ${method} does not exist/is not available`);
      }
    },
  };
}
