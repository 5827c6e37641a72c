// Where the aggregator stands in each input partition. The merge (merge.ts) takes a partition's
// messages in offset order per chain, not as a whole, so a position is a low watermark (every
// offset below it processed: state.offsets) plus, per chain, the offset after the last message of
// that chain processed (state.chainOffsets). The messages processed are exactly those below the
// watermark and, of each chain, those below its offset: a restart seeks to the watermark and skips
// the rest, so nothing is lost or applied twice. Bounded: partitions × chains numbers.
import { TOPICS } from '../core/topics.ts';
import type { AggregatorState, PartitionOffsets } from './state.ts';

const slot = (topic: string, partition: number) => `${topic}:${partition}`;

/** Records a processed message; `low` is the partition's new low watermark. */
export function recordProcessed(
  state: AggregatorState,
  topic: string,
  partition: number,
  chain: string,
  offset: number,
  low: number,
): void {
  const key = slot(topic, partition);
  state.offsets[key] = low;
  (state.chainOffsets[key] ??= {})[chain] = offset + 1;
}

/** Per chain, the offsets below which a restart finds the partition's messages already processed. */
export const processedBelow = (state: AggregatorState, topic: string, partition: number): Record<string, number> =>
  state.chainOffsets[slot(topic, partition)] ?? {};

const chainOffset = (state: AggregatorState, topic: string, partition: number, chain: string): number =>
  state.chainOffsets[slot(topic, partition)]?.[chain] ?? 0;

/**
 * Distributed: per input topic, the offset after the last message of `chain` processed in the
 * partition (0: none since this state began). A state past another's here has processed a message
 * of that chain the other had not (a decay tick's position, a token's durable coverage).
 */
export const chainPosition = (state: AggregatorState, partition: number, chain: string): PartitionOffsets => ({
  swaps: chainOffset(state, TOPICS.swaps.name, partition, chain),
  events: chainOffset(state, TOPICS.tokenEvents.name, partition, chain),
});

/** Per input topic, the offset below which every message of `chain` in the partition is processed. */
export function chainReached(state: AggregatorState, partition: number, chain: string): PartitionOffsets {
  const at = chainPosition(state, partition, chain);
  return {
    swaps: Math.max(state.offsets[slot(TOPICS.swaps.name, partition)] ?? 0, at.swaps),
    events: Math.max(state.offsets[slot(TOPICS.tokenEvents.name, partition)] ?? 0, at.events),
  };
}
