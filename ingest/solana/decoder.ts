// Solana transaction → raw swaps and token events. Dispatch is on the emitting program first:
// discriminators collide across programs (TradeEvent, SwapEvent).
import type { Logger } from '../../core/logger.ts';
import type { Metrics } from '../../core/metrics.ts';
import type { RawSwap, TokenEvent } from '../../core/topics.ts';
import { createPlatformRegistry, type PlatformRegistry } from '../enrichment/platforms.ts';
import { PROGRAMS } from './constants.ts';
import { decodeMeteoraDbcEvent, decodeMeteoraDbcInstruction } from './meteora.ts';
import { decodeMeteoraDammV2Event } from './meteora-damm-v2.ts';
import { decodeMoonshotEvent, decodeMoonshotInstruction } from './moonshot.ts';
import { decodePumpEvent } from './pumpfun.ts';
import { decodePumpSwapEvent } from './pumpswap.ts';
import {
  decodeClmmEvent,
  decodeCpmmEvent,
  decodeLaunchLabEvent,
  decodeLaunchLabInstruction,
  decodeRayLogEvent,
} from './raydium.ts';
import { createTxRecords, type TxRecords } from './records.ts';
import {
  accountKeysOf,
  instructionsOf,
  rawEventsOf,
  type Instruction,
  type RawEvent,
  type SolanaTransaction,
} from './transaction.ts';

export interface DecodedTransaction {
  swaps: RawSwap[];
  events: TokenEvent[];
}

export interface SolanaDecoder {
  /** Failed transactions (meta.err set) yield nothing. */
  decodeTransaction(tx: SolanaTransaction): DecodedTransaction;
}

export interface SolanaDecoderDeps {
  logger?: Logger;
  metrics?: Metrics;
  /** Names the trading platform of a swap from the transaction's accounts (default: the public registry). */
  platforms?: PlatformRegistry;
}

type Handler = (records: TxRecords, event: RawEvent) => void;

const HANDLERS = new Map<string, Handler>([
  [PROGRAMS.pumpfun, decodePumpEvent],
  [PROGRAMS.pumpswap, decodePumpSwapEvent],
  [PROGRAMS.launchlab, decodeLaunchLabEvent],
  [PROGRAMS.raydiumAmmV4, decodeRayLogEvent],
  [PROGRAMS.raydiumCpmm, decodeCpmmEvent],
  [PROGRAMS.raydiumClmm, decodeClmmEvent],
  [PROGRAMS.meteoraDbc, decodeMeteoraDbcEvent],
  [PROGRAMS.meteoraDammV2, decodeMeteoraDammV2Event],
  [PROGRAMS.moonshot, decodeMoonshotEvent],
]);

/** Program id → name, the protocol label of decode errors. */
const PROGRAM_NAMES = new Map(Object.entries(PROGRAMS).map(([name, id]) => [id as string, name]));

/** Creations and migrations that emit no usable event are read from their instructions. */
const INSTRUCTION_HANDLERS = new Map<string, (records: TxRecords, ix: Instruction) => void>([
  [PROGRAMS.launchlab, decodeLaunchLabInstruction],
  [PROGRAMS.meteoraDbc, decodeMeteoraDbcInstruction],
  [PROGRAMS.moonshot, decodeMoonshotInstruction],
]);

/** Instructions read directly, in execution order; null (no allocation) when the transaction has none. */
function directInstructions(groups: { top: Instruction; inner: Instruction[] }[]): Instruction[] | null {
  let found: Instruction[] | null = null;
  for (const group of groups) {
    if (INSTRUCTION_HANDLERS.has(group.top.programId) && group.top.data.length >= 8) (found ??= []).push(group.top);
    for (const ix of group.inner)
      if (INSTRUCTION_HANDLERS.has(ix.programId) && ix.data.length >= 8) (found ??= []).push(ix);
  }
  return found;
}

