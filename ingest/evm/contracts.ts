// Contract addresses from CHAINS.md 2.2/2.3 (lower-case), for dex attribution and the simulator.
import type { Chain } from '../../core/chains.ts';

/** The EVM venues the decoder attributes trades to. */
export type EvmDex =
  | 'uniswap-v2'
  | 'pancakeswap-v2'
  | 'uniswap-v3'
  | 'pancakeswap-v3'
  | 'uniswap-v4'
  | 'pancakeswap-infinity-cl'
  | 'pancakeswap-infinity-bin'
  | 'aerodrome'
  | 'fourmeme';

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

/**
 * Uniswap V4 hooks of launchpads: a pool initialised with one is that launchpad's launch pool
 * (launch.ts). Zora (base): every ZORA_V4_COIN_HOOK and CREATOR_COIN_HOOK its deployments have
 * used, from the history of ourzora/zora-protocol packages/coins/addresses/8453.json (up to
 * c59a6fac, 2026-01-09); hooks are redeployed on upgrades, so older coins keep older hooks.
 */
export const LAUNCH_HOOKS: { chain: Chain; launchpad: string; hooks: readonly string[] }[] = [
  {
    chain: 'base',
    launchpad: 'zora',
    hooks: [
      '0x013d1f64ee45fbac66b153ceb365ef04fd029040',
      '0x1258e5f3c71ca9dce95ce734ba5759532e46d040',
      '0x2b15a16b3ef024005ba899bb51764fcd58cf9040',
      '0x5bf219b3cc11e3f6dd8dc8fc89d7d1deb0431040',
      '0x5e5d19d22c85a4aef7c1fdf25fb22a5a38f71040',
      '0x81542dc43aff247eff4a0ecefc286a2973ae1040',
      '0x8218fa8d7922e22aed3556a09d5a715f16ad5040',
      '0x854f820475b229b7805a386f758cfb285023d040',
      '0x8e04235b0a61dab93ab99c0bef82a407a8af5040',
      '0x9149ef19013014fc37f6952f7f66c0b88df2d040',
      '0x9301690be9ac901de52c5ebff883862bbfc99040',
      '0x9ea932730a7787000042e34390b8e435dd839040',
      '0xa1ebdd5ca6470bbd67114331387f2dda7bfad040',
      '0xb030fd8c2f8576f8ab05cfbbe659285e7d7a1040',
      '0xc8d077444625eb300a427a6dfb2b1dbf9b159040',
      '0xd3d133469adc85e01a4887404d8ac12d630e9040',
      '0xd61a675f8a0c67a73dc3b54fb7318b4d91409040',
      '0xe61bdf0c9e665f02df20fede6dcef379cb751040',
      '0xf500d19f77827b55ef187fc2599a895844a59040',
      '0xfbce3d80c659c765bc6c55e29e87d839c7609040',
      '0xff74be9d3596ea7a33bb4983dd7906fb34135040',
      '0xfff800b76768da8ab6aab527021e4a6a91219040',
    ],
  },
];
