// Which simulated trades go through a named platform, and how the transaction shows it: a Solana
// trade wrapped by the platform's router program or paying its fee account, an EVM trade sent to
// its trade contract. About 40 % of memecoin trades go through terminals and bots; the rest are
// direct. Deterministic per transaction, from the public facts in platforms.ts.
import { createHash } from 'node:crypto';
import type { Chain } from '../../core/chains.ts';
import { PLATFORM_FACTS, type PlatformFact } from './platforms.ts';

const ROUTED_SHARE = 0.4;

function factsOf(chain: Chain): PlatformFact[] {
  return PLATFORM_FACTS.filter((fact) => fact.chain === chain);
}

const byChain = new Map<Chain, PlatformFact[]>();

/** The platform fact a simulated transaction uses, or null for a direct trade. */
export function simPlatformOf(chain: Chain, txSeed: string): PlatformFact | null {
  let facts = byChain.get(chain);
  if (!facts) byChain.set(chain, (facts = factsOf(chain)));
  if (facts.length === 0) return null;
  const digest = createHash('sha256').update(`platform:${chain}:${txSeed}`).digest();
  if (digest.readUInt32BE(0) / 2 ** 32 >= ROUTED_SHARE) return null;
  return facts[digest.readUInt32BE(4) % facts.length]!;
}

/** Solana envelope fields (TxEnvelope.router / loadedAddresses) that route a trade through its platform. */
export function simSolanaRoute(txSeed: string): { router?: string; loadedAddresses?: { writable: string[] } } {
  const fact = simPlatformOf('solana', txSeed);
  if (!fact) return {};
  return fact.kind === 'router' ? { router: fact.address } : { loadedAddresses: { writable: [fact.address] } };
}

/** The contract an EVM trade's transaction is sent to when it goes through a platform; null when direct. */
export function simEvmRouter(chain: Chain, txSeed: string): string | null {
  const fact = simPlatformOf(chain, txSeed);
  return fact?.kind === 'router' ? fact.address : null;
}
