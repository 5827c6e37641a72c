// Distributed aggregation: per input partition an instance does not own, the inputs the owner may
// still need replayed when the partition moves, each swap with the chain-wide context it was
// priced in (native mark, the quote token's price, the trader's wallet facts), and the decay
// ticks between them. An owner's durable state (partition-state.ts) covers a prefix of them; the
// rest is what a new owner applies to that state.
import type { Chain } from '../core/chains.ts';
import type { Dec } from '../core/decimal.ts';
import { TOPICS, type RawSwap, type TokenEvent } from '../core/topics.ts';
import type { Partitioning } from './process.ts';
import type { AggregatorState, Funding } from './state.ts';

/** The chain-wide facts a swap of a token read when it was processed. */
export interface SwapContext {
  mark: Dec;
  /** Native price of the quote token, when the swap is quoted in a token priced through it. */
  quoteN: Dec | null;
  /** The trader's wallet before the trade. */
  trades: number;
  funder: Funding | null;
  fundedBy: string[];
  labels: string[];
}

/** Next offsets of the partition in spot.swaps.v1 and spot.token-events.v1. */
export interface PartitionOffsets {
  swaps: number;
  events: number;
}

export type JournalEntry =
  | { k: 'swap'; offset: number; swap: RawSwap; context: SwapContext }
  | { k: 'event'; offset: number; event: TokenEvent; raw: string }
  /** A decay tick of the chain's watermark, taken when the partition stood at `at`. */
  | { k: 'tick'; chain: Chain; time: number; at: PartitionOffsets };

/** True when state at `covered` already includes the entry. */
export function isCovered(entry: JournalEntry, covered: PartitionOffsets): boolean {
  if (entry.k === 'swap') return entry.offset < covered.swaps;
  if (entry.k === 'event') return entry.offset < covered.events;
  // A tick taken at exactly `covered` may come after that state; re-applying one is a no-op.
  return entry.at.swaps < covered.swaps || entry.at.events < covered.events;
}

/** The entries `covered` does not include, in order (the array itself when none is covered). */
export function uncovered(entries: JournalEntry[], covered: PartitionOffsets): JournalEntry[] {
  if (entries.length === 0 || !isCovered(entries[0]!, covered)) return entries;
  return entries.filter((entry) => !isCovered(entry, covered));
}

/** The partition's next offsets in both input topics, as the aggregator's state records them. */
export function partitionOffsets(offsets: Record<string, number>, partition: number): PartitionOffsets {
  return {
    swaps: offsets[`${TOPICS.swaps.name}:${partition}`] ?? 0,
    events: offsets[`${TOPICS.tokenEvents.name}:${partition}`] ?? 0,
  };
}

/**
 * The processor's Partitioning: what `owns` rejects is journaled in `state.journals`, unless the
 * partition's durable `mark` already covers it; decay ticks go to every partition not owned.
 */
export function journaling(
  state: AggregatorState,
  partitions: number,
  owns: (partition: number) => boolean,
  mark: (partition: number) => PartitionOffsets | undefined = () => undefined,
): Partitioning {
  const journal = (p: number, entry: JournalEntry) => {
    const covered = mark(p);
    if (covered && isCovered(entry, covered)) return;
    const journals = (state.journals ??= new Map<number, JournalEntry[]>());
    let list = journals.get(p);
    if (!list) journals.set(p, (list = []));
    list.push(entry);
  };
  return {
    owns,
    journal,
    tick(chain, time) {
      for (let p = 0; p < partitions; p++)
        if (!owns(p)) journal(p, { k: 'tick', chain, time, at: partitionOffsets(state.offsets, p) });
    },
  };
}
