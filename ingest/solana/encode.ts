// Encoders for pump.fun and PumpSwap: semantic inputs → getTransaction-shaped objects carrying
// the Borsh events exactly as the programs write them (market simulator, tests).
import { solanaAddress } from './address.ts';
import { encodeFields, type Record_ } from './borsh.ts';
import { emitEvent, type EmitMode } from './build.ts';
import {
  DEFAULT_PUBKEY,
  IX,
  PROGRAMS,
  PUMP_DECIMALS,
  PUMP_EVENT_AUTHORITY,
  PUMP_INITIAL_REAL_TOKEN_RESERVES,
  PUMP_TOTAL_SUPPLY,
  SYSTEM_PROGRAM,
  TOKEN_PROGRAM,
  WSOL_MINT,
} from './constants.ts';
import {
  ATA_PROGRAM,
  associatedTokenAddress,
  ceilFee,
  encodeCalls,
  u64le,
  type CallPart,
  type TxEnvelope,
} from './encode-common.ts';
import {
  PUMP_COMPLETE,
  PUMP_CREATE,
  PUMP_CREATE_LAYOUTS,
  PUMP_MIGRATION,
  PUMP_TRADE,
  PUMP_TRADE_LAYOUTS,
  PUMPSWAP_BUY,
  PUMPSWAP_BUY_LAYOUTS,
  PUMPSWAP_SELL,
  PUMPSWAP_SELL_LAYOUTS,
  type PumpCreateEvent,
  type PumpCreateLayout,
  type PumpMigrationEvent,
  type PumpSwapLayout,
  type PumpTradeEvent,
  type PumpTradeLayout,
} from './layouts.ts';
import { findProgramAddress, pumpBondingCurve } from './pda.ts';
import type { SolanaTransaction } from './transaction.ts';

const PUMP_GLOBAL = '4wTV1YmiEkRvAtNtsSGPtUrqRYQMe5SKy2uB4Jjaxnjf';
const PUMPSWAP_GLOBAL_CONFIG = 'ADyA8hdefvWN2dbGGWFotbzWxrAvLW83WG6QCVXvJKqw';
const asRecord = (value: object) => value as unknown as Record_;
/** Coins the curve never sells (206.9 M): they stay in its token account until migration. */
const UNSOLD_ON_CURVE = PUMP_TOTAL_SUPPLY - PUMP_INITIAL_REAL_TOKEN_RESERVES;

export type PumpTradeInput = Partial<PumpTradeEvent> &
  Pick<
    PumpTradeEvent,
    | 'mint'
    | 'user'
    | 'solAmount'
    | 'tokenAmount'
    | 'isBuy'
    | 'timestamp'
    | 'virtualSolReserves'
    | 'virtualTokenReserves'
    | 'realSolReserves'
    | 'realTokenReserves'
  > & {
    layout: PumpTradeLayout;
    /** Also emit CompleteEvent in this buy (the one that empties the curve). */
    complete?: boolean;
    /** The user's coin balance around the trade; default 0 → amount on a buy, amount → 0 on a sell. */
    userTokenBalance?: { pre: bigint | null; post: bigint | null };
    /** Decimals of a non-SOL quote mint (May-2026 USDC pairs); default 6. */
    quoteDecimals?: number;
  };

/** Every TradeEvent field, with the documented defaults for the ones the input leaves out. */
export function pumpTradeEvent(input: PumpTradeInput): PumpTradeEvent {
  const feeBasisPoints = input.feeBasisPoints ?? 95n;
  const creatorFeeBasisPoints = input.creatorFeeBasisPoints ?? 30n;
  return {
    feeRecipient: solanaAddress('pump:fee-recipient'),
    feeBasisPoints,
    fee: ceilFee(input.solAmount, feeBasisPoints),
    creator: solanaAddress(`pump:creator:${input.mint}`),
    creatorFeeBasisPoints,
    creatorFee: ceilFee(input.solAmount, creatorFeeBasisPoints),
    trackVolume: false,
    totalUnclaimedTokens: 0n,
    totalClaimedTokens: 0n,
    currentSolVolume: 0n,
    lastUpdateTimestamp: input.timestamp,
    ixName: input.isBuy ? 'buy' : 'sell',
    mayhemMode: false,
    cashbackFeeBasisPoints: 0n,
    cashback: 0n,
    buybackFeeBasisPoints: 0n,
    buybackFee: 0n,
    shareholders: [],
    quoteMint: DEFAULT_PUBKEY,
    quoteAmount: input.solAmount,
    virtualQuoteReserves: input.virtualSolReserves,
    realQuoteReserves: input.realSolReserves,
    ...input,
  };
}

