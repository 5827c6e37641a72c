// Topic contracts: names, keys, value schemas and compaction, in one place.
// Keys are `chain:address` of the token (wallet-level events: `chain:wallet`).
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Candle, ChainSlug, Trade, Token, DecimalString } from './schemas.ts';
import type { TopicSpec } from './eventlog/types.ts';

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const IntString = Type.String({ pattern: '^[0-9]+$', description: 'Unsigned integer in base units' });

/** Where an event sits on chain: the trade identity is chain:transactionHash:eventIndex. */
const Position = {
  id: Type.String({ description: 'chain:transactionHash:eventIndex' }),
  chain: ChainSlug,
  transactionHash: Type.String(),
  eventIndex: Type.Integer({ minimum: 0 }),
  blockNumber: Type.Integer({ minimum: 0, description: 'Slot on solana, block number on EVM' }),
  blockTime: Type.Integer({ minimum: 0, description: 'Unix ms' }),
};

export const RawSwap = Type.Object(
  {
    ...Position,
    token: Type.String(),
    quoteAsset: Type.String({ description: 'Quote asset address; the wrapped native (or 0x0 on EVM) means native' }),
    tokenAmount: IntString,
    tokenDecimals: Type.Integer({ minimum: 0, maximum: 36 }),
    quoteAmount: IntString,
    quoteDecimals: Type.Integer({ minimum: 0, maximum: 36 }),
    side: Type.Union([Type.Literal('buy'), Type.Literal('sell')]),
    trader: Type.String(),
    pool: Type.String({ description: 'Pool, pair or bonding-curve address (V4: pool id)' }),
    /** Where a singleton pool keeps its tokens when `pool` is no address (V4: the PoolManager that emitted the swap); not a holder. */
    custody: Type.Optional(
      Type.String({
        description: "Contract holding the pool's tokens when pool is an id (Uniswap V4: the PoolManager)",
      }),
    ),
    dex: Type.String({ description: 'Venue, e.g. pumpfun, pumpswap, raydium-amm-v4, uniswap-v3' }),
    launchpad: nullable(Type.String()),
    /** The aggregator/router program or contract the trade went through; `trader` stays the wallet that signed. */
    router: Type.Optional(Type.String({ description: 'Router or aggregator the trade was routed through' })),
    /** Trading terminals or bots the transaction names (their router or fee account), e.g. axiom, photon. */
    platforms: Type.Optional(Type.Array(Type.String(), { maxItems: 16 })),
    /** Post-trade reserves of the pool or curve in base units, where the event carries them. */
    reserves: Type.Optional(Type.Object({ token: IntString, quote: IntString })),
    /** Bonding-curve reading after the trade: completion 0..100, where the event allows it. */
    curve: Type.Optional(
      Type.Object({
        progressPct: DecimalString,
        virtualTokenReserves: Type.Optional(IntString),
        virtualQuoteReserves: Type.Optional(IntString),
        realTokenReserves: Type.Optional(IntString),
        realQuoteReserves: Type.Optional(IntString),
        complete: Type.Optional(Type.Boolean()),
      }),
    ),
    /** Fees in quote base units (platform = launchpad/protocol + creator, dex = LP fee) and native base units (transaction, validator). */
    fees: Type.Optional(
      Type.Object({
        platform: Type.Optional(IntString),
        dex: Type.Optional(IntString),
        transaction: Type.Optional(IntString),
        validator: Type.Optional(IntString),
      }),
    ),
    mayhemMode: Type.Optional(Type.Boolean()),
  },
  { $id: 'RawSwap', additionalProperties: false },
);
export type RawSwap = Static<typeof RawSwap>;

