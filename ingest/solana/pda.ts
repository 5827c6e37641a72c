// Program-derived addresses (find_program_address): the bump search needs an ed25519 on-curve
// test, done here with bigint field arithmetic (Euler's criterion on x² = (y²−1)/(d·y²+1)).
import { createHash } from 'node:crypto';
import { base58Decode, base58Encode } from './base58.ts';
import { PROGRAMS } from './constants.ts';
import { createMemo } from '../../core/memo.ts';

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

/**
 * Jacobi symbol (a/n) for odd n > 0, by quadratic reciprocity (Euclid-like, no big powers).
 * For the prime P it is the Legendre symbol: 1 for a non-zero square, −1 for a non-square.
 */
export function jacobi(a: bigint, n: bigint): number {
  a %= n;
  if (a < 0n) a += n;
  let result = 1;
  while (a !== 0n) {
    // (2/n) = −1 when n ≡ 3, 5 (mod 8).
    let twos = 0;
    while ((a & 1n) === 0n) {
      a >>= 1n;
      twos++;
    }
    const n8 = Number(n & 7n);
    if ((twos & 1) === 1 && (n8 === 3 || n8 === 5)) result = -result;
    // Reciprocity: swapping flips the sign when both are ≡ 3 (mod 4).
    if (n8 % 4 === 3 && Number(a & 3n) === 3) result = -result;
    const rest = n % a;
    n = a;
    a = rest;
  }
  return n === 1n ? result : 0;
}

/**
 * True when the 32 bytes decompress to a point of edwards25519 (then they cannot be a PDA).
 * Decompression solves x² = u/v with u = y²−1, v = d·y²+1 (v ≠ 0: −1/d is not a square, so
 * d·y² = −1 has no solution); a point exists iff u = 0 or u/v is a square. u/v = u·v·(v⁻¹)²,
 * so u/v is a square exactly when u·v is: one Legendre symbol instead of an inversion and a
 * 255-bit power (Euler's criterion, kept as isOnCurveEuler for the equivalence test).
 */
export function isOnCurve(bytes: Uint8Array): boolean {
  const y = yOf(bytes);
  const y2 = (y * y) % P;
  const u = (y2 - 1n + P) % P;
  if (u === 0n) return true;
  const v = (D * y2 + 1n) % P;
  return jacobi(u * v, P) === 1;
}

/** The y coordinate of a compressed point: little-endian, sign bit dropped, reduced mod P. */
function yOf(bytes: Uint8Array): bigint {
  const hex = Buffer.from(bytes.subarray(0, 32)).reverse().toString('hex'); // a copy: reverse() is in place
  return (BigInt(`0x${hex}`) & ((1n << 255n) - 1n)) % P;
}

/** Euler's criterion on x² = u·v⁻¹: the reference the Jacobi form must agree with. */
export function isOnCurveEuler(bytes: Uint8Array): boolean {
  const y = yOf(bytes);
  const y2 = (y * y) % P;
  const u = (y2 - 1n + P) % P;
  const v = (D * y2 + 1n) % P;
  if (u === 0n) return true;
  const x2 = (u * modPow(v, P - 2n)) % P;
  return modPow(x2, (P - 1n) / 2n) === 1n;
}

const CACHE_LIMIT = 200_000;
const cache = createMemo<string>(CACHE_LIMIT);

/** find_program_address(seeds, programId)[0]; seeds are utf8 text or raw bytes (pubkeys). */
export function findProgramAddress(seeds: (string | Uint8Array)[], programId: string): string {
  const seedBytes = seeds.map((seed) => (typeof seed === 'string' ? Buffer.from(seed, 'utf8') : Buffer.from(seed)));
  // Each seed as its length then one char per byte: distinct seed lists stay distinct, at half the length of hex.
  let cacheKey = programId;
  for (const seed of seedBytes) cacheKey += String.fromCharCode(seed.length) + seed.toString('latin1');
  return cache.get(cacheKey) ?? cache.set(cacheKey, deriveProgramAddress(seedBytes, programId));
}

/** find_program_address without the cache, for callers that keep their own (associated token accounts). */
export function deriveProgramAddress(seeds: Uint8Array[], programId: string): string {
  const program = base58Decode(programId);
  for (let bump = 255; bump >= 0; bump--) {
    const hash = createHash('sha256');
    for (const seed of seeds) hash.update(seed);
    hash.update(Uint8Array.of(bump)).update(program).update('ProgramDerivedAddress');
    const candidate = hash.digest();
    if (!isOnCurve(candidate)) return base58Encode(candidate);
  }
  throw new RangeError('no viable bump seed');
}

/** The pump.fun bonding curve of a mint: PDA ["bonding-curve", mint]. */
export function pumpBondingCurve(mint: string): string {
  // Every pump.fun trade names its curve: keyed by the mint text, a hit skips decoding the key.
  return (
    curves.get(mint) ?? curves.set(mint, findProgramAddress(['bonding-curve', base58Decode(mint)], PROGRAMS.pumpfun))
  );
}

const curves = createMemo<string>(CACHE_LIMIT);
