// Encoders for Raydium (LaunchLab, AMM v4, CPMM, CLMM), Meteora DBC and DAMM v2 transactions.
import { solanaAddress } from './address.ts';
import { base58Decode } from './base58.ts';
import { encodeFields, type Record_ } from './borsh.ts';
import { emitEvent, type EmitMode } from './build.ts';
import { PROGRAMS, SYSTEM_PROGRAM, TOKEN_2022_PROGRAM, TOKEN_PROGRAM, WSOL_MINT } from './constants.ts';
import { METAPLEX_METADATA_PROGRAM as METADATA_PROGRAM } from './mint-account.ts';
import {
  anchorIx,
  associatedTokenAddress,
  encodeCalls,
  u64le,
  type CallPart,
  type TxEnvelope,
} from './encode-common.ts';
import {
  CLMM_SWAP,
  CPMM_SWAP,
  CPMM_SWAP_LAYOUTS,
  DAMM_V2_SWAP,
  DAMM_V2_SWAP2,
  DBC_CURVE_COMPLETE,
  DBC_INITIALIZE_PARAMS,
  DBC_SWAP,
  DBC_SWAP2,
  LAUNCHLAB_POOL_CREATE,
  LAUNCHLAB_TRADE,
  type ClmmSwapEvent,
  type CpmmSwapEvent,
  type LaunchLabTradeEvent,
} from './layouts.ts';
import { findProgramAddress } from './pda.ts';
import { encodeRayLog } from './raylog.ts';
import type { SolanaTransaction } from './transaction.ts';

const asRecord = (value: object) => value as unknown as Record_;
const authorityOf = (program: string) => findProgramAddress(['__event_authority'], program);

export type LaunchLabTradeInput = Omit<LaunchLabTradeEvent, 'tradeDirection' | 'exactIn'> & {
  side: 'buy' | 'sell';
  exactIn?: boolean;
  payer: string;
  baseMint: string;
  quoteMint?: string;
  baseDecimals?: number;
  /** The payer's base balance after the trade (default: the amount bought, 0 after a sell). */
  userBaseBalance?: bigint;
};

export function launchLabTradeCall(input: LaunchLabTradeInput, emit: EmitMode = 'cpi'): CallPart {
  const quoteMint = input.quoteMint ?? WSOL_MINT;
  const isBuy = input.side === 'buy';
  const event = encodeFields(
    LAUNCHLAB_TRADE,
    asRecord({ ...input, tradeDirection: isBuy ? 0 : 1, exactIn: input.exactIn ?? true }),
  );
  const userBase = associatedTokenAddress(input.payer, input.baseMint);
  const userQuote = associatedTokenAddress(input.payer, quoteMint);
  const baseVault = solanaAddress(`launchlab:base-vault:${input.poolState}`);
  const quoteVault = solanaAddress(`launchlab:quote-vault:${input.poolState}`);
  const baseDecimals = input.baseDecimals ?? 6;
  const tokens = isBuy ? input.amountOut : input.amountIn;
  return {
    call: {
      programId: PROGRAMS.launchlab,
      accounts: [
        input.payer,
        solanaAddress('launchlab:authority'),
        solanaAddress('launchlab:global-config'),
        solanaAddress('launchlab:platform-config'),
        input.poolState,
        userBase,
        userQuote,
        baseVault,
        quoteVault,
        input.baseMint,
        quoteMint,
        TOKEN_PROGRAM,
        TOKEN_PROGRAM,
        authorityOf(PROGRAMS.launchlab),
        PROGRAMS.launchlab,
      ],
      data: Buffer.concat([anchorIx(isBuy ? 'buy_exact_in' : 'sell_exact_in'), u64le(input.amountIn, 0n, 0n)]),
      body: [
        `Program log: Instruction: ${isBuy ? 'BuyExactIn' : 'SellExactIn'}`,
        ...emitEvent(PROGRAMS.launchlab, event, emit),
      ],
    },
    balances: [
      {
        account: userBase,
        mint: input.baseMint,
        owner: input.payer,
        decimals: baseDecimals,
        pre: isBuy ? 0n : tokens,
        post: input.userBaseBalance ?? (isBuy ? tokens : 0n),
      },
      {
        account: baseVault,
        mint: input.baseMint,
        owner: input.poolState,
        decimals: baseDecimals,
        pre: input.totalBaseSell - input.realBaseBefore,
        post: input.totalBaseSell - input.realBaseAfter,
      },
    ],
    feePayer: input.payer,
  };
}

