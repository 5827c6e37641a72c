// Aggregator state snapshots: v8.serialize (Maps, Sets and bigints as they are) written
// atomically (tmp file, fsync, rename) to <dataDir>/aggregator/snapshot-<name>.bin; one token's
// state as text for ClickHouse (distributed durable state, evicted tokens).
//
// File layout: SNAPSHOT_MAGIC, the byte lengths of the next four sections (u64 LE each), the state
// without its tokens and wallets (v8), the parked tokens' index (v8: [key, chain, updatedAt, expiry,
// length] each), the index of the tokens in memory (v8: [key, length] each), the wallets' index
// (v8: their order, and the length of each piece), then each parked token's bytes as kept in
// memory, each token in memory as its own v8 serialisation, and the wallets as pieces of [key,
// wallet] entries. Parked tokens are most of the state on the mainnet profile; their bytes go to
// the file from their own buffers, never into one state-sized buffer. Files of the version before
// (SPOTSNP2) hold the tokens and wallets in memory in the state's section; a file without a magic
// is a whole-state v8 serialisation (older versions).
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import type { Context } from '../core/context.ts';
import type { AggregatorState, ParkedToken, TokenState, WalletState } from './state.ts';
import { upgradeState, upgradeToken } from './upgrade.ts';
import { onTokenRead, ownCopy, packLegacyParked } from './parking.ts';
import { onWalletRead } from './wallet-facts.ts';
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

const SNAPSHOT_MAGIC = Buffer.from('SPOTSNP3');
const SNAPSHOT_MAGIC_V2 = Buffer.from('SPOTSNP2');
const MAGIC_BYTES = SNAPSHOT_MAGIC.length;
/** The magic and four section lengths (SPOTSNP2: two). */
const HEAD_BYTES = MAGIC_BYTES + 32;
/**
 * Pieces handed to one writev (parked tokens are ~2 KB each). Written as they are, not copied into
 * 4 MB chunks first: that Buffer.concat, fresh memory each time, was 2.6 % of the main thread in a
 * live mainnet check.
 */
const WRITE_PIECES = 1024;

type ParkedIndexEntry = [key: string, chain: Chain, updatedAt: number, expiry: number | null, length: number];
type TokenIndexEntry = [key: string, length: number];
/** The wallets' order, and the byte length of each piece of [key, wallet] entries. */
type WalletIndex = [order: string[], lengths: number[]];
/** Wallets serialised together in one slice's piece (one alone when read before its slice). */
const WALLETS_PER_PIECE = 256;

/**
 * A snapshot's state as of one point, taken while processing goes on. Everything but the tokens and
 * wallets in memory is serialised at once. Each token or wallet is serialised by a slice of step(),
 * or when processing is about to read or change it (parking.ts onTokenRead, wallet-facts.ts
 * onWalletRead), whichever comes first. Parked bytes are never changed in place (a token parked
 * again gets new ones). Serialised at once, the state held the main thread 30–355 ms at mainnet
 * size; the largest token is ~2.4 MB (~5 ms), 20k wallets ~12 MB (~35 ms).
 */
export interface StateCapture {
  /** Serialises tokens, then wallets, until due() (at least one piece); true once all are in. */
  step(due: () => boolean): boolean;
  /** The file's pieces, once step() returned true. */
  pieces(): Uint8Array[];
  /** Stops capturing (a later snapshot supersedes this one): processing no longer waits on it. */
  abandon(): void;
}

/** Values a capture has yet to serialise, each taken once: by a slice, or before processing reads it. */
function pendingValues<T>(values: Map<string, T>, serialise: (entries: Array<[string, T]>) => void) {
  const waiting = new Map(values);
  return {
    waiting,
    take(key: string) {
      const value = waiting.get(key);
      if (value === undefined) return;
      waiting.delete(key);
      serialise([[key, value]]);
    },
    takeSome(count: number) {
      const entries: Array<[string, T]> = [];
      for (const entry of waiting) {
        entries.push(entry);
        waiting.delete(entry[0]);
        if (entries.length === count) break;
      }
      serialise(entries);
    },
  };
}

export function captureState(state: AggregatorState): StateCapture {
  const { parked, tokens, wallets, ...rest } = state;
  const body = v8.serialize(rest);
  const parkedEntries = [...(parked ?? [])];
  // The file keeps the tokens' and wallets' order (a restart iterates them as the uninterrupted run would).
  const tokenOrder = [...tokens.keys()];
  const walletOrder = [...wallets.keys()];
  const tokenBytes = new Map<string, Uint8Array>();
  const walletPieces: Uint8Array[] = [];
  const tokensLeft = pendingValues(tokens, (entries) => {
    for (const [key, token] of entries) tokenBytes.set(key, v8.serialize(token));
  });
  const walletsLeft = pendingValues(wallets, (entries) => walletPieces.push(v8.serialize(entries)));
  const left = () => tokensLeft.waiting.size + walletsLeft.waiting.size;
  onTokenRead(state, tokensLeft.take);
  onWalletRead(wallets, walletsLeft.take);
  return {
    step(due) {
      while (left() > 0) {
        if (tokensLeft.waiting.size > 0) tokensLeft.takeSome(1);
        else walletsLeft.takeSome(WALLETS_PER_PIECE);
        if (due()) break;
      }
      if (left() > 0) return false;
      onTokenRead(state, null);
      onWalletRead(wallets, null);
      return true;
    },
    abandon() {
      tokensLeft.waiting.clear();
      walletsLeft.waiting.clear();
      onTokenRead(state, null);
      onWalletRead(wallets, null);
    },
    pieces() {
      if (left() > 0) throw new Error('the snapshot capture is not complete');
      const parkedIndex = v8.serialize(
        parkedEntries.map(([key, p]): ParkedIndexEntry => [key, p.chain, p.updatedAt, p.expiry, p.bytes.byteLength]),
      );
      const tokenPieces = tokenOrder.map((key) => tokenBytes.get(key)!);
      const tokenIndex = v8.serialize(tokenOrder.map((key, i): TokenIndexEntry => [key, tokenPieces[i]!.byteLength]));
      const walletIndex = v8.serialize([walletOrder, walletPieces.map((piece) => piece.byteLength)] as WalletIndex);
      const head = Buffer.alloc(HEAD_BYTES);
      SNAPSHOT_MAGIC.copy(head);
      [body, parkedIndex, tokenIndex, walletIndex].forEach((section, i) =>
        head.writeBigUInt64LE(BigInt(section.length), MAGIC_BYTES + 8 * i),
      );
      return [
        head,
        body,
        parkedIndex,
        tokenIndex,
        walletIndex,
        ...parkedEntries.map(([, p]) => p.bytes),
        ...tokenPieces,
        ...walletPieces,
      ];
    },
  };
}

