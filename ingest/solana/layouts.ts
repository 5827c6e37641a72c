// Event layouts (CHAINS.md §1.2–1.7) as Borsh field lists, with the field count of every
// historical version so the encoder can write each generation and the decoder read them all.
import { DISC } from './constants.ts';
import type { Field, Layout } from './borsh.ts';

const u64 = (...names: string[]): Field[] => names.map((name) => [name, 'u64'] as const);
const keys = (...names: string[]): Field[] => names.map((name) => [name, 'pubkey'] as const);
/** Argument structs are not events: no discriminator of their own. */
const DISC_NONE = '';

export const PUMP_TRADE: Layout = {
  name: 'pump.TradeEvent',
  discriminator: DISC.pumpTrade,
  required: 10,
  fields: [
    ['mint', 'pubkey'],
    ['solAmount', 'u64'],
    ['tokenAmount', 'u64'],
    ['isBuy', 'bool'],
    ['user', 'pubkey'],
    ['timestamp', 'i64'],
    ...u64('virtualSolReserves', 'virtualTokenReserves', 'realSolReserves', 'realTokenReserves'),
    ['feeRecipient', 'pubkey'],
    ...u64('feeBasisPoints', 'fee'),
    ['creator', 'pubkey'],
    ...u64('creatorFeeBasisPoints', 'creatorFee'),
    ['trackVolume', 'bool'],
    ...u64('totalUnclaimedTokens', 'totalClaimedTokens', 'currentSolVolume'),
    ['lastUpdateTimestamp', 'i64'],
    ['ixName', 'string'],
    ['mayhemMode', 'bool'],
    ...u64('cashbackFeeBasisPoints', 'cashback'),
    ...u64('buybackFeeBasisPoints', 'buybackFee'),
    [
      'shareholders',
      {
        vec: {
          struct: [
            ['address', 'pubkey'],
            ['shareBps', 'u16'],
          ],
        },
      },
    ],
    ['quoteMint', 'pubkey'],
    ...u64('quoteAmount', 'virtualQuoteReserves', 'realQuoteReserves'),
  ],
};

/** Field counts of the pump.fun TradeEvent generations (IDL commit dates). */
export const PUMP_TRADE_LAYOUTS = {
  dec2024: 10,
  may2025: 16,
  aug2025: 21,
  oct2025: 22,
  jan2026: 23,
  feb2026: 25,
  may2026: 32,
} as const;
export type PumpTradeLayout = keyof typeof PUMP_TRADE_LAYOUTS;

export interface PumpTradeEvent {
  mint: string;
  solAmount: bigint;
  tokenAmount: bigint;
  isBuy: boolean;
  user: string;
  timestamp: bigint;
  virtualSolReserves: bigint;
  virtualTokenReserves: bigint;
  realSolReserves: bigint;
  realTokenReserves: bigint;
  feeRecipient?: string;
  feeBasisPoints?: bigint;
  fee?: bigint;
  creator?: string;
  creatorFeeBasisPoints?: bigint;
  creatorFee?: bigint;
  trackVolume?: boolean;
  totalUnclaimedTokens?: bigint;
  totalClaimedTokens?: bigint;
  currentSolVolume?: bigint;
  lastUpdateTimestamp?: bigint;
  ixName?: string;
  mayhemMode?: boolean;
  cashbackFeeBasisPoints?: bigint;
  cashback?: bigint;
  buybackFeeBasisPoints?: bigint;
  buybackFee?: bigint;
  shareholders?: { address: string; shareBps: number }[];
  quoteMint?: string;
  quoteAmount?: bigint;
  virtualQuoteReserves?: bigint;
  realQuoteReserves?: bigint;
}

export const PUMP_CREATE: Layout = {
  name: 'pump.CreateEvent',
  discriminator: DISC.pumpCreate,
  required: 6,
  fields: [
    ['name', 'string'],
    ['symbol', 'string'],
    ['uri', 'string'],
    ...keys('mint', 'bondingCurve', 'user'),
    ['creator', 'pubkey'],
    ['timestamp', 'i64'],
    ...u64('virtualTokenReserves', 'virtualSolReserves', 'realTokenReserves', 'tokenTotalSupply'),
    ['tokenProgram', 'pubkey'],
    ['isMayhemMode', 'bool'],
    ['isCashbackEnabled', 'bool'],
    ['quoteMint', 'pubkey'],
    ['virtualQuoteReserves', 'u64'],
  ],
};
/** legacy = before the creator field (pre-2025), then the IDL generations. */
export const PUMP_CREATE_LAYOUTS = {
  legacy: 6,
  apr2025: 8,
  may2025: 12,
  nov2025: 14,
  feb2026: 15,
  may2026: 17,
} as const;
export type PumpCreateLayout = keyof typeof PUMP_CREATE_LAYOUTS;

