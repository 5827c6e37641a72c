// Shared pieces of the encoders: the transaction envelope, ATAs, anchor discriminators.
import { createHash } from 'node:crypto';
import { base58Decode } from './base58.ts';
import { solanaSignature } from './address.ts';
import { buildTransaction, type EmitMode, type SolanaCall, type TokenBalanceSpec } from './build.ts';
import { TOKEN_PROGRAM } from './constants.ts';
import { deriveProgramAddress } from './pda.ts';
import type { SolanaTransaction } from './transaction.ts';
import { createMemo } from '../../core/memo.ts';

export const ATA_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';

export interface TxEnvelope {
  /** Default: derived from the encoded content. */
  signature?: string;
  slot: number;
  blockTime: number | null;
  fee?: bigint | number;
  /** How anchor events are emitted (log line, self-CPI or both); each encoder has its protocol's default. */
  emit?: EmitMode;
  /** Wrap the protocol call in a CPI from this router program (as aggregators do). */
  router?: string;
  truncateLogsAfter?: number;
  err?: unknown;
  loadedAddresses?: { writable?: string[]; readonly?: string[] };
}

/** One protocol call with the token balances it touches. */
export interface CallPart {
  call: SolanaCall;
  balances: TokenBalanceSpec[];
  feePayer: string;
}

const ataCache = createMemo<string>(100_000);

export function associatedTokenAddress(owner: string, mint: string, tokenProgram = TOKEN_PROGRAM): string {
  // The simulator asks for the same (owner, mint) pairs over and over: skip decoding three keys.
  const key = `${owner}:${mint}:${tokenProgram}`;
  return (
    ataCache.get(key) ??
    ataCache.set(
      key,
      deriveProgramAddress([base58Decode(owner), base58Decode(tokenProgram), base58Decode(mint)], ATA_PROGRAM),
    )
  );
}

/** Anchor instruction discriminator sha256("global:<name>")[0..8]. */
export function anchorIx(name: string): Buffer {
  return createHash('sha256').update(`global:${name}`).digest().subarray(0, 8);
}

export function u64le(...values: bigint[]): Buffer {
  const out = Buffer.alloc(8 * values.length);
  values.forEach((value, i) => out.writeBigUInt64LE(value, 8 * i));
  return out;
}

/** ceil(amount · bps / 10 000), the fee rounding pump.fun and PumpSwap use. */
export function ceilFee(amount: bigint, bps: bigint): bigint {
  return (amount * bps + 9_999n) / 10_000n;
}

function mergeBalances(parts: CallPart[]): TokenBalanceSpec[] {
  const byAccount = new Map<string, TokenBalanceSpec>();
  for (const part of parts) {
    for (const balance of part.balances) {
      const earlier = byAccount.get(balance.account);
      // Several calls on one account: its balance before the first, after the last.
      byAccount.set(balance.account, earlier ? { ...balance, pre: earlier.pre } : balance);
    }
  }
  return [...byAccount.values()];
}

const jsonSafe = (_key: string, value: unknown) =>
  typeof value === 'bigint'
    ? value.toString()
    : value instanceof Uint8Array
      ? Buffer.from(value).toString('hex')
      : value;

/** A transaction of one or more protocol calls (each a top-level instruction, or under `router`). */
export function encodeCalls(envelope: TxEnvelope, parts: CallPart[]): SolanaTransaction {
  const first = parts[0];
  if (!first) throw new RangeError('no calls to encode');
  const instructions = parts.map(({ call }) =>
    envelope.router
      ? {
          programId: envelope.router,
          accounts: [...call.accounts, call.programId],
          data: Uint8Array.of(1),
          body: [call],
        }
      : call,
  );
  return buildTransaction({
    signature: envelope.signature ?? solanaSignature(JSON.stringify([envelope.slot, instructions], jsonSafe)),
    slot: envelope.slot,
    blockTime: envelope.blockTime,
    instructions,
    tokenBalances: mergeBalances(parts),
    feePayer: first.feePayer,
    ...(envelope.fee === undefined ? {} : { fee: envelope.fee }),
    ...(envelope.err === undefined ? {} : { err: envelope.err }),
    ...(envelope.truncateLogsAfter === undefined ? {} : { truncateLogsAfter: envelope.truncateLogsAfter }),
    ...(envelope.loadedAddresses === undefined ? {} : { loadedAddresses: envelope.loadedAddresses }),
  });
}
