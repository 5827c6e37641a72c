// The progress marks (core/topics.ts, ChainMark) a topic holds, per partition.
import type { EventLog } from '../../core/eventlog/types.ts';
import { isChainMark } from '../../core/topics.ts';

/** The block times of the marks on each partition of `topic`, of `chain` or of every chain, in offset order. */
export async function markTimesByPartition(log: EventLog, topic: string, chain?: string): Promise<number[][]> {
  const partitions = (await log.endOffsets(topic)).size;
  const times: number[][] = Array.from({ length: partitions }, () => []);
  await log.readToEnd(topic, (message) => {
    const value = JSON.parse(message.value) as unknown;
    if (isChainMark(value) && (chain === undefined || value.chain === chain))
      times[message.partition]!.push(value.blockTime);
  });
  return times;
}
