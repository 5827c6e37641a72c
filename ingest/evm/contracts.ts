// Contract addresses from CHAINS.md 2.2/2.3 (lower-case), for dex attribution and the simulator.
import type { Chain } from '../../core/chains.ts';
import type { EvmDex } from './registry.ts';

export const EVM_CONTRACTS = {
  uniswapV2Factory: {
    base: '0x8909dc15e40173ff4699343b6eb8132c65e18ec6',
    bsc: '0x8909dc15e40173ff4699343b6eb8132c65e18ec6',
  },
  pancakeV2Factory: { bsc: '0xca143ce32fe78f1f7019d7d551a6402fc5350c73' },
  uniswapV3Factory: {
    base: '0x33128a8fc17869897dce68ed026d694621f6fdfd',
    bsc: '0xdb1d10011ad0ff90774d0c6bb92e5c5c8b4461f7',
    robinhood: '0x1f7d7550b1b028f7571e69a784071f0205fd2efa',
    arc: '0xf0db7b58379503491d857db50ac9ece64c653918',
  },
  pancakeV3Factory: { bsc: '0x0bfbcf9fa4f9c56b0f40a671ad40e0805a091865' },
  aerodromePoolFactory: { base: '0x420dd381b31aef6683db6b902084cb0ffece40da' },
  /** Base per docs [S]; arc is the testnet deployment [S]; robinhood: not collected. */
  uniswapV4PoolManager: {
    base: '0x498581ff718922c3f8e6a244956af099b2652b2b',
    arc: '0x1d70945634f618eefdf9edaadb59b9a183cef929',
  },
  fourMemeTokenManager2: { bsc: '0x5c952063c7fc8610ffdb798152d69f0b9550762b' },
  fourMemeTokenManagerV1: { bsc: '0xec4549cadce5da21df6e6422d448034b5233bfbc' },
} as const satisfies Record<string, Partial<Record<Chain, string>>>;

const FACTORY_KINDS: [keyof typeof EVM_CONTRACTS, EvmDex][] = [
  ['uniswapV2Factory', 'uniswap-v2'],
  ['pancakeV2Factory', 'pancakeswap-v2'],
  ['uniswapV3Factory', 'uniswap-v3'],
  ['pancakeV3Factory', 'pancakeswap-v3'],
];

/** `chain:factory` → dex of the pools it creates. */
export const FACTORY_DEX: Record<string, EvmDex> = Object.fromEntries(
  FACTORY_KINDS.flatMap(([kind, dex]) =>
    Object.entries(EVM_CONTRACTS[kind]).map(([chain, address]) => [`${chain}:${address}`, dex]),
  ),
);
