// SimEvents on solana → getTransaction-shaped records built with ingest/solana's encoders;
// funding is a System-program transfer (read by ingest/transfers).
//
// Launches are each launchpad's create transaction (pump.fun create, LaunchLab initialize with
// PoolCreateEvent, Meteora DBC initialize_virtual_pool_with_spl_token); graduations its migration
// (pump.fun migrate, LaunchLab migrate_to_cpswap, DBC migration_damm_v2), and the graduated
// tokens trade on the pool it made (PumpSwap, Raydium CPMM, Meteora DAMM v2).
//
// Not a chain record (docs/sources.md): wallet labels (off-chain knowledge: lines of the labels file).
import {
  encodeCalls,
  encodePumpMigration,
  launchLabCreateCall,
  launchLabMigrateToCpswapCall,
  launchLabTradeCall,
  meteoraDammV2SwapCall,
  meteoraDbcCreateCall,
  meteoraDbcMigrateDammV2Call,
  meteoraDbcSwapCall,
  pumpCreateCall,
  pumpSwapBuyCall,
  pumpSwapSellCall,
  pumpTradeCall,
  raydiumCpmmSwapCall,
  solanaAddress,
  solanaSignature,
  USDC_MINT,
  WSOL_MINT,
  type CallPart,
  type DammV2Events,
  type EmitMode,
  type PumpCreateLayout,
  type PumpSwapLayout,
  type PumpTradeLayout,
  type SolanaTransaction,
  type TxEnvelope,
} from '../solana/index.ts';
import { simSolanaRoute } from '../enrichment/sim-platforms.ts';
import { buildTransaction } from '../solana/build.ts';
import { systemTransferCall } from '../transfers/solana-transfers.ts';
import { SOLANA_REFERENCE_POOL } from './addresses.ts';
import { blockAt } from './clock.ts';
import type { SimEvent, SimToken } from './model.ts';
import { labelRecord, type ChainRecord } from './records.ts';

type Trade = Extract<SimEvent, { type: 'trade' }>;

/** pump.fun event layouts by token, so every generation the decoder reads is exercised. */
export function pumpLayouts(token: SimToken): { trade: PumpTradeLayout; create: PumpCreateLayout } {
  switch (token.id % 5) {
    case 0:
      return { trade: 'dec2024', create: 'legacy' };
    case 1:
      return { trade: 'may2025', create: 'may2025' };
    case 2:
      return { trade: 'may2026', create: 'may2026' };
    default:
      return { trade: 'feb2026', create: 'feb2026' };
  }
}

export const pumpSwapLayout = (token: SimToken): PumpSwapLayout => (token.id % 7 === 0 ? 'may2025' : 'feb2026');
export const cpmmLayout = (token: SimToken): 'v1' | 'v2' => (token.id % 6 === 0 ? 'v1' : 'v2');
export const dbcVersion = (token: SimToken): 1 | 2 => (token.id % 5 === 0 ? 1 : 2);
/** DAMM v2's share of the pool fee that is protocol fee (the rest is the trading fee). */
const DAMM_V2_PROTOCOL_FEE_PERCENT = 20n;

const CPMM_SOL_DECIMALS = 9;

function textHash(text: string): number {
  let hash = 2166136261;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
  return hash >>> 0;
}

/**
 * The swap events of a DAMM v2 swap, as the program's releases emitted them (an upgrade changes
 * every pool at once): picked per transaction so each set is exercised on any graduated pool.
 */
export const dammV2Events = (seedText: string): DammV2Events =>
  (['v1', 'both', 'v2'] as const)[textHash(`damm/${seedText}`) % 3]!;

/** A small deterministic priority fee per transaction, lamports. */
const txFee = (seedText: string) => 5000 + (textHash(seedText) % 2000) * 50;

/**
 * How a transaction's anchor events are emitted. Programs emit them as self-CPIs (pump.fun
 * also as a log line); the json encoding carries CPI data in base58, whose encoding and
 * decoding cost grows with the square of the event size. So one transaction in eight keeps
 * the program's own emission (exercising the CPI path), the others carry the `Program data:`
 * log line that anchor's emit! writes, which the decoder reads the same way.
 */
export function emitModeOf(seedText: string): EmitMode | undefined {
  return textHash(`emit/${seedText}`) % 8 === 0 ? undefined : 'log';
}

