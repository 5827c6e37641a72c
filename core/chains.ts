// Chains, address formats and native assets: the one validator every boundary uses.

export const CHAINS = ['solana', 'base', 'bsc', 'robinhood', 'arc'] as const;
export type Chain = (typeof CHAINS)[number];
export type ChainFamily = 'solana' | 'evm';

export interface NativeAsset {
  symbol: string;
  decimals: number;
  /** Wrapped native (or, on arc, the ERC-20 interface of native USDC); trades quoted in it count as native. */
  wrapped: string;
  wrappedSymbol: string;
}

export interface ChainInfo {
  chain: Chain;
  family: ChainFamily;
  chainId: number | null;
  native: NativeAsset;
  /** USD stablecoins by canonical address, with their decimals. */
  stables: Record<string, { symbol: string; decimals: number }>;
}

const SOL_NATIVE = 'So11111111111111111111111111111111111111112';

export const CHAIN_INFO: Record<Chain, ChainInfo> = {
  solana: {
    chain: 'solana',
    family: 'solana',
    chainId: null,
    native: { symbol: 'SOL', decimals: 9, wrapped: SOL_NATIVE, wrappedSymbol: 'WSOL' },
    stables: { EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v: { symbol: 'USDC', decimals: 6 } },
  },
  base: {
    chain: 'base',
    family: 'evm',
    chainId: 8453,
    native: {
      symbol: 'ETH',
      decimals: 18,
      wrapped: '0x4200000000000000000000000000000000000006',
      wrappedSymbol: 'WETH',
    },
    stables: { '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913': { symbol: 'USDC', decimals: 6 } },
  },
  bsc: {
    chain: 'bsc',
    family: 'evm',
    chainId: 56,
    native: {
      symbol: 'BNB',
      decimals: 18,
      wrapped: '0xbb4cdb9cbd36b01bd1cbaebf2de08d9173bc095c',
      wrappedSymbol: 'WBNB',
    },
    stables: {
      '0x55d398326f99059ff775485246999027b3197955': { symbol: 'USDT', decimals: 18 },
      '0x8ac76a51cc950d9822d68b83fe1ad97b32cd580d': { symbol: 'USDC', decimals: 18 },
    },
  },
  robinhood: {
    chain: 'robinhood',
    family: 'evm',
    chainId: 4663,
    native: {
      symbol: 'ETH',
      decimals: 18,
      wrapped: '0x0bd7d308f8e1639fab988df18a8011f41eacad73',
      wrappedSymbol: 'WETH',
    },
    stables: { '0x5fc5360d0400a0fd4f2af552add042d716f1d168': { symbol: 'USDG', decimals: 6 } },
  },
  arc: {
    chain: 'arc',
    family: 'evm',
    chainId: 5042,
    // Arc's native asset is USDC: native accounting has 18 decimals, its ERC-20 interface 6.
    native: {
      symbol: 'USDC',
      decimals: 18,
      wrapped: '0x3600000000000000000000000000000000000000',
      wrappedSymbol: 'USDC',
    },
    stables: {},
  },
};

/** The zero address stands for the native asset in EVM pools (Uniswap V4 currency0 = 0x0). */
export const EVM_NATIVE_ADDRESS = '0x0000000000000000000000000000000000000000';

export function isChain(value: unknown): value is Chain {
  return typeof value === 'string' && (CHAINS as readonly string[]).includes(value);
}

const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const BASE58_MAP = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE58_ALPHABET.length; i++) BASE58_MAP[BASE58_ALPHABET.charCodeAt(i)] = i;

/** Decoded byte length of a base58 string, or -1 when it is not base58. */
function base58ByteLength(text: string): number {
  if (text.length === 0 || text.length > 64) return -1;
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const digit = code < 128 ? BASE58_MAP[code]! : -1;
    if (digit < 0) return -1;
    let carry = digit;
    for (let j = 0; j < bytes.length; j++) {
      carry += bytes[j]! * 58;
      bytes[j] = carry & 0xff;
      carry >>= 8;
    }
    while (carry > 0) {
      bytes.push(carry & 0xff);
      carry >>= 8;
    }
  }
  let leadingZeros = 0;
  while (leadingZeros < text.length && text[leadingZeros] === '1') leadingZeros++;
  return bytes.length + leadingZeros;
}

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

export function isSolanaAddress(text: string): boolean {
  return base58ByteLength(text) === 32;
}

export function isEvmAddress(text: string): boolean {
  return EVM_ADDRESS.test(text);
}

/** True when `text` is an address of the chain's format (any case on EVM). */
export function isAddressOf(chain: Chain, text: string): boolean {
  return CHAIN_INFO[chain].family === 'solana' ? isSolanaAddress(text) : isEvmAddress(text);
}

/** True when `text` has the shape of an address on any supported chain. */
export function looksLikeAddress(text: string): boolean {
  return isEvmAddress(text) || isSolanaAddress(text);
}

/**
 * Canonical form: EVM addresses lower-case (compared case-insensitively), Solana as given
 * (base58 is case-sensitive). Returns null when the address is not of the chain's format.
 */
export function canonicalAddress(chain: Chain, text: string): string | null {
  if (!isAddressOf(chain, text)) return null;
  return CHAIN_INFO[chain].family === 'evm' ? text.toLowerCase() : text;
}

/** Canonical form of an address already known to be valid (lower-cases EVM). */
export function normalizeAddress(chain: Chain, text: string): string {
  return CHAIN_INFO[chain].family === 'evm' ? text.toLowerCase() : text;
}

export function tokenKey(chain: Chain, address: string): string {
  return `${chain}:${address}`;
}

/** The chain part of a key of the `tokenKey` form (token and wallet keys alike). */
export function chainOfKey(key: string): string {
  return key.slice(0, key.indexOf(':'));
}

export function tradeId(chain: Chain, transactionHash: string, eventIndex: number): string {
  return `${chain}:${transactionHash}:${eventIndex}`;
}
