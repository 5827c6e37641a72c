// TypeBox schemas of every SPEC.md resource: the single source of validation, the
// TypeScript types and /openapi.json.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { CHAINS } from './chains.ts';

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const ChainSlug = Type.Union(
  CHAINS.map((c) => Type.Literal(c)),
  {
    $id: 'ChainSlug',
    description: 'Chain slug',
  },
);
export const DecimalString = Type.String({
  pattern: '^-?[0-9]+(\\.[0-9]+)?$',
  description: 'Exact decimal string',
  $id: 'DecimalString',
});
export const UnixMs = Type.Integer({ minimum: 0, description: 'Unix milliseconds' });

export const PricedValue = Type.Object(
  { native: DecimalString, usd: DecimalString },
  { $id: 'PricedValue', additionalProperties: false, description: 'Value in the chain native unit and in USD' },
);
export type PricedValue = Static<typeof PricedValue>;

export const STATS_WINDOWS = ['5m', '30m', '1h', '6h', '24h'] as const;
export type StatsWindow = (typeof STATS_WINDOWS)[number];

export const StatsWindowObject = Type.Object(
  {
    priceChangePct: DecimalString,
    volume: PricedValue,
    buyCount: Type.Integer({ minimum: 0 }),
    sellCount: Type.Integer({ minimum: 0 }),
    buyVolume: PricedValue,
    sellVolume: PricedValue,
  },
  { $id: 'StatsWindow', additionalProperties: false },
);
export type StatsWindowObject = Static<typeof StatsWindowObject>;

export const Stats = Type.Object(
  Object.fromEntries(STATS_WINDOWS.map((w) => [w, StatsWindowObject])) as Record<StatsWindow, typeof StatsWindowObject>,
  { $id: 'Stats', additionalProperties: false, description: 'Trailing windows by event time' },
);

export const Ath = Type.Object(
  { price: PricedValue, priceAt: nullable(UnixMs), marketCap: PricedValue, marketCapAt: nullable(UnixMs) },
  { $id: 'Ath', additionalProperties: false },
);

export const Fees = Type.Object(
  {
    transaction: PricedValue,
    validator: PricedValue,
    platform: PricedValue,
    dex: PricedValue,
  },
  { $id: 'Fees', additionalProperties: false, description: 'All-time fees by recipient; never add them together' },
);

export const Totals = Type.Object(
  {
    fees: Fees,
    trades: Type.Integer({ minimum: 0 }),
    buys: Type.Integer({ minimum: 0 }),
    sells: Type.Integer({ minimum: 0 }),
    volume: PricedValue,
  },
  { $id: 'Totals', additionalProperties: false },
);

const PctString = DecimalString;
export const Holders = Type.Object(
  {
    count: Type.Integer({ minimum: 0 }),
    top10Pct: PctString,
    devPct: PctString,
    sniperPct: PctString,
    sniperCount: Type.Integer({ minimum: 0 }),
    insiderPct: PctString,
    insiderCount: Type.Integer({ minimum: 0 }),
    bundlerPct: PctString,
    bundlerCount: Type.Integer({ minimum: 0 }),
    freshWalletPct: PctString,
    freshWalletCount: Type.Integer({ minimum: 0 }),
    proTraderPct: PctString,
    proTraderCount: Type.Integer({ minimum: 0 }),
    fomoPct: PctString,
    phishingPct: PctString,
    fundedByCexPct: PctString,
  },
  { $id: 'Holders', additionalProperties: false },
);

export const Security = Type.Object(
  {
    mintDisabled: Type.Boolean(),
    transferBlockable: Type.Boolean(),
    lpBurntPct: PctString,
    transferFeeBps: Type.Integer({ minimum: 0 }),
  },
  { $id: 'Security', additionalProperties: false },
);

export const Metadata = Type.Object(
  {
    description: nullable(Type.String()),
    twitter: nullable(Type.String()),
    website: nullable(Type.String()),
    telegram: nullable(Type.String()),
    discord: nullable(Type.String()),
  },
  { $id: 'Metadata', additionalProperties: false },
);

export const DevFunding = Type.Object(
  {
    funder: nullable(Type.String({ description: 'Address that sent the creator its first native funds' })),
    funderLabel: nullable(Type.String({ description: 'Label of the funder, e.g. cex:binance' })),
    amount: nullable(PricedValue),
    fundedAt: nullable(UnixMs),
  },
  { $id: 'DevFunding', additionalProperties: false, description: 'Who funded the creator wallet' },
);

