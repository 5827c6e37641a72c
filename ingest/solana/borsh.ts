// A small Borsh codec driven by field lists, so one layout serves both decoder and encoder.
// Layouts only grow by appended fields: fields past `required` are optional and decoding stops
// quietly at the first one the buffer cannot hold; trailing bytes are ignored.
import { base58Decode, base58Encode } from './base58.ts';

export type FieldType =
  | 'u8' | 'bool' | 'u16' | 'u32' | 'i32' | 'u64' | 'i64' | 'u128' | 'pubkey' | 'string'
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

class Reader {
  offset = 0;
  constructor(private readonly view: Buffer) {}
  take(n: number): Buffer {
    if (this.offset + n > this.view.length) throw new Truncated('buffer ended');
    const slice = this.view.subarray(this.offset, this.offset + n);
    this.offset += n;
    return slice;
  }
  read(type: FieldType): Value {
    if (typeof type === 'object') {
      if ('struct' in type) {
        const out: Record_ = {};
        for (const [name, fieldType] of type.struct) out[name] = this.read(fieldType);
        return out;
      }
      const count = this.take(4).readUInt32LE(0);
      if (count > this.view.length) throw new Truncated('vector longer than the buffer');
      return Array.from({ length: count }, () => this.read(type.vec));
    }
    switch (type) {
      case 'u8': return this.take(1).readUInt8(0);
      case 'bool': {
        const byte = this.take(1).readUInt8(0);
        if (byte > 1) throw new RangeError(`invalid bool byte ${byte}`);
        return byte === 1;
      }
      case 'u16': return this.take(2).readUInt16LE(0);
      case 'u32': return this.take(4).readUInt32LE(0);
      case 'i32': return this.take(4).readInt32LE(0);
      case 'u64': return this.take(8).readBigUInt64LE(0);
      case 'i64': return this.take(8).readBigInt64LE(0);
      case 'u128': {
        const bytes = this.take(16);
        return bytes.readBigUInt64LE(0) | (bytes.readBigUInt64LE(8) << 64n);
      }
      case 'pubkey': return base58Encode(this.take(32));
      case 'string': {
        const length = this.take(4).readUInt32LE(0);
        return this.take(length).toString('utf8');
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
  const fixed = (size: number, write: (buffer: Buffer) => void) => {
    const buffer = Buffer.alloc(size);
    write(buffer);
    parts.push(buffer);
  };
  switch (type) {
    case 'u8': return fixed(1, (b) => b.writeUInt8(Number(value)));
    case 'bool': return fixed(1, (b) => b.writeUInt8(value ? 1 : 0));
    case 'u16': return fixed(2, (b) => b.writeUInt16LE(Number(value)));
    case 'u32': return fixed(4, (b) => b.writeUInt32LE(Number(value)));
    case 'i32': return fixed(4, (b) => b.writeInt32LE(Number(value)));
    case 'u64': return fixed(8, (b) => b.writeBigUInt64LE(BigInt(value as bigint)));
    case 'i64': return fixed(8, (b) => b.writeBigInt64LE(BigInt(value as bigint)));
    case 'u128': return fixed(16, (b) => {
      const big = BigInt(value as bigint);
      b.writeBigUInt64LE(big & 0xffffffffffffffffn, 0);
      b.writeBigUInt64LE(big >> 64n, 8);
    });
    case 'pubkey': {
      const key = base58Decode(value as string);
      if (key.length !== 32) throw new RangeError(`${path}: not a 32-byte key`);
      parts.push(Buffer.from(key));
      return;
    }
    case 'string': {
      const text = Buffer.from(value as string, 'utf8');
      fixed(4, (b) => b.writeUInt32LE(text.length));
      parts.push(text);
      return;
    }
  }
}

/** discriminator ‖ the first `fieldCount` fields (all by default). */
export function encodeFields(layout: Layout, values: Record_, fieldCount = layout.fields.length): Buffer {
  const parts: Buffer[] = [Buffer.from(layout.discriminator, 'hex')];
  for (const [name, type] of layout.fields.slice(0, fieldCount)) writeValue(parts, type, values[name], `${layout.name}.${name}`);
  return Buffer.concat(parts);
}
