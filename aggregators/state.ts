// The aggregator's whole state as plain data (Maps, arrays, bigints), so a snapshot is one
// v8.serialize call and a restore is one v8.deserialize.
import type { Chain } from '../core/chains.ts';
import type { Dec } from '../core/decimal.ts';
import type { RawSwap, TokenEvent } from '../core/topics.ts';
import type { ClosedBucket, OpenBuckets } from './candles.ts';
import type { RecentIds } from './dedupe.ts';
import type { MarkBook } from './pricing.ts';
import type { TopList } from './top-balances.ts';
import type { TradeWindow } from './windows.ts';

/**
 * Holder categories (docs/holders.md), one bit each: a holder's category mask (holders.ts
 * categoriesOf) and the stored attributes share this layout.
 */
export const CATEGORY = {
  dev: 1,
  sniper: 2,
  insider: 4,
  bundler: 8,
  fresh: 16,
  pro: 32,
  fomo: 64,
  phishing: 128,
  cex: 256,
} as const;
export type Category = keyof typeof CATEGORY;
export const CATEGORIES = Object.keys(CATEGORY) as Category[];

/**
 * Per (token, wallet) attributes fixed when they happen (a HolderRec's attributes): the categories
 * fixed at the first buy, insider by a transfer from the creator, and `bought` (not a category).
 */
export const ATTR = {
  bought: 512,
  sniper: CATEGORY.sniper,
  bundler: CATEGORY.bundler,
  insider: CATEGORY.insider,
  fresh: CATEGORY.fresh,
  fomo: CATEGORY.fomo,
} as const;

/**
 * A holder record, packed (holder-records.ts): its balance in base units (absolute on solana, the
 * sum of transfer deltas on EVM), its attributes (ATTR) and the categories its token's holder
 * index counts it in (holder-index.ts; -1: not counted).
 */
export type HolderRec = bigint;

/**
 * A token's holder figures kept up to date per change (holder-index.ts): totals over the counted
 * holders, parked ones included. Part of the token's state, so a token read back from a snapshot,
 * parking or eviction needs no pass over its holders.
 */
export interface HolderIndexState {
  sums: bigint[];
  counts: number[];
  /** The counted holders' number (size) and largest balances. */
  top: TopList;
  /**
   * Holders changed since the figures were last read, each with its record as the index counts it
   * (undefined: parked when marked, so its parked row is): applied then, once each.
   */
  dirty: Map<string, HolderRec | undefined>;
}

export interface PoolState {
  dex: string;
  quote: string;
  curve: boolean;
  liqN: Dec;
  liqU: Dec;
}

export interface FeeTotals {
  txN: Dec;
  txU: Dec;
  valN: Dec;
  valU: Dec;
  platN: Dec;
  platU: Dec;
  dexN: Dec;
  dexU: Dec;
}

export interface TokenState {
  chain: Chain;
  address: string;
  /** True once its `created` event was seen. */
  known: boolean;
  name: string;
  symbol: string;
  decimals: number;
  /** Total supply in base units. */
  supply: bigint;
  /** Total supply in human units. */
  supplyHuman: Dec;
  creator: string;
  createdAt: number;
  createdBlock: number;
  launchpad: string | null;
  mayhem: boolean;
  seq: number;
  priceN: Dec;
  priceU: Dec;
  mcapN: Dec;
  mcapU: Dec;
  firstPriceN: Dec;
  athPN: Dec;
  athPU: Dec;
  athPAt: number | null;
  athMN: Dec;
  athMU: Dec;
  athMAt: number | null;
  pools: Map<string, PoolState>;
  bondingCurvePct: string | null;
  graduatedAt: number | null;
  graduatedToPool: string | null;
  graduatedToDex: string | null;
  security: { mintDisabled: boolean | null; transferBlockable: boolean; lpBurntPct: string; transferFeeBps: number };
  metadata: {
    description: string | null;
    twitter: string | null;
    website: string | null;
    telegram: string | null;
    discord: string | null;
  };
  fees: FeeTotals;
  trades: number;
  buys: number;
  sells: number;
  volN: Dec;
  volU: Dec;
  updatedAt: number;
  win: TradeWindow;
  candles: OpenBuckets;
  /** Base buckets closed within the late-trade horizon (candles.ts). */
  closedCandles: ClosedBucket[];
  /** Holder records in memory; with parkedHolders, the rest are in the wallet store. */
  holders: Map<string, HolderRec>;
  /** Holder records written to the wallet store (embedded; holder-index.ts holderOf). Absent: none. */
  parkedHolders?: number;
  /** Absent until first needed, and after a change that can move many holders (a new creator). */
  holderIndex?: HolderIndexState;
  /** Contracts holding the token's singleton pools (V4 PoolManager): not holders. Absent in older snapshots. */
  custody?: string[];
  /** Paid promotions (token-events.ts addPromotion): newest first, at most MAX_PROMOTIONS. Absent when none (most tokens, older snapshots). */
  promotions?: Promotion[];
  /** Trade ids of the dedupe horizon, with their event times, for redelivered swaps (dedupe.ts). */
  recentIds: RecentIds;
}

