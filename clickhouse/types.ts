// The store contract: typed rows and the named queries that aggregators write through and
// the query API reads through. clickhouse/store.ts implements it over @clickhouse/client.
import type { Chain } from '../core/chains.ts';
import type { Candle, Denomination, Identity, Metric, Timeframe, Token, TradeSide } from '../core/schemas.ts';

/** One priced trade; decimal strings are exact (human units, not base units). */
export interface TradeRow {
  id: string; // chain:transactionHash:eventIndex
  chain: Chain;
  token: string;
  /** Per-token order of the trade (1, 2, …) in log order: ties in time are broken by it. */
  seq: number;
  name: string;
  symbol: string;
  trader: string;
  side: TradeSide;
  transactionHash: string;
  eventIndex: number;
  blockNumber: number;
  timestamp: number; // block time, Unix ms
  amount: string; // token amount
  quoteAmount: string;
  quoteAsset: string;
  priceNative: string;
  priceUsd: string;
  volumeNative: string;
  volumeUsd: string;
  marketCapNative: string;
  marketCapUsd: string;
  pool: string;
  dex: string;
  identities: string[]; // kol, fomoscan
  flags: string[];
  /** Trading platforms the transaction names (RawSwap.platforms), by name. */
  platforms: string[];
}

export interface TokenEventRow {
  id: string;
  chain: Chain;
  token: string; // '' for wallet-level events
  kind: string;
  blockTime: number;
  body: string; // the event as JSON
}

export interface WalletLabelRow {
  chain: Chain;
  wallet: string;
  labels: string[];
  name: string | null;
  updatedAt: number;
}

export interface BalanceRow {
  chain: Chain;
  token: string;
  wallet: string;
  amount: string; // base units
  updatedAt: number;
}

/** Base granularities the aggregator writes; every timeframe is rolled up from one of them at query time. */
export const BASE_GRANULARITIES = ['1s', '1m', '1h', '1d'] as const;
export type BaseGranularity = (typeof BASE_GRANULARITIES)[number];

export interface Ohlc {
  open: string;
  high: string;
  low: string;
  close: string;
}

/**
 * The state of one base bucket of one token, written by the aggregator whenever the bucket
 * changes. Idempotent: the row with the highest `seq` (the per-token seq of the bucket's last
 * trade) wins, so a replay or a re-delivery never double-counts.
 */
export interface CandleRow {
  chain: Chain;
  token: string;
  granularity: BaseGranularity;
  time: number; // bucket open, Unix ms
  seq: number;
  priceNative: Ohlc;
  priceUsd: Ohlc;
  marketCapNative: Ohlc;
  marketCapUsd: Ohlc;
  volumeNative: string;
  volumeUsd: string;
  trades: number;
}

export interface CandleQuery {
  chain: Chain;
  token: string;
  timeframe: Timeframe;
  metric: Metric;
  denomination: Denomination;
  /** Inclusive window start, Unix ms. */
  from?: number;
  /** Exclusive window end, Unix ms. */
  to?: number;
  /** The newest `limit` buckets of the window are returned, oldest first. */
  limit: number;
}

/** Position of the last trade of a page: the next page starts strictly after (older than) it. */
export interface TradeCursor {
  timestamp: number;
  id: string;
}

export interface SpotStore {
  /** Applies the numbered migrations (idempotent). */
  migrate(): Promise<void>;
  ping(): Promise<boolean>;
  insertTrades(rows: TradeRow[]): Promise<void>;
  /** Latest token objects (ReplacingMergeTree on updatedAt). */
  upsertTokens(tokens: Token[]): Promise<void>;
  upsertCandles(rows: CandleRow[]): Promise<void>;
  insertTokenEvents(rows: TokenEventRow[]): Promise<void>;
  upsertWalletLabels(rows: WalletLabelRow[]): Promise<void>;
  upsertBalances(rows: BalanceRow[]): Promise<void>;
  getToken(chain: Chain, address: string): Promise<Token | null>;
  queryCandles(query: CandleQuery): Promise<Candle[]>;
  /** Newest first; `limit` rows at most, strictly older than `before` when given. */
  queryTokenTrades(chain: Chain, token: string, limit: number, before?: TradeCursor): Promise<TradeRow[]>;
  queryIdentityTrades(identity: Identity, chains: Chain[], limit: number, before?: TradeCursor): Promise<TradeRow[]>;
  /** Every stored trade of a token in seq order (tests, brute-force checks, replay audits). */
  allTrades(chain: Chain, token: string): Promise<TradeRow[]>;
  /** Empties every derived table (spot replay). */
  truncateDerived(): Promise<void>;
  close(): Promise<void>;
}
