// The getTransaction (json encoding) shape, and the walk that turns one transaction into an
// ordered list of raw program events: anchor self-CPI instructions, `Program data:` and
// `ray_log` log lines, each tied to the program that emitted it and the instruction it ran in.
import { base58Decode } from './base58.ts';
import { EVENT_IX_TAG } from './constants.ts';
import { RAY_LOG_PREFIX } from './raylog.ts';

export interface RpcInstruction {
  programIdIndex: number;
  accounts: number[];
  /** base58 */
  data: string;
  stackHeight?: number | null;
}

export interface RpcTokenBalance {
  accountIndex: number;
  mint: string;
  owner?: string;
  programId?: string;
  uiTokenAmount: { amount: string; decimals: number; uiAmount?: number | null; uiAmountString?: string };
}

export type RpcAccountKey = string | { pubkey: string; signer?: boolean; writable?: boolean; source?: string };

export interface SolanaTransaction {
  slot: number;
  blockTime: number | null;
  version?: 'legacy' | number;
  transaction: {
    signatures: string[];
    message: {
      accountKeys: RpcAccountKey[];
      instructions: RpcInstruction[];
      recentBlockhash?: string;
      header?: {
        numRequiredSignatures: number;
        numReadonlySignedAccounts: number;
        numReadonlyUnsignedAccounts: number;
      };
      addressTableLookups?: unknown[];
    };
  };
  meta: {
    err: unknown;
    fee: number;
    logMessages?: string[] | null;
    innerInstructions?: { index: number; instructions: RpcInstruction[] }[] | null;
    preTokenBalances?: RpcTokenBalance[] | null;
    postTokenBalances?: RpcTokenBalance[] | null;
    loadedAddresses?: { writable: string[]; readonly: string[] } | null;
    preBalances?: number[];
    postBalances?: number[];
  } | null;
}

export interface Instruction {
  programId: string;
  accounts: string[];
  data: Uint8Array;
  /** Index of the top-level instruction; inner = position in its inner list, -1 for the top-level one. */
  top: number;
  inner: number;
  stackHeight: number | null;
}

export interface RawEvent {
  programId: string;
  source: 'cpi' | 'log';
  /** Anchor events: discriminator ‖ payload (the CPI tag removed). ray_log: the decoded bytes. */
  kind: 'anchor' | 'raylog';
  bytes: Uint8Array;
  /** The instruction whose execution emitted the event, when it can be told. */
  instruction: Instruction | null;
  /** Sort key: top-level index, inner position (0 = the top-level instruction), sub-position. */
  order: [number, number, number];
}

export function accountKeysOf(tx: SolanaTransaction): string[] {
  const keys = tx.transaction.message.accountKeys.map((key) => (typeof key === 'string' ? key : key.pubkey));
  const loaded = tx.meta?.loadedAddresses;
  return loaded ? [...keys, ...loaded.writable, ...loaded.readonly] : keys;
}

function keyAt(keys: string[], index: number): string {
  const value = keys[index];
  if (value === undefined) throw new RangeError(`account index ${index} outside the ${keys.length} keys`);
  return value;
}

function resolve(keys: string[], ix: RpcInstruction, top: number, inner: number): Instruction {
  // No per-call closures: the loader's keepNames wraps each one in a defineProperty call.
  const programId = keyAt(keys, ix.programIdIndex);
  const accounts: string[] = new Array(ix.accounts.length);
  for (let i = 0; i < accounts.length; i++) accounts[i] = keyAt(keys, ix.accounts[i]!);
  return {
    programId,
    accounts,
    data: base58Decode(ix.data ?? ''),
    top,
    inner,
    stackHeight: ix.stackHeight ?? (inner < 0 ? 1 : null),
  };
}

/** Top-level instructions, each with its inner instructions in execution order. */
export function instructionsOf(tx: SolanaTransaction, keys: string[]): { top: Instruction; inner: Instruction[] }[] {
  const innerByIndex = new Map<number, RpcInstruction[]>();
  for (const group of tx.meta?.innerInstructions ?? []) innerByIndex.set(group.index, group.instructions);
  return tx.transaction.message.instructions.map((ix, top) => ({
    top: resolve(keys, ix, top, -1),
    inner: (innerByIndex.get(top) ?? []).map((innerIx, position) => resolve(keys, innerIx, top, position)),
  }));
}

const TAG = Buffer.from(EVENT_IX_TAG, 'hex');

function isEventCpi(ix: Instruction): boolean {
  return ix.data.length >= 16 && TAG.equals(ix.data.subarray(0, 8));
}

/** The instruction that made a self-CPI event: the nearest earlier call of the same program one level up. */
function cpiParent(group: { top: Instruction; inner: Instruction[] }, ix: Instruction): Instruction | null {
  for (let i = ix.inner - 1; i >= 0; i--) {
    const candidate = group.inner[i]!;
    if (candidate.programId !== ix.programId || isEventCpi(candidate)) continue;
    if (ix.stackHeight === null || candidate.stackHeight === null || candidate.stackHeight === ix.stackHeight - 1)
      return candidate;
  }
  return group.top.programId === ix.programId ? group.top : null;
}