export function encodeLaunchLabTrade(input: LaunchLabTradeInput & TxEnvelope): SolanaTransaction {
  return encodeCalls(input, [launchLabTradeCall(input, input.emit)]);
}

interface DbcFeesInput {
  tradingFee: bigint;
  protocolFee: bigint;
  referralFee?: bigint;
  nextSqrtPrice?: bigint;
}
export type MeteoraDbcSwapInput = DbcFeesInput & {
  version: 1 | 2;
  pool: string;
  config?: string;
  payer: string;
  baseMint: string;
  quoteMint?: string;
  baseDecimals?: number;
  side: 'buy' | 'sell';
  /** What the user paid in (fees included) and got out. */
  amountIn: bigint;
  amountOut: bigint;
  currentTimestamp: bigint;
  /** EvtSwap2 only. */
  quoteReserveAmount?: bigint;
  migrationThreshold?: bigint;
  /** Also emit EvtCurveComplete (the swap that reached the threshold). */
  curveComplete?: { baseReserve: bigint; quoteReserve: bigint };
  userBaseBalance?: bigint;
};

export function meteoraDbcSwapCall(input: MeteoraDbcSwapInput, emit: EmitMode = 'cpi'): CallPart {
  const quoteMint = input.quoteMint ?? WSOL_MINT;
  const config = input.config ?? solanaAddress(`dbc:config:${input.pool}`);
  const isBuy = input.side === 'buy';
  const fees = {
    nextSqrtPrice: input.nextSqrtPrice ?? 1n << 64n,
    tradingFee: input.tradingFee,
    protocolFee: input.protocolFee,
    referralFee: input.referralFee ?? 0n,
  };
  const head = { pool: input.pool, config, tradeDirection: isBuy ? 1 : 0, hasReferral: (input.referralFee ?? 0n) > 0n };
  const event =
    input.version === 1
      ? encodeFields(
          DBC_SWAP,
          asRecord({
            ...head,
            params: { amountIn: input.amountIn, minimumAmountOut: 0n },
            swapResult: { actualInputAmount: input.amountIn, outputAmount: input.amountOut, ...fees },
            amountIn: input.amountIn,
            currentTimestamp: input.currentTimestamp,
          }),
        )
      : encodeFields(
          DBC_SWAP2,
          asRecord({
            ...head,
            swapParameters: { amount0: input.amountIn, amount1: 0n, swapMode: 0 },
            swapResult: {
              includedFeeInputAmount: input.amountIn,
              // Fees in the quote mint (the usual config): off a buy's input, off a sell's output.
              excludedFeeInputAmount: isBuy
                ? input.amountIn - input.tradingFee - input.protocolFee - fees.referralFee
                : input.amountIn,
              amountLeft: 0n,
              outputAmount: input.amountOut,
              ...fees,
            },
            quoteReserveAmount: input.quoteReserveAmount ?? 0n,
            migrationThreshold: input.migrationThreshold ?? 0n,
            currentTimestamp: input.currentTimestamp,
          }),
        );
  const body = ['Program log: Instruction: Swap', ...emitEvent(PROGRAMS.meteoraDbc, event, emit)];
  if (input.curveComplete)
    body.push(
      ...emitEvent(
        PROGRAMS.meteoraDbc,
        encodeFields(DBC_CURVE_COMPLETE, asRecord({ pool: input.pool, config, ...input.curveComplete })),
        emit,
      ),
    );
  const userBase = associatedTokenAddress(input.payer, input.baseMint);
  const userQuote = associatedTokenAddress(input.payer, quoteMint);
  const tokens = isBuy ? input.amountOut : input.amountIn;
  return {
    call: {
      programId: PROGRAMS.meteoraDbc,
      accounts: [
        solanaAddress('dbc:pool-authority'),
        config,
        input.pool,
        isBuy ? userQuote : userBase,
        isBuy ? userBase : userQuote,
        solanaAddress(`dbc:base-vault:${input.pool}`),
        solanaAddress(`dbc:quote-vault:${input.pool}`),
        input.baseMint,
        quoteMint,
        input.payer,
        TOKEN_PROGRAM,
        TOKEN_PROGRAM,
        PROGRAMS.meteoraDbc,
        authorityOf(PROGRAMS.meteoraDbc),
        PROGRAMS.meteoraDbc,
      ],
      data: Buffer.concat([anchorIx('swap'), u64le(input.amountIn, 0n)]),
      body,
    },
    balances: [
      {
        account: userBase,
        mint: input.baseMint,
        owner: input.payer,
        decimals: input.baseDecimals ?? 6,
        pre: isBuy ? 0n : tokens,
        post: input.userBaseBalance ?? (isBuy ? tokens : 0n),
      },
    ],
    feePayer: input.payer,
  };
}

