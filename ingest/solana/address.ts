// Deterministic, valid-looking Solana keys and signatures from seed text (simulator and tests).
import { createHash } from 'node:crypto';
import { base58Encode } from './base58.ts';

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** A 32-byte address: base58(sha256(seedText)). */
export function solanaAddress(seedText: string): string {
  return base58Encode(sha256(seedText));
}

/** A 64-byte transaction signature: base58(sha256(seed‖0) ‖ sha256(seed‖1)). */
export function solanaSignature(seedText: string): string {
  return base58Encode(Buffer.concat([sha256(`${seedText}\u00000`), sha256(`${seedText}\u00001`)]));
}