export const Annotation = Type.Object(
  { kind: Type.String({ examples: ['mayhem_mode'] }) },
  { $id: 'Annotation', additionalProperties: false },
);

export const Platform = Type.Object(
  { platform: Type.String(), isPaid: Type.Boolean(), paidAt: nullable(UnixMs) },
  { $id: 'Platform', additionalProperties: false },
);

/** A trade's platforms: the terminals or bots its transaction names, never paid promotion. */
export function tradePlatforms(names: readonly string[]): Static<typeof Platform>[] {
  return names.map((platform) => ({ platform, isPaid: false, paidAt: null }));
}

export const Token = Type.Object(
  {
    chain: ChainSlug,
    address: Type.String(),
    name: Type.String(),
    symbol: Type.String(),
    decimals: Type.Integer({ minimum: 0, maximum: 2147483647 }),
    supply: DecimalString,
    creator: Type.String(),
    devFunding: DevFunding,
    createdAt: UnixMs,
    dexes: Type.Array(Type.String()),
    price: PricedValue,
    marketCap: PricedValue,
    liquidity: PricedValue,
    ath: Ath,
    stats: Stats,
    totals: Totals,
    holders: Holders,
    security: Security,
    metadata: Metadata,
    updatedAt: UnixMs,
    anchorAddress: Type.Optional(nullable(Type.String())),
    anchorSymbol: Type.Optional(nullable(Type.String())),
    annotations: Type.Optional(Type.Array(Annotation)),
    bondingCurvePct: Type.Optional(nullable(DecimalString)),
    launchpad: Type.Optional(nullable(Type.String())),
    graduatedAt: Type.Optional(nullable(UnixMs)),
    graduatedToPool: Type.Optional(nullable(Type.String())),
    graduatedToDex: Type.Optional(nullable(Type.String())),
    platforms: Type.Optional(Type.Array(Platform)),
  },
  { $id: 'Token', additionalProperties: false },
);
export type Token = Static<typeof Token>;

export const Candle = Type.Object(
  {
    time: UnixMs,
    open: Type.Number(),
    high: Type.Number(),
    low: Type.Number(),
    close: Type.Number(),
    volume: Type.Number(),
  },
  { $id: 'Candle', additionalProperties: false },
);
export type Candle = Static<typeof Candle>;

export const CandlesResponse = Type.Object(
  { candles: Type.Array(Candle) },
  { $id: 'CandlesResponse', additionalProperties: false },
);

export const TRADE_SIDES = ['buy', 'sell'] as const;
export const TradeSide = Type.Union(
  TRADE_SIDES.map((s) => Type.Literal(s)),
  { $id: 'TradeSide' },
);
export type TradeSide = Static<typeof TradeSide>;

export const Trade = Type.Object(
  {
    id: Type.String({ description: 'chain:transactionHash:eventIndex' }),
    chain: ChainSlug,
    token: Type.String(),
    name: Type.String(),
    symbol: Type.String(),
    trader: Type.String(),
    transactionHash: Type.String(),
    side: TradeSide,
    amount: DecimalString,
    price: PricedValue,
    volume: PricedValue,
    marketCap: PricedValue,
    timestamp: UnixMs,
    flags: Type.Optional(Type.Array(Type.String())),
    platforms: Type.Optional(Type.Array(Platform)),
  },
  { $id: 'Trade', additionalProperties: false },
);
export type Trade = Static<typeof Trade>;

export const TradePage = Type.Object(
  { trades: Type.Array(Trade), hasMore: Type.Boolean(), nextCursor: nullable(Type.String()) },
  { $id: 'TradePage', additionalProperties: false },
);
export type TradePage = Static<typeof TradePage>;

// ---- requests ----

export const TIMEFRAMES = [
  '1s',
  '5s',
  '15s',
  '30s',
  '1m',
  '3m',
  '5m',
  '15m',
  '30m',
  '1h',
  '4h',
  '6h',
  '12h',
  '1d',
  '7d',
] as const;
export type Timeframe = (typeof TIMEFRAMES)[number];
export const METRICS = ['price', 'marketCap'] as const;
export type Metric = (typeof METRICS)[number];
export const DENOMINATIONS = ['usd', 'native'] as const;
export type Denomination = (typeof DENOMINATIONS)[number];

export const IDENTITIES = ['kol', 'fomoscan'] as const;
export type Identity = (typeof IDENTITIES)[number];