export function createSolanaWriter(seed: string) {
  function envelope(event: SimEvent): TxEnvelope & { signature: string } {
    const block = blockAt('solana', event.time);
    const signature = solanaSignature(`spot-sim/${seed}/${event.tx}`);
    return { signature, slot: block.number, blockTime: Math.floor(block.timeMs / 1000), fee: txFee(event.tx) };
  }

  const tx = (event: SimEvent, parts: CallPart[]): ChainRecord => ({
    kind: 'solana',
    chain: 'solana',
    transaction: encodeCalls(envelope(event), parts),
  });

  function reference(event: Extract<SimEvent, { type: 'reference' }>): ChainRecord {
    const buy = event.side === 'buy'; // the trader buys SOL with USDC
    const part = raydiumCpmmSwapCall(
      {
        layout: 'v2',
        poolId: SOLANA_REFERENCE_POOL,
        payer: event.trader,
        inputMint: buy ? USDC_MINT : WSOL_MINT,
        outputMint: buy ? WSOL_MINT : USDC_MINT,
        inputDecimals: buy ? 6 : CPMM_SOL_DECIMALS,
        outputDecimals: buy ? CPMM_SOL_DECIMALS : 6,
        inputAmount: buy ? event.stableAmount : event.nativeAmount,
        outputAmount: buy ? event.nativeAmount : event.stableAmount,
        inputVaultBefore: buy ? event.reserves.stable - event.stableAmount : event.reserves.native - event.nativeAmount,
        outputVaultBefore: buy
          ? event.reserves.native + event.nativeAmount
          : event.reserves.stable + event.stableAmount,
      },
      emitModeOf(event.tx),
    );
    // SOL and USDC balances of the trader are not what holders count: leave them out.
    part.balances = [];
    return tx(event, [part]);
  }

  function launch(event: Extract<SimEvent, { type: 'launch' }>): ChainRecord {
    const { token } = event;
    const metadata = {
      baseMint: token.address,
      creator: token.creator,
      name: token.name,
      symbol: token.symbol,
      uri: token.uri,
      decimals: token.decimals,
      supply: token.supply,
    };
    if (token.launchpad === 'launchlab') {
      const curve = token.curve!;
      // The curve's starting virtual reserves, as the trades report them (curve state moves on).
      const sold = curve.initialRealToken - curve.realToken;
      const [virtualBase, virtualQuote] = [curve.virtualToken + sold, curve.virtualQuote - curve.realQuote];
      const part = launchLabCreateCall(
        {
          ...metadata,
          poolState: token.curveAddress,
          totalBaseSell: curve.initialRealToken,
          totalQuoteFundRaising: (virtualQuote * curve.initialRealToken) / (virtualBase - curve.initialRealToken),
        },
        emitModeOf(event.tx),
      );
      return tx(event, [part]);
    }
    if (token.launchpad === 'meteora-dbc')
      return tx(event, [meteoraDbcCreateCall({ ...metadata, pool: token.curveAddress })]);
    return tx(event, [
      pumpCreateCall(
        {
          layout: pumpLayouts(token).create,
          name: token.name,
          symbol: token.symbol,
          uri: token.uri,
          mint: token.address,
          user: token.creator,
          timestamp: BigInt(Math.floor(event.time / 1000)),
          isMayhemMode: token.mayhemMode,
          tokenTotalSupply: token.supply,
        },
        emitModeOf(event.tx),
      ),
    ]);
  }

  function curveTrade(event: Trade): CallPart {
    const { token, curve, curveBefore } = event;
    const isBuy = event.side === 'buy';
    const timestamp = BigInt(Math.floor(event.time / 1000));
    const preBalance = isBuy ? event.traderBalance - event.tokenAmount : event.traderBalance + event.tokenAmount;
    if (!curve || !curveBefore) throw new RangeError('curve trade without curve state');
    switch (token.launchpad) {
      case 'pumpfun':
        return pumpTradeCall(
          {
            layout: pumpLayouts(token).trade,
            mint: token.address,
            user: event.trader,
            isBuy,
            timestamp,
            solAmount: event.quoteAmount,
            tokenAmount: event.tokenAmount,
            virtualSolReserves: curve.virtualQuote,
            virtualTokenReserves: curve.virtualToken,
            realSolReserves: curve.realQuote,
            realTokenReserves: curve.realToken,
            creator: token.creator,
            mayhemMode: token.mayhemMode,
            complete: curve.complete,
            userTokenBalance: { pre: preBalance, post: event.traderBalance },
          },
          emitModeOf(event.tx),
        );
      case 'launchlab': {
        const sold = (state: typeof curve) => state.initialRealToken - state.realToken;
        const fees = event.platformFee + event.creatorFee;
        return launchLabTradeCall(
          {
            poolState: token.curveAddress,
            payer: event.trader,
            baseMint: token.address,
            side: event.side,
            totalBaseSell: curve.initialRealToken,
            virtualBase: curve.virtualToken + sold(curve),
            virtualQuote: curve.virtualQuote - curve.realQuote,
            realBaseBefore: sold(curveBefore),
            realQuoteBefore: curveBefore.realQuote,
            realBaseAfter: sold(curve),
            realQuoteAfter: curve.realQuote,
            amountIn: isBuy ? event.quoteAmount + fees : event.tokenAmount,
            amountOut: isBuy ? event.tokenAmount : event.quoteAmount - fees,
            protocolFee: event.platformFee,
            platformFee: 0n,
            creatorFee: event.creatorFee,
            shareFee: 0n,
            poolStatus: curve.complete ? 1 : 0,
            userBaseBalance: event.traderBalance,
          },
          emitModeOf(event.tx),
        );
      }
      case 'meteora-dbc': {
        // The event's amounts are what the user paid and got; the decoder takes the fees back out.
        const fees = event.platformFee + event.creatorFee;
        return meteoraDbcSwapCall(
          {
            version: dbcVersion(token),
            pool: token.curveAddress,
            payer: event.trader,
            baseMint: token.address,
            side: event.side,
            amountIn: isBuy ? event.quoteAmount + fees : event.tokenAmount,
            amountOut: isBuy ? event.tokenAmount : event.quoteAmount - fees,
            tradingFee: event.platformFee,
            protocolFee: event.creatorFee,
            currentTimestamp: timestamp,
            quoteReserveAmount: curve.realQuote,
            migrationThreshold: curve.quoteThreshold ?? 0n,
            ...(curve.complete
              ? { curveComplete: { baseReserve: curve.realToken, quoteReserve: curve.realQuote } }
              : {}),
            userBaseBalance: event.traderBalance,
          },
          emitModeOf(event.tx),
        );
      }
      default:
        throw new RangeError(`no solana curve for ${token.launchpad}`);
    }
  }

  /** The trader's absolute token balance around the swap (the pool encoders assume a fresh account). */
  function withTraderBalance(part: CallPart, event: Trade): CallPart {
    const isBuy = event.side === 'buy';
    part.balances = part.balances.map((balance) =>
      balance.mint === event.token.address
        ? {
            ...balance,
            pre: isBuy ? event.traderBalance - event.tokenAmount : event.traderBalance + event.tokenAmount,
            post: event.traderBalance,
          }
        : balance,
    );
    return part;
  }

  /** A graduated DBC token on its DAMM v2 pool: token A = the token, token B = SOL, fee in SOL (OnlyB). */
  function dammV2Trade(event: Trade): CallPart {
    const { token, pool } = event;
    const isBuy = event.side === 'buy';
    const protocolFee = (event.lpFee * DAMM_V2_PROTOCOL_FEE_PERCENT) / 100n;
    const part = meteoraDammV2SwapCall(
      {
        events: dammV2Events(event.tx),
        pool: event.poolAddress,
        payer: event.trader,
        tokenAMint: token.address,
        tokenBMint: WSOL_MINT,
        decimalsA: token.decimals,
        decimalsB: CPMM_SOL_DECIMALS,
        aToB: !isBuy,
        amountIn: isBuy ? event.quoteAmount : event.tokenAmount,
        amountOut: isBuy ? event.tokenAmount : event.quoteAmount,
        tradingFee: event.lpFee - protocolFee,
        protocolFee,
        feeOnInput: isBuy,
        currentTimestamp: BigInt(Math.floor(event.time / 1000)),
        reserveA: pool!.token,
        reserveB: pool!.quote,
      },
      emitModeOf(event.tx),
    );
    return withTraderBalance(part, event);
  }

  function poolTrade(event: Trade): CallPart {
    const { token, poolBefore } = event;
    const isBuy = event.side === 'buy';
    if (!poolBefore) throw new RangeError('pool trade without pool state');
    if (event.dex === 'meteora-damm-v2') return dammV2Trade(event);
    if (event.dex === 'pumpswap') {
      const input = {
        layout: pumpSwapLayout(token),
        pool: event.poolAddress,
        user: event.trader,
        baseMint: token.address,
        coinCreator: token.creator,
        timestamp: BigInt(Math.floor(event.time / 1000)),
        baseAmount: event.tokenAmount,
        quoteAmount: event.quoteAmount,
        poolBaseTokenReserves: poolBefore.token,
        poolQuoteTokenReserves: poolBefore.quote,
        userBaseBalance: event.traderBalance,
      };
      return isBuy ? pumpSwapBuyCall(input, emitModeOf(event.tx)) : pumpSwapSellCall(input, emitModeOf(event.tx));
    }
    const part = raydiumCpmmSwapCall(
      {
        layout: cpmmLayout(token),
        poolId: event.poolAddress,
        payer: event.trader,
        inputMint: isBuy ? WSOL_MINT : token.address,
        outputMint: isBuy ? token.address : WSOL_MINT,
        inputDecimals: isBuy ? CPMM_SOL_DECIMALS : token.decimals,
        outputDecimals: isBuy ? token.decimals : CPMM_SOL_DECIMALS,
        inputAmount: isBuy ? event.quoteAmount : event.tokenAmount,
        outputAmount: isBuy ? event.tokenAmount : event.quoteAmount,
        inputVaultBefore: isBuy ? poolBefore.quote : poolBefore.token,
        outputVaultBefore: isBuy ? poolBefore.token : poolBefore.quote,
        // The LP fee is charged on the input: in SOL on a buy, in tokens on a sell.
        tradeFee: isBuy ? event.lpFee : (event.tokenAmount * 2500n) / 1_000_000n,
        creatorFee: 0n,
      },
      emitModeOf(event.tx),
    );
    return withTraderBalance(part, event);
  }

  return {
    write(event: SimEvent): ChainRecord[] {
      switch (event.type) {
        case 'walletLabel': {
          const env = envelope(event);
          return [labelRecord(event, env.signature, env.slot, env.blockTime! * 1000)];
        }
        case 'funding': {
          const env = envelope(event);
          const transaction = buildTransaction({
            signature: env.signature,
            slot: env.slot,
            blockTime: env.blockTime,
            fee: env.fee!,
            instructions: [systemTransferCall(event.from, event.to, event.amount)],
          });
          return [{ kind: 'solana', chain: 'solana', transaction }];
        }
        case 'reference':
          return [reference(event)];
        case 'launch':
          return [launch(event)];
        case 'trade': {
          // About 40 % of trades go through a terminal's router or pay its fee account (sim-platforms.ts).
          const part = event.venue === 'curve' ? curveTrade(event) : poolTrade(event);
          const transaction = encodeCalls({ ...envelope(event), ...simSolanaRoute(event.tx) }, [part]);
          return [{ kind: 'solana', chain: 'solana', transaction }];
        }
        case 'graduate': {
          if (event.token.launchpad === 'launchlab' && event.dex === 'raydium-cpmm') {
            const part = launchLabMigrateToCpswapCall({
              payer: solanaAddress('launchlab:migrator'),
              poolState: event.token.curveAddress,
              baseMint: event.token.address,
              cpswapPool: event.pool,
            });
            return [tx(event, [part])];
          }
          if (event.token.launchpad === 'meteora-dbc' && event.dex === 'meteora-damm-v2') {
            const part = meteoraDbcMigrateDammV2Call({
              payer: solanaAddress('dbc:migrator'),
              virtualPool: event.token.curveAddress,
              baseMint: event.token.address,
              dammPool: event.pool,
            });
            return [tx(event, [part])];
          }
          if (event.token.launchpad !== 'pumpfun')
            throw new RangeError(`no solana migration from ${event.token.launchpad} to ${event.dex}`);
          const env = envelope(event);
          return [
            {
              kind: 'solana',
              chain: 'solana',
              transaction: encodePumpMigration({
                ...env,
                emit: emitModeOf(event.tx) ?? 'both',
                user: event.token.creator,
                mint: event.token.address,
                timestamp: BigInt(Math.floor(event.time / 1000)),
                pool: event.pool,
                mintAmount: event.reserves.token,
                solAmount: event.reserves.quote,
              }) as SolanaTransaction,
            },
          ];
        }
      }
    },
  };
}
