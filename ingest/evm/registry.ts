// What the decoder must know beyond one log: which tokens a pool trades (pool registry) and
// token decimals and launch facts (token registry). Both are in memory, keyed by chain.
import { CHAIN_INFO, CHAINS, EVM_NATIVE_ADDRESS, type Chain } from '../../core/chains.ts';
import { LAUNCH_HOOKS, type EvmDex } from './contracts.ts';

export type { EvmDex };

export interface PoolInfo {
  /** Pair or pool address; on Uniswap V4 the bytes32 pool id. Lower-case. */
  pool: string;
  token0: string;
  token1: string;
  dex: EvmDex;
  /** LP fee in pips (millionths); null when dynamic or unknown (V4 swaps carry their own). */
  fee: number | null;
  /** Set on launch pools (e.g. a Uniswap V4 pool a launchpad created); swaps carry it. */
  launchpad?: string | null;
}

export interface PoolRegistry {
  getPool(chain: Chain, pool: string): PoolInfo | undefined;
  registerPool(chain: Chain, info: PoolInfo): void;
  /** Marks a pool (V4: pool id) as a launch pool, before or after it is registered. */
  markLaunchPool(chain: Chain, pool: string, launchpad: string): void;
  /** V4 pools initialised with these hooks are launch pools of `launchpad` (e.g. a Clanker hook). */
  registerLaunchHooks(chain: Chain, hooks: string, launchpad: string): void;
  launchpadOfHooks(chain: Chain, hooks: string): string | undefined;
  size(): number;
}

const keyOf = (chain: Chain, address: string) => `${chain}:${address.toLowerCase()}`;

/** Pre-seeded with the launchpads' known V4 hooks (contracts.ts LAUNCH_HOOKS). */
export function createPoolRegistry(): PoolRegistry {
  const pools = new Map<string, PoolInfo>();
  const launchMarks = new Map<string, string>();
  const launchHooks = new Map<string, string>();
  for (const { chain, launchpad, hooks } of LAUNCH_HOOKS)
    for (const hook of hooks) launchHooks.set(keyOf(chain, hook), launchpad);
  return {
    getPool(chain, pool) {
      const key = keyOf(chain, pool);
      const info = pools.get(key);
      if (!info) return undefined;
      const mark = launchMarks.get(key);
      return mark && !info.launchpad ? Object.assign({}, info, { launchpad: mark }) : info;
    },
    registerPool(chain, info) {
      const key = keyOf(chain, info.pool);
      const previous = pools.get(key);
      pools.set(
        key,
        Object.assign({}, info, {
          pool: info.pool.toLowerCase(),
          token0: info.token0.toLowerCase(),
          token1: info.token1.toLowerCase(),
          launchpad: info.launchpad ?? previous?.launchpad ?? null,
        }),
      );
    },
    markLaunchPool(chain, pool, launchpad) {
      launchMarks.set(keyOf(chain, pool), launchpad);
    },
    registerLaunchHooks(chain, hooks, launchpad) {
      launchHooks.set(keyOf(chain, hooks), launchpad);
    },
    launchpadOfHooks(chain, hooks) {
      return launchHooks.get(keyOf(chain, hooks));
    },
    size: () => pools.size,
  };
}

export interface TokenInfo {
  decimals: number;
  name?: string;
  symbol?: string;
  /** Launchpad the token came from, when known. */
  launchpad?: string | null;
  /** Quote asset of its bonding curve (four.meme getTokenInfo().quote); absent = native. */
  curveQuote?: string;
}

export interface TokenInfoProvider {
  getDecimals(chain: Chain, address: string): number | undefined;
  getToken(chain: Chain, address: string): TokenInfo | undefined;
  /** Adds or updates a token; given fields replace known ones. */
  registerToken(chain: Chain, address: string, info: TokenInfo): void;
  /** A launch token whose curve ended and whose DEX pool has not been seen yet. */
  markGraduationPending(chain: Chain, token: string, launchpad: string): void;
  /** Returns and clears the pending graduation of a token. */
  takeGraduationPending(chain: Chain, token: string): string | undefined;
}

/**
 * Arc's native USDC has 18 decimals in native accounting but its ERC-20 interface (the
 * "wrapped" address of CHAIN_INFO) reports 6 (CHAINS.md 2.3); elsewhere wrapped = native.
 */
const WRAPPED_DECIMALS: Partial<Record<Chain, number>> = { arc: 6 };

export function createTokenRegistry(): TokenInfoProvider {
  const tokens = new Map<string, TokenInfo>();
  const pending = new Map<string, string>();
  for (const chain of CHAINS) {
    const info = CHAIN_INFO[chain];
    if (info.family !== 'evm') continue;
    tokens.set(keyOf(chain, EVM_NATIVE_ADDRESS), {
      decimals: info.native.decimals,
      symbol: info.native.symbol,
      name: info.native.symbol,
    });
    tokens.set(keyOf(chain, info.native.wrapped), {
      decimals: WRAPPED_DECIMALS[chain] ?? info.native.decimals,
      symbol: info.native.wrappedSymbol,
      name: info.native.wrappedSymbol,
    });
    for (const [address, stable] of Object.entries(info.stables)) {
      tokens.set(keyOf(chain, address), { decimals: stable.decimals, symbol: stable.symbol, name: stable.symbol });
    }
  }
  return {
    getDecimals: (chain, address) => tokens.get(keyOf(chain, address))?.decimals,
    getToken: (chain, address) => tokens.get(keyOf(chain, address)),
    registerToken(chain, address, info) {
      const key = keyOf(chain, address);
      // Given fields replace known ones; Object.assign, not spreads (V8 hidden-class churn).
      const merged = Object.assign({}, tokens.get(key)) as unknown as Record<string, unknown>;
      for (const [name, value] of Object.entries(info)) if (value !== undefined) merged[name] = value;
      tokens.set(key, merged as unknown as TokenInfo);
    },
    markGraduationPending(chain, token, launchpad) {
      pending.set(keyOf(chain, token), launchpad);
    },
    takeGraduationPending(chain, token) {
      const key = keyOf(chain, token);
      const launchpad = pending.get(key);
      pending.delete(key);
      return launchpad;
    },
  };
}
