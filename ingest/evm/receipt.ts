// The decoder's input: an eth_getTransactionReceipt result (hex quantities as RPC nodes send
// them, numbers also accepted), normalised once so the protocol handlers see plain values.
import type { Hex } from 'viem';

export type Quantity = string | number | bigint;

export interface EvmLog {
  address: string;
  topics: string[];
  data: string;
  logIndex?: Quantity | null;
  blockNumber?: Quantity | null;
  transactionHash?: string | null;
  /** Seconds; newer nodes add it to logs. */
  blockTimestamp?: Quantity | null;
  removed?: boolean;
}

export interface EvmReceipt {
  transactionHash: string;
  blockNumber: Quantity;
  logs: EvmLog[];
  status?: Quantity | null;
  from?: string | null;
  to?: string | null;
  gasUsed?: Quantity | null;
  effectiveGasPrice?: Quantity | null;
  /** Seconds (hex or number); some nodes and the `spot decode` input carry it. */
  blockTimestamp?: Quantity | null;
}

/** The transaction itself (eth_getTransactionByHash), needed only for native funding transfers. */
export interface EvmTransaction {
  from: string;
  to: string | null;
  value: Quantity;
  /** Calldata; a plain value transfer has none ('0x'). */
  input?: string | null;
}

export interface NormalLog {
  address: string;
  topics: [Hex, ...Hex[]];
  data: Hex;
  logIndex: number;
}

export interface NormalReceipt {
  transactionHash: string;
  blockNumber: number;
  logs: NormalLog[];
  reverted: boolean;
  from: string | null;
  to: string | null;
  /** gasUsed·effectiveGasPrice in native base units, when both are given. */
  transactionFee: bigint | null;
}

export function toBigInt(value: Quantity): bigint {
  return typeof value === 'bigint' ? value : BigInt(value);
}

export function toSafeNumber(value: Quantity, what: string): number {
  // Hex quantities (what nodes send) without a BigInt: exact while the result is a safe integer.
  if (typeof value === 'string' && value.startsWith('0x')) {
    const number = Number(value);
    if (Number.isSafeInteger(number)) return number;
  }
  const big = toBigInt(value);
  if (big < 0n || big > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`${what} out of range: ${value}`);
  return Number(big);
}

/** Block time in ms from the receipt's or its logs' blockTimestamp (seconds), if any. */
export function receiptTimestampMs(receipt: EvmReceipt): number | undefined {
  const seconds = receipt.blockTimestamp ?? receipt.logs.find((log) => log.blockTimestamp != null)?.blockTimestamp;
  return seconds === undefined || seconds === null ? undefined : toSafeNumber(seconds, 'blockTimestamp') * 1000;
}

const lower = (text: string | null | undefined): string | null => (text ? text.toLowerCase() : null);

/** Accepts a receipt or a JSON-RPC response wrapper `{result}`. */
export function unwrapReceipt(input: unknown): EvmReceipt {
  if (isRecord(input) && isRecord(input.error) && !('result' in input)) {
    throw new TypeError(`JSON-RPC error: ${String(input.error.message ?? JSON.stringify(input.error))}`);
  }
  const value = isRecord(input) && 'result' in input && !('logs' in input) ? input.result : input;
  if (!isRecord(value) || typeof value.transactionHash !== 'string' || !Array.isArray(value.logs)) {
    throw new TypeError('not a transaction receipt: expected transactionHash and logs');
  }
  return value as unknown as EvmReceipt;
}

export function normalizeReceipt(receipt: EvmReceipt): NormalReceipt {
  const logs: NormalLog[] = [];
  receipt.logs.forEach((log, position) => {
    if (log.removed || log.topics.length === 0) return;
    logs.push({
      address: log.address.toLowerCase(),
      topics: log.topics.map((topic) => topic.toLowerCase() as Hex) as [Hex, ...Hex[]],
      data: (log.data || '0x').toLowerCase() as Hex,
      // Hand-built receipts may omit logIndex: fall back to the position in the receipt.
      logIndex: log.logIndex === undefined || log.logIndex === null ? position : toSafeNumber(log.logIndex, 'logIndex'),
    });
  });
  logs.sort((a, b) => a.logIndex - b.logIndex);
  const status = receipt.status === undefined || receipt.status === null ? 1n : toBigInt(receipt.status);
  const fee =
    receipt.gasUsed !== undefined &&
    receipt.gasUsed !== null &&
    receipt.effectiveGasPrice !== undefined &&
    receipt.effectiveGasPrice !== null
      ? toBigInt(receipt.gasUsed) * toBigInt(receipt.effectiveGasPrice)
      : null;
  return {
    transactionHash: receipt.transactionHash.toLowerCase(),
    blockNumber: toSafeNumber(receipt.blockNumber, 'blockNumber'),
    logs,
    reverted: status === 0n,
    from: lower(receipt.from),
    to: lower(receipt.to),
    transactionFee: fee,
  };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
