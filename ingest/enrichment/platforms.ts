// Trading terminals and bots, told apart by public facts a transaction carries: their router
// program or contract (the program the user's instruction calls, the contract the EVM transaction
// is sent to) or their fee account (an account the transaction pays). Every address below is
// copied from a public source named next to it; docs/token-fields.md lists them.
import type { Chain } from '../../core/chains.ts';

export interface PlatformFact {
  platform: string;
  chain: Chain;
  kind: 'router' | 'fee-account';
  address: string;
  source: string;
}

const LLAMA_AXIOM = 'github.com/DefiLlama/dimension-adapters fees/axiom.ts';
const DEX_PARSER =
  'github.com/undefinedteam1/solana-dex-parser src/constants/programId.ts (DEX_PROGRAMS, Trading Bot Programs)';

/** Facts of the platforms named by the issue and a few more, per chain. */
export const PLATFORM_FACTS: readonly PlatformFact[] = [
  {
    platform: 'axiom',
    chain: 'solana',
    kind: 'router',
    address: 'FLASHX8DrLbgeR8FcfNV1F5krxYcYMUdBkrP1EPBtxB9',
    source: LLAMA_AXIOM,
  },
  ...[
    '7LCZckF6XXGQ1hDY6HFXBKWAtiUgL9QY5vj1C4Bn1Qjj',
    '4V65jvcDG9DSQioUVqVPiUcUY9v6sb6HKtMnsxSKEz5S',
    'CeA3sPZfWWToFEBmw5n1Y93tnV66Vmp8LacLzsVprgxZ',
    'AaG6of1gbj1pbDumvbSiTuJhRCRkkUNaWVxijSbWvTJW',
    '7oi1L8U9MRu5zDz5syFahsiLUric47LzvJBQX6r827ws',
    '9kPrgLggBJ69tx1czYAbp7fezuUmL337BsqQTKETUEhP',
    'DKyUs1xXMDy8Z11zNsLnUg3dy9HZf6hYZidB6WodcaGy',
    '4FobGn5ZWYquoJkxMzh2VUAWvV36xMgxQ3M7uG1pGGhd',
    '76sxKrPtgoJHDJvxwFHqb3cAXWfRHFLe3VpKcLCAHSEf',
    'H2cDR3EkJjtTKDQKk8SJS48du9mhsdzQhy8xJx5UMqQK',
    '8m5GkL7nVy95G4YVUbs79z873oVKqg2afgKRmqxsiiRm',
    '4kuG6NsAFJNwqEkac8GFDMMheCGKUPEbaRVHHyFHSwWz',
    '8vFGAKdwpn4hk7kc1cBgfWZzpyW3MEMDATDzVZhddeQb',
    '86Vh4XGLW2b6nvWbRyDs4ScgMXbuvRCHT7WbUT3RFxKG',
    'DZfEurFKFtSbdWZsKSDTqpqsQgvXxmESpvRtXkAdgLwM',
    '5L2QKqDn5ukJSWGyqR4RPvFvwnBabKWqAqMzH4heaQNB',
    'DYVeNgXGLAhZdeLMMYnCw1nPnMxkBN7fJnNpHmizTrrF',
    'Hbj6XdxX6eV4nfbYTseysibp4zZJtVRRPn2J3BhGRuK9',
    '846ah7iBSu9ApuCyEhA5xpnjHHX7d4QJKetWLbwzmJZ8',
    '5BqYhuD4q1YD3DMAYkc1FeTu9vqQVYYdfBAmkZjamyZg',
  ].map((address) => ({
    platform: 'axiom',
    chain: 'solana' as const,
    kind: 'fee-account' as const,
    address,
    source: LLAMA_AXIOM,
  })),
  ...[
    '0x5da7dd96efa6127e68c8ab06f125124c3c05d18d',
    '0x325098a6291a412bba7a52531ef05ac5dd7d5d6e',
    '0x05701dc0b8f6711f6de3b282f46b10c813afb02d',
    '0x9689992f5b5c09447f15906d8d11214944488341',
  ].map((address) => ({
    platform: 'axiom',
    chain: 'bsc' as const,
    kind: 'router' as const,
    address,
    source: `${LLAMA_AXIOM} (BSC tradeContracts)`,
  })),
  ...[
    '0xcda14e87628317e4f90077750fbe9634b896a24f',
    '0x76a0e120631735845769e3de2606924af7716150',
    '0xc6cdc85a225236013ee9b3b47dd05c07aed1fabc',
    '0x105358a03c47706ad4697e227d5a8ddfacf85448',
    '0xe3dc74b2d5b83916a1682777f1de8b2155ddfc38',
    '0xd9fc1771672f08f3abce96d033cc21d1e5a3ac7f',
    '0x578980d6cac7ab262c40dfca650b1d2d259c1cca',
    '0x4a86009a36fcec5aa341ffceb3205a911fcf6f60',
    '0x9689992f5b5c09447f15906d8d11214944488341',
  ].map((address) => ({
    platform: 'axiom',
    chain: 'robinhood' as const,
    kind: 'router' as const,
    address,
    source: `${LLAMA_AXIOM} (Robinhood tradeContracts)`,
  })),
  {
    platform: 'photon',
    chain: 'solana',
    kind: 'router',
    address: 'BSfD6SHZigAfDWSjzD5Q41jw8LmKwtmjskPH9XW1mrRW',
    source: 'Photon router in several public parsers, e.g. a Go DEX_PROGRAMS table (PHOTON, tag route)',
  },
  {
    platform: 'gmgn',
    chain: 'solana',
    kind: 'router',
    address: 'GMgnVFR8Jb39LoXsEVzb3DvBy3ywCmdmJquHUy1Lrkqb',
    source: 'GMGN router in public parsers (GMGN_BOT_PROGRAM_ID; SwapProgram::GMGN)',
  },
  {
    platform: 'gmgn',
    chain: 'solana',
    kind: 'fee-account',
    address: 'BB5dnY55FXS1e1NXqZDwCzgdYJdMCj3B92PU6Q5Fb6DT',
    source: 'GMGN platform fee wallet: DefiLlama-style fee adapters (feeAddresses) and public label lists',
  },
  {
    platform: 'trojan',
    chain: 'solana',
    kind: 'fee-account',
    address: '9yMwSPk9mrXSN7yDHUuZurAh1sjbJsfpUqjZ7SvVtdco',
    source: 'github.com/DefiLlama/dimension-adapters Trojan adapter ("Trojan Fee Wallet"); public label lists',
  },
  {
    platform: 'bullx',
    chain: 'solana',
    kind: 'fee-account',
    address: '4o9p5PaYQcfNiLZCCN5ZsZckdtj6Up3xzLvSoZx8GufA',
    source: 'public known-accounts label list ("BullX Platform Fee"); one source only',
  },
  {
    platform: 'bonkbot',
    chain: 'solana',
    kind: 'fee-account',
    address: 'ZG98FUCjb8mJ824Gbs6RsgVmr1FhXb2oNiJHa2dwmPd',
    source: 'public label lists ("BonkBot Platform Fee"; bot fee-account scanners)',
  },
  {
    platform: 'maestro',
    chain: 'solana',
    kind: 'router',
    address: 'MaestroAAe9ge5HTc64VbBQZ6fP77pwvrhM8i1XWSAx',
    source: DEX_PARSER,
  },
  {
    platform: 'banana-gun',
    chain: 'solana',
    kind: 'router',
    address: 'BANANAjs7FJiPQqJTGFzkZJndT9o7UmKiYYGaJz6frGu',
    source: DEX_PARSER,
  },
  {
    platform: 'bloom',
    chain: 'solana',
    kind: 'router',
    address: 'b1oomGGqPKGD6errbyfbVMBuzSC8WtAAYo8MwNafWW1',
    source: DEX_PARSER,
  },
  {
    platform: 'mintech',
    chain: 'solana',
    kind: 'router',
    address: 'minTcHYRLVPubRK8nt6sqe2ZpWrGDLQoNLipDJCGocY',
    source: DEX_PARSER,
  },
  {
    platform: 'nova',
    chain: 'solana',
    kind: 'router',
    address: 'NoVA1TmDUqksaj2hB1nayFkPysjJbFiU76dT4qPw2wm',
    source: DEX_PARSER,
  },
];

/** Lookups of the registry: one map per chain, EVM addresses lower-cased. */
export interface PlatformRegistry {
  /** Platforms named by any of `addresses` (account keys / called contracts), sorted, deduplicated. */
  platformsOf(chain: Chain, addresses: Iterable<string>): string[];
}

export function createPlatformRegistry(facts: readonly PlatformFact[] = PLATFORM_FACTS): PlatformRegistry {
  const byChain = new Map<Chain, Map<string, string>>();
  for (const fact of facts) {
    let map = byChain.get(fact.chain);
    if (!map) byChain.set(fact.chain, (map = new Map()));
    map.set(fact.chain === 'solana' ? fact.address : fact.address.toLowerCase(), fact.platform);
  }
  return {
    platformsOf(chain, addresses) {
      const map = byChain.get(chain);
      if (!map) return [];
      let found: Set<string> | null = null;
      for (const address of addresses) {
        const platform = map.get(chain === 'solana' ? address : address.toLowerCase());
        if (platform) (found ??= new Set()).add(platform);
      }
      return found ? [...found].sort() : [];
    },
  };
}