const IntRange = Type.Object(
  {
    min: Type.Optional(nullable(Type.Integer({ minimum: 0 }))),
    max: Type.Optional(nullable(Type.Integer({ minimum: 0 }))),
  },
  { additionalProperties: false },
);
const NumberRange = Type.Object(
  { min: Type.Optional(nullable(Type.Number())), max: Type.Optional(nullable(Type.Number())) },
  { additionalProperties: false },
);
const DecimalRange = Type.Object(
  { min: Type.Optional(nullable(DecimalString)), max: Type.Optional(nullable(DecimalString)) },
  { additionalProperties: false },
);
const StringList = Type.Array(Type.String());

/** Known filters; unknown names are ignored, so the object allows extra properties. */
export const DiscoveryFilters = Type.Object(
  {
    ageMinutes: Type.Optional(IntRange),
    anchorSymbols: Type.Optional(StringList),
    bondingCurvePercent: Type.Optional(NumberRange),
    buys: Type.Optional(IntRange),
    devHoldingPercent: Type.Optional(NumberRange),
    excludeDevAddresses: Type.Optional(StringList),
    excludeFundingAddresses: Type.Optional(StringList),
    excludeSymbolOrName: Type.Optional(StringList),
    excludeTwitter: Type.Optional(StringList),
    excludeWebsites: Type.Optional(StringList),
    globalFeesPaidUsd: Type.Optional(DecimalRange),
    holderCount: Type.Optional(IntRange),
    lastActivityMinutes: Type.Optional(Type.Integer({ minimum: 0 })),
    liquidityUsd: Type.Optional(DecimalRange),
    marketCapUsd: Type.Optional(DecimalRange),
    maxGraduationStaleMinutes: Type.Optional(Type.Integer({ minimum: 0 })),
    protocols: Type.Optional(StringList),
    sells: Type.Optional(IntRange),
    snipersSupplyPercent: Type.Optional(NumberRange),
    symbolOrName: Type.Optional(StringList),
    top10HoldersPercent: Type.Optional(NumberRange),
    twitterReuseCount: Type.Optional(IntRange),
    txns: Type.Optional(IntRange),
    volumeUsd: Type.Optional(DecimalRange),
    withAtLeastOneSocial: Type.Optional(nullable(Type.Boolean())),
  },
  { $id: 'DiscoveryFilters', additionalProperties: true },
);
export type DiscoveryFilters = Static<typeof DiscoveryFilters>;

export const SORT_FIELDS = [
  'createdAt',
  'volume24hUsd',
  'marketCapUsd',
  'liquidityUsd',
  'holdersCount',
  'tradeCount24h',
  'bondingCurvePct',
  'bondingCurveActivity',
  'graduatedAt',
] as const;
export type SortField = (typeof SORT_FIELDS)[number];

export const ColumnConfig = Type.Object(
  {
    sortBy: Type.Optional(nullable(Type.Union(SORT_FIELDS.map((s) => Type.Literal(s))))),
    order: Type.Optional(nullable(Type.Union([Type.Literal('asc'), Type.Literal('desc')]))),
    limit: Type.Optional(nullable(Type.Integer())),
    filters: Type.Optional(nullable(DiscoveryFilters)),
  },
  { $id: 'ColumnConfig', additionalProperties: false },
);
export type ColumnConfig = Static<typeof ColumnConfig>;

export const COLUMNS = ['newPairs', 'graduating', 'graduated'] as const;
export type Column = (typeof COLUMNS)[number];

export const DiscoveryRequest = Type.Object(
  {
    chains: Type.Array(Type.String(), { minItems: 1 }),
    newPairs: Type.Optional(nullable(ColumnConfig)),
    graduating: Type.Optional(nullable(ColumnConfig)),
    graduated: Type.Optional(nullable(ColumnConfig)),
  },
  { $id: 'DiscoveryRequest', additionalProperties: false },
);
export type DiscoveryRequest = Static<typeof DiscoveryRequest>;

export const DiscoveryItem = Type.Object(
  {
    chain: ChainSlug,
    address: Type.String(),
    rank: nullable(Type.Integer({ minimum: 1 })),
    data: Type.Optional(nullable(Token)),
  },
  { $id: 'DiscoveryItem', additionalProperties: false },
);
export type DiscoveryItem = Static<typeof DiscoveryItem>;

export const DiscoveryResponse = Type.Object(
  {
    columns: Type.Array(
      Type.Object(
        { column: Type.Union(COLUMNS.map((c) => Type.Literal(c))), deltas: Type.Array(DiscoveryItem) },
        { additionalProperties: false },
      ),
    ),
  },
  { $id: 'DiscoveryResponse', additionalProperties: false },
);
export type DiscoveryResponse = Static<typeof DiscoveryResponse>;

// ---- errors ----