/** The state as the snapshot file's pieces, taken at once. */
export function serializeState(state: AggregatorState): Uint8Array[] {
  const capture = captureState(state);
  capture.step(() => false);
  return capture.pieces();
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
    for (let i = 0; i < pieces.length; i += WRITE_PIECES) {
      const group = pieces.slice(i, i + WRITE_PIECES);
      const { bytesWritten } = await handle.writev(group);
      // libuv retries short writes, and reports the bytes written so far when a retry fails (a full disk).
      const bytes = group.reduce((sum, piece) => sum + piece.byteLength, 0);
      if (bytesWritten !== bytes)
        throw new Error(`aggregator snapshot ${tmp}: wrote ${bytesWritten} of ${bytes} bytes`);
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
  const magic = bytes.subarray(0, MAGIC_BYTES);
  const sectioned = magic.equals(SNAPSHOT_MAGIC) || magic.equals(SNAPSHOT_MAGIC_V2);
  const state = sectioned
    ? readSections(bytes, file, magic.equals(SNAPSHOT_MAGIC))
    : upgradeState(v8.deserialize(bytes));
  if (!state) throw new Error(`unsupported aggregator snapshot ${file}`);
  if (!sectioned) packLegacyParked(state);
  return state;
}

function readSections(bytes: Buffer, file: string, current: boolean): AggregatorState | null {
  let at = current ? HEAD_BYTES : MAGIC_BYTES + 16;
  const corrupt = () => new Error(`aggregator snapshot ${file} is truncated or corrupt`);
  if (bytes.length < at) throw corrupt();
  const piece = (length: number) => {
    if (at + length > bytes.length) throw corrupt();
    return bytes.subarray(at, (at += length));
  };
  const length = (section: number) => Number(bytes.readBigUInt64LE(MAGIC_BYTES + 8 * section));
  const [bodyLength, indexLength, tokenIndexLength, walletIndexLength] = [0, 1, 2, 3].map((i) =>
    current || i < 2 ? length(i) : 0,
  );
  const body = v8.deserialize(piece(bodyLength!)) as AggregatorState;
  const index = v8.deserialize(piece(indexLength!)) as ParkedIndexEntry[];
  const tokenIndex = current ? (v8.deserialize(piece(tokenIndexLength!)) as TokenIndexEntry[]) : [];
  const [walletOrder, walletLengths] = current ? (v8.deserialize(piece(walletIndexLength!)) as WalletIndex) : [[], []];
  // Each parked token gets its own copy: the file's buffer is freed once read.
  const parked = new Map<string, ParkedToken>();
  for (const [key, chain, updatedAt, expiry, length] of index)
    parked.set(key, { bytes: ownCopy(piece(length)), chain, updatedAt, expiry });
  if (current) {
    body.tokens = new Map();
    for (const [key, length] of tokenIndex) body.tokens.set(key, v8.deserialize(piece(length)));
    const read = new Map<string, WalletState>();
    for (const length of walletLengths)
      for (const [key, wallet] of v8.deserialize(piece(length)) as Array<[string, WalletState]>) read.set(key, wallet);
    if (read.size !== walletOrder.length) throw corrupt();
    body.wallets = new Map(walletOrder.map((key) => [key, read.get(key)!]));
  }
  if (at !== bytes.length) throw corrupt();
  const state = upgradeState(body);
  if (!state) return null;
  if (parked.size > 0) state.parked = parked;
  return state;
}

/** Removes every snapshot, the wallets parked beside it and stop markers (spot replay starts from an empty state). */
export function dropSnapshots(ctx: Context): void {
  const dir = snapshotDir(ctx);
  if (!fs.existsSync(dir)) return;
  for (const file of fs.readdirSync(dir))
    if (file.startsWith('snapshot-') || file.startsWith('wallets-') || file.startsWith('stopped-'))
      fs.rmSync(path.join(dir, file), { force: true });
}

/** One token's state as stored in ClickHouse (base64 of its v8 serialisation). */
export const encodeToken = (token: TokenState): string => v8.serialize(token).toString('base64');
export const decodeToken = (text: string): TokenState => upgradeToken(v8.deserialize(Buffer.from(text, 'base64')));
