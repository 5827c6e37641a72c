// SPL Token / Token-2022 mint accounts and Metaplex metadata accounts, as getAccountInfo returns
// their data. Layouts (sources in docs/token-fields.md):
// - Mint (82 bytes): mint_authority COption<Pubkey> (u32 tag + 32), supply u64, decimals u8,
//   is_initialized u8, freeze_authority COption<Pubkey>.
// - Token-2022 mint with extensions: the base padded to 165 bytes, account type u8 (1 = mint) at
//   165, then TLV entries (type u16, length u16, value) from 166.
// - Metaplex metadata v1: key u8 (4), update_authority 32, mint 32, name/symbol/uri as Borsh
//   strings padded with NULs.
import { base58Decode, base58Encode } from './base58.ts';
import { findProgramAddress } from './pda.ts';

export const METAPLEX_METADATA_PROGRAM = 'metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s';
const MINT_LEN = 82;
const ACCOUNT_LEN = 165;
const ACCOUNT_TYPE_MINT = 1;

/** Token-2022 ExtensionType values read here. */
export const EXTENSION = {
  transferFeeConfig: 1,
  defaultAccountState: 6,
  nonTransferable: 9,
  permanentDelegate: 12,
  transferHook: 14,
  metadataPointer: 18,
  tokenMetadata: 19,
  pausable: 26,
} as const;

export interface OnChainMetadata {
  name: string;
  symbol: string;
  uri: string;
}

export interface MintFacts {
  mintAuthority: string | null;
  freezeAuthority: string | null;
  supply: bigint;
  decimals: number;
  /** Basis points of the fee in effect now (the newer fee once its epoch is reached). */
  transferFeeBps: number;
  permanentDelegate: string | null;
  defaultFrozen: boolean;
  transferHookProgram: string | null;
  nonTransferable: boolean;
  pausable: boolean;
  /** Token-2022 metadata extension (name, symbol, uri), when the mint carries it. */
  metadata: OnChainMetadata | null;
}

const isZero = (bytes: Uint8Array) => bytes.every((b) => b === 0);
/** OptionalNonZeroPubkey: all zeros means none. */
const nonZeroKey = (data: Buffer, at: number) => {
  const bytes = data.subarray(at, at + 32);
  return bytes.length === 32 && !isZero(bytes) ? base58Encode(bytes) : null;
};

function readCOptionKey(data: Buffer, at: number): string | null {
  return data.readUInt32LE(at) === 1 ? base58Encode(data.subarray(at + 4, at + 36)) : null;
}

/** Reads a u32-length string; bounded by the buffer, trailing NULs dropped. */
function readString(data: Buffer, at: number): { value: string; next: number } {
  const length = data.readUInt32LE(at);
  if (at + 4 + length > data.length) throw new RangeError('string runs past the account');
  return { value: data.toString('utf8', at + 4, at + 4 + length).replace(/\0+$/, ''), next: at + 4 + length };
}

function readTokenMetadata(value: Buffer): OnChainMetadata {
  // update_authority (32), mint (32), then name, symbol, uri; additional_metadata follows
  const name = readString(value, 64);
  const symbol = readString(value, name.next);
  const uri = readString(value, symbol.next);
  return { name: name.value, symbol: symbol.value, uri: uri.value };
}

/** Decodes a mint account (SPL Token or Token-2022); throws RangeError on data too short to be one. */
export function decodeMintAccount(data: Uint8Array, currentEpoch?: bigint): MintFacts {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (buf.length < MINT_LEN) throw new RangeError(`mint account of ${buf.length} bytes`);
  const facts: MintFacts = {
    mintAuthority: readCOptionKey(buf, 0),
    supply: buf.readBigUInt64LE(36),
    decimals: buf.readUInt8(44),
    freezeAuthority: readCOptionKey(buf, 46),
    transferFeeBps: 0,
    permanentDelegate: null,
    defaultFrozen: false,
    transferHookProgram: null,
    nonTransferable: false,
    pausable: false,
    metadata: null,
  };
  if (buf.length <= ACCOUNT_LEN || buf[ACCOUNT_LEN] !== ACCOUNT_TYPE_MINT) return facts;
  for (let at = ACCOUNT_LEN + 1; at + 4 <= buf.length; ) {
    const type = buf.readUInt16LE(at);
    const length = buf.readUInt16LE(at + 2);
    if (type === 0 || at + 4 + length > buf.length) break; // uninitialised padding, or truncated
    const value = buf.subarray(at + 4, at + 4 + length);
    switch (type) {
      case EXTENSION.transferFeeConfig: {
        // authorities 2×32, withheld u64, older {epoch u64, max u64, bps u16}, newer {same}
        if (length < 108) break;
        const newerEpoch = value.readBigUInt64LE(90);
        const useNewer = currentEpoch === undefined || currentEpoch >= newerEpoch;
        facts.transferFeeBps = useNewer ? value.readUInt16LE(106) : value.readUInt16LE(88);
        break;
      }
      case EXTENSION.defaultAccountState:
        facts.defaultFrozen = value[0] === 2; // AccountState::Frozen
        break;
      case EXTENSION.nonTransferable:
        facts.nonTransferable = true;
        break;
      case EXTENSION.permanentDelegate:
        facts.permanentDelegate = nonZeroKey(value, 0);
        break;
      case EXTENSION.transferHook:
        facts.transferHookProgram = nonZeroKey(value, 32);
        break;
      case EXTENSION.pausable:
        facts.pausable = true; // PausableConfig: an authority may pause every transfer
        break;
      case EXTENSION.tokenMetadata:
        facts.metadata = readTokenMetadata(value);
        break;
    }
    at += 4 + length;
  }
  return facts;
}

