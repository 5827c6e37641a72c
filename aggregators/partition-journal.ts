// Distributed aggregation: per input partition an instance does not own, the inputs the owner may
// still need replayed when the partition moves, each swap with the chain-wide context it was
// priced in (native mark, the quote token's price, the trader's wallet facts), and the decay
// ticks between them. An owner's durable state (partition-state.ts) covers a prefix of them; the
// rest is what a new owner applies to that state.
import { normalizeAddress, tokenKey } from '../core/chains.ts';
import { ZERO } from '../core/decimal.ts';
import { TOPICS } from '../core/topics.ts';
import type { Partitioning } from './contracts.ts';
import { forgetOldIds, newRecentIds, seenBefore } from './dedupe.ts';
import { chainPosition } from './positions.ts';
import type { AggregatorState, JournalEntry, PartitionOffsets } from './state.ts';

/**
 * True when a token state covering `covered` (the positions of its chain's messages in the
 * partition, positions.ts chainPosition) already includes the entry. A tick is included once that
 * state is past a message of the chain the tick came before; a tick taken at exactly `covered` may
 * come after that state, and re-applying one is a no-op.
 */
export function isCovered(entry: JournalEntry, covered: PartitionOffsets): boolean {
  if (entry.k === 'swap') return entry.offset < covered.swaps;
  if (entry.k === 'event') return entry.offset < covered.events;
  return entry.at.swaps < covered.swaps || entry.at.events < covered.events;
}

const chainOf = (entry: JournalEntry): string =>
  entry.k === 'swap' ? entry.swap.chain : entry.k === 'event' ? entry.event.chain : entry.chain;

/**
 * The entries a partition's durable `mark` (its owner's low watermarks) leaves to replay, in
 * order: inputs below the mark go; a tick goes once a later input of its chain is below the mark
 * (the owner passed it), or when a later tick of its chain follows with no input of the chain
 * between them (that one decays as far). So ticks stay bounded by the inputs kept and the chains.
 * The array itself when nothing goes.
 */
export function uncovered(entries: JournalEntry[], mark: PartitionOffsets): JournalEntry[] {
  const passed = new Set<string>();
  const ticked = new Set<string>();
  const kept: JournalEntry[] = [];
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    const chain = chainOf(entry);
    if (entry.k === 'tick') {
      if (passed.has(chain) || ticked.has(chain)) continue;
      ticked.add(chain);
    } else {
      ticked.delete(chain);
      if (isCovered(entry, mark)) {
        passed.add(chain);
        continue;
      }
    }
    kept.push(entry);
  }
  return kept.length === entries.length ? entries : kept.reverse();
}

/** The partition's low watermarks in both input topics, as the aggregator's state records them. */
export function partitionOffsets(offsets: Record<string, number>, partition: number): PartitionOffsets {
  return {
    swaps: offsets[`${TOPICS.swaps.name}:${partition}`] ?? 0,
    events: offsets[`${TOPICS.tokenEvents.name}:${partition}`] ?? 0,
  };
}

/**
 * The processor's Partitioning: what `owns` rejects is journaled in `state.journals`, unless the
 * partition's durable `mark` already covers it; decay ticks go to every partition not owned; a
 * token not owned is kept as a shadow (state.shadows: its price as a quote asset, dedupe ids).
 */
export function journaling(
  state: AggregatorState,
  partitions: number,
  owns: (partition: number) => boolean,
  mark: (partition: number) => PartitionOffsets | undefined = () => undefined,
): Partitioning {
  const journal = (p: number, entry: JournalEntry) => {
    // The mark is a partition's low watermarks: it says nothing of a tick (uncovered trims those).
    const covered = entry.k === 'tick' ? undefined : mark(p);
    if (covered && isCovered(entry, covered)) return;
    const journals = (state.journals ??= new Map<number, JournalEntry[]>());
    let list = journals.get(p);
    if (!list) journals.set(p, (list = []));
    list.push(entry);
  };
  return {
    owns,
    journal,
    shadowSwap(swap, at, context, priceNative) {
      const chain = swap.chain;
      const key = tokenKey(chain, normalizeAddress(chain, swap.token));
      const shadows = (state.shadows ??= new Map());
      let s = shadows.get(key);
      if (!s) shadows.set(key, (s = { priceN: ZERO, lastT: Number.NEGATIVE_INFINITY, recentIds: newRecentIds() }));
      if (seenBefore(s.recentIds, swap.id, swap.blockTime)) return false;
      // The newest trade by event time sets the price, as in the token's own windows.
      if (swap.blockTime >= s.lastT) {
        s.priceN = priceNative;
        s.lastT = swap.blockTime;
      }
      forgetOldIds(s.recentIds, s.lastT);
      journal(at.partition, { k: 'swap', offset: at.offset, swap, context });
      return true;
    },
    tick(chain, time) {
      for (let p = 0; p < partitions; p++)
        if (!owns(p)) journal(p, { k: 'tick', chain, time, at: chainPosition(state, p, chain) });
    },
  };
}