export function encodeMeteoraDbcSwap(input: MeteoraDbcSwapInput & TxEnvelope): SolanaTransaction {
  return encodeCalls(input, [meteoraDbcSwapCall(input, input.emit)]);
}

export interface RaydiumAmmV4SwapInput {
  amm: string;
  owner: string;
  coinMint: string;
  pcMint: string;
  coinDecimals: number;
  pcDecimals: number;
  kind: 'swapBaseIn' | 'swapBaseOut';
  direction: 'pcToCoin' | 'coinToPc';
  amountIn: bigint;
  amountOut: bigint;
  /** PRE-swap vault reserves (as ray_log reports them). */
  poolCoin: bigint;
  poolPc: bigint;
  /** Instruction form: 18 (with target orders), 17, or the 8-account v2. */
  accountCount?: 18 | 17 | 8;
}

export function raydiumAmmV4SwapCall(input: RaydiumAmmV4SwapInput): CallPart {
  const pcToCoin = input.direction === 'pcToCoin';
  const coinVault = solanaAddress(`ray:coin-vault:${input.amm}`);
  const pcVault = solanaAddress(`ray:pc-vault:${input.amm}`);
  const userCoin = associatedTokenAddress(input.owner, input.coinMint);
  const userPc = associatedTokenAddress(input.owner, input.pcMint);
  const [source, dest] = pcToCoin ? [userPc, userCoin] : [userCoin, userPc];
  const authority = '5Q544fKrFoe6tsEbD7S8EmxGTJYAKtTVhAW5Q5pge4j1';
  const serum = Array.from({ length: 8 }, (_, i) => solanaAddress(`ray:serum:${input.amm}:${i}`));
  const form = input.accountCount ?? 18;
  const accounts =
    form === 8
      ? [TOKEN_PROGRAM, input.amm, authority, coinVault, pcVault, source, dest, input.owner]
      : [
          TOKEN_PROGRAM,
          input.amm,
          authority,
          solanaAddress(`ray:open-orders:${input.amm}`),
          ...(form === 18 ? [solanaAddress(`ray:target-orders:${input.amm}`)] : []),
          coinVault,
          pcVault,
          ...serum,
          source,
          dest,
          input.owner,
        ];
  const log = encodeRayLog({
    kind: input.kind,
    direction: pcToCoin ? 1n : 2n,
    userSource: input.amountIn * 10n,
    poolCoin: input.poolCoin,
    poolPc: input.poolPc,
    amountIn: input.amountIn,
    amountOut: input.amountOut,
    limit: input.kind === 'swapBaseIn' ? input.amountOut : input.amountIn,
  });
  const [coinDelta, pcDelta] = pcToCoin ? [-input.amountOut, input.amountIn] : [input.amountIn, -input.amountOut];
  return {
    call: {
      programId: PROGRAMS.raydiumAmmV4,
      accounts,
      data: Buffer.concat([
        Uint8Array.of(input.kind === 'swapBaseIn' ? 9 : 11),
        u64le(input.amountIn, input.amountOut),
      ]),
      body: [`Program log: ray_log: ${log}`],
    },
    balances: [
      {
        account: coinVault,
        mint: input.coinMint,
        owner: authority,
        decimals: input.coinDecimals,
        pre: input.poolCoin,
        post: input.poolCoin + coinDelta,
      },
      {
        account: pcVault,
        mint: input.pcMint,
        owner: authority,
        decimals: input.pcDecimals,
        pre: input.poolPc,
        post: input.poolPc + pcDelta,
      },
      {
        account: userCoin,
        mint: input.coinMint,
        owner: input.owner,
        decimals: input.coinDecimals,
        pre: pcToCoin ? 0n : input.amountIn,
        post: pcToCoin ? input.amountOut : 0n,
      },
    ],
    feePayer: input.owner,
  };
}

