// A small Borsh codec driven by field lists, so one layout serves both decoder and encoder.
// Layouts only grow by appended fields: fields past `required` are optional and decoding stops
// quietly at the first one the buffer cannot hold; trailing bytes are ignored.
import { base58Decode, base58Encode } from './base58.ts';
import { createMemo } from '../../core/memo.ts';

export type FieldType =
  | 'u8'
  | 'bool'
  | 'u16'
  | 'u32'
  | 'i32'
  | 'u64'
  | 'i64'
  | 'u128'
  | 'pubkey'
  | 'string'
  | { struct: Field[] }
  | { vec: FieldType };
export type Field = readonly [name: string, type: FieldType];

export interface Layout {
  name: string;
  /** 8-byte discriminator, hex. */
  discriminator: string;
  fields: readonly Field[];
  /** How many leading fields every version carries. */
  required: number;
}

export type Value = number | bigint | boolean | string | Value[] | { [name: string]: Value };
export type Record_ = { [name: string]: Value };

class Truncated extends Error {}
// Thrown for every optional field past the end of an older layout: preallocated, because
// building an Error (and its stack) per decoded event costs more than the decode itself.
const ENDED = new Truncated('buffer ended');
const VECTOR_TOO_LONG = new Truncated('vector longer than the buffer');

// Events name the same mints, pools and wallets again and again: their base58 text is kept,
// keyed by the 32 bytes as latin1 (one char per byte, so distinct keys stay distinct).
const pubkeys = createMemo<string>(100_000);

function pubkeyText(view: Buffer, at: number): string {
  const key = view.toString('latin1', at, at + 32);
  return pubkeys.get(key) ?? pubkeys.set(key, base58Encode(view.subarray(at, at + 32)));
}

class Reader {
  offset = 0;
  constructor(private readonly view: Buffer) {}
  /** Start of the next n bytes, which must be there. */
  private claim(n: number): number {
    const at = this.offset;
    if (at + n > this.view.length) throw ENDED;
    this.offset = at + n;
    return at;
  }
  read(type: FieldType): Value {
    const view = this.view;
    if (typeof type === 'object') {
      if ('struct' in type) {
        const out: Record_ = {};
        for (const [name, fieldType] of type.struct) out[name] = this.read(fieldType);
        return out;
      }
      const count = view.readUInt32LE(this.claim(4));
      if (count > view.length) throw VECTOR_TOO_LONG;
      const items: Value[] = [];
      for (let i = 0; i < count; i++) items.push(this.read(type.vec));
      return items;
    }
    switch (type) {
      case 'u8':
        return view[this.claim(1)]!;
      case 'bool': {
        const byte = view[this.claim(1)]!;
        if (byte > 1) throw new RangeError(`invalid bool byte ${byte}`);
        return byte === 1;
      }
      case 'u16':
        return view.readUInt16LE(this.claim(2));
      case 'u32':
        return view.readUInt32LE(this.claim(4));
      case 'i32':
        return view.readInt32LE(this.claim(4));
      case 'u64':
        return view.readBigUInt64LE(this.claim(8));
      case 'i64':
        return view.readBigInt64LE(this.claim(8));
      case 'u128': {
        const at = this.claim(16);
        return view.readBigUInt64LE(at) | (view.readBigUInt64LE(at + 8) << 64n);
      }
      case 'pubkey': {
        const at = this.claim(32);
        return pubkeyText(view, at);
      }
      case 'string': {
        const length = view.readUInt32LE(this.claim(4));
        const at = this.claim(length);
        return view.toString('utf8', at, at + length);
      }
    }
  }
}

/** Decodes the payload after the discriminator. Throws when a required field is missing. */
export function decodeFields(layout: Layout, payload: Uint8Array): Record_ {
  const reader = new Reader(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength));
  const out: Record_ = {};
  for (let index = 0; index < layout.fields.length; index++) {
    const [name, type] = layout.fields[index]!;
    const start = reader.offset;
    try {
      out[name] = reader.read(type);
    } catch (error) {
      if (error instanceof Truncated && index >= layout.required) break;
      throw new RangeError(`${layout.name}: field ${name} at byte ${start + 8}: ${(error as Error).message}`);
    }
  }
  return out;
}

