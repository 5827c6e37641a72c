// `spot decode` for EVM: decodes a receipt given as JSON (or its JSON-RPC response wrapper)
// with fresh registries unless given, so a receipt with PairCreated + Swap decodes on its own.
import type { Chain } from '../../core/chains.ts';
import type { Metrics } from '../../core/metrics.ts';
import { createEvmDecoder, type DecodedReceipt, type TransferMode } from './decoder.ts';
import { isRecord, toSafeNumber, type EvmReceipt, type EvmTransaction, type Quantity } from './receipt.ts';
import { createPoolRegistry, createTokenRegistry, type PoolRegistry, type TokenInfoProvider } from './registry.ts';

export interface DecodeEvmJsonOptions {
  tokens?: TokenInfoProvider;
  pools?: PoolRegistry;
  metrics?: Metrics;
  transfers?: TransferMode;
}

/**
 * Accepted shapes (text or parsed): a receipt; `{result: receipt}`; `{result: receipt[]}` or a
 * bare array (eth_getBlockReceipts). Optional fields beside `result` (or on the receipt):
 * `blockTimestamp` (seconds, hex or number; absent = blockTime 0), `transaction`
 * ({from, to, value, input}: enables funding events) and `decimals` ({address: decimals},
 * for tokens the token registry does not know).
 */
export function decodeEvmJson(chain: Chain, json: unknown, options: DecodeEvmJsonOptions = {}): DecodedReceipt {
  const value: unknown = typeof json === 'string' ? JSON.parse(json) : json;
  const wrapper = isRecord(value) && 'result' in value && !('logs' in value) ? value : undefined;
  const body = wrapper ? wrapper.result : value;
  const receipts = Array.isArray(body) ? body : [body];
  const tokens = options.tokens ?? createTokenRegistry();
  const decoder = createEvmDecoder({
    chain,
    tokens,
    pools: options.pools ?? createPoolRegistry(),
    metrics: options.metrics,
    transfers: options.transfers,
  });
  const out: DecodedReceipt = { swaps: [], events: [] };
  for (const item of receipts) {
    if (!isRecord(item)) throw new TypeError('not a transaction receipt');
    const field = (name: string): unknown => wrapper?.[name] ?? item[name];
    const decimals = field('decimals');
    if (isRecord(decimals)) {
      for (const [address, places] of Object.entries(decimals)) {
        if (typeof places === 'number') tokens.registerToken(chain, address.toLowerCase(), { decimals: places });
      }
    }
    const seconds =
      field('blockTimestamp') ??
      (Array.isArray(item.logs)
        ? (item.logs as { blockTimestamp?: unknown }[]).find((log) => log?.blockTimestamp != null)?.blockTimestamp
        : undefined);
    const blockTimeMs = seconds == null ? 0 : toSafeNumber(seconds as Quantity, 'blockTimestamp') * 1000;
    const transaction = field('transaction');
    const decoded = decoder.decodeReceipt(
      item as unknown as EvmReceipt,
      blockTimeMs,
      isRecord(transaction) ? (transaction as unknown as EvmTransaction) : undefined,
    );
    out.swaps.push(...decoded.swaps);
    out.events.push(...decoded.events);
  }
  return out;
}
