// Per-receipt state the protocol handlers share: position, trader rule, reserves seen in Sync
// logs, pools created in this receipt, the output and the skip metrics.
import type { DecodeEventLogReturnType } from 'viem';
import type { Chain } from '../../core/chains.ts';
import type { Metrics } from '../../core/metrics.ts';
import type { RawSwap, TokenEvent } from '../../core/topics.ts';
import { EVENTS, type EventName } from './abi.ts';
import { compileEventDecoder, type EventDecoder } from './event-decoders.ts';
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
  /** Latest Aerodrome Fees per pool (the pool's own fee, taken from the swap's input), consumed by the Swap that follows. */
  feesPaid: Map<string, { amount0: bigint; amount1: bigint }>;
  creations: Creation[];
  swaps: RawSwap[];
  events: TokenEvent[];
  count(what: string): void;
  addSwap(result: SwapResult): void;
}

export function createScope(args: {
  chain: Chain;
  tokens: TokenInfoProvider;
  pools: PoolRegistry;
  receipt: NormalReceipt;
  blockTime: number;
  metrics: Metrics;
}): ReceiptScope {
  return new Scope(args.chain, args.tokens, args.pools, args.receipt, args.blockTime, args.metrics);
}

/** A class, not a closure object: one per receipt, so no per-call method closures. */
class Scope implements ReceiptScope {
  readonly syncs = new Map<string, { reserve0: bigint; reserve1: bigint }>();
  readonly feesPaid = new Map<string, { amount0: bigint; amount1: bigint }>();
  readonly creations: Creation[] = [];
  readonly swaps: RawSwap[] = [];
  readonly events: TokenEvent[] = [];

  constructor(
    readonly chain: Chain,
    readonly tokens: TokenInfoProvider,
    readonly pools: PoolRegistry,
    readonly receipt: NormalReceipt,
    private readonly blockTime: number,
    private readonly metrics: Metrics,
  ) {}

  at(logIndex: number): Position {
    return position(this.chain, this.receipt.transactionHash, logIndex, this.receipt.blockNumber, this.blockTime);
  }

  trader(recipient: string): string {
    return this.receipt.from ?? recipient.toLowerCase();
  }

  count(what: string): void {
    this.metrics.inc(`ingest.evm.${this.chain}.${what}`);
  }

  addSwap(result: SwapResult): void {
    if ('skip' in result) {
      this.count(`skipped_${result.skip}`);
      return;
    }
    this.swaps.push(result.swap);
  }
}

const DECODERS = Object.fromEntries(
  Object.entries(EVENTS).map(([name, item]) => [name, compileEventDecoder(item)]),
) as Record<EventName, EventDecoder>;

type ArgsOf<N extends EventName> = Exclude<
  DecodeEventLogReturnType<[(typeof EVENTS)[N]]>['args'],
  readonly unknown[] | undefined
>;

/**
 * Strict decode of one log as the named event (viem's decodeEventLog semantics; throws a viem
 * BaseError when the log does not fit). Addresses come back lowercase, not checksummed.
 */
export function decodeAs<N extends EventName>(name: N, log: NormalLog): ArgsOf<N> {
  return DECODERS[name](log.topics, log.data) as ArgsOf<N>;
}