export function pumpTradeEventBytes(input: PumpTradeInput): Buffer {
  return encodeFields(PUMP_TRADE, asRecord(pumpTradeEvent(input)), PUMP_TRADE_LAYOUTS[input.layout]);
}

function pumpCompleteBytes(input: {
  user: string;
  mint: string;
  bondingCurve?: string;
  timestamp: bigint;
  quoteMint?: string;
}): Buffer {
  const values = { bondingCurve: pumpBondingCurve(input.mint), quoteMint: DEFAULT_PUBKEY, ...input };
  return encodeFields(PUMP_COMPLETE, asRecord(values), input.quoteMint === undefined ? 4 : 5);
}

export function pumpTradeCall(input: PumpTradeInput, emit: EmitMode = 'both'): CallPart {
  const event = pumpTradeEvent(input);
  const bondingCurve = pumpBondingCurve(input.mint);
  const curveAta = associatedTokenAddress(bondingCurve, input.mint);
  const userAta = associatedTokenAddress(input.user, input.mint);
  const data = input.isBuy
    ? Buffer.concat([
        Buffer.from(IX.pumpBuy, 'hex'),
        u64le(input.tokenAmount, input.solAmount + event.fee! + event.creatorFee!),
        Uint8Array.of(0),
      ])
    : Buffer.concat([Buffer.from(IX.pumpSell, 'hex'), u64le(input.tokenAmount, 0n)]);
  const body: (string | CallPart['call'])[] = [
    `Program log: Instruction: ${input.isBuy ? 'Buy' : 'Sell'}`,
    ...emitEvent(PROGRAMS.pumpfun, pumpTradeEventBytes(input), emit),
  ];
  if (input.complete)
    body.push(
      ...emitEvent(
        PROGRAMS.pumpfun,
        pumpCompleteBytes({ user: input.user, mint: input.mint, timestamp: input.timestamp }),
        emit,
      ),
    );
  const userBalance =
    input.userTokenBalance ??
    (input.isBuy ? { pre: 0n, post: input.tokenAmount } : { pre: input.tokenAmount, post: 0n });
  const curveBefore = input.isBuy
    ? input.realTokenReserves + input.tokenAmount
    : input.realTokenReserves - input.tokenAmount;
  const balances = [
    { account: userAta, mint: input.mint, owner: input.user, decimals: PUMP_DECIMALS, ...userBalance },
    {
      account: curveAta,
      mint: input.mint,
      owner: bondingCurve,
      decimals: PUMP_DECIMALS,
      pre: curveBefore + UNSOLD_ON_CURVE,
      post: input.realTokenReserves + UNSOLD_ON_CURVE,
    },
  ];
  const quoteMint = event.quoteMint!;
  if (PUMP_TRADE_LAYOUTS[input.layout] >= 32 && quoteMint !== DEFAULT_PUBKEY && quoteMint !== WSOL_MINT) {
    balances.push({
      account: associatedTokenAddress(input.user, quoteMint),
      mint: quoteMint,
      owner: input.user,
      decimals: input.quoteDecimals ?? 6,
      pre: 0n,
      post: 0n,
    });
  }
  return {
    call: {
      programId: PROGRAMS.pumpfun,
      accounts: [
        PUMP_GLOBAL,
        event.feeRecipient!,
        input.mint,
        bondingCurve,
        curveAta,
        userAta,
        input.user,
        SYSTEM_PROGRAM,
        TOKEN_PROGRAM,
        event.creator!,
        PUMP_EVENT_AUTHORITY,
        PROGRAMS.pumpfun,
      ],
      data,
      body,
    },
    balances,
    feePayer: input.user,
  };
}

export function encodePumpTrade(input: PumpTradeInput & TxEnvelope): SolanaTransaction {
  return encodeCalls(input, [pumpTradeCall(input, input.emit ?? 'both')]);
}