/** A paid promotion of a token: the token object's `{platform, isPaid: true, paidAt}`. */
export interface Promotion {
  platform: string;
  paidAt: number;
}

export interface Funding {
  from: string;
  label: string | null;
  amountN: Dec;
  amountU: Dec;
  at: number;
}

export interface WalletState {
  labels: string[];
  name: string | null;
  /** First funding: names the wallet's funder. */
  funder: Funding | null;
  /** Every wallet that sent it native funds (for insiders), first few only. */
  fundedBy: string[];
  trades: number;
  /**
   * Tokens (tokenKey) the wallet holds a balance of: their holder figures depend on it. Absent when
   * none; an array (replaced, never changed) while few, a Set past that (wallet-facts.ts setHolding).
   */
  held?: readonly string[] | Set<string>;
  /** Tokens (tokenKey) it created: their devFunding depends on it. */
  created: string[];
  /** Event time of its latest trade, funding received, label or balance change (wallet expiry). */
  at: number;
}

/**
 * What a distributed instance keeps of a token whose partition it does not own: enough to price
 * trades quoted in it and to skip redelivered swaps (aggregators/partitioned.ts).
 */
export interface ShadowToken {
  /** Native price of its newest trade (by event time), as TokenState.priceN. */
  priceN: Dec;
  /** Event time of that trade. */
  lastT: number;
  recentIds: RecentIds;
}

/** The chain-wide facts a swap of a token read when it was processed (distributed journals). */
export interface SwapContext {
  mark: Dec;
  /** Native price of the quote token, when the swap is quoted in a token priced through it. */
  quoteN: Dec | null;
  /** The trader's wallet before the trade. */
  trades: number;
  funder: Funding | null;
  fundedBy: string[];
  labels: string[];
}

/** A token kept as its v8 serialisation while idle (aggregators/parking.ts). */
export interface ParkedToken {
  bytes: Uint8Array;
  chain: Chain;
  /** Its last input's event time (TokenState.updatedAt). */
  updatedAt: number;
  /** When its windows next lose a trade (it comes back for the decay then); null when they hold none. */
  expiry: number | null;
}

/** Next offsets of a partition in spot.swaps.v1 and spot.token-events.v1. */
export interface PartitionOffsets {
  swaps: number;
  events: number;
}

/** An input of a partition not owned, kept for its next owner (aggregators/partition-journal.ts). */
export type JournalEntry =
  | { k: 'swap'; offset: number; swap: RawSwap; context: SwapContext }
  | { k: 'event'; offset: number; event: TokenEvent; raw: string }
  /** A decay tick of the chain's watermark, taken when the partition's messages of that chain stood at `at`. */
  | { k: 'tick'; chain: Chain; time: number; at: PartitionOffsets };

/**
 * Version 2: windows from per-time buckets, closed candles of the late-trade horizon, a 10 min
 * dedupe horizon, wallet activity times, attribute bits in the CATEGORY layout.
 * Version 3: window buckets coarsen with age (1 s, 5 s, 15 s, 60 s; windows.ts).
 * Version 4: partitions processed in offset order per chain (merge.ts): offsets are low
 * watermarks, chainOffsets the per-chain positions above them; ticks journaled at chain positions.
 */
export const STATE_VERSION = 4;

export interface AggregatorState {
  version: typeof STATE_VERSION;
  /** Distributed: only the tokens of owned partitions. */
  tokens: Map<string, TokenState>;
  /** Distributed: the tokens of the partitions this instance does not own. */
  shadows?: Map<string, ShadowToken>;
  /** Distributed: per partition not owned, what its owner may still need replayed (aggregators/partition-journal.ts). */
  journals?: Map<number, JournalEntry[]>;
  /** Embedded: keys of tokens that left memory for ClickHouse (aggregators/eviction.ts). */
  evicted?: Set<string>;
  /** Embedded: idle tokens kept serialised, off the JS heap (aggregators/parking.ts); not in `tokens`. */
  parked?: Map<string, ParkedToken>;
  wallets: Map<string, WalletState>;
  marks: MarkBook;
  /** Max event time processed per chain. */
  watermarks: Record<string, number>;
  /** Per "topic:partition", the low watermark: every offset below it is processed (positions.ts). */
  offsets: Record<string, number>;
  /** Per "topic:partition" and chain, the offset after the last message of that chain processed. */
  chainOffsets: Record<string, Record<string, number>>;
  processed: number;
  /** Embedded, in a stop's snapshot only: the tokens whose views the next start builds first. */
  views?: UnbuiltViews;
}

/** Token keys whose token view (`changed`) or candle view (`traded`) is not published yet. */
export interface UnbuiltViews {
  changed: string[];
  traded: string[];
}

export function newState(): AggregatorState {
  return {
    version: STATE_VERSION,
    tokens: new Map(),
    wallets: new Map(),
    marks: {},
    watermarks: {},
    offsets: {},
    chainOffsets: {},
    processed: 0,
  };
}
