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
// deflate input one by one, and an inflated batch is cut into its records straight from the bytes.
//
// Every key and value read from an inflated batch is a string of its own, never a slice of a
// batch-wide text: readers keep cuts of values for up to an hour (the serving thread's trades
// rings), and V8 keeps a slice's whole parent alive.
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
/** Text rows shorter than this are sliced rather than copied record by record (see recordCutter). */
const SLICED_TEXT_UNITS = 2 * DEFLATE_FROM_UNITS;
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

/**
 * The end of `units` UTF-16 units of text written as UTF-8 from byte `from`: one unit per sequence,
 * two for a four-byte one (a pair of surrogates). A lone surrogate was written as U+FFFD, three
 * bytes for its one unit.
 */
function utf8End(bytes: Buffer, from: number, units: number): number {
  let at = from;
  for (let left = units; left > 0; ) {
    const lead = bytes[at]!;
    if (lead < 0x80) at += 1;
    else if (lead < 0xe0) at += 2;
    else if (lead < 0xf0) at += 3;
    else {
      at += 4;
      left--;
    }
    left--;
  }
  return at;
}

/** A batch's records in order: `take` returns the next `units` of text, `skip` passes over them. */
interface RecordCutter {
  take(units: number): string;
  skip(units: number): void;
}

function recordCutter(data: string | Uint8Array): RecordCutter {
  let at = 0;
  // A short row stored as text is sliced: a slice keeps at most that row alive.
  if (typeof data === 'string' && data.length < SLICED_TEXT_UNITS)
    return { take: (units) => data.slice(at, (at += units)), skip: (units) => void (at += units) };
  // A long text row (SPOT_LOG_COMPRESSION=none) is cut as bytes too: SQLite keeps text as UTF-8.
  const bytes = typeof data === 'string' ? Buffer.from(data) : inflateRawSync(data);
  // ASCII (every topic's JSON but a rare name): a unit per byte.
  if (isAscii(bytes))
    return { take: (units) => bytes.toString('latin1', at, (at += units)), skip: (units) => void (at += units) };
  return {
    take(units) {
      const from = at;
      at = utf8End(bytes, from, units);
      return bytes.toString('utf8', from, at);
    },
    skip: (units) => void (at = utf8End(bytes, at, units)),
  };
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
  const records = recordCutter(batch.data);
  for (let i = 0, offset = baseOffset; 3 * i < layout.length && out.length < limit; i++, offset++) {
    const keyLength = layout[3 * i]!;
    const valueLength = layout[3 * i + 1]!;
    if (offset < fromOffset) {
      records.skip(keyLength + valueLength);
      continue;
    }
    if (!fitsBudget(budget, keyLength + valueLength, out.length === 0)) return;
    const key = records.take(keyLength);
    out.push({ topic, partition, offset, key, value: records.take(valueLength), timestamp: layout[3 * i + 2]! });
  }
}

/** Offset of the first record with timestamp >= `timestamp`, or null. */
export function firstRecordAtOrAfter(layoutJson: string, baseOffset: number, timestamp: number): number | null {
  const layout = JSON.parse(layoutJson) as number[];
  for (let i = 0; 3 * i < layout.length; i++) if (layout[3 * i + 2]! >= timestamp) return baseOffset + i;
  return null;
}