export const ERROR_CODES = [
  'VALIDATION_ERROR',
  'UNSUPPORTED_CHAIN',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'RATE_LIMITED',
  'CREDITS_EXHAUSTED',
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const ValidationDetail = Type.Object(
  { field: Type.String(), message: Type.String() },
  { $id: 'ValidationDetail', additionalProperties: false },
);
export type ValidationDetail = Static<typeof ValidationDetail>;

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object(
      {
        code: Type.Union(ERROR_CODES.map((c) => Type.Literal(c))),
        message: Type.String(),
        details: Type.Optional(
          Type.Union([
            Type.Array(ValidationDetail),
            Type.Object({ chain: Type.String() }, { additionalProperties: false }),
          ]),
        ),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'ErrorEnvelope', additionalProperties: false },
);
export type ErrorEnvelope = Static<typeof ErrorEnvelope>;

// ---- stream frames ----

export const STREAM_CHANNELS = ['spot.trades', 'spot.candles', 'spot.tokens', 'spot.discovery'] as const;
export type StreamChannel = (typeof STREAM_CHANNELS)[number];

export const SubscribeFrame = Type.Object(
  {
    action: Type.Literal('subscribe'),
    channel: Type.String(),
    filters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    id: Type.Optional(Type.String()),
    /** A `cursor` of an earlier subscription with the same channel and filters: updates after it come first. */
    resumeFrom: Type.Optional(Type.String()),
    /** The current state first (open candle, token objects, last trades), then live. */
    snapshot: Type.Optional(Type.Boolean()),
  },
  { $id: 'SubscribeFrame' },
);
export type SubscribeFrame = Static<typeof SubscribeFrame>;

export const UnsubscribeFrame = Type.Object(
  { action: Type.Literal('unsubscribe'), subscriptionId: Type.String(), id: Type.Optional(Type.String()) },
  { $id: 'UnsubscribeFrame' },
);
export type UnsubscribeFrame = Static<typeof UnsubscribeFrame>;

export const AckFrame = Type.Object(
  {
    type: Type.Literal('ack'),
    channel: Type.String(),
    subscriptionId: Type.String(),
    id: nullable(Type.String()),
    status: Type.Literal('success'),
    message: Type.String(),
  },
  { $id: 'AckFrame', additionalProperties: false },
);

export const UpdateFrame = Type.Object(
  {
    type: Type.Literal('update'),
    channel: Type.String(),
    subscriptionId: Type.String(),
    data: Type.Unknown(),
    seq: Type.Integer({ minimum: 1, description: 'Counts the subscription updates from 1; a gap means a lost update' }),
    cursor: Type.String({
      description: 'Opaque position of this update; subscribe with resumeFrom set to it to get every later update',
    }),
  },
  { $id: 'UpdateFrame', additionalProperties: false },
);
export type UpdateFrame = Static<typeof UpdateFrame>;
export type AckFrame = Static<typeof AckFrame>;

/**
 * `data` of a spot.discovery update: the POST /v1/discovery response shape. The first update of a
 * subscription holds each requested column's whole ranked set; later ones only the items that
 * entered, moved or changed, and `rank: null` (no data) for those that left.
 */
export type DiscoveryUpdate = DiscoveryResponse;

export const ErrorFrame = Type.Object(
  {
    type: Type.Literal('error'),
    code: Type.Union(ERROR_CODES.map((c) => Type.Literal(c))),
    message: Type.String(),
    details: Type.Union([Type.Array(ValidationDetail), Type.Object({ chain: Type.String() }), Type.Null()]),
    id: Type.Optional(nullable(Type.String())),
  },
  { $id: 'ErrorFrame', additionalProperties: false },
);
export type ErrorFrame = Static<typeof ErrorFrame>;

/** Every schema that /openapi.json publishes under components.schemas. */
export const COMPONENT_SCHEMAS = {
  ChainSlug,
  DecimalString,
  PricedValue,
  StatsWindow: StatsWindowObject,
  Stats,
  Ath,
  Fees,
  Totals,
  Holders,
  Security,
  Metadata,
  DevFunding,
  Annotation,
  Platform,
  Token,
  Candle,
  CandlesResponse,
  TradeSide,
  Trade,
  TradePage,
  DiscoveryFilters,
  ColumnConfig,
  DiscoveryRequest,
  DiscoveryItem,
  DiscoveryResponse,
  ValidationDetail,
  ErrorEnvelope,
  SubscribeFrame,
  UnsubscribeFrame,
  AckFrame,
  UpdateFrame,
  ErrorFrame,
};