export type PumpCreateInput = Partial<PumpCreateEvent> &
  Pick<PumpCreateEvent, 'name' | 'symbol' | 'uri' | 'mint' | 'user'> & {
    layout: PumpCreateLayout;
    timestamp: bigint;
  };

export function pumpCreateCall(input: PumpCreateInput, emit: EmitMode = 'both'): CallPart {
  const values: PumpCreateEvent = {
    bondingCurve: pumpBondingCurve(input.mint),
    creator: input.user,
    virtualTokenReserves: 1_073_000_000_000_000n,
    virtualSolReserves: 30_000_000_000n,
    realTokenReserves: PUMP_INITIAL_REAL_TOKEN_RESERVES,
    tokenTotalSupply: PUMP_TOTAL_SUPPLY,
    tokenProgram: TOKEN_PROGRAM,
    isMayhemMode: false,
    isCashbackEnabled: false,
    quoteMint: DEFAULT_PUBKEY,
    virtualQuoteReserves: 30_000_000_000n,
    ...input,
  };
  const event = encodeFields(PUMP_CREATE, asRecord(values), PUMP_CREATE_LAYOUTS[input.layout]);
  const args = encodeFields(
    {
      name: 'create',
      discriminator: '181ec828051c0777',
      required: 4,
      fields: [
        ['name', 'string'],
        ['symbol', 'string'],
        ['uri', 'string'],
        ['creator', 'pubkey'],
      ],
    },
    asRecord(values),
  );
  const curveAta = associatedTokenAddress(values.bondingCurve, input.mint);
  return {
    call: {
      programId: PROGRAMS.pumpfun,
      accounts: [
        input.mint,
        solanaAddress('pump:mint-authority'),
        values.bondingCurve,
        curveAta,
        PUMP_GLOBAL,
        input.user,
        SYSTEM_PROGRAM,
        TOKEN_PROGRAM,
        PUMP_EVENT_AUTHORITY,
        PROGRAMS.pumpfun,
      ],
      data: args,
      body: ['Program log: Instruction: Create', ...emitEvent(PROGRAMS.pumpfun, event, emit)],
    },
    balances: [
      {
        account: curveAta,
        mint: input.mint,
        owner: values.bondingCurve,
        decimals: PUMP_DECIMALS,
        pre: null,
        post: values.tokenTotalSupply!,
      },
    ],
    feePayer: input.user,
  };
}

export function encodePumpCreate(input: PumpCreateInput & TxEnvelope): SolanaTransaction {
  return encodeCalls(input, [pumpCreateCall(input, input.emit ?? 'both')]);
}

export interface PumpCompleteInput {
  user: string;
  mint: string;
  bondingCurve?: string;
  timestamp: bigint;
  quoteMint?: string;
}

/** CompleteEvent alone (it normally rides in the last buy: see PumpTradeInput.complete). */
export function encodePumpComplete(input: PumpCompleteInput & TxEnvelope): SolanaTransaction {
  const call = {
    programId: PROGRAMS.pumpfun,
    accounts: [
      PUMP_GLOBAL,
      input.mint,
      input.bondingCurve ?? pumpBondingCurve(input.mint),
      input.user,
      PUMP_EVENT_AUTHORITY,
      PROGRAMS.pumpfun,
    ],
    data: Buffer.from(IX.pumpBuy, 'hex'),
    body: emitEvent(PROGRAMS.pumpfun, pumpCompleteBytes(input), input.emit ?? 'both'),
  };
  return encodeCalls(input, [{ call, balances: [], feePayer: input.user }]);
}

export type PumpMigrationInput = Partial<PumpMigrationEvent> &
  Pick<PumpMigrationEvent, 'user' | 'mint' | 'timestamp' | 'pool'>;

