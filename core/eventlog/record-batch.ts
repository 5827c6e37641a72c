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
//
// Neither side builds the batch as one string: V8 puts a string past 128 KiB in its large-object
// space, a fresh mapping each, and on this machine that made the whole-batch string (joined before
// deflating, decoded after inflating) cost 2-3x the zlib call. Keys and values are written to the
// deflate input one by one, and an inflated batch of ASCII (every topic's JSON but a rare name) is
// cut into its records straight from the bytes.
import { isAscii } from 'node:buffer';
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

/** The deflate input, reused (deflateRawSync is done with it on return): the largest batch's UTF-8 size, per thread. */
let scratch = Buffer.allocUnsafeSlow(64 * 1024);

function utf8Of(records: readonly BatchRecord[]): Buffer {
  let at = 0;
  const put = (text: string) => {
    const most = at + 3 * text.length;
    if (most > scratch.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(most, 2 * scratch.length));
      scratch.copy(grown, 0, 0, at);
      scratch = grown;
    }
    at += scratch.write(text, at);
  };
  for (const record of records) {
    put(record.key);
    put(record.value);
  }
  return scratch.subarray(0, at);
}

function joined(records: readonly BatchRecord[]): string {
  let data = '';
  for (const record of records) data += record.key + record.value;
  return data;
}

/** `deflate`: store the data deflated where that is smaller (SPOT_LOG_COMPRESSION), else as text. */
export function encodeRecords(records: BatchRecord[], deflate = true): EncodedBatch {
  const layout = new Array<number>(records.length * 3);
  let units = 0;
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    layout[3 * i] = record.key.length;
    layout[3 * i + 1] = record.value.length;
    layout[3 * i + 2] = record.timestamp;
    units += record.key.length + record.value.length;
  }
  let data: string | Uint8Array | null = null;
  if (deflate && units >= DEFLATE_FROM_UNITS) {
    const utf8 = utf8Of(records);
    const deflated = deflateRawSync(utf8, { level: DEFLATE_LEVEL });
    if (deflated.length < utf8.length) data = deflated;
  }
  return { data: data ?? joined(records), layout: JSON.stringify(layout) };
}

/** A batch's data to cut records from: text, or inflated bytes that are ASCII (a unit per byte). */
type Unpacked = { text: string; bytes: null } | { text: null; bytes: Buffer };

function unpack(data: string | Uint8Array): Unpacked {
  if (typeof data === 'string') return { text: data, bytes: null };
  const bytes = inflateRawSync(data);
  return isAscii(bytes) ? { text: null, bytes } : { text: bytes.toString('utf8'), bytes: null };
}

const cut = (data: Unpacked, from: number, to: number): string =>
  data.bytes ? data.bytes.toString('latin1', from, to) : data.text.slice(from, to);

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
        key: cut(data, at, at + keyLength),
        value: cut(data, at + keyLength, at + keyLength + valueLength),
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