export function encodeRaydiumAmmV4Swap(input: RaydiumAmmV4SwapInput & TxEnvelope): SolanaTransaction {
  return encodeCalls(input, [raydiumAmmV4SwapCall(input)]);
}

export type RaydiumCpmmSwapInput = Partial<CpmmSwapEvent> &
  Pick<CpmmSwapEvent, 'poolId' | 'inputVaultBefore' | 'outputVaultBefore' | 'inputAmount' | 'outputAmount'> & {
    layout: keyof typeof CPMM_SWAP_LAYOUTS;
    payer: string;
    inputMint: string;
    outputMint: string;
    inputDecimals: number;
    outputDecimals: number;
  };

export function raydiumCpmmSwapCall(input: RaydiumCpmmSwapInput, emit: EmitMode = 'cpi'): CallPart {
  const values: CpmmSwapEvent = {
    inputTransferFee: 0n,
    outputTransferFee: 0n,
    baseInput: true,
    tradeFee: 0n,
    creatorFee: 0n,
    creatorFeeOnInput: true,
    ...input,
  };
  const event = encodeFields(CPMM_SWAP, asRecord(values), CPMM_SWAP_LAYOUTS[input.layout]);
  const userIn = associatedTokenAddress(input.payer, input.inputMint);
  const userOut = associatedTokenAddress(input.payer, input.outputMint);
  return {
    call: {
      programId: PROGRAMS.raydiumCpmm,
      accounts: [
        input.payer,
        solanaAddress('cpmm:authority'),
        solanaAddress('cpmm:amm-config'),
        input.poolId,
        userIn,
        userOut,
        solanaAddress(`cpmm:vault:${input.poolId}:${input.inputMint}`),
        solanaAddress(`cpmm:vault:${input.poolId}:${input.outputMint}`),
        TOKEN_PROGRAM,
        TOKEN_PROGRAM,
        input.inputMint,
        input.outputMint,
        solanaAddress(`cpmm:observation:${input.poolId}`),
      ],
      data: Buffer.concat([anchorIx('swap_base_input'), u64le(input.inputAmount, 0n)]),
      body: ['Program log: Instruction: SwapBaseInput', ...emitEvent(PROGRAMS.raydiumCpmm, event, emit)],
    },
    balances: [
      {
        account: userIn,
        mint: input.inputMint,
        owner: input.payer,
        decimals: input.inputDecimals,
        pre: input.inputAmount,
        post: 0n,
      },
      {
        account: userOut,
        mint: input.outputMint,
        owner: input.payer,
        decimals: input.outputDecimals,
        pre: 0n,
        post: input.outputAmount,
      },
    ],
    feePayer: input.payer,
  };
}

export function encodeRaydiumCpmmSwap(input: RaydiumCpmmSwapInput & TxEnvelope): SolanaTransaction {
  return encodeCalls(input, [raydiumCpmmSwapCall(input, input.emit)]);
}

export type RaydiumClmmSwapInput = Partial<ClmmSwapEvent> &
  Pick<ClmmSwapEvent, 'poolState' | 'sender' | 'amount0' | 'amount1' | 'zeroForOne'> & {
    mint0: string;
    mint1: string;
    decimals0: number;
    decimals1: number;
  };

