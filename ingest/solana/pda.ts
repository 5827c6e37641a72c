// Program-derived addresses (find_program_address): the bump search needs an ed25519 on-curve
// test, done here with bigint field arithmetic (Euler's criterion on x² = (y²−1)/(d·y²+1)).
import { createHash } from 'node:crypto';
import { base58Decode, base58Encode } from './base58.ts';
import { PROGRAMS } from './constants.ts';

const P = 2n ** 255n - 19n;

function modPow(base: bigint, exponent: bigint): bigint {
  let result = 1n;
  base %= P;
  while (exponent > 0n) {
    if (exponent & 1n) result = (result * base) % P;
    base = (base * base) % P;
    exponent >>= 1n;
  }
  return result;
}

const D = ((P - 121665n) * modPow(121666n, P - 2n)) % P;

/** True when the 32 bytes decompress to a point of edwards25519 (then they cannot be a PDA). */
export function isOnCurve(bytes: Uint8Array): boolean {
  let y = 0n;
  for (let i = 31; i >= 0; i--) y = (y << 8n) | BigInt(bytes[i]!);
  y &= (1n << 255n) - 1n; // drop the x sign bit
  y %= P;
  const y2 = (y * y) % P;
  const u = (y2 - 1n + P) % P;
  const v = (D * y2 + 1n) % P;
  if (u === 0n) return true;
  const x2 = (u * modPow(v, P - 2n)) % P;
  return modPow(x2, (P - 1n) / 2n) === 1n;
}

const cache = new Map<string, string>();
const CACHE_LIMIT = 200_000;

/** find_program_address(seeds, programId)[0]; seeds are utf8 text or raw bytes (pubkeys). */
export function findProgramAddress(seeds: (string | Uint8Array)[], programId: string): string {
  const seedBytes = seeds.map((seed) => (typeof seed === 'string' ? Buffer.from(seed, 'utf8') : Buffer.from(seed)));
  const cacheKey = `${programId}:${seedBytes.map((seed) => seed.toString('hex')).join(':')}`;
  const cached = cache.get(cacheKey);
  if (cached) return cached;
  const program = base58Decode(programId);
  for (let bump = 255; bump >= 0; bump--) {
    const hash = createHash('sha256');
    for (const seed of seedBytes) hash.update(seed);
    hash.update(Uint8Array.of(bump)).update(program).update('ProgramDerivedAddress');
    const candidate = hash.digest();
    if (!isOnCurve(candidate)) {
      const address = base58Encode(candidate);
      if (cache.size >= CACHE_LIMIT) cache.clear();
      cache.set(cacheKey, address);
      return address;
    }
  }
  throw new RangeError('no viable bump seed');
}

/** The pump.fun bonding curve of a mint: PDA ["bonding-curve", mint]. */
export function pumpBondingCurve(mint: string): string {
  return findProgramAddress(['bonding-curve', base58Decode(mint)], PROGRAMS.pumpfun);
}