export interface PumpCreateEvent {
  name: string;
  symbol: string;
  uri: string;
  mint: string;
  bondingCurve: string;
  user: string;
  creator?: string;
  timestamp?: bigint;
  virtualTokenReserves?: bigint;
  virtualSolReserves?: bigint;
  realTokenReserves?: bigint;
  tokenTotalSupply?: bigint;
  tokenProgram?: string;
  isMayhemMode?: boolean;
  isCashbackEnabled?: boolean;
  quoteMint?: string;
  virtualQuoteReserves?: bigint;
}

export const PUMP_COMPLETE: Layout = {
  name: 'pump.CompleteEvent',
  discriminator: DISC.pumpComplete,
  required: 4,
  fields: [...keys('user', 'mint', 'bondingCurve'), ['timestamp', 'i64'], ['quoteMint', 'pubkey']],
};
export interface PumpCompleteEvent {
  user: string;
  mint: string;
  bondingCurve: string;
  timestamp: bigint;
  quoteMint?: string;
}

export const PUMP_MIGRATION: Layout = {
  name: 'pump.CompletePumpAmmMigrationEvent',
  discriminator: DISC.pumpMigration,
  required: 8,
  fields: [
    ...keys('user', 'mint'),
    ...u64('mintAmount', 'solAmount', 'poolMigrationFee'),
    ['bondingCurve', 'pubkey'],
    ['timestamp', 'i64'],
    ['pool', 'pubkey'],
    ['quoteMint', 'pubkey'],
  ],
};
export interface PumpMigrationEvent {
  user: string;
  mint: string;
  mintAmount: bigint;
  solAmount: bigint;
  poolMigrationFee: bigint;
  bondingCurve: string;
  timestamp: bigint;
  pool: string;
  quoteMint?: string;
}

const PUMPSWAP_ACCOUNTS = keys(
  'pool',
  'user',
  'userBaseTokenAccount',
  'userQuoteTokenAccount',
  'protocolFeeRecipient',
  'protocolFeeRecipientTokenAccount',
);
const COIN_CREATOR: Field[] = [['coinCreator', 'pubkey'], ...u64('coinCreatorFeeBasisPoints', 'coinCreatorFee')];

export const PUMPSWAP_BUY: Layout = {
  name: 'pump_amm.BuyEvent',
  discriminator: DISC.pumpswapBuy,
  required: 20,
  fields: [
    ['timestamp', 'i64'],
    ...u64(
      'baseAmountOut',
      'maxQuoteAmountIn',
      'userBaseTokenReserves',
      'userQuoteTokenReserves',
      'poolBaseTokenReserves',
      'poolQuoteTokenReserves',
      'quoteAmountIn',
      'lpFeeBasisPoints',
      'lpFee',
      'protocolFeeBasisPoints',
      'protocolFee',
      'quoteAmountInWithLpFee',
      'userQuoteAmountIn',
    ),
    ...PUMPSWAP_ACCOUNTS,
    ...COIN_CREATOR,
    ['trackVolume', 'bool'],
    ...u64('totalUnclaimedTokens', 'totalClaimedTokens', 'currentSolVolume'),
    ['lastUpdateTimestamp', 'i64'],
    ['minBaseAmountOut', 'u64'],
    ['ixName', 'string'],
    ...u64('cashbackFeeBasisPoints', 'cashback', 'buybackFeeBasisPoints', 'buybackFee'),
  ],
};
export const PUMPSWAP_BUY_LAYOUTS = {
  apr2025: 20,
  may2025: 23,
  aug2025: 28,
  oct2025: 30,
  feb2026: 32,
  may2026: 34,
} as const;

