// Solana transaction → raw swaps and token events. Dispatch is on the emitting program first:
// discriminators collide across programs (TradeEvent, SwapEvent).
import type { Logger } from '../../core/logger.ts';
import type { Metrics } from '../../core/metrics.ts';
import type { RawSwap, TokenEvent } from '../../core/topics.ts';
import { PROGRAMS } from './constants.ts';
import { decodeMeteoraDbcEvent } from './meteora.ts';
import { decodePumpEvent } from './pumpfun.ts';
import { decodePumpSwapEvent } from './pumpswap.ts';
import { decodeClmmEvent, decodeCpmmEvent, decodeLaunchLabEvent, decodeRayLogEvent } from './raydium.ts';
import { createTxRecords, type TxRecords } from './records.ts';
import { accountKeysOf, instructionsOf, rawEventsOf, type RawEvent, type SolanaTransaction } from './transaction.ts';

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
]);

/** Program id → name, the protocol label of decode errors. */
const PROGRAM_NAMES = new Map(Object.entries(PROGRAMS).map(([name, id]) => [id as string, name]));

/** Program ids the decoder reads events from (a source can filter transactions on them). */
export const DECODED_PROGRAMS: readonly string[] = [...HANDLERS.keys()];

export function createSolanaDecoder(deps: SolanaDecoderDeps = {}): SolanaDecoder {
  const logger = deps.logger?.child({ component: 'solana-decoder' });
  return {
    decodeTransaction(tx) {
      if (!tx.meta || (tx.meta.err !== null && tx.meta.err !== undefined)) return { swaps: [], events: [] };
      const keys = accountKeysOf(tx);
      const records = createTxRecords(tx, keys);
      for (const event of rawEventsOf(tx, instructionsOf(tx, keys))) {
        const handler = HANDLERS.get(event.programId);
        if (!handler) continue;
        try {
          handler(records, event);
        } catch (error) {
          // One malformed event must not hide the others of the transaction.
          deps.metrics?.inc('solana_decode_errors');
          deps.metrics?.families.decodeErrors.inc({ chain: 'solana', protocol: PROGRAM_NAMES.get(event.programId) });
          logger?.warn(
            { signature: tx.transaction.signatures[0], program: event.programId, err: (error as Error).message },
            'undecodable solana event',
          );
        }
      }
      return records.finish();
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