interface Frame {
  programId: string;
  top: number;
  ordinal: number;
}

const INVOKE = /^Program (\S+) invoke \[(\d+)\]$/;
const EXIT = /^Program (\S+) (success|failed)/;
const DATA_PREFIX = 'Program data: ';

/** Frame ordinal k > 0 is the k-th invoke inside a top-level instruction, i.e. inner instruction k-1. */
function frameInstruction(groups: { top: Instruction; inner: Instruction[] }[], frame: Frame): Instruction | null {
  const group = groups[frame.top];
  if (!group) return null;
  if (frame.ordinal === 0) return group.top.programId === frame.programId ? group.top : null;
  const aligned = group.inner[frame.ordinal - 1];
  if (aligned?.programId === frame.programId) return aligned;
  for (let i = Math.min(frame.ordinal - 1, group.inner.length - 1); i >= 0; i--) {
    const candidate = group.inner[i]!;
    if (candidate.programId === frame.programId && !isEventCpi(candidate)) return candidate;
  }
  return null;
}

function logEvents(logs: readonly string[], groups: { top: Instruction; inner: Instruction[] }[]): RawEvent[] {
  const events: RawEvent[] = [];
  const stack: Frame[] = [];
  let top = -1;
  let invokes = 0;
  let sub = 0;
  for (const line of logs) {
    const invoke = INVOKE.exec(line);
    if (invoke) {
      const depth = Number(invoke[2]);
      if (depth === 1) {
        top++;
        invokes = 0;
        stack.length = 0;
      } else {
        invokes++;
      }
      sub = 0;
      stack.push({ programId: invoke[1]!, top, ordinal: depth === 1 ? 0 : invokes });
      continue;
    }
    const exit = EXIT.exec(line);
    if (exit) {
      const programId = exit[1]!;
      for (let at = stack.length - 1; at >= 0; at--) {
        if (stack[at]!.programId !== programId) continue;
        stack.length = at;
        break;
      }
      continue;
    }
    if (line.startsWith('Log truncated')) break;
    const frame = stack[stack.length - 1];
    if (!frame) continue;
    let kind: RawEvent['kind'] | null = null;
    let text = '';
    if (line.startsWith(DATA_PREFIX)) {
      kind = 'anchor';
      text = line.slice(DATA_PREFIX.length);
    } else if (line.startsWith(RAY_LOG_PREFIX)) {
      kind = 'raylog';
      text = line.slice(RAY_LOG_PREFIX.length);
    }
    if (!kind) continue;
    const bytes = Buffer.from(text.trim(), 'base64');
    if (kind === 'anchor' && bytes.length < 8) continue;
    events.push({
      programId: frame.programId,
      source: 'log',
      kind,
      bytes,
      instruction: frameInstruction(groups, frame),
      order: [top, invokes, 1 + sub++],
    });
  }
  return events;
}

/** The bytes as a one-char-per-byte string: a map key, cheaper than hex. */
function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

function compareOrder(a: RawEvent, b: RawEvent): number {
  for (let i = 0; i < 3; i++) {
    const diff = a.order[i]! - b.order[i]!;
    if (diff !== 0) return diff;
  }
  return 0;
}

/**
 * Every program event of the transaction once, in order of appearance. An anchor event present
 * both as a self-CPI and as a log line (pump.fun emits both) keeps the CPI copy; log lines
 * are the fallback for events without one.
 */
export function rawEventsOf(tx: SolanaTransaction, groups: { top: Instruction; inner: Instruction[] }[]): RawEvent[] {
  const cpiEvents: RawEvent[] = [];
  const cpiCopies = new Map<string, number>();
  for (const group of groups) {
    for (const ix of group.inner) {
      if (!isEventCpi(ix)) continue;
      const bytes = ix.data.subarray(8);
      cpiEvents.push({
        programId: ix.programId,
        source: 'cpi',
        kind: 'anchor',
        bytes,
        instruction: cpiParent(group, ix),
        order: [ix.top, ix.inner + 1, 0],
      });
      const key = `${ix.top}:${ix.programId}:${latin1(bytes)}`;
      cpiCopies.set(key, (cpiCopies.get(key) ?? 0) + 1);
    }
  }
  const fromLogs = logEvents(tx.meta?.logMessages ?? [], groups).filter((event) => {
    if (event.kind !== 'anchor') return true;
    const key = `${event.order[0]}:${event.programId}:${latin1(event.bytes)}`;
    const copies = cpiCopies.get(key) ?? 0;
    if (copies === 0) return true;
    cpiCopies.set(key, copies - 1);
    return false;
  });
  return [...cpiEvents, ...fromLogs].sort(compareOrder);
}