export const PUMPSWAP_SELL: Layout = {
  name: 'pump_amm.SellEvent',
  discriminator: DISC.pumpswapSell,
  required: 20,
  fields: [
    ['timestamp', 'i64'],
    ...u64(
      'baseAmountIn',
      'minQuoteAmountOut',
      'userBaseTokenReserves',
      'userQuoteTokenReserves',
      'poolBaseTokenReserves',
      'poolQuoteTokenReserves',
      'quoteAmountOut',
      'lpFeeBasisPoints',
      'lpFee',
      'protocolFeeBasisPoints',
      'protocolFee',
      'quoteAmountOutWithoutLpFee',
      'userQuoteAmountOut',
    ),
    ...PUMPSWAP_ACCOUNTS,
    ...COIN_CREATOR,
    ...u64('cashbackFeeBasisPoints', 'cashback', 'buybackFeeBasisPoints', 'buybackFee'),
  ],
};
export const PUMPSWAP_SELL_LAYOUTS = {
  apr2025: 20,
  may2025: 23,
  aug2025: 23,
  oct2025: 23,
  feb2026: 25,
  may2026: 27,
} as const;
export type PumpSwapLayout = keyof typeof PUMPSWAP_BUY_LAYOUTS;

/** Buy and sell share one shape here: amounts named from the pool's side (base moved, quote moved). */
export interface PumpSwapEvent {
  timestamp: bigint;
  userBaseTokenReserves: bigint;
  userQuoteTokenReserves: bigint;
  poolBaseTokenReserves: bigint;
  poolQuoteTokenReserves: bigint;
  lpFeeBasisPoints: bigint;
  lpFee: bigint;
  protocolFeeBasisPoints: bigint;
  protocolFee: bigint;
  pool: string;
  user: string;
  userBaseTokenAccount: string;
  userQuoteTokenAccount: string;
  protocolFeeRecipient: string;
  protocolFeeRecipientTokenAccount: string;
  coinCreator?: string;
  coinCreatorFeeBasisPoints?: bigint;
  coinCreatorFee?: bigint;
  cashbackFeeBasisPoints?: bigint;
  cashback?: bigint;
  buybackFeeBasisPoints?: bigint;
  buybackFee?: bigint;
  // buy
  baseAmountOut?: bigint;
  maxQuoteAmountIn?: bigint;
  quoteAmountIn?: bigint;
  quoteAmountInWithLpFee?: bigint;
  userQuoteAmountIn?: bigint;
  trackVolume?: boolean;
  totalUnclaimedTokens?: bigint;
  totalClaimedTokens?: bigint;
  currentSolVolume?: bigint;
  lastUpdateTimestamp?: bigint;
  minBaseAmountOut?: bigint;
  ixName?: string;
  // sell
  baseAmountIn?: bigint;
  minQuoteAmountOut?: bigint;
  quoteAmountOut?: bigint;
  quoteAmountOutWithoutLpFee?: bigint;
  userQuoteAmountOut?: bigint;
}

export const LAUNCHLAB_TRADE: Layout = {
  name: 'raydium_launchpad.TradeEvent',
  discriminator: DISC.launchlabTrade,
  required: 17,
  fields: [
    ['poolState', 'pubkey'],
    ...u64(
      'totalBaseSell',
      'virtualBase',
      'virtualQuote',
      'realBaseBefore',
      'realQuoteBefore',
      'realBaseAfter',
      'realQuoteAfter',
      'amountIn',
      'amountOut',
      'protocolFee',
      'platformFee',
      'creatorFee',
      'shareFee',
    ),
    ['tradeDirection', 'u8'],
    ['poolStatus', 'u8'],
    ['exactIn', 'bool'],
  ],
};
export interface LaunchLabTradeEvent {
  poolState: string;
  totalBaseSell: bigint;
  virtualBase: bigint;
  virtualQuote: bigint;
  realBaseBefore: bigint;
  realQuoteBefore: bigint;
  realBaseAfter: bigint;
  realQuoteAfter: bigint;
  amountIn: bigint;
  amountOut: bigint;
  protocolFee: bigint;
  platformFee: bigint;
  creatorFee: bigint;
  shareFee: bigint;
  /** 0 Buy, 1 Sell */
  tradeDirection: number;
  /** 0 Fund, 1 Migrate, 2 Trade */
  poolStatus: number;
  exactIn: boolean;
}