const TokenCreated = Type.Object(
  {
    ...Position,
    kind: Type.Literal('created'),
    token: Type.String(),
    name: Type.String(),
    symbol: Type.String(),
    uri: Type.String(),
    decimals: Type.Integer({ minimum: 0, maximum: 36 }),
    supply: IntString,
    creator: Type.String(),
    launchpad: nullable(Type.String()),
    /** Bonding curve (or launch pool) address. */
    pool: nullable(Type.String()),
    quoteAsset: nullable(Type.String()),
    mayhemMode: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const CurveProgress = Type.Object(
  {
    ...Position,
    kind: Type.Literal('curve'),
    token: Type.String(),
    progressPct: DecimalString,
    complete: Type.Boolean(),
  },
  { additionalProperties: false },
);

const Graduated = Type.Object(
  {
    ...Position,
    kind: Type.Literal('graduated'),
    token: Type.String(),
    pool: Type.String(),
    dex: Type.String(),
  },
  { additionalProperties: false },
);

const MetadataEvent = Type.Object(
  {
    ...Position,
    kind: Type.Literal('metadata'),
    token: Type.String(),
    description: nullable(Type.String()),
    /** Image URI from the off-chain JSON (http(s), ipfs:// or ar://); the token object has no field for it yet. */
    image: Type.Optional(nullable(Type.String())),
    twitter: nullable(Type.String()),
    website: nullable(Type.String()),
    telegram: nullable(Type.String()),
    discord: nullable(Type.String()),
  },
  { additionalProperties: false },
);

const SecurityEvent = Type.Object(
  {
    ...Position,
    kind: Type.Literal('security'),
    token: Type.String(),
    mintDisabled: Type.Optional(Type.Boolean()),
    transferBlockable: Type.Optional(Type.Boolean()),
    lpBurntPct: Type.Optional(DecimalString),
    transferFeeBps: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);

/** A token moving between wallets (ERC-20 Transfer; SPL transfers). Mints come from the zero address. */
const TransferEvent = Type.Object(
  {
    ...Position,
    kind: Type.Literal('transfer'),
    token: Type.String(),
    from: Type.String(),
    to: Type.String(),
    amount: IntString,
  },
  { additionalProperties: false },
);

/** A wallet's absolute token balance after a transaction (Solana postTokenBalances). */
const BalanceEvent = Type.Object(
  {
    ...Position,
    kind: Type.Literal('balance'),
    token: Type.String(),
    owner: Type.String(),
    amount: IntString,
  },
  { additionalProperties: false },
);

/** Native funds sent to a wallet; keyed by chain:wallet. The first one names the wallet's funder. */
const FundingEvent = Type.Object(
  {
    ...Position,
    kind: Type.Literal('funding'),
    token: Type.Null(),
    from: Type.String(),
    to: Type.String(),
    amount: IntString,
    fromLabel: nullable(Type.String({ description: 'e.g. cex:binance' })),
  },
  { additionalProperties: false },
);

/** Labels of a wallet (kol, fomoscan, cex:<name>, pro_trader, phishing); keyed by chain:wallet. */
const WalletLabelEvent = Type.Object(
  {
    ...Position,
    kind: Type.Literal('walletLabel'),
    token: Type.Null(),
    wallet: Type.String(),
    labels: Type.Array(Type.String()),
    name: nullable(Type.String()),
  },
  { additionalProperties: false },
);

/**
 * A paid promotion of a token (a DEX Screener order, or a line of an imported promotions list):
 * the token's own `platforms`. `blockTime` is the payment time; trades never make one.
 */
const PromotionEvent = Type.Object(
  {
    ...Position,
    kind: Type.Literal('promotion'),
    token: Type.String(),
    platform: Type.String({ minLength: 1, maxLength: 64, description: 'Where it was promoted, e.g. dexscreener' }),
    paidAt: Type.Integer({ minimum: 0, description: 'Payment time, Unix ms' }),
    /** What was bought (e.g. tokenProfile, tokenAd, boost) and the feed or list it came from. */
    product: nullable(Type.String({ maxLength: 64 })),
    source: Type.String({ maxLength: 200 }),
  },
  { additionalProperties: false },
);

export const TokenEvent = Type.Union(
  [
    TokenCreated,
    CurveProgress,
    Graduated,
    MetadataEvent,
    SecurityEvent,
    TransferEvent,
    BalanceEvent,
    FundingEvent,
    WalletLabelEvent,
    PromotionEvent,
  ],
  { $id: 'TokenEvent' },
);
export type TokenEvent = Static<typeof TokenEvent>;

/**
 * A progress mark on spot.swaps.v1 or spot.token-events.v1: the ingest publisher writes one to
 * every partition every few seconds of a chain's event time (ingest/publisher.ts), so the
 * aggregator's merge, which orders a chain across partitions, does not read that partition far
 * ahead looking for the chain (aggregators/merge.ts). A chain's records come in event time, so
 * none still to come on that partition is earlier than `blockTime`. Keyed `chain:~mark:n`, n
 * picked to land on the partition; a reader of the input topics skips it (isChainMark).
 */
export const ChainMark = Type.Object(
  { mark: Type.Literal('progress'), chain: ChainSlug, blockTime: Type.Integer({ minimum: 0, description: 'Unix ms' }) },
  { $id: 'ChainMark', additionalProperties: false },
);
export type ChainMark = Static<typeof ChainMark>;

const chainMarkChecker = TypeCompiler.Compile(ChainMark);
export const isChainMark = (value: unknown): value is ChainMark => chainMarkChecker.Check(value);

/** spot.trades.v1: a priced trade with what the stream routes on. */
export const PricedTradeMessage = Type.Object(
  {
    trade: Trade,
    /** Identity feeds the trader belongs to (kol, fomoscan). */
    identities: Type.Array(Type.String()),
    pool: Type.String(),
    dex: Type.String(),
    /**
     * The trade's place among its token's trades (1, 2, …; spot.trades' seq): a reader that saw
     * 1 to n of a token has every trade of it so far. Absent in values written before it.
     */
    seq: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { $id: 'PricedTradeMessage', additionalProperties: false },
);
export type PricedTradeMessage = Static<typeof PricedTradeMessage>;

const CandleByDenomination = Type.Object({ usd: Candle, native: Candle }, { additionalProperties: false });

/** spot.candles.v1: the open bucket of every timeframe, metric and denomination of one token. */
export const CandleUpdateMessage = Type.Object(
  {
    chain: ChainSlug,
    token: Type.String(),
    updatedAt: Type.Integer({ minimum: 0 }),
    /** timeframe -> metric -> denomination -> candle */
    open: Type.Record(Type.String(), Type.Object({ price: CandleByDenomination, marketCap: CandleByDenomination })),
  },
  { $id: 'CandleUpdateMessage', additionalProperties: false },
);
export type CandleUpdateMessage = Static<typeof CandleUpdateMessage>;

/** spot.labels.v1 (compacted, key chain:wallet): a wallet's imported labels, per source; the label import's memory. */
export const WalletLabelEntry = Type.Object(
  {
    chain: ChainSlug,
    wallet: Type.String(),
    /** Union of every source's labels: what the wallet's walletLabel event carries. */
    labels: Type.Array(Type.String()),
    name: nullable(Type.String()),
    /** Labels by the list that gave them (a file's source column, else the file name). */
    sources: Type.Record(Type.String(), Type.Array(Type.String())),
    updatedAt: Type.Integer({ minimum: 0 }),
  },
  { $id: 'WalletLabelEntry', additionalProperties: false },
);
export type WalletLabelEntry = Static<typeof WalletLabelEntry>;

export interface TopicContract<T extends TSchema> extends TopicSpec {
  schema: T;
}

function topic<T extends TSchema>(name: string, schema: T, compacted: boolean, partitions = 4): TopicContract<T> {
  return { name, schema, compacted, partitions, retentionMs: compacted ? undefined : 7 * 24 * 3600 * 1000 };
}

// spot.trades.v1, spot.candles.v1 and spot.tokens.v1 are keyed by the token's chain:address
// (aggregators: tokenKey); the stream feed routes by that key before it parses a value.
export const TOPICS = {
  swaps: topic('spot.swaps.v1', RawSwap, false),
  tokenEvents: topic('spot.token-events.v1', TokenEvent, false),
  trades: topic('spot.trades.v1', PricedTradeMessage, false),
  candles: topic('spot.candles.v1', CandleUpdateMessage, true),
  tokens: topic('spot.tokens.v1', Token, true),
  labels: topic('spot.labels.v1', WalletLabelEntry, true),
} as const;

export const ALL_TOPICS: TopicSpec[] = Object.values(TOPICS).map(({ name, partitions, compacted, retentionMs }) => ({
  name,
  partitions,
  compacted,
  retentionMs,
}));

const checkers = new Map<string, ReturnType<typeof TypeCompiler.Compile>>();

/** Validates a value against its topic schema (at every log boundary); throws with the first problem. */
export function assertTopicValue<T extends TSchema>(
  contract: TopicContract<T>,
  value: unknown,
): asserts value is Static<T> {
  let checker = checkers.get(contract.name);
  if (!checker) {
    checker = TypeCompiler.Compile(contract.schema);
    checkers.set(contract.name, checker);
  }
  if (!checker.Check(value)) {
    const first = checker.Errors(value).First();
    throw new TypeError(
      `invalid ${contract.name} value at ${first?.path ?? '/'}: ${first?.message ?? 'schema mismatch'}`,
    );
  }
}

export function isTopicValue<T extends TSchema>(contract: TopicContract<T>, value: unknown): value is Static<T> {
  try {
    assertTopicValue(contract, value);
    return true;
  } catch {
    return false;
  }
}
