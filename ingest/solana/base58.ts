// Base58 (Bitcoin alphabet) for Solana keys, signatures and json-encoded instruction data.
// Base conversion is still quadratic, but works on wide limbs (3 bytes or 4 digits per step,
// exact in float64) instead of one byte or digit at a time: ~10× fewer inner steps.
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DIGIT[ALPHABET.charCodeAt(i)] = i;
/** The 58² two-digit strings, most significant digit first: encoding appends two per limb. */
const PAIR: string[] = [];
for (let i = 0; i < 58 * 58; i++) PAIR.push(ALPHABET[Math.floor(i / 58)]! + ALPHABET[i % 58]!);

const BASE58_4 = 58 ** 4; // 11,316,496: one encode limb
const BYTE3 = 0x1000000; // 2^24: one decode limb
const INV_BASE58_4 = 1 / BASE58_4;
const INV_BYTE3 = 1 / BYTE3;
let scratch = new Float64Array(128);

function scratchOf(size: number): Float64Array {
  if (scratch.length < size) scratch = new Float64Array(Math.max(size, scratch.length * 2));
  return scratch;
}

export function base58Encode(bytes: Uint8Array): string {
  const length = bytes.length;
  let zeros = 0;
  while (zeros < length && bytes[zeros] === 0) zeros++;
  // Little-endian limbs of 4 base-58 digits; bytes fed 3 at a time (limb·2^24 + carry < 2^53).
  const limbs = scratchOf(Math.ceil(((length - zeros) * 1.3663) / 4) + 2);
  let used = 0;
  let i = zeros;
  const head = (length - zeros) % 3;
  while (i < length) {
    const take = i === zeros && head !== 0 ? head : 3;
    let chunk = 0;
    for (let k = 0; k < take; k++) chunk = chunk * 256 + bytes[i + k]!;
    const scale = take === 3 ? BYTE3 : take === 2 ? 0x10000 : 0x100;
    i += take;
    let carry = chunk;
    for (let j = 0; j < used; j++) {
      const x = limbs[j]! * scale + carry;
      // x < 2^48: the reciprocal's quotient is off by at most one, fixed from the remainder.
      carry = Math.floor(x * INV_BASE58_4);
      let rest = x - carry * BASE58_4;
      if (rest < 0) {
        carry--;
        rest += BASE58_4;
      } else if (rest >= BASE58_4) {
        carry++;
        rest -= BASE58_4;
      }
      limbs[j] = rest;
    }
    while (carry > 0) {
      const next = Math.floor(carry / BASE58_4);
      limbs[used++] = carry - next * BASE58_4;
      carry = next;
    }
  }
  let text = '1'.repeat(zeros);
  if (used === 0) return text;
  // Most significant limb without leading '1's, the rest as 4 digits each.
  const top = limbs[used - 1]!;
  const hi = Math.floor(top / 3364);
  const lo = top - hi * 3364;
  if (hi >= 58) text += PAIR[hi]!;
  else if (hi > 0) text += ALPHABET[hi]!;
  if (hi > 0) text += PAIR[lo]!;
  else text += lo >= 58 ? PAIR[lo]! : ALPHABET[lo]!;
  for (let j = used - 2; j >= 0; j--) {
    const limb = limbs[j]!;
    const high = Math.floor(limb / 3364);
    text += PAIR[high]! + PAIR[limb - high * 3364]!;
  }
  return text;
}

/** Throws RangeError on a character outside the alphabet. */
export function base58Decode(text: string): Uint8Array {
  const length = text.length;
  let zeros = 0;
  while (zeros < length && text.charCodeAt(zeros) === 49) zeros++; // '1'
  // Little-endian limbs of 3 bytes; digits fed 4 at a time (limb·58^4 + carry < 2^53).
  const limbs = scratchOf(Math.ceil(((length - zeros) * 0.7329) / 3) + 2);
  let used = 0;
  let i = zeros;
  const head = (length - zeros) % 4;
  while (i < length) {
    const take = i === zeros && head !== 0 ? head : 4;
    let chunk = 0;
    for (let k = 0; k < take; k++) {
      const code = text.charCodeAt(i + k);
      const digit = code < 128 ? DIGIT[code]! : -1;
      if (digit < 0) throw new RangeError(`invalid base58 character at ${i + k}`);
      chunk = chunk * 58 + digit;
    }
    const scale = take === 4 ? BASE58_4 : take === 3 ? 195112 : take === 2 ? 3364 : 58;
    i += take;
    let carry = chunk;
    for (let j = 0; j < used; j++) {
      const x = limbs[j]! * scale + carry;
      carry = Math.floor(x * INV_BYTE3); // exact: a power of two
      limbs[j] = x - carry * BYTE3;
    }
    while (carry > 0) {
      const next = Math.floor(carry / BYTE3);
      limbs[used++] = carry - next * BYTE3;
      carry = next;
    }
  }
  // Significant bytes of the top limb, then 3 per limb below it, big-endian after the zeros.
  const top = used === 0 ? 0 : limbs[used - 1]!;
  const topBytes = used === 0 ? 0 : top >= 0x10000 ? 3 : top >= 0x100 ? 2 : 1;
  const out = new Uint8Array(zeros + (used === 0 ? 0 : topBytes + 3 * (used - 1)));
  let at = zeros;
  if (used > 0) {
    for (let b = topBytes - 1; b >= 0; b--) out[at++] = Math.floor(top / 2 ** (8 * b)) & 0xff;
    for (let j = used - 2; j >= 0; j--) {
      const limb = limbs[j]!;
      out[at++] = limb >>> 16;
      out[at++] = (limb >>> 8) & 0xff;
      out[at++] = limb & 0xff;
    }
  }
  return out;
}