export function encodePumpMigration(input: PumpMigrationInput & TxEnvelope): SolanaTransaction {
  const values: PumpMigrationEvent = {
    mintAmount: UNSOLD_ON_CURVE,
    solAmount: 84_990_359_057n,
    poolMigrationFee: 15_000_001n,
    bondingCurve: pumpBondingCurve(input.mint),
    ...input,
  };
  const event = encodeFields(PUMP_MIGRATION, asRecord(values), input.quoteMint === undefined ? 8 : 9);
  const call = {
    programId: PROGRAMS.pumpfun,
    accounts: [
      PUMP_GLOBAL,
      solanaAddress('pump:withdraw-authority'),
      input.mint,
      values.bondingCurve,
      input.user,
      SYSTEM_PROGRAM,
      TOKEN_PROGRAM,
      PROGRAMS.pumpswap,
      input.pool,
      PUMP_EVENT_AUTHORITY,
      PROGRAMS.pumpfun,
    ],
    data: Buffer.from(IX.pumpMigrate, 'hex'),
    body: ['Program log: Instruction: Migrate', ...emitEvent(PROGRAMS.pumpfun, event, input.emit ?? 'both')],
  };
  return encodeCalls(input, [{ call, balances: [], feePayer: input.user }]);
}

export interface PumpSwapTradeInput {
  layout: PumpSwapLayout;
  pool: string;
  user: string;
  baseMint: string;
  quoteMint?: string;
  baseDecimals?: number;
  quoteDecimals?: number;
  timestamp: bigint;
  /** Base moved (out of the pool on a buy, into it on a sell) and quote moved (in on a buy, out on a sell, before fees). */
  baseAmount: bigint;
  quoteAmount: bigint;
  /** PRE-trade pool reserves, as the event carries them. */
  poolBaseTokenReserves: bigint;
  poolQuoteTokenReserves: bigint;
  lpFeeBasisPoints?: bigint;
  protocolFeeBasisPoints?: bigint;
  coinCreatorFeeBasisPoints?: bigint;
  coinCreator?: string;
  /** The user's base balance after the trade (default: the amount on a buy, 0 on a sell). */
  userBaseBalance?: bigint;
}

