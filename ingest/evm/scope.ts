// Per-receipt state the protocol handlers share: position, trader rule, reserves seen in Sync
// logs, pools created in this receipt, the output and the skip metrics.
import { decodeEventLog, type Hex } from 'viem';
import type { Chain } from '../../core/chains.ts';
import type { Metrics } from '../../core/metrics.ts';
import type { RawSwap, TokenEvent } from '../../core/topics.ts';
import { EVENTS, type EventName } from './abi.ts';
import { position, type Position, type SwapResult } from './normalize.ts';
import type { NormalLog, NormalReceipt } from './receipt.ts';
import type { EvmDex, PoolRegistry, TokenInfoProvider } from './registry.ts';

/** A pool created (PairCreated, PoolCreated, V4 Initialize) in the receipt being decoded. */
export interface Creation {
  pool: string;
  token0: string;
  token1: string;
  dex: EvmDex;
  logIndex: number;
  /** Factory, or the PoolManager for V4. */
  emitter: string;
  launchpad: string | null;
}

export interface ReceiptScope {
  chain: Chain;
  tokens: TokenInfoProvider;
  pools: PoolRegistry;
  receipt: NormalReceipt;
  at(logIndex: number): Position;
  /** The tx sender when known (routers are the usual recipients), else the event's recipient. */
  trader(recipient: string): string;
  /** Latest Sync reserves per pool, consumed by the Swap that follows. */
  syncs: Map<string, { reserve0: bigint; reserve1: bigint }>;
  creations: Creation[];
  swaps: RawSwap[];
  events: TokenEvent[];
  count(what: string): void;
  addSwap(result: SwapResult): void;
}

export function createScope(args: {
  chain: Chain; tokens: TokenInfoProvider; pools: PoolRegistry; receipt: NormalReceipt; blockTime: number; metrics: Metrics;
}): ReceiptScope {
  const { chain, receipt, blockTime, metrics } = args;
  const count = (what: string) => metrics.inc(`ingest.evm.${chain}.${what}`);
  return {
    chain,
    tokens: args.tokens,
    pools: args.pools,
    receipt,
    at: (logIndex) => position(chain, receipt.transactionHash, logIndex, receipt.blockNumber, blockTime),
    trader: (recipient) => receipt.from ?? recipient.toLowerCase(),
    syncs: new Map(),
    creations: [],
    swaps: [],
    events: [],
    count,
    addSwap(result) {
      if ('skip' in result) {
        count(`skipped_${result.skip}`);
        return;
      }
      this.swaps.push(result.swap);
    },
  };
}

/** viem's strict decode of one log as the named event; throws when the log does not fit. */
export function decodeAs<N extends EventName>(name: N, log: NormalLog) {
  const { args } = decodeEventLog({ abi: [EVENTS[name]], topics: log.topics, data: log.data as Hex, strict: true });
  // Every event here has named inputs, so strict decoding yields a named-args object.
  return args as Exclude<typeof args, readonly unknown[] | undefined>;
}