export const CPMM_SWAP: Layout = {
  name: 'raydium_cp_swap.SwapEvent',
  discriminator: DISC.raydiumSwap,
  required: 8,
  fields: [
    ['poolId', 'pubkey'],
    ...u64(
      'inputVaultBefore',
      'outputVaultBefore',
      'inputAmount',
      'outputAmount',
      'inputTransferFee',
      'outputTransferFee',
    ),
    ['baseInput', 'bool'],
    ...keys('inputMint', 'outputMint'),
    ...u64('tradeFee', 'creatorFee'),
    ['creatorFeeOnInput', 'bool'],
  ],
};
export const CPMM_SWAP_LAYOUTS = { v1: 8, v2: 13 } as const;
export interface CpmmSwapEvent {
  poolId: string;
  inputVaultBefore: bigint;
  outputVaultBefore: bigint;
  inputAmount: bigint;
  outputAmount: bigint;
  inputTransferFee: bigint;
  outputTransferFee: bigint;
  baseInput: boolean;
  inputMint?: string;
  outputMint?: string;
  tradeFee?: bigint;
  creatorFee?: bigint;
  creatorFeeOnInput?: boolean;
}

export const CLMM_SWAP: Layout = {
  name: 'amm_v3.SwapEvent',
  discriminator: DISC.raydiumSwap,
  required: 12,
  fields: [
    ...keys('poolState', 'sender', 'tokenAccount0', 'tokenAccount1'),
    ...u64('amount0', 'transferFee0', 'amount1', 'transferFee1'),
    ['zeroForOne', 'bool'],
    ['sqrtPriceX64', 'u128'],
    ['liquidity', 'u128'],
    ['tick', 'i32'],
  ],
};
export interface ClmmSwapEvent {
  poolState: string;
  sender: string;
  tokenAccount0: string;
  tokenAccount1: string;
  amount0: bigint;
  transferFee0: bigint;
  amount1: bigint;
  transferFee1: bigint;
  zeroForOne: boolean;
  sqrtPriceX64: bigint;
  liquidity: bigint;
  tick: number;
}

const DBC_HEAD: Field[] = [...keys('pool', 'config'), ['tradeDirection', 'u8'], ['hasReferral', 'bool']];
export const DBC_SWAP: Layout = {
  name: 'dbc.EvtSwap',
  discriminator: DISC.dbcSwap,
  required: 8,
  fields: [
    ...DBC_HEAD,
    ['params', { struct: u64('amountIn', 'minimumAmountOut') }],
    [
      'swapResult',
      {
        struct: [
          ...u64('actualInputAmount', 'outputAmount'),
          ['nextSqrtPrice', 'u128'],
          ...u64('tradingFee', 'protocolFee', 'referralFee'),
        ],
      },
    ],
    ['amountIn', 'u64'],
    ['currentTimestamp', 'u64'],
  ],
};
export const DBC_SWAP2: Layout = {
  name: 'dbc.EvtSwap2',
  discriminator: DISC.dbcSwap2,
  required: 9,
  fields: [
    ...DBC_HEAD,
    ['swapParameters', { struct: [...u64('amount0', 'amount1'), ['swapMode', 'u8']] }],
    [
      'swapResult',
      {
        struct: [
          ...u64('includedFeeInputAmount', 'excludedFeeInputAmount', 'amountLeft', 'outputAmount'),
          ['nextSqrtPrice', 'u128'],
          ...u64('tradingFee', 'protocolFee', 'referralFee'),
        ],
      },
    ],
    ...u64('quoteReserveAmount', 'migrationThreshold', 'currentTimestamp'),
  ],
};
interface DbcFees {
  nextSqrtPrice: bigint;
  tradingFee: bigint;
  protocolFee: bigint;
  referralFee: bigint;
}
export interface DbcSwapEvent {
  pool: string;
  config: string;
  /** 0 BaseToQuote (sell), 1 QuoteToBase (buy) */
  tradeDirection: number;
  hasReferral: boolean;
  params: { amountIn: bigint; minimumAmountOut: bigint };
  swapResult: DbcFees & { actualInputAmount: bigint; outputAmount: bigint };
  amountIn: bigint;
  currentTimestamp: bigint;
}
export interface DbcSwap2Event {
  pool: string;
  config: string;
  tradeDirection: number;
  hasReferral: boolean;
  swapParameters: { amount0: bigint; amount1: bigint; swapMode: number };
  swapResult: DbcFees & {
    includedFeeInputAmount: bigint;
    excludedFeeInputAmount: bigint;
    amountLeft: bigint;
    outputAmount: bigint;
  };
  quoteReserveAmount: bigint;
  migrationThreshold: bigint;
  currentTimestamp: bigint;
}