export function raydiumClmmSwapCall(input: RaydiumClmmSwapInput, emit: EmitMode = 'log'): CallPart {
  const account0 = associatedTokenAddress(input.sender, input.mint0);
  const account1 = associatedTokenAddress(input.sender, input.mint1);
  const values: ClmmSwapEvent = {
    tokenAccount0: account0,
    tokenAccount1: account1,
    transferFee0: 0n,
    transferFee1: 0n,
    sqrtPriceX64: 1n << 64n,
    liquidity: 1_000_000_000n,
    tick: 0,
    ...input,
  };
  const event = encodeFields(CLMM_SWAP, asRecord(values));
  const [inMint, outMint, inAccount, outAccount] = input.zeroForOne
    ? [input.mint0, input.mint1, account0, account1]
    : [input.mint1, input.mint0, account1, account0];
  const vault = (mint: string) => solanaAddress(`clmm:vault:${input.poolState}:${mint}`);
  const [in0, in1] = input.zeroForOne ? [input.amount0, 0n] : [0n, input.amount1];
  return {
    call: {
      programId: PROGRAMS.raydiumClmm,
      accounts: [
        input.sender,
        solanaAddress('clmm:amm-config'),
        input.poolState,
        inAccount,
        outAccount,
        vault(inMint),
        vault(outMint),
        solanaAddress(`clmm:observation:${input.poolState}`),
        TOKEN_PROGRAM,
        TOKEN_2022_PROGRAM,
        solanaAddress('memo'),
        inMint,
        outMint,
      ],
      data: Buffer.concat([anchorIx('swap_v2'), u64le(input.zeroForOne ? input.amount0 : input.amount1, 0n)]),
      body: ['Program log: Instruction: SwapV2', ...emitEvent(PROGRAMS.raydiumClmm, event, emit)],
    },
    balances: [
      {
        account: account0,
        mint: input.mint0,
        owner: input.sender,
        decimals: input.decimals0,
        pre: in0,
        post: input.zeroForOne ? 0n : input.amount0,
      },
      {
        account: account1,
        mint: input.mint1,
        owner: input.sender,
        decimals: input.decimals1,
        pre: in1,
        post: input.zeroForOne ? input.amount1 : 0n,
      },
    ],
    feePayer: input.sender,
  };
}

export function encodeRaydiumClmmSwap(input: RaydiumClmmSwapInput & TxEnvelope): SolanaTransaction {
  return encodeCalls(input, [raydiumClmmSwapCall(input, input.emit)]);
}

const filler = (tag: string, n: number) => Array.from({ length: n }, (_, i) => solanaAddress(`${tag}:${i}`));

export interface LaunchLabCreateInput {
  poolState: string;
  creator: string;
  baseMint: string;
  quoteMint?: string;
  name: string;
  symbol: string;
  uri: string;
  decimals: number;
  supply: bigint;
  /** Base tokens the curve sells (the rest is kept for the migration). */
  totalBaseSell: bigint;
  totalQuoteFundRaising: bigint;
}

/**
 * LaunchLab `initialize` (payer, creator, global_config, platform_config, authority, pool_state,
 * base_mint, quote_mint, base_vault, quote_vault, …) emitting PoolCreateEvent; the whole supply is
 * minted into the base vault (owned by the pool state, as the trade encoder has it).
 */
export function launchLabCreateCall(input: LaunchLabCreateInput, emit: EmitMode = 'cpi'): CallPart {
  const quoteMint = input.quoteMint ?? WSOL_MINT;
  const baseMintParam = { decimals: input.decimals, name: input.name, symbol: input.symbol, uri: input.uri };
  const event = encodeFields(
    LAUNCHLAB_POOL_CREATE,
    asRecord({
      poolState: input.poolState,
      creator: input.creator,
      config: solanaAddress('launchlab:global-config'),
      baseMintParam,
      curveKind: 0,
      supply: input.supply,
    }),
  );
  const args = Buffer.concat([
    encodeMintParams(baseMintParam),
    // CurveParams::Constant { supply, total_base_sell, total_quote_fund_raising, migrate_type: cpswap }
    Buffer.from([0]),
    u64le(input.supply, input.totalBaseSell, input.totalQuoteFundRaising),
    Buffer.from([1]),
    // VestingParams: nothing locked
    u64le(0n, 0n, 0n),
  ]);
  const baseVault = solanaAddress(`launchlab:base-vault:${input.poolState}`);
  return {
    call: {
      programId: PROGRAMS.launchlab,
      accounts: [
        input.creator,
        input.creator,
        solanaAddress('launchlab:global-config'),
        solanaAddress('launchlab:platform-config'),
        solanaAddress('launchlab:authority'),
        input.poolState,
        input.baseMint,
        quoteMint,
        baseVault,
        solanaAddress(`launchlab:quote-vault:${input.poolState}`),
        solanaAddress(`launchlab:metadata:${input.baseMint}`),
        TOKEN_PROGRAM,
        TOKEN_PROGRAM,
        METADATA_PROGRAM,
        SYSTEM_PROGRAM,
        'SysvarRent111111111111111111111111111111111',
        authorityOf(PROGRAMS.launchlab),
        PROGRAMS.launchlab,
      ],
      data: Buffer.concat([anchorIx('initialize'), args]),
      body: ['Program log: Instruction: Initialize', ...emitEvent(PROGRAMS.launchlab, event, emit)],
    },
    balances: [
      {
        account: baseVault,
        mint: input.baseMint,
        owner: input.poolState,
        decimals: input.decimals,
        pre: null,
        post: input.supply,
      },
    ],
    feePayer: input.creator,
  };
}