/** The Metaplex metadata account (PDA) of a mint. */
export function metaplexMetadataAddress(mint: string): string {
  return findProgramAddress(
    [Buffer.from('metadata'), base58Decode(METAPLEX_METADATA_PROGRAM), base58Decode(mint)],
    METAPLEX_METADATA_PROGRAM,
  );
}

/** name, symbol and uri of a Metaplex metadata account; throws RangeError on anything else. */
export function decodeMetaplexMetadata(data: Uint8Array): OnChainMetadata & { mint: string } {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (buf.length < 1 + 64 + 12 || buf[0] !== 4) throw new RangeError('not a Metaplex metadata v1 account');
  const name = readString(buf, 65);
  const symbol = readString(buf, name.next);
  const uri = readString(buf, symbol.next);
  return { mint: base58Encode(buf.subarray(33, 65)), name: name.value, symbol: symbol.value, uri: uri.value };
}

// Encoders: tests and the simulator build the accounts a real node would return.

export interface MintAccountSpec {
  mintAuthority?: string | null;
  freezeAuthority?: string | null;
  supply?: bigint;
  decimals?: number;
  transferFeeBps?: number;
  permanentDelegate?: string | null;
  defaultFrozen?: boolean;
  transferHookProgram?: string | null;
  nonTransferable?: boolean;
  pausable?: boolean;
  metadata?: OnChainMetadata & { mint: string };
}

function cOptionKey(key: string | null | undefined): Buffer {
  const out = Buffer.alloc(36);
  if (key) {
    out.writeUInt32LE(1, 0);
    out.set(base58Decode(key), 4);
  }
  return out;
}

const keyOrZero = (key: string | null | undefined) => (key ? Buffer.from(base58Decode(key)) : Buffer.alloc(32));

function borshString(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(bytes.length);
  return Buffer.concat([length, bytes]);
}

function tlv(type: number, value: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt16LE(type, 0);
  head.writeUInt16LE(value.length, 2);
  return Buffer.concat([head, value]);
}

/** A mint account as the chain stores it: 82 bytes for a plain mint, TLV extensions otherwise. */
export function encodeMintAccount(spec: MintAccountSpec): Buffer {
  const base = Buffer.alloc(MINT_LEN);
  cOptionKey(spec.mintAuthority).copy(base, 0);
  base.writeBigUInt64LE(spec.supply ?? 0n, 36);
  base.writeUInt8(spec.decimals ?? 6, 44);
  base.writeUInt8(1, 45);
  cOptionKey(spec.freezeAuthority).copy(base, 46);
  const entries: Buffer[] = [];
  if (spec.transferFeeBps) {
    const value = Buffer.alloc(108);
    value.writeBigUInt64LE(2n ** 64n - 1n, 80); // older maximum fee
    value.writeUInt16LE(spec.transferFeeBps, 88);
    value.writeBigUInt64LE(2n ** 64n - 1n, 98);
    value.writeUInt16LE(spec.transferFeeBps, 106);
    entries.push(tlv(EXTENSION.transferFeeConfig, value));
  }
  if (spec.defaultFrozen) entries.push(tlv(EXTENSION.defaultAccountState, Buffer.from([2])));
  if (spec.nonTransferable) entries.push(tlv(EXTENSION.nonTransferable, Buffer.alloc(0)));
  if (spec.permanentDelegate) entries.push(tlv(EXTENSION.permanentDelegate, keyOrZero(spec.permanentDelegate)));
  if (spec.transferHookProgram)
    entries.push(tlv(EXTENSION.transferHook, Buffer.concat([Buffer.alloc(32), keyOrZero(spec.transferHookProgram)])));
  if (spec.pausable) entries.push(tlv(EXTENSION.pausable, Buffer.alloc(33)));
  if (spec.metadata) {
    const m = spec.metadata;
    const value = Buffer.concat([
      Buffer.alloc(32),
      keyOrZero(m.mint),
      borshString(m.name),
      borshString(m.symbol),
      borshString(m.uri),
      Buffer.alloc(4), // no additional metadata
    ]);
    entries.push(tlv(EXTENSION.tokenMetadata, value));
  }
  if (entries.length === 0) return base;
  return Buffer.concat([base, Buffer.alloc(ACCOUNT_LEN - MINT_LEN), Buffer.from([ACCOUNT_TYPE_MINT]), ...entries]);
}

/** A Metaplex metadata v1 account with fixed-width (NUL-padded) name 32, symbol 10, uri 200. */
export function encodeMetaplexMetadata(m: OnChainMetadata & { mint: string; updateAuthority?: string }): Buffer {
  const padded = (text: string, width: number) => borshString(text.padEnd(width, '\0'));
  return Buffer.concat([
    Buffer.from([4]),
    keyOrZero(m.updateAuthority),
    keyOrZero(m.mint),
    padded(m.name, 32),
    padded(m.symbol, 10),
    padded(m.uri, 200),
    Buffer.from([0, 0]), // seller fee bps
    Buffer.from([0]), // no creators
  ]);
}
