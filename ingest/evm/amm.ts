// AMM logs: pool creation (learned before the swaps of the receipt) and swaps of Uniswap V2,
// PancakeSwap V2, Aerodrome classic, Uniswap V3, PancakeSwap V3, the Uniswap V4 PoolManager and
// the PancakeSwap Infinity CL and Bin pool managers.
import type { Chain } from '../../core/chains.ts';
import { FACTORY_DEX } from './contracts.ts';
import { buildPoolSwap } from './normalize.ts';
import type { NormalLog } from './receipt.ts';
import type { EvmDex } from './registry.ts';
import { decodeAs, type Creation, type ReceiptScope } from './scope.ts';

/** Known factories by CHAINS.md; PancakeSwap is BSC's main V2/V3 venue, so unknown factories there count as PancakeSwap. */
function factoryDex(chain: Chain, factory: string, version: 'v2' | 'v3'): EvmDex {
  const known = FACTORY_DEX[`${chain}:${factory}`];
  if (known) return known;
  if (version === 'v2') return chain === 'bsc' ? 'pancakeswap-v2' : 'uniswap-v2';
  return chain === 'bsc' ? 'pancakeswap-v3' : 'uniswap-v3';
}

/** Swap fee in pips of fixed-fee V2-style pools. */
export const V2_FEE_PIPS = {
  'uniswap-v2': 3000,
  'pancakeswap-v2': 2500,
  // Aerodrome PoolFactory defaults: volatileFee 30 bps, stableFee 5 bps (custom fees: pre-seed the pool).
  aerodromeVolatile: 3000,
  aerodromeStable: 500,
} as const;

function remember(
  scope: ReceiptScope,
  creation: Omit<Creation, 'launchpad'>,
  fee: number | null,
  launchpad: string | null = null,
): void {
  scope.pools.registerPool(scope.chain, {
    pool: creation.pool,
    token0: creation.token0,
    token1: creation.token1,
    dex: creation.dex,
    fee,
    launchpad,
  });
  const registered = scope.pools.getPool(scope.chain, creation.pool);
  scope.creations.push({ ...creation, launchpad: registered?.launchpad ?? null });
}

export function learnPairCreated(scope: ReceiptScope, log: NormalLog): void {
  const args = decodeAs('pairCreated', log);
  const dex = factoryDex(scope.chain, log.address, 'v2');
  const fee = dex === 'pancakeswap-v2' ? V2_FEE_PIPS['pancakeswap-v2'] : V2_FEE_PIPS['uniswap-v2'];
  remember(
    scope,
    {
      pool: args.pair.toLowerCase(),
      token0: args.token0.toLowerCase(),
      token1: args.token1.toLowerCase(),
      dex,
      logIndex: log.logIndex,
      emitter: log.address,
    },
    fee,
  );
}

export function learnV3PoolCreated(scope: ReceiptScope, log: NormalLog): void {
  const args = decodeAs('v3PoolCreated', log);
  const dex = factoryDex(scope.chain, log.address, 'v3');
  remember(
    scope,
    {
      pool: args.pool.toLowerCase(),
      token0: args.token0.toLowerCase(),
      token1: args.token1.toLowerCase(),
      dex,
      logIndex: log.logIndex,
      emitter: log.address,
    },
    args.fee,
  );
}

export function learnAerodromePoolCreated(scope: ReceiptScope, log: NormalLog): void {
  const args = decodeAs('aerodromePoolCreated', log);
  const fee = args.stable ? V2_FEE_PIPS.aerodromeStable : V2_FEE_PIPS.aerodromeVolatile;
  remember(
    scope,
    {
      pool: args.pool.toLowerCase(),
      token0: args.token0.toLowerCase(),
      token1: args.token1.toLowerCase(),
      dex: 'aerodrome',
      logIndex: log.logIndex,
      emitter: log.address,
    },
    fee,
  );
}

/** Slipstream (CL) pools swap through the V3 topic as `aerodrome`; the event names no fee (the factory's fee module sets it), so none is assumed. */
export function learnSlipstreamPoolCreated(scope: ReceiptScope, log: NormalLog): void {
  const args = decodeAs('slipstreamPoolCreated', log);
  remember(
    scope,
    {
      pool: args.pool.toLowerCase(),
      token0: args.token0.toLowerCase(),
      token1: args.token1.toLowerCase(),
      dex: 'aerodrome',
      logIndex: log.logIndex,
      emitter: log.address,
    },
    null,
  );
}

/** V4 dynamic-fee pools carry this flag in Initialize's fee; their swaps report the fee paid. */
const V4_DYNAMIC_FEE_FLAG = 0x800000;

export function learnV4Initialize(scope: ReceiptScope, log: NormalLog): void {
  const args = decodeAs('v4Initialize', log);
  const launchpad = scope.pools.launchpadOfHooks(scope.chain, args.hooks) ?? null;
  const fee = args.fee === V4_DYNAMIC_FEE_FLAG ? null : args.fee;
  remember(
    scope,
    {
      pool: args.id.toLowerCase(),
      token0: args.currency0.toLowerCase(),
      token1: args.currency1.toLowerCase(),
      dex: 'uniswap-v4',
      logIndex: log.logIndex,
      emitter: log.address,
    },
    fee,
    launchpad,
  );
}

export type InfinityKind = 'cl' | 'bin';
const INFINITY_DEX: Record<InfinityKind, EvmDex> = { cl: 'pancakeswap-infinity-cl', bin: 'pancakeswap-infinity-bin' };