export const DBC_CURVE_COMPLETE: Layout = {
  name: 'dbc.EvtCurveComplete',
  discriminator: DISC.dbcCurveComplete,
  required: 4,
  fields: [...keys('pool', 'config'), ...u64('baseReserve', 'quoteReserve')],
};
export interface DbcCurveCompleteEvent {
  pool: string;
  config: string;
  baseReserve: bigint;
  quoteReserve: bigint;
}

/**
 * Meteora DAMM v2 (cp-amm) swap events, MeteoraAg/damm-v2 programs/cp-amm/src/event.rs. EvtSwap
 * alone up to release 0.1.4, EvtSwap and EvtSwap2 together in 0.1.5–0.1.6, EvtSwap2 alone since
 * 0.1.8. SwapResult2's fee fields were renamed in 0.2.0 (trading→claiming, partner→compounding)
 * with the same types and order.
 */
export const DAMM_V2_SWAP: Layout = {
  name: 'cp_amm.EvtSwap',
  discriminator: DISC.dammV2Swap,
  required: 7,
  fields: [
    ['pool', 'pubkey'],
    ['tradeDirection', 'u8'],
    ['hasReferral', 'bool'],
    ['params', { struct: u64('amountIn', 'minimumAmountOut') }],
    [
      'swapResult',
      {
        struct: [
          ['outputAmount', 'u64'],
          ['nextSqrtPrice', 'u128'],
          ...u64('lpFee', 'protocolFee', 'partnerFee', 'referralFee'),
        ],
      },
    ],
    ...u64('actualAmountIn', 'currentTimestamp'),
  ],
};
export const DAMM_V2_SWAP2: Layout = {
  name: 'cp_amm.EvtSwap2',
  discriminator: DISC.dammV2Swap2,
  required: 13,
  fields: [
    ['pool', 'pubkey'],
    ['tradeDirection', 'u8'],
    ['collectFeeMode', 'u8'],
    ['hasReferral', 'bool'],
    ['params', { struct: [...u64('amount0', 'amount1'), ['swapMode', 'u8']] }],
    [
      'swapResult',
      {
        struct: [
          ...u64('includedFeeInputAmount', 'excludedFeeInputAmount', 'amountLeft', 'outputAmount'),
          ['nextSqrtPrice', 'u128'],
          ...u64('tradingFee', 'protocolFee', 'partnerFee', 'referralFee'),
        ],
      },
    ],
    ...u64('includedTransferFeeAmountIn', 'includedTransferFeeAmountOut', 'excludedTransferFeeAmountOut'),
    ...u64('currentTimestamp', 'reserveAAmount', 'reserveBAmount'),
  ],
};
interface DammV2Head {
  pool: string;
  /** 0 AtoB (token A in, token B out), 1 BtoA. */
  tradeDirection: number;
  hasReferral: boolean;
}
export interface DammV2SwapEvent extends DammV2Head {
  params: { amountIn: bigint; minimumAmountOut: bigint };
  swapResult: {
    outputAmount: bigint;
    nextSqrtPrice: bigint;
    lpFee: bigint;
    protocolFee: bigint;
    partnerFee: bigint;
    referralFee: bigint;
  };
  /** Input after any token-2022 transfer fee: what the pool received. */
  actualAmountIn: bigint;
  currentTimestamp: bigint;
}
export interface DammV2Swap2Event extends DammV2Head {
  /** 0 BothToken (fee on the output), 1 OnlyB (fee in token B), 2 Compounding. */
  collectFeeMode: number;
  params: { amount0: bigint; amount1: bigint; swapMode: number };
  swapResult: {
    /** What the pool received (input after any transfer fee), trading fee included. */
    includedFeeInputAmount: bigint;
    excludedFeeInputAmount: bigint;
    amountLeft: bigint;
    /** What the pool paid out (fee already deducted when it is taken on the output). */
    outputAmount: bigint;
    nextSqrtPrice: bigint;
    tradingFee: bigint;
    protocolFee: bigint;
    partnerFee: bigint;
    referralFee: bigint;
  };
  includedTransferFeeAmountIn: bigint;
  includedTransferFeeAmountOut: bigint;
  excludedTransferFeeAmountOut: bigint;
  currentTimestamp: bigint;
  /** Post-swap pool reserves of token A and token B. */
  reserveAAmount: bigint;
  reserveBAmount: bigint;
}