/** Whether an event comes before an instruction: an instruction precedes its own events. */
function eventFirst(event: RawEvent, ix: Instruction): boolean {
  return event.order[0] < ix.top || (event.order[0] === ix.top && event.order[1] < ix.inner + 1);
}

/** One malformed event or instruction must not hide the others of the transaction. */
function guarded<T>(
  handler: (records: TxRecords, item: T) => void,
  records: TxRecords,
  item: T,
  programId: string,
  tx: SolanaTransaction,
  deps: SolanaDecoderDeps,
  logger: Logger | undefined,
): void {
  try {
    handler(records, item);
  } catch (error) {
    deps.metrics?.inc('solana_decode_errors');
    deps.metrics?.families.decodeErrors.inc({ chain: 'solana', protocol: PROGRAM_NAMES.get(programId) });
    logger?.warn(
      { signature: tx.transaction.signatures[0], program: programId, err: (error as Error).message },
      'undecodable solana event',
    );
  }
}

export function createSolanaDecoder(deps: SolanaDecoderDeps = {}): SolanaDecoder {
  const logger = deps.logger?.child({ component: 'solana-decoder' });
  const registry = deps.platforms ?? createPlatformRegistry();
  return {
    decodeTransaction(tx) {
      if (!tx.meta || (tx.meta.err !== null && tx.meta.err !== undefined)) return { swaps: [], events: [] };
      const keys = accountKeysOf(tx);
      const records = createTxRecords(tx, keys);
      const groups = instructionsOf(tx, keys);
      const instructions = directInstructions(groups);
      let next = 0;
      for (const event of rawEventsOf(tx, groups)) {
        while (instructions && next < instructions.length && !eventFirst(event, instructions[next]!)) {
          const ix = instructions[next++]!;
          guarded(INSTRUCTION_HANDLERS.get(ix.programId)!, records, ix, ix.programId, tx, deps, logger);
        }
        const handler = HANDLERS.get(event.programId);
        if (handler) guarded(handler, records, event, event.programId, tx, deps, logger);
      }
      while (instructions && next < instructions.length) {
        const ix = instructions[next++]!;
        guarded(INSTRUCTION_HANDLERS.get(ix.programId)!, records, ix, ix.programId, tx, deps, logger);
      }
      const decoded = records.finish();
      if (decoded.swaps.length > 0) {
        // a platform's router or fee account is one of the transaction's accounts
        const platforms = registry.platformsOf('solana', keys);
        if (platforms.length > 0) for (const swap of decoded.swaps) swap.platforms = platforms;
      }
      return decoded;
    },
  };
}

function isTransaction(value: unknown): value is SolanaTransaction {
  if (typeof value !== 'object' || value === null) return false;
  const tx = value as Partial<SolanaTransaction>;
  return (
    typeof tx.slot === 'number' &&
    typeof tx.transaction === 'object' &&
    tx.transaction !== null &&
    Array.isArray(tx.transaction.signatures) &&
    typeof tx.transaction.message === 'object'
  );
}

/**
 * For the CLI: a bare getTransaction result or a JSON-RPC response `{result: …}` (also a JSON
 * text, or an array of either). Throws TypeError on anything else.
 */
export function decodeSolanaJson(json: unknown, deps: SolanaDecoderDeps = {}): DecodedTransaction {
  const value = typeof json === 'string' ? (JSON.parse(json) as unknown) : json;
  const items = Array.isArray(value) ? value : [value];
  const decoder = createSolanaDecoder(deps);
  const out: DecodedTransaction = { swaps: [], events: [] };
  for (const item of items) {
    const candidate =
      typeof item === 'object' && item !== null && 'result' in item ? (item as { result: unknown }).result : item;
    if (candidate === null && typeof item === 'object' && item !== null && 'result' in item) continue; // tx not found
    if (!isTransaction(candidate)) throw new TypeError('not a Solana getTransaction result (json encoding)');
    const decoded = decoder.decodeTransaction(candidate);
    out.swaps.push(...decoded.swaps);
    out.events.push(...decoded.events);
  }
  return out;
}