function pumpSwapCall(input: PumpSwapTradeInput, isBuy: boolean, emit: EmitMode): CallPart {
  const quoteMint = input.quoteMint ?? WSOL_MINT;
  const lpFeeBasisPoints = input.lpFeeBasisPoints ?? 20n;
  const protocolFeeBasisPoints = input.protocolFeeBasisPoints ?? 5n;
  const coinCreatorFeeBasisPoints = input.coinCreatorFeeBasisPoints ?? 5n;
  const lpFee = ceilFee(input.quoteAmount, lpFeeBasisPoints);
  const protocolFee = ceilFee(input.quoteAmount, protocolFeeBasisPoints);
  const coinCreatorFee = ceilFee(input.quoteAmount, coinCreatorFeeBasisPoints);
  const userBaseAta = associatedTokenAddress(input.user, input.baseMint);
  const userQuoteAta = associatedTokenAddress(input.user, quoteMint);
  const poolBaseAta = associatedTokenAddress(input.pool, input.baseMint);
  const poolQuoteAta = associatedTokenAddress(input.pool, quoteMint);
  const protocolFeeRecipient = solanaAddress('pumpswap:protocol-fee-recipient');
  const feeRecipientAta = associatedTokenAddress(protocolFeeRecipient, quoteMint);
  const userTotal = isBuy
    ? input.quoteAmount + lpFee + protocolFee + coinCreatorFee
    : input.quoteAmount - lpFee - protocolFee - coinCreatorFee;
  const common = {
    timestamp: input.timestamp,
    userBaseTokenReserves: 0n,
    userQuoteTokenReserves: 0n,
    poolBaseTokenReserves: input.poolBaseTokenReserves,
    poolQuoteTokenReserves: input.poolQuoteTokenReserves,
    lpFeeBasisPoints,
    lpFee,
    protocolFeeBasisPoints,
    protocolFee,
    pool: input.pool,
    user: input.user,
    userBaseTokenAccount: userBaseAta,
    userQuoteTokenAccount: userQuoteAta,
    protocolFeeRecipient,
    protocolFeeRecipientTokenAccount: feeRecipientAta,
    coinCreator: input.coinCreator ?? solanaAddress(`pump:creator:${input.baseMint}`),
    coinCreatorFeeBasisPoints,
    coinCreatorFee,
    cashbackFeeBasisPoints: 0n,
    cashback: 0n,
    buybackFeeBasisPoints: 0n,
    buybackFee: 0n,
  };
  const event = isBuy
    ? encodeFields(
        PUMPSWAP_BUY,
        asRecord({
          ...common,
          baseAmountOut: input.baseAmount,
          maxQuoteAmountIn: userTotal,
          quoteAmountIn: input.quoteAmount,
          quoteAmountInWithLpFee: input.quoteAmount + lpFee,
          userQuoteAmountIn: userTotal,
          trackVolume: false,
          totalUnclaimedTokens: 0n,
          totalClaimedTokens: 0n,
          currentSolVolume: 0n,
          lastUpdateTimestamp: input.timestamp,
          minBaseAmountOut: input.baseAmount,
          ixName: 'buy',
        }),
        PUMPSWAP_BUY_LAYOUTS[input.layout],
      )
    : encodeFields(
        PUMPSWAP_SELL,
        asRecord({
          ...common,
          baseAmountIn: input.baseAmount,
          minQuoteAmountOut: userTotal,
          quoteAmountOut: input.quoteAmount,
          quoteAmountOutWithoutLpFee: input.quoteAmount - lpFee,
          userQuoteAmountOut: userTotal,
        }),
        PUMPSWAP_SELL_LAYOUTS[input.layout],
      );
  const postBase = isBuy
    ? input.poolBaseTokenReserves - input.baseAmount
    : input.poolBaseTokenReserves + input.baseAmount;
  const postQuote = isBuy
    ? input.poolQuoteTokenReserves + input.quoteAmount + lpFee
    : input.poolQuoteTokenReserves - input.quoteAmount + lpFee;
  const baseDecimals = input.baseDecimals ?? PUMP_DECIMALS;
  const quoteDecimals = input.quoteDecimals ?? 9;
  const eventAuthority = findProgramAddress(['__event_authority'], PROGRAMS.pumpswap);
  return {
    call: {
      programId: PROGRAMS.pumpswap,
      accounts: [
        input.pool,
        input.user,
        PUMPSWAP_GLOBAL_CONFIG,
        input.baseMint,
        quoteMint,
        userBaseAta,
        userQuoteAta,
        poolBaseAta,
        poolQuoteAta,
        protocolFeeRecipient,
        feeRecipientAta,
        TOKEN_PROGRAM,
        TOKEN_PROGRAM,
        SYSTEM_PROGRAM,
        ATA_PROGRAM,
        eventAuthority,
        PROGRAMS.pumpswap,
      ],
      data: Buffer.concat([
        Buffer.from(isBuy ? IX.pumpswapBuy : IX.pumpswapSell, 'hex'),
        u64le(input.baseAmount, userTotal),
      ]),
      body: [`Program log: Instruction: ${isBuy ? 'Buy' : 'Sell'}`, ...emitEvent(PROGRAMS.pumpswap, event, emit)],
    },
    balances: [
      {
        account: userBaseAta,
        mint: input.baseMint,
        owner: input.user,
        decimals: baseDecimals,
        pre: isBuy ? 0n : input.baseAmount,
        post: input.userBaseBalance ?? (isBuy ? input.baseAmount : 0n),
      },
      {
        account: userQuoteAta,
        mint: quoteMint,
        owner: input.user,
        decimals: quoteDecimals,
        pre: isBuy ? userTotal : 0n,
        post: isBuy ? 0n : userTotal,
      },
      {
        account: poolBaseAta,
        mint: input.baseMint,
        owner: input.pool,
        decimals: baseDecimals,
        pre: input.poolBaseTokenReserves,
        post: postBase,
      },
      {
        account: poolQuoteAta,
        mint: quoteMint,
        owner: input.pool,
        decimals: quoteDecimals,
        pre: input.poolQuoteTokenReserves,
        post: postQuote,
      },
    ],
    feePayer: input.user,
  };
}

export function pumpSwapBuyCall(input: PumpSwapTradeInput, emit: EmitMode = 'cpi'): CallPart {
  return pumpSwapCall(input, true, emit);
}

export function pumpSwapSellCall(input: PumpSwapTradeInput, emit: EmitMode = 'cpi'): CallPart {
  return pumpSwapCall(input, false, emit);
}

export function encodePumpSwapBuy(input: PumpSwapTradeInput & TxEnvelope): SolanaTransaction {
  return encodeCalls(input, [pumpSwapBuyCall(input, input.emit)]);
}

export function encodePumpSwapSell(input: PumpSwapTradeInput & TxEnvelope): SolanaTransaction {
  return encodeCalls(input, [pumpSwapSellCall(input, input.emit)]);
}