/** LaunchLab PoolCreateEvent up to the curve's supply (every CurveParams variant starts with it). */
export const LAUNCHLAB_POOL_CREATE: Layout = {
  name: 'raydium_launchpad.PoolCreateEvent',
  discriminator: DISC.launchlabPoolCreate,
  required: 6,
  fields: [
    ...keys('poolState', 'creator', 'config'),
    [
      'baseMintParam',
      {
        struct: [
          ['decimals', 'u8'],
          ['name', 'string'],
          ['symbol', 'string'],
          ['uri', 'string'],
        ],
      },
    ],
    ['curveKind', 'u8'],
    ['supply', 'u64'],
  ],
};
export interface LaunchLabPoolCreateEvent {
  poolState: string;
  creator: string;
  config: string;
  baseMintParam: { decimals: number; name: string; symbol: string; uri: string };
  /** 0 Constant, 1 Fixed, 2 Linear */
  curveKind: number;
  supply: bigint;
}

export const PUMPSWAP_CREATE_POOL: Layout = {
  name: 'pump_amm.CreatePoolEvent',
  discriminator: DISC.pumpswapCreatePool,
  required: 16,
  fields: [
    ['timestamp', 'i64'],
    ['index', 'u16'],
    ...keys('creator', 'baseMint', 'quoteMint'),
    ['baseMintDecimals', 'u8'],
    ['quoteMintDecimals', 'u8'],
    ...u64(
      'baseAmountIn',
      'quoteAmountIn',
      'poolBaseAmount',
      'poolQuoteAmount',
      'minimumLiquidity',
      'initialLiquidity',
      'lpTokenAmountOut',
    ),
    ['poolBump', 'u8'],
    ...keys('pool', 'lpMint', 'userBaseTokenAccount', 'userQuoteTokenAccount', 'coinCreator'),
    ['isMayhemMode', 'bool'],
  ],
};
export interface PumpSwapCreatePoolEvent {
  timestamp: bigint;
  creator: string;
  baseMint: string;
  quoteMint: string;
  baseMintDecimals: number;
  quoteMintDecimals: number;
  pool: string;
}

/** Moonshot TradeEvent (IDL in carbon's moonshot decoder): amounts before fees, fees apart. */
export const MOONSHOT_TRADE: Layout = {
  name: 'moonshot.TradeEvent',
  discriminator: DISC.moonshotTrade,
  required: 9,
  fields: [
    ...u64('amount', 'collateralAmount', 'dexFee', 'helioFee', 'allocation'),
    ...keys('curve', 'costToken', 'sender'),
    ['tradeType', 'u8'],
    ['label', 'string'],
  ],
};
export interface MoonshotTradeEvent {
  amount: bigint;
  collateralAmount: bigint;
  dexFee: bigint;
  helioFee: bigint;
  allocation: bigint;
  curve: string;
  costToken: string;
  sender: string;
  /** 0 Buy, 1 Sell */
  tradeType: number;
  label?: string;
}

/** Instruction arguments read for creations that emit no event with the token's metadata. */
export const DBC_INITIALIZE_PARAMS: Layout = {
  name: 'dbc.InitializePoolParameters',
  discriminator: DISC_NONE,
  required: 3,
  fields: [
    ['name', 'string'],
    ['symbol', 'string'],
    ['uri', 'string'],
  ],
};
export const MOONSHOT_TOKEN_MINT_PARAMS: Layout = {
  name: 'moonshot.TokenMintParams',
  discriminator: DISC_NONE,
  required: 6,
  fields: [
    ['name', 'string'],
    ['symbol', 'string'],
    ['uri', 'string'],
    ['decimals', 'u8'],
    ['collateralCurrency', 'u8'],
    ['amount', 'u64'],
  ],
};
