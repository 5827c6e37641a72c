// A run of consecutive messages of one partition stored as one SQLite row, like a Kafka record
// batch: `data` is every key and value concatenated, `layout` a JSON array of
// [keyLength, valueLength, timestamp] triples (lengths in UTF-16 units, so decoding is slicing).
// One row per append chunk instead of one per message is what lets the embedded log write
// hundreds of thousands of messages a second; the string form keeps the work in native code.
//
// `data` is stored deflated (a BLOB) when that is smaller: on a mainnet-profile log the batches
// take 3.8x less (20 GB an hour at 2,000 swaps/s as text, 5.4 deflated), and the WAL and
// checkpoint writes with them. Rows written as text (before, too small to gain, or with
// SPOT_LOG_COMPRESSION=none) stay readable: the column's type says which.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { LogMessage } from './types.ts';

export interface BatchRecord {
  key: string;
  value: string;
  timestamp: number;
}

export interface EncodedBatch {
  /** The keys and values concatenated, or those as UTF-8 deflated. */
  data: string | Uint8Array;
  layout: string;
}

/** Shorter data stays text: deflate's fixed cost is not worth a few hundred bytes. */
const DEFLATE_FROM_UNITS = 512;
/** zlib's fastest level: higher ones gain 5-8% more at up to half the speed. */
const DEFLATE_LEVEL = 1;

function pack(text: string): string | Uint8Array {
  if (text.length < DEFLATE_FROM_UNITS) return text;
  const utf8 = Buffer.from(text, 'utf8');
  const deflated = deflateRawSync(utf8, { level: DEFLATE_LEVEL });
  return deflated.length < utf8.length ? deflated : text;
}

function unpack(data: string | Uint8Array): string {
  return typeof data === 'string' ? data : inflateRawSync(data).toString('utf8');
}

/** `deflate`: store the data deflated where that is smaller (SPOT_LOG_COMPRESSION), else as text. */
export function encodeRecords(records: BatchRecord[], deflate = true): EncodedBatch {
  let data = '';
  const layout = new Array<number>(records.length * 3);
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    data += record.key;
    data += record.value;
    layout[3 * i] = record.key.length;
    layout[3 * i + 1] = record.value.length;
    layout[3 * i + 2] = record.timestamp;
  }
  return { data: deflate ? pack(data) : data, layout: JSON.stringify(layout) };
}

/**
 * Characters of keys and values a fetch may still read. A message that would overrun it is left
 * for the next fetch (`full`), unless it is the fetch's first.
 */
export interface FetchBudget {
  chars: number;
  full: boolean;
}

/** Takes a message's size from the budget; false (and `full`) when it does not fit. */
export function fitsBudget(budget: FetchBudget, chars: number, first: boolean): boolean {
  if (!first && chars > budget.chars) {
    budget.full = true;
    return false;
  }
  budget.chars -= chars;
  return true;
}

/**
 * Appends to `out` the records of a batch starting at `baseOffset`, skipping those before
 * `fromOffset` and stopping once `out` holds `limit` messages or the budget is spent.
 */
export function decodeRecords(
  batch: EncodedBatch,
  baseOffset: number,
  topic: string,
  partition: number,
  fromOffset: number,
  limit: number,
  out: LogMessage[],
  budget: FetchBudget,
): void {
  const layout = JSON.parse(batch.layout) as number[];
  const data = unpack(batch.data);
  let at = 0;
  for (let i = 0, offset = baseOffset; 3 * i < layout.length && out.length < limit; i++, offset++) {
    const keyLength = layout[3 * i]!;
    const valueLength = layout[3 * i + 1]!;
    if (offset >= fromOffset) {
      if (!fitsBudget(budget, keyLength + valueLength, out.length === 0)) return;
      out.push({
        topic,
        partition,
        offset,
        key: data.slice(at, at + keyLength),
        value: data.slice(at + keyLength, at + keyLength + valueLength),
        timestamp: layout[3 * i + 2]!,
      });
    }
    at += keyLength + valueLength;
  }
}

/** Offset of the first record with timestamp >= `timestamp`, or null. */
export function firstRecordAtOrAfter(layoutJson: string, baseOffset: number, timestamp: number): number | null {
  const layout = JSON.parse(layoutJson) as number[];
  for (let i = 0; 3 * i < layout.length; i++) if (layout[3 * i + 2]! >= timestamp) return baseOffset + i;
  return null;
}