/** PancakeSwap Infinity pools are V4-style: an id, named with its currencies by Initialize (same dynamic-fee flag). */
export function learnInfinityInitialize(scope: ReceiptScope, log: NormalLog, kind: InfinityKind): void {
  const args = kind === 'cl' ? decodeAs('infinityClInitialize', log) : decodeAs('infinityBinInitialize', log);
  const launchpad = scope.pools.launchpadOfHooks(scope.chain, args.hooks) ?? null;
  const fee = args.fee === V4_DYNAMIC_FEE_FLAG ? null : args.fee;
  remember(
    scope,
    {
      pool: args.id.toLowerCase(),
      token0: args.currency0.toLowerCase(),
      token1: args.currency1.toLowerCase(),
      dex: INFINITY_DEX[kind],
      logIndex: log.logIndex,
      emitter: log.address,
    },
    fee,
    launchpad,
  );
}

function syncReserves(scope: ReceiptScope, log: NormalLog, reserve0: bigint, reserve1: bigint): void {
  scope.syncs.set(log.address, { reserve0, reserve1 });
}

export function onV2Sync(scope: ReceiptScope, log: NormalLog): void {
  const args = decodeAs('v2Sync', log);
  syncReserves(scope, log, args.reserve0, args.reserve1);
}

export function onAerodromeSync(scope: ReceiptScope, log: NormalLog): void {
  const args = decodeAs('aerodromeSync', log);
  syncReserves(scope, log, args.reserve0, args.reserve1);
}

/** Aerodrome charges each pool its own fee (factory.getFee(pool)); the Fees log states what this swap paid. */
export function onAerodromeFees(scope: ReceiptScope, log: NormalLog): void {
  const args = decodeAs('aerodromeFees', log);
  const earlier = scope.feesPaid.get(log.address);
  scope.feesPaid.set(log.address, {
    amount0: args.amount0 + (earlier?.amount0 ?? 0n),
    amount1: args.amount1 + (earlier?.amount1 ?? 0n),
  });
}

/** Uniswap/PancakeSwap V2 and Aerodrome classic share the four in/out words. */
export function onV2StyleSwap(scope: ReceiptScope, log: NormalLog, aerodrome: boolean): void {
  const args = aerodrome ? decodeAs('aerodromeSwap', log) : decodeAs('v2Swap', log);
  const pool = scope.pools.getPool(scope.chain, log.address);
  if (!pool) return scope.count('skipped_unknown_pool');
  const dex = aerodrome ? 'aerodrome' : pool.dex;
  const defaultFee =
    dex === 'pancakeswap-v2' ? V2_FEE_PIPS['pancakeswap-v2'] : dex === 'uniswap-v2' ? V2_FEE_PIPS['uniswap-v2'] : null;
  // Sync precedes Swap in the same pair: its reserves are the post-trade reserves.
  const reserves = scope.syncs.get(log.address);
  scope.syncs.delete(log.address);
  const feePaid = aerodrome ? scope.feesPaid.get(log.address) : undefined;
  scope.feesPaid.delete(log.address);
  scope.addSwap(
    buildPoolSwap(scope.tokens, scope.at(log.logIndex), {
      pool,
      dex,
      launchpad: pool.launchpad ?? null,
      delta0: args.amount0In - args.amount0Out,
      delta1: args.amount1In - args.amount1Out,
      feePips: pool.fee ?? defaultFee,
      feePaid,
      trader: scope.trader(args.to),
      reserves,
    }),
  );
}

/** V3 amounts are the pool's: positive = the pool received it (the trader paid). */
export function onV3Swap(scope: ReceiptScope, log: NormalLog, pancake: boolean): void {
  const args = pancake ? decodeAs('pancakeV3Swap', log) : decodeAs('v3Swap', log);
  const pool = scope.pools.getPool(scope.chain, log.address);
  if (!pool) return scope.count('skipped_unknown_pool');
  scope.addSwap(
    buildPoolSwap(scope.tokens, scope.at(log.logIndex), {
      pool,
      dex: pancake ? 'pancakeswap-v3' : pool.dex,
      launchpad: pool.launchpad ?? null,
      delta0: args.amount0,
      delta1: args.amount1,
      feePips: pool.fee,
      trader: scope.trader(args.recipient),
    }),
  );
}

/**
 * Infinity CL and Bin swaps emit the swapper's BalanceDelta like V4 (negative = the swapper paid):
 * both pool managers emit the `delta` their swap() returns to the caller. `fee` is the swap fee in pips.
 */
export function onInfinitySwap(scope: ReceiptScope, log: NormalLog, kind: InfinityKind): void {
  const args = kind === 'cl' ? decodeAs('infinityClSwap', log) : decodeAs('infinityBinSwap', log);
  const pool = scope.pools.getPool(scope.chain, args.id);
  if (!pool) return scope.count('skipped_unknown_pool');
  scope.addSwap(
    buildPoolSwap(scope.tokens, scope.at(log.logIndex), {
      pool,
      dex: INFINITY_DEX[kind],
      launchpad: pool.launchpad ?? null,
      delta0: -args.amount0,
      delta1: -args.amount1,
      feePips: args.fee,
      trader: scope.trader(args.sender),
    }),
  );
}

/** V4 amounts are the swapper's BalanceDelta: negative = the swapper paid (opposite of V3). */
export function onV4Swap(scope: ReceiptScope, log: NormalLog): void {
  const args = decodeAs('v4Swap', log);
  const pool = scope.pools.getPool(scope.chain, args.id);
  if (!pool) return scope.count('skipped_unknown_pool');
  scope.addSwap(
    buildPoolSwap(scope.tokens, scope.at(log.logIndex), {
      pool,
      dex: 'uniswap-v4',
      launchpad: pool.launchpad ?? null,
      delta0: -args.amount0,
      delta1: -args.amount1,
      feePips: args.fee,
      trader: scope.trader(args.sender),
      custody: log.address, // the PoolManager holds every V4 pool's tokens
    }),
  );
}
