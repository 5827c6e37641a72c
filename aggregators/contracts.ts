// The contracts between the aggregator's parts: the run loop (aggregator.ts), the computation
// (process.ts over the token state and wallet-facts stages) and distributed ownership
// (ownership.ts, partitioned.ts, partition-journal.ts). Types only, plus the empty batch output.
import type { Chain } from '../core/chains.ts';
import type { Dec } from '../core/decimal.ts';
import type { PricedTradeMessage, RawSwap, TokenEvent } from '../core/topics.ts';
import type { BalanceRow, CandleRow, TokenEventRow, TradeRow, WalletLabelRow } from '../clickhouse/types.ts';
import type { AggregatorState, JournalEntry, SwapContext, TokenState } from './state.ts';
import type { WalletFacts } from './wallet-facts.ts';

/** What the messages processed since the last flush write and publish. */
export interface BatchOutput {
  trades: TradeRow[];
  tradeMessages: PricedTradeMessage[];
  candleRows: CandleRow[];
  tokenEvents: TokenEventRow[];
  labels: Map<string, WalletLabelRow>;
  balances: Map<string, BalanceRow>;
  /** Token keys whose token object (and open candles) changed. */
  changed: Set<string>;
  /** Token keys that traded (their candle message is republished). */
  traded: Set<string>;
}

export function newBatchOutput(): BatchOutput {
  return {
    trades: [],
    tradeMessages: [],
    candleRows: [],
    tokenEvents: [],
    labels: new Map(),
    balances: new Map(),
    changed: new Set(),
    traded: new Set(),
  };
}

/** Where an input message came from (distributed: its partition decides who owns its token). */
export interface InputPosition {
  partition: number;
  offset: number;
}

/** Distributed aggregation: which partitions' tokens this instance keeps, and what it keeps of the rest. */
export interface Partitioning {
  owns(partition: number): boolean;
  /**
   * A swap of a token not owned: its shadow (price as a quote asset, dedupe ids) moves and the swap
   * is journaled with the chain-wide context it read. False for a redelivery (nothing changed).
   */
  shadowSwap(swap: RawSwap, at: InputPosition, context: SwapContext, priceNative: Dec): boolean;
  /** What a partition this instance does not own may need replayed by its next owner. */
  journal(partition: number, entry: JournalEntry): void;
  /** A decay tick of the chain's watermark (journaled for every partition not owned). */
  tick(chain: Chain, time: number): void;
}

/** The computation: one swap or token event at a time applied to the state, outputs collected in `out`. */
export interface Processor {
  readonly state: AggregatorState;
  /** The wallet-facts stage over state.wallets (and the parked wallets' store, embedded). */
  readonly wallets: WalletFacts;
  /**
   * Embedded: moves holder records of live tokens to the wallet store at `version`, until `due()`
   * says the slice is spent (about 256 written a slice; without `due`, the whole pass): first those
   * of the wallets that left memory since the last call, in the live tokens their records were
   * known in; then those unchanged since a check at least `idleBefore(chain)` ago, their wallet in
   * memory or not; then, in a pass through every live token's records, which the next call goes on
   * with where this one stopped, those of wallets not in memory. Returns how many left memory and
   * whether the pass reached the last token.
   */
  parkHolders(
    version: number,
    idleBefore: (chain: string) => number,
    due?: () => boolean,
  ): { parked: number; done: boolean };
  swap(swap: RawSwap, out: BatchOutput, at?: InputPosition): void;
  event(event: TokenEvent, raw: string, out: BatchOutput, at?: InputPosition): void;
  /** Hand-over: a journaled swap applied to owned state in the context it was first priced in. */
  replaySwap(swap: RawSwap, context: SwapContext, out: BatchOutput): void;
  /** Hand-over: a journaled token event applied to owned state. */
  replayEvent(event: TokenEvent, raw: string, out: BatchOutput): void;
  /** Hand-over: a journaled decay tick applied to the given tokens. */
  decay(tokens: TokenState[], time: number, out: BatchOutput): void;
  /** Hand-over or reload: a token now in memory joins its wallets' holdings and the decay ticks. */
  adopted(token: TokenState): void;
  /** Hand-over: a token no longer owned leaves them. */
  released(token: TokenState): void;
}

/** What the run loop lends distributed ownership for hand-overs. */
export interface AggregatorControls {
  state(): AggregatorState;
  processor(): Processor;
  /**
   * Runs fn in processing order, once everything processed so far is flushed and acknowledged by
   * the store; what fn puts in `out` is flushed after it.
   */
  exclusive(fn: (out: BatchOutput) => Promise<void>): Promise<void>;
}

/** The run loop's side of partitioned state (ownership.ts implements it). */
export interface PartitionedHooks {
  /** At start, with the loaded state (before the processor is built). */
  attach(state: AggregatorState, controls: AggregatorControls): Partitioning;
  /** Token keys whose state changed (each flush). */
  changed(keys: Iterable<string>): void;
  /** Before the local snapshot, after the sinks acknowledged: owned partitions made durable. Throws when that failed. */
  beforeSnapshot(): Promise<void>;
}