function writeValue(parts: Buffer[], type: FieldType, value: Value | undefined, path: string): void {
  if (value === undefined) throw new TypeError(`missing value for ${path}`);
  if (typeof type === 'object') {
    if ('struct' in type) {
      const record = value as Record_;
      for (const [name, fieldType] of type.struct) writeValue(parts, fieldType, record[name], `${path}.${name}`);
      return;
    }
    const items = value as Value[];
    const count = Buffer.alloc(4);
    count.writeUInt32LE(items.length);
    parts.push(count);
    items.forEach((item, i) => writeValue(parts, type.vec, item, `${path}[${i}]`));
    return;
  }
  switch (type) {
    case 'u8':
      return void sized(parts, 1).writeUInt8(Number(value));
    case 'bool':
      return void sized(parts, 1).writeUInt8(value ? 1 : 0);
    case 'u16':
      return void sized(parts, 2).writeUInt16LE(Number(value));
    case 'u32':
      return void sized(parts, 4).writeUInt32LE(Number(value));
    case 'i32':
      return void sized(parts, 4).writeInt32LE(Number(value));
    case 'u64':
      return void sized(parts, 8).writeBigUInt64LE(BigInt(value as bigint));
    case 'i64':
      return void sized(parts, 8).writeBigInt64LE(BigInt(value as bigint));
    case 'u128': {
      const big = BigInt(value as bigint);
      const buffer = sized(parts, 16);
      buffer.writeBigUInt64LE(big & 0xffffffffffffffffn, 0);
      buffer.writeBigUInt64LE(big >> 64n, 8);
      return;
    }
    case 'pubkey': {
      parts.push(pubkeyBytes(value as string, path));
      return;
    }
    case 'string': {
      const text = Buffer.from(value as string, 'utf8');
      sized(parts, 4).writeUInt32LE(text.length);
      parts.push(text);
      return;
    }
  }
}

/** A zeroed buffer of `size` bytes, appended to the parts (no per-field closure). */
function sized(parts: Buffer[], size: number): Buffer {
  const buffer = Buffer.alloc(size);
  parts.push(buffer);
  return buffer;
}

// The encoder writes the same keys over and over; the bytes are shared, never written to
// (encodeFields concatenates the parts into a new buffer). They are copied into slabs of their
// own: a Buffer.from() copy is a slice of Node's shared 8 KB pool, and one cached key kept its
// whole pool slab alive (measured: 235 MB of slabs behind 100,000 cached keys).
const pubkeyBuffers = new Map<string, Buffer>();
const SLAB_KEYS = 1024;
let slab = Buffer.allocUnsafeSlow(32 * SLAB_KEYS);
let slabUsed = 0;

export function pubkeyBytes(text: string, path: string): Buffer {
  let bytes = pubkeyBuffers.get(text);
  if (bytes === undefined) {
    const key = base58Decode(text);
    if (key.length !== 32) throw new RangeError(`${path}: not a 32-byte key`);
    if (pubkeyBuffers.size >= 100_000) {
      pubkeyBuffers.clear();
      slabUsed = slab.length; // the cleared keys' slabs go with them
    }
    if (slabUsed === slab.length) {
      slab = Buffer.allocUnsafeSlow(32 * SLAB_KEYS);
      slabUsed = 0;
    }
    bytes = slab.subarray(slabUsed, slabUsed + 32);
    bytes.set(key);
    slabUsed += 32;
    pubkeyBuffers.set(text, bytes);
  }
  return bytes;
}

/** discriminator ‖ the first `fieldCount` fields (all by default). */
export function encodeFields(layout: Layout, values: Record_, fieldCount = layout.fields.length): Buffer {
  const parts: Buffer[] = [Buffer.from(layout.discriminator, 'hex')];
  for (const [name, type] of layout.fields.slice(0, fieldCount))
    writeValue(parts, type, values[name], `${layout.name}.${name}`);
  return Buffer.concat(parts);
}
