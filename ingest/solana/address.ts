// Deterministic, valid-looking Solana keys and signatures from seed text (simulator and tests).
import { createHash } from 'node:crypto';
import { base58Encode } from './base58.ts';
import { createMemo } from '../../core/memo.ts';

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

const addresses = createMemo<string>(100_000);

/** A 32-byte address: base58(sha256(seedText)). Memoised: encoders ask for the same seeds per call. */
export function solanaAddress(seedText: string): string {
  return addresses.get(seedText) ?? addresses.set(seedText, base58Encode(sha256(seedText)));
}

/** A 64-byte transaction signature: base58(sha256(seed‖0) ‖ sha256(seed‖1)). */
export function solanaSignature(seedText: string): string {
  return base58Encode(Buffer.concat([sha256(`${seedText}\u00000`), sha256(`${seedText}\u00001`)]));
}
