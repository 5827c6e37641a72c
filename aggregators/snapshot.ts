// Aggregator state snapshots: v8.serialize (Maps, Sets and bigints as they are) written
// atomically (tmp file, fsync, rename) to <dataDir>/aggregator/snapshot-<name>.bin; one token's
// state as text for ClickHouse (distributed durable state, evicted tokens).
//
// File layout: SNAPSHOT_MAGIC, the byte lengths of the next two sections (u64 LE each), the state
// without its parked tokens (v8), the parked tokens' index (v8: [key, chain, updatedAt, expiry,
// length] each), then each parked token's bytes as kept in memory. Parked tokens are most of the
// state on the mainnet profile; their bytes go to the file from their own buffers, never into one
// state-sized buffer. A file without the magic is a whole-state v8 serialisation (older versions).
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import type { Context } from '../core/context.ts';
import type { AggregatorState, TokenState } from './state.ts';
import { upgradeState, upgradeToken } from './upgrade.ts';
import { ownCopy, packLegacyParked } from './parking.ts';
import type { Chain } from '../core/chains.ts';

export function snapshotDir(ctx: Context): string {
  return path.join(ctx.config.dataDir, 'aggregator');
}

export function snapshotPath(ctx: Context, name: string): string {
  return path.join(snapshotDir(ctx), `snapshot-${name}.bin`);
}

/** The aggregator's parked wallets (wallet-store.ts), beside its snapshot. */
export function walletStorePath(ctx: Context, name: string): string {
  return path.join(snapshotDir(ctx), `wallets-${name}.sqlite`);
}

const SNAPSHOT_MAGIC = Buffer.from('SPOTSNP2');
const HEAD_BYTES = SNAPSHOT_MAGIC.length + 16;
/** Written in pieces of about this size (parked tokens are ~2 KB each). */
const WRITE_CHUNK_BYTES = 4 * 1024 * 1024;

type ParkedIndexEntry = [key: string, chain: Chain, updatedAt: number, expiry: number | null, length: number];

/**
 * The state as the snapshot file's pieces, taken synchronously: it must not change under the
 * serialiser. Parked bytes are never changed in place (a token parked again gets new ones), so
 * the pieces can be written while processing goes on.
 */
export function serializeState(state: AggregatorState): Uint8Array[] {
  const { parked, ...rest } = state;
  const body = v8.serialize(rest);
  const entries = [...(parked ?? [])];
  const index = v8.serialize(
    entries.map(([key, p]): ParkedIndexEntry => [key, p.chain, p.updatedAt, p.expiry, p.bytes.byteLength]),
  );
  const head = Buffer.alloc(HEAD_BYTES);
  SNAPSHOT_MAGIC.copy(head);
  head.writeBigUInt64LE(BigInt(body.length), SNAPSHOT_MAGIC.length);
  head.writeBigUInt64LE(BigInt(index.length), SNAPSHOT_MAGIC.length + 8);
  return [head, body, index, ...entries.map(([, p]) => p.bytes)];
}

/** Bytes of a snapshot's pieces. */
export const snapshotBytes = (pieces: Uint8Array[]): number => pieces.reduce((sum, piece) => sum + piece.byteLength, 0);

/**
 * Writes a snapshot atomically (tmp file, fsync, rename) on libuv's pool, a few MB at a time: at
 * mainnet size (~220 MB for 33k tokens) the write and fsync took ~2.7 s of the ~4 s a synchronous
 * snapshot blocked the main thread.
 */
export async function writeSnapshotFile(file: string, pieces: Uint8Array[]): Promise<void> {
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  const handle = await fs.promises.open(tmp, 'w');
  try {
    for (let i = 0; i < pieces.length; ) {
      const chunk: Uint8Array[] = [];
      let bytes = 0;
      while (i < pieces.length && (chunk.length === 0 || bytes + pieces[i]!.byteLength <= WRITE_CHUNK_BYTES)) {
        bytes += pieces[i]!.byteLength;
        chunk.push(pieces[i++]!);
      }
      await handle.writeFile(chunk.length === 1 ? chunk[0]! : Buffer.concat(chunk, bytes));
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fs.promises.rename(tmp, file);
}

export function readSnapshot(file: string): AggregatorState | null {
  if (!fs.existsSync(file)) return null;
  const bytes = fs.readFileSync(file);
  const sectioned = bytes.subarray(0, SNAPSHOT_MAGIC.length).equals(SNAPSHOT_MAGIC);
  const state = sectioned ? readSections(bytes, file) : upgradeState(v8.deserialize(bytes));
  if (!state) throw new Error(`unsupported aggregator snapshot ${file}`);
  if (!sectioned) packLegacyParked(state);
  return state;
}

function readSections(bytes: Buffer, file: string): AggregatorState | null {
  const bodyLength = Number(bytes.readBigUInt64LE(SNAPSHOT_MAGIC.length));
  const indexLength = Number(bytes.readBigUInt64LE(SNAPSHOT_MAGIC.length + 8));
  let at = HEAD_BYTES;
  const state = upgradeState(v8.deserialize(bytes.subarray(at, (at += bodyLength))));
  const index = v8.deserialize(bytes.subarray(at, (at += indexLength))) as ParkedIndexEntry[];
  if (!state) return null;
  if (index.length > 0) state.parked = new Map();
  for (const [key, chain, updatedAt, expiry, length] of index) {
    // Each parked token gets its own copy: the file's buffer is freed once read.
    state.parked!.set(key, { bytes: ownCopy(bytes.subarray(at, (at += length))), chain, updatedAt, expiry });
  }
  if (at !== bytes.length) throw new Error(`aggregator snapshot ${file} is truncated or corrupt`);
  return state;
}

/** Removes every snapshot and the wallets parked beside it (spot replay starts from an empty state). */
export function dropSnapshots(ctx: Context): void {
  const dir = snapshotDir(ctx);
  if (!fs.existsSync(dir)) return;
  for (const file of fs.readdirSync(dir))
    if (file.startsWith('snapshot-') || file.startsWith('wallets-')) fs.rmSync(path.join(dir, file), { force: true });
}

/** One token's state as stored in ClickHouse (base64 of its v8 serialisation). */
export const encodeToken = (token: TokenState): string => v8.serialize(token).toString('base64');
export const decodeToken = (text: string): TokenState => upgradeToken(v8.deserialize(Buffer.from(text, 'base64')));
