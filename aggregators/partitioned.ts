// Distributed aggregation, the state side: a partition's tokens taken over (their owner's durable
// state plus the journal replayed on it) or given up (kept as shadows, journaled from then on).
import { normalizeAddress, tokenKey } from '../core/chains.ts';
import { partitionFor } from '../core/eventlog/partitioner.ts';
import { isCovered } from './partition-journal.ts';
import type { BatchOutput, Processor } from './contracts.ts';
import type { AggregatorState, JournalEntry, PartitionOffsets, ShadowToken, TokenState } from './state.ts';
import { detachFromWallets } from './holders.ts';
import { lastTradeTime } from './windows.ts';
import { encodeToken } from './snapshot.ts';
import { chainPosition } from './positions.ts';

/** A token's durable state and the positions of its chain's messages in the partition it covers (positions.ts). */
export interface DurableToken {
  key: string;
  covered: PartitionOffsets;
  token: TokenState;
}

const NOTHING: PartitionOffsets = { swaps: 0, events: 0 };

function shadowOf(t: TokenState): ShadowToken {
  return { priceN: t.priceN, lastT: lastTradeTime(t.win), recentIds: t.recentIds };
}

/**
 * At start nothing is owned: every token becomes a shadow (before the processor is built) and
 * leaves its wallets' holdings. Partitions are taken over again through their durable state.
 */
export function releaseAll(state: AggregatorState): void {
  const shadows = (state.shadows ??= new Map());
  for (const [key, t] of state.tokens) {
    shadows.set(key, shadowOf(t));
    detachFromWallets(state.wallets, t);
  }
  state.tokens.clear();
}

/** Gives a partition's tokens up: shadows from now on, its inputs journaled. */
export function releasePartition(
  state: AggregatorState,
  processor: Processor,
  partition: number,
  partitions: number,
): number {
  const shadows = (state.shadows ??= new Map());
  let released = 0;
  for (const [key, t] of state.tokens) {
    if (partitionFor(key, partitions) !== partition) continue;
    processor.released(t);
    shadows.set(key, shadowOf(t));
    state.tokens.delete(key);
    released++;
  }
  (state.journals ??= new Map()).set(partition, []);
  return released;
}

/**
 * Takes a partition over: its tokens' durable states, then every journaled input and decay tick
 * none of them covers, each swap in the context it was first priced in. The outputs go to `out`.
 */
export function adoptPartition(
  state: AggregatorState,
  processor: Processor,
  partition: number,
  partitions: number,
  durable: { mark: PartitionOffsets; tokens: DurableToken[] },
  out: BatchOutput,
): { tokens: number; replayed: number } {
  const journal: JournalEntry[] = state.journals?.get(partition) ?? [];
  const covered = new Map<string, PartitionOffsets>();
  const adopted = new Set<string>();
  for (const row of durable.tokens) {
    state.tokens.set(row.key, row.token);
    covered.set(row.key, row.covered);
    adopted.add(row.key);
  }
  // A token without a durable row: no owner applied any of its inputs (each would have written it).
  const coveredOf = (key: string) => covered.get(key) ?? NOTHING;
  let replayed = 0;
  for (const entry of journal) {
    if (entry.k === 'tick') {
      const tokens: TokenState[] = [];
      for (const key of adopted) {
        const t = state.tokens.get(key);
        if (t && t.chain === entry.chain && !isCovered(entry, coveredOf(key))) tokens.push(t);
      }
      processor.decay(tokens, entry.time, out);
      continue;
    }
    const chain = entry.k === 'swap' ? entry.swap.chain : entry.event.chain;
    const token = entry.k === 'swap' ? entry.swap.token : entry.event.token!;
    const key = tokenKey(chain, normalizeAddress(chain, token));
    if (isCovered(entry, coveredOf(key))) continue;
    if (entry.k === 'swap') processor.replaySwap(entry.swap, entry.context, out);
    else processor.replayEvent(entry.event, entry.raw, out);
    adopted.add(key);
    replayed++;
  }
  for (const key of state.shadows?.keys() ?? []) {
    if (partitionFor(key, partitions) === partition) state.shadows!.delete(key);
  }
  state.journals?.delete(partition);
  for (const key of adopted) {
    const t = state.tokens.get(key);
    if (!t) continue;
    processor.adopted(t);
    out.changed.add(key);
    out.traded.add(key);
  }
  return { tokens: adopted.size, replayed };
}

/** The durable rows of a partition's tokens among `keys`, as they stand now, each with the positions it covers. */
export function durableRows(
  state: AggregatorState,
  partition: number,
  keys: Iterable<string>,
): Array<{ key: string; state: string; covered: PartitionOffsets }> {
  const rows: Array<{ key: string; state: string; covered: PartitionOffsets }> = [];
  for (const key of keys) {
    const t = state.tokens.get(key);
    if (t) rows.push({ key, state: encodeToken(t), covered: chainPosition(state, partition, t.chain) });
  }
  return rows;
}
