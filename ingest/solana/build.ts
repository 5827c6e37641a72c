// Builds getTransaction-shaped objects (json encoding) from call trees, so instructions, inner
// instructions and the invoke/success log frames always agree.
import { base58Encode } from './base58.ts';
import { EVENT_IX_TAG } from './constants.ts';
import { findProgramAddress } from './pda.ts';
import type { RpcInstruction, RpcTokenBalance, SolanaTransaction } from './transaction.ts';

export interface SolanaCall {
  programId: string;
  accounts: string[];
  data: Uint8Array;
  /** What runs inside the call, in order: whole log lines ("Program log: …") and nested calls (CPIs). */
  body?: (string | SolanaCall)[];
}

export interface TokenBalanceSpec {
  account: string;
  mint: string;
  owner: string;
  decimals: number;
  /** Omit (or null) when the account did not exist before / after the transaction. */
  pre?: bigint | null;
  post?: bigint | null;
  programId?: string;
}

export interface BuildTransactionInput {
  signature: string;
  slot: number;
  /** Unix seconds, as the RPC returns it. */
  blockTime: number | null;
  instructions: SolanaCall[];
  tokenBalances?: TokenBalanceSpec[];
  /** Lamports; default 5000. */
  fee?: bigint | number;
  /** Default: the first account of the first instruction. */
  feePayer?: string;
  err?: unknown;
  /** Replace the generated log lines (e.g. to cut them as "Log truncated" would). */
  logs?: string[];
  /** Keep only the first n generated log lines, then "Log truncated". */
  truncateLogsAfter?: number;
  /** v0 transaction: these keys come from address lookup tables (loadedAddresses) instead of accountKeys. */
  loadedAddresses?: { writable?: string[]; readonly?: string[] };
}

/** The anchor event-CPI data of an event: EVENT_IX_TAG ‖ discriminator ‖ payload. */
export function eventCpiData(eventBytes: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(EVENT_IX_TAG, 'hex'), eventBytes]);
}

export type EmitMode = 'both' | 'cpi' | 'log';

/** Body items that emit an anchor event by log line, self-CPI, or both (pump.fun does both). */
export function emitEvent(programId: string, eventBytes: Uint8Array, mode: EmitMode): (string | SolanaCall)[] {
  const items: (string | SolanaCall)[] = [];
  if (mode !== 'cpi') items.push(`Program data: ${Buffer.from(eventBytes).toString('base64')}`);
  if (mode !== 'log') {
    const authority = findProgramAddress(['__event_authority'], programId);
    items.push({ programId, accounts: [authority], data: eventCpiData(eventBytes) });
  }
  return items;
}

interface Flattened {
  logs: string[];
  inner: { call: SolanaCall; depth: number }[];
}

function walk(call: SolanaCall, depth: number, out: Flattened): void {
  out.logs.push(`Program ${call.programId} invoke [${depth}]`);
  for (const item of call.body ?? []) {
    if (typeof item === 'string') {
      out.logs.push(item);
    } else {
      out.inner.push({ call: item, depth: depth + 1 });
      walk(item, depth + 1, out);
    }
  }
  out.logs.push(
    `Program ${call.programId} consumed ${1000 * depth} of 200000 compute units`,
    `Program ${call.programId} success`,
  );
}

export function buildTransaction(input: BuildTransactionInput): SolanaTransaction {
  const loadedWritable = input.loadedAddresses?.writable ?? [];
  const loadedReadonly = input.loadedAddresses?.readonly ?? [];
  const loaded = new Set([...loadedWritable, ...loadedReadonly]);
  const feePayer = input.feePayer ?? input.instructions[0]?.accounts[0] ?? input.instructions[0]?.programId ?? '';
  const staticKeys: string[] = [];
  const seen = new Set<string>();
  const addStatic = (key: string) => {
    if (seen.has(key) || loaded.has(key)) return;
    seen.add(key);
    staticKeys.push(key);
  };
  addStatic(feePayer);
  const visit = (call: SolanaCall) => {
    call.accounts.forEach(addStatic);
    addStatic(call.programId);
    for (const item of call.body ?? []) if (typeof item !== 'string') visit(item);
  };
  input.instructions.forEach(visit);
  for (const balance of input.tokenBalances ?? []) addStatic(balance.account);
  const allKeys = [...staticKeys, ...loadedWritable, ...loadedReadonly];
  const indexOf = new Map(allKeys.map((key, index) => [key, index]));
  const index = (key: string) => indexOf.get(key)!;
  const rpc = (call: SolanaCall, stackHeight: number): RpcInstruction => ({
    programIdIndex: index(call.programId),
    accounts: call.accounts.map(index),
    data: base58Encode(call.data),
    stackHeight,
  });

  const logs: string[] = [];
  const innerInstructions: { index: number; instructions: RpcInstruction[] }[] = [];
  input.instructions.forEach((call, top) => {
    const flat: Flattened = { logs, inner: [] };
    walk(call, 1, flat);
    if (flat.inner.length > 0)
      innerInstructions.push({ index: top, instructions: flat.inner.map(({ call: c, depth }) => rpc(c, depth)) });
  });
  let logMessages = input.logs ?? logs;
  if (input.truncateLogsAfter !== undefined && !input.logs)
    logMessages = [...logs.slice(0, input.truncateLogsAfter), 'Log truncated'];

  const balances = (phase: 'pre' | 'post'): RpcTokenBalance[] =>
    (input.tokenBalances ?? [])
      .filter((balance) => balance[phase] !== undefined && balance[phase] !== null)
      .map((balance) => {
        const amount = balance[phase]!;
        const ui = Number(amount) / 10 ** balance.decimals;
        return {
          accountIndex: index(balance.account),
          mint: balance.mint,
          owner: balance.owner,
          programId: balance.programId ?? 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
          uiTokenAmount: {
            amount: amount.toString(),
            decimals: balance.decimals,
            uiAmount: ui,
            uiAmountString: String(ui),
          },
        };
      });

  const isV0 = input.loadedAddresses !== undefined;
  return {
    slot: input.slot,
    blockTime: input.blockTime,
    version: isV0 ? 0 : 'legacy',
    transaction: {
      signatures: [input.signature],
      message: {
        accountKeys: staticKeys,
        header: { numRequiredSignatures: 1, numReadonlySignedAccounts: 0, numReadonlyUnsignedAccounts: 0 },
        recentBlockhash: base58Encode(Buffer.alloc(32, 7)),
        instructions: input.instructions.map((call) => rpc(call, 1)),
        ...(isV0 ? { addressTableLookups: [] } : {}),
      },
    },
    meta: {
      err: input.err ?? null,
      fee: Number(input.fee ?? 5000),
      logMessages,
      innerInstructions,
      preTokenBalances: balances('pre'),
      postTokenBalances: balances('post'),
      preBalances: allKeys.map(() => 0),
      postBalances: allKeys.map(() => 0),
      ...(isV0 ? { loadedAddresses: { writable: loadedWritable, readonly: loadedReadonly } } : {}),
    },
  };
}
