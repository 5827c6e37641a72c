// Deterministic addresses of the simulated market, and the fixed contracts a real deployment
// would know (PoolManagers, factories, launch hooks, reference pools). Everything derives from
// seed text: seedAddress/v4PoolId on EVM, solanaAddress/PDAs on Solana.
import { CHAIN_INFO, EVM_NATIVE_ADDRESS, type Chain } from '../../core/chains.ts';
import { EVM_CONTRACTS, seedAddress, sortTokens, v4PoolId, type V4PoolKey } from '../evm/index.ts';
import { pumpBondingCurve, solanaAddress } from '../solana/index.ts';
import type { AddressSource } from './model.ts';
import { V4_FEE_PIPS, type Launchpad } from './venues.ts';

export type EvmChain = Exclude<Chain, 'solana'>;

/** Per EVM chain: where launches live and which quote they use. */
export interface EvmChainSetup {
  poolManager: string;
  /** Launch tokens pair with this (0x0 = the native asset, as pools.trade and arc launches do). */
  launchQuote: string;
  launchpad: Launchpad;
  /** Hooks contract of the launchpad's V4 pools (what a deployment configures to recognise launches). */
  launchHooks: string;
  tickSpacing: number;
  /** Native/stable reference pool: Uniswap V3 (PancakeSwap V3 on bsc); none on arc (native = USDC). */
  reference: { pool: string; dex: 'uniswap-v3' | 'pancakeswap-v3'; stable: string; fee: number } | null;
}

const fixed = (text: string) => seedAddress(`spot-sim/${text}`);
const stableOf = (chain: Chain) => Object.keys(CHAIN_INFO[chain].stables)[0]!;

export const EVM_SETUP: Record<EvmChain, EvmChainSetup> = {
  base: {
    poolManager: EVM_CONTRACTS.uniswapV4PoolManager.base,
    launchQuote: CHAIN_INFO.base.native.wrapped,
    launchpad: 'clanker',
    launchHooks: fixed('base/clanker-hooks'),
    tickSpacing: 200,
    reference: { pool: fixed('base/reference/weth-usdc'), dex: 'uniswap-v3', stable: stableOf('base'), fee: 500 },
  },
  bsc: {
    // four.meme launches on its curve; the V4 fields are unused there.
    poolManager: fixed('bsc/v4-pool-manager'),
    launchQuote: EVM_NATIVE_ADDRESS,
    launchpad: 'fourmeme',
    launchHooks: fixed('bsc/none'),
    tickSpacing: 60,
    reference: { pool: fixed('bsc/reference/wbnb-usdt'), dex: 'pancakeswap-v3', stable: stableOf('bsc'), fee: 500 },
  },
  robinhood: {
    poolManager: fixed('robinhood/v4-pool-manager'),
    launchQuote: EVM_NATIVE_ADDRESS,
    launchpad: 'pools.trade',
    launchHooks: fixed('robinhood/pools-trade-hooks'),
    tickSpacing: 60,
    reference: {
      pool: fixed('robinhood/reference/weth-usdg'),
      dex: 'uniswap-v3',
      stable: stableOf('robinhood'),
      fee: 500,
    },
  },
  arc: {
    poolManager: EVM_CONTRACTS.uniswapV4PoolManager.arc,
    launchQuote: EVM_NATIVE_ADDRESS,
    launchpad: 'arc-launch',
    launchHooks: fixed('arc/launch-hooks'),
    tickSpacing: 60,
    reference: null,
  },
};

/** The V4 pool key of a launch token on its chain. */
export function launchPoolKey(chain: EvmChain, token: string): V4PoolKey {
  const setup = EVM_SETUP[chain];
  const [currency0, currency1] = sortTokens(setup.launchQuote, token);
  return {
    currency0,
    currency1,
    fee: V4_FEE_PIPS[setup.launchpad] ?? 3000,
    tickSpacing: setup.tickSpacing,
    hooks: setup.launchHooks,
  };
}

/** SOL/USDC reference pool (Raydium CPMM). */
export const SOLANA_REFERENCE_POOL = solanaAddress('spot-sim/solana/reference/sol-usdc');

/**
 * Addresses of one market run. `seed` varies per run (a restart continues with a fresh
 * market); reference pools and contracts are fixed.
 */
export function createAddressSource(seed: string): AddressSource {
  const text = (chain: Chain, kind: string, what: string) => `spot-sim/${seed}/${chain}/${kind}/${what}`;
  const make = (chain: Chain, kind: string, what: string) =>
    chain === 'solana' ? solanaAddress(text(chain, kind, what)) : seedAddress(text(chain, kind, what));
  return {
    wallet: (chain, what) => make(chain, 'wallet', what),
    token: (chain, what) => make(chain, 'token', what),
    launchPool(chain, launchpad, token, what) {
      if (launchpad === 'pumpfun') return pumpBondingCurve(token);
      if (launchpad === 'fourmeme') return EVM_CONTRACTS.fourMemeTokenManager2.bsc;
      if (chain !== 'solana' && EVM_SETUP[chain].launchpad === launchpad) return v4PoolId(launchPoolKey(chain, token));
      return make(chain, 'launch-pool', what);
    },
    graduationPool: (chain, dex, _token, what) => make(chain, `pool-${dex}`, what),
    referencePool: (chain) =>
      chain === 'solana' ? SOLANA_REFERENCE_POOL : (EVM_SETUP[chain].reference?.pool ?? fixed(`${chain}/no-reference`)),
  };
}