function encodeMintParams(params: { decimals: number; name: string; symbol: string; uri: string }): Buffer {
  const text = (value: string) => {
    const bytes = Buffer.from(value, 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32LE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  return Buffer.concat([Buffer.from([params.decimals]), text(params.name), text(params.symbol), text(params.uri)]);
}

/**
 * LaunchLab `migrate_to_cpswap` (no event): payer, base_mint, quote_mint, platform_config,
 * cpswap_program, cpswap_pool (5), cpswap_authority, cpswap_lp_mint, cpswap vaults, config,
 * create-pool fee, observation, lock program/authority/vault, authority, pool_state (17), ….
 */
export function launchLabMigrateToCpswapCall(input: {
  payer: string;
  poolState: string;
  baseMint: string;
  quoteMint?: string;
  cpswapPool: string;
}): CallPart {
  const quoteMint = input.quoteMint ?? WSOL_MINT;
  return {
    call: {
      programId: PROGRAMS.launchlab,
      accounts: [
        input.payer,
        input.baseMint,
        quoteMint,
        solanaAddress('launchlab:platform-config'),
        PROGRAMS.raydiumCpmm,
        input.cpswapPool,
        ...filler(`launchlab:cpswap:${input.cpswapPool}`, 10),
        solanaAddress('launchlab:authority'),
        input.poolState,
        solanaAddress('launchlab:global-config'),
        solanaAddress(`launchlab:base-vault:${input.poolState}`),
        solanaAddress(`launchlab:quote-vault:${input.poolState}`),
        TOKEN_PROGRAM,
        TOKEN_PROGRAM,
        SYSTEM_PROGRAM,
      ],
      data: anchorIx('migrate_to_cpswap'),
      body: ['Program log: Instruction: MigrateToCpswap'],
    },
    balances: [],
    feePayer: input.payer,
  };
}

export interface MeteoraDbcCreateInput {
  pool: string;
  creator: string;
  baseMint: string;
  quoteMint?: string;
  name: string;
  symbol: string;
  uri: string;
  decimals: number;
  supply: bigint;
}

/**
 * Meteora DBC `initialize_virtual_pool_with_spl_token`: config, pool_authority, creator,
 * base_mint, quote_mint, pool, base_vault, quote_vault, …; args name, symbol, uri. The supply is
 * minted into the base vault (owned by the pool here, as the simulator's venues report it).
 */
export function meteoraDbcCreateCall(input: MeteoraDbcCreateInput): CallPart {
  const quoteMint = input.quoteMint ?? WSOL_MINT;
  const baseVault = solanaAddress(`dbc:base-vault:${input.pool}`);
  return {
    call: {
      programId: PROGRAMS.meteoraDbc,
      accounts: [
        solanaAddress(`dbc:config:${input.pool}`),
        solanaAddress('dbc:pool-authority'),
        input.creator,
        input.baseMint,
        quoteMint,
        input.pool,
        baseVault,
        solanaAddress(`dbc:quote-vault:${input.pool}`),
        solanaAddress(`dbc:metadata:${input.baseMint}`),
        METADATA_PROGRAM,
        input.creator,
        TOKEN_PROGRAM,
        TOKEN_PROGRAM,
        SYSTEM_PROGRAM,
        authorityOf(PROGRAMS.meteoraDbc),
        PROGRAMS.meteoraDbc,
      ],
      data: Buffer.concat([
        anchorIx('initialize_virtual_pool_with_spl_token'),
        encodeFields(DBC_INITIALIZE_PARAMS, asRecord({ name: input.name, symbol: input.symbol, uri: input.uri })),
      ]),
      body: ['Program log: Instruction: InitializeVirtualPoolWithSplToken'],
    },
    balances: [
      {
        account: baseVault,
        mint: input.baseMint,
        owner: input.pool,
        decimals: input.decimals,
        pre: null,
        post: input.supply,
      },
    ],
    feePayer: input.creator,
  };
}

/** DAMM v2's pool authority, one PDA for every pool (const_pda::pool_authority). */
const DAMM_V2_POOL_AUTHORITY = findProgramAddress(['pool_authority'], PROGRAMS.meteoraDammV2);
/** A DAMM v2 pool's vault of a mint: PDA ["token_vault", mint, pool]. */
const dammV2Vault = (pool: string, mint: string) =>
  findProgramAddress(['token_vault', base58Decode(mint), base58Decode(pool)], PROGRAMS.meteoraDammV2);

/**
 * Meteora DBC `migration_damm_v2` (no event): virtual_pool, migration_metadata, config,
 * pool_authority, pool (4, the new DAMM v2 pool), first/second position nft mint, account and
 * position, damm_pool_authority, amm_program, base_mint (13, token A), quote_mint (14, token B),
 * token_a_vault, token_b_vault, base_vault, quote_vault, payer, token programs (base, quote,
 * 2022), damm_event_authority, system_program; remaining: the DAMM v2 config.
 */
export function meteoraDbcMigrateDammV2Call(input: {
  payer: string;
  virtualPool: string;
  baseMint: string;
  quoteMint?: string;
  dammPool: string;
}): CallPart {
  const quoteMint = input.quoteMint ?? WSOL_MINT;
  const position = filler(`dbc:damm-v2-position:${input.dammPool}`, 6);
  return {
    call: {
      programId: PROGRAMS.meteoraDbc,
      accounts: [
        input.virtualPool,
        solanaAddress(`dbc:migration-metadata:${input.virtualPool}`),
        solanaAddress(`dbc:config:${input.virtualPool}`),
        solanaAddress('dbc:pool-authority'),
        input.dammPool,
        ...position,
        DAMM_V2_POOL_AUTHORITY,
        PROGRAMS.meteoraDammV2,
        input.baseMint,
        quoteMint,
        dammV2Vault(input.dammPool, input.baseMint),
        dammV2Vault(input.dammPool, quoteMint),
        solanaAddress(`dbc:base-vault:${input.virtualPool}`),
        solanaAddress(`dbc:quote-vault:${input.virtualPool}`),
        input.payer,
        TOKEN_PROGRAM,
        TOKEN_PROGRAM,
        TOKEN_2022_PROGRAM,
        authorityOf(PROGRAMS.meteoraDammV2),
        SYSTEM_PROGRAM,
        solanaAddress('damm-v2:config'),
      ],
      data: anchorIx('migration_damm_v2'),
      body: ['Program log: Instruction: MigrationDammV2'],
    },
    balances: [],
    feePayer: input.payer,
  };
}

/** Which swap events a DAMM v2 release emits: EvtSwap (to 0.1.4), both (0.1.5–0.1.6), EvtSwap2 (0.1.8 on). */
export type DammV2Events = 'v1' | 'both' | 'v2';

export interface MeteoraDammV2SwapInput {
  events: DammV2Events;
  pool: string;
  payer: string;
  tokenAMint: string;
  tokenBMint: string;
  decimalsA: number;
  decimalsB: number;
  aToB: boolean;
  /** What the pool received (its fee included when taken on the input) and paid out (after a fee on the output). */
  amountIn: bigint;
  amountOut: bigint;
  tradingFee: bigint;
  protocolFee: bigint;
  referralFee?: bigint;
  feeOnInput: boolean;
  /** 0 BothToken, 1 OnlyB (default, DBC's `QuoteToken`), 2 Compounding. */
  collectFeeMode?: number;
  currentTimestamp: bigint;
  /** Post-swap reserves of token A and B (EvtSwap2). */
  reserveA?: bigint;
  reserveB?: bigint;
  nextSqrtPrice?: bigint;
}

/**
 * A DAMM v2 `swap` (EvtSwap releases) or `swap2` (EvtSwap2 only) instruction with its events
 * (emit_cpi! on chain). Accounts as SwapCtx; the referral account is the program id (None).
 */
export function meteoraDammV2SwapCall(input: MeteoraDammV2SwapInput, emit: EmitMode = 'cpi'): CallPart {
  const program = PROGRAMS.meteoraDammV2;
  const referralFee = input.referralFee ?? 0n;
  const nextSqrtPrice = input.nextSqrtPrice ?? 1n << 64n;
  const head = { pool: input.pool, tradeDirection: input.aToB ? 0 : 1, hasReferral: referralFee > 0n };
  const excludedFeeInput = input.feeOnInput
    ? input.amountIn - input.tradingFee - input.protocolFee - referralFee
    : input.amountIn;
  const events: Buffer[] = [];
  if (input.events !== 'v2')
    events.push(
      encodeFields(
        DAMM_V2_SWAP,
        asRecord({
          ...head,
          params: { amountIn: input.amountIn, minimumAmountOut: 0n },
          swapResult: {
            outputAmount: input.amountOut,
            nextSqrtPrice,
            lpFee: input.tradingFee,
            protocolFee: input.protocolFee,
            partnerFee: 0n,
            referralFee,
          },
          actualAmountIn: input.amountIn,
          currentTimestamp: input.currentTimestamp,
        }),
      ),
    );
  if (input.events !== 'v1')
    events.push(
      encodeFields(
        DAMM_V2_SWAP2,
        asRecord({
          ...head,
          collectFeeMode: input.collectFeeMode ?? 1,
          params: { amount0: input.amountIn, amount1: 0n, swapMode: 0 },
          swapResult: {
            includedFeeInputAmount: input.amountIn,
            excludedFeeInputAmount: excludedFeeInput,
            amountLeft: 0n,
            outputAmount: input.amountOut,
            nextSqrtPrice,
            tradingFee: input.tradingFee,
            protocolFee: input.protocolFee,
            partnerFee: 0n,
            referralFee,
          },
          includedTransferFeeAmountIn: input.amountIn,
          includedTransferFeeAmountOut: input.amountOut,
          excludedTransferFeeAmountOut: input.amountOut,
          currentTimestamp: input.currentTimestamp,
          reserveAAmount: input.reserveA ?? 0n,
          reserveBAmount: input.reserveB ?? 0n,
        }),
      ),
    );
  const [mintIn, mintOut] = input.aToB ? [input.tokenAMint, input.tokenBMint] : [input.tokenBMint, input.tokenAMint];
  const [decimalsIn, decimalsOut] = input.aToB
    ? [input.decimalsA, input.decimalsB]
    : [input.decimalsB, input.decimalsA];
  const userIn = associatedTokenAddress(input.payer, mintIn);
  const userOut = associatedTokenAddress(input.payer, mintOut);
  const swap2 = input.events === 'v2';
  return {
    call: {
      programId: program,
      accounts: [
        DAMM_V2_POOL_AUTHORITY,
        input.pool,
        userIn,
        userOut,
        dammV2Vault(input.pool, input.tokenAMint),
        dammV2Vault(input.pool, input.tokenBMint),
        input.tokenAMint,
        input.tokenBMint,
        input.payer,
        TOKEN_PROGRAM,
        TOKEN_PROGRAM,
        program,
        authorityOf(program),
        program,
      ],
      data: Buffer.concat([
        anchorIx(swap2 ? 'swap2' : 'swap'),
        u64le(input.amountIn, 0n),
        ...(swap2 ? [Buffer.from([0])] : []),
      ]),
      body: [
        `Program log: Instruction: ${swap2 ? 'Swap2' : 'Swap'}`,
        ...events.flatMap((event) => emitEvent(program, event, emit)),
      ],
    },
    balances: [
      { account: userIn, mint: mintIn, owner: input.payer, decimals: decimalsIn, pre: input.amountIn, post: 0n },
      { account: userOut, mint: mintOut, owner: input.payer, decimals: decimalsOut, pre: 0n, post: input.amountOut },
    ],
    feePayer: input.payer,
  };
}

export function encodeMeteoraDammV2Swap(input: MeteoraDammV2SwapInput & TxEnvelope): SolanaTransaction {
  return encodeCalls(input, [meteoraDammV2SwapCall(input, input.emit)]);
}
