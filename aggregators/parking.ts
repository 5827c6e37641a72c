// Embedded aggregator: a token with no input for PARK_IDLE_MS of its chain's event time is kept as
// its v8 serialisation, deflated (~1.9 KB off the JS heap), instead of its objects (~11 KB on the
// heap, more with its holder index). Most launches trade for minutes and then wait a day in memory for their
// 24h windows to empty: on the mainnet profile ~97 % of the tokens in memory are idle. Reading a
// parked token through tokenIn brings it back, the same state; nothing outside the aggregator sees
// the difference (test/aggregator-parking.test.ts compares every table with a run that parks none).
import v8 from 'node:v8';
import zlib from 'node:zlib';
import type { AggregatorState, ParkedToken, TokenState } from './state.ts';
import { upgradeToken } from './upgrade.ts';

export const PARK_IDLE_MS = 10 * 60_000;
/** Idle tokens are looked for each time a chain's watermark enters a new minute. */
export const PARK_TICK_MS = 60_000;

/** Deflated at level 1: 2.3x smaller, ~20 µs to inflate (measured on the mainnet profile's tokens). */
// zlib's result is a view into its 16 KB output chunk: a parked token keeps only its own bytes.
const pack = (bytes: Uint8Array): Buffer => ownCopy(zlib.deflateRawSync(bytes, { level: 1 }));

/** A parked token's serialisation (v8, as snapshot.ts encodes a token). */
const unpack = (bytes: Uint8Array): Buffer => zlib.inflateRawSync(bytes);

const decode = (bytes: Uint8Array): TokenState => upgradeToken(v8.deserialize(unpack(bytes)));

/** Per state, what must see a token's key before tokenIn hands the token out (a snapshot capture). */
const tokenReadHooks = new WeakMap<AggregatorState, (key: string) => void>();

/** Sets (or clears, with null) the hook tokenIn calls with each key before it hands the token out. */
export function onTokenRead(state: AggregatorState, hook: ((key: string) => void) | null): void {
  if (hook) tokenReadHooks.set(state, hook);
  else tokenReadHooks.delete(state);
}

/** The token's state, brought back into `tokens` when it was parked. */
export function tokenIn(state: AggregatorState, key: string): TokenState | undefined {
  tokenReadHooks.get(state)?.(key);
  const live = state.tokens.get(key);
  if (live || !state.parked) return live;
  const parked = state.parked.get(key);
  if (!parked) return undefined;
  state.parked.delete(key);
  const token = decode(parked.bytes);
  state.tokens.set(key, token);
  return token;
}

/** Moves a token out of `tokens`; `expiry` is when its windows next lose a trade (null: they hold none). */
export function parkToken(state: AggregatorState, key: string, token: TokenState, expiry: number | null): void {
  (state.parked ??= new Map()).set(key, {
    bytes: pack(v8.serialize(token)),
    chain: token.chain,
    updatedAt: token.updatedAt,
    expiry,
  });
  state.tokens.delete(key);
}

/** A parked token's state as a copy, leaving it parked (reads of every token). */
export const parkedState = (parked: ParkedToken): TokenState => decode(parked.bytes);

/** The parked token as ClickHouse keeps evicted tokens (snapshot.ts encodeToken). */
export const parkedBase64 = (parked: ParkedToken): string => unpack(parked.bytes).toString('base64');

/** Tokens in memory, parked or not. */
export const tokensInMemory = (state: AggregatorState): number => state.tokens.size + (state.parked?.size ?? 0);

/** Brings every parked token back (distributed ownership keeps none parked). */
export function unparkAll(state: AggregatorState): void {
  if (!state.parked) return;
  for (const [key, parked] of state.parked) state.tokens.set(key, decode(parked.bytes));
  state.parked = undefined;
}

/** A copy of bytes in an allocation of their own (not a view into a larger buffer). */
export function ownCopy(bytes: Uint8Array): Buffer {
  const own = Buffer.allocUnsafeSlow(bytes.byteLength);
  own.set(bytes);
  return own;
}

/** Snapshots before the parked section kept them undeflated inside the state (loaded once, then packed). */
export function packLegacyParked(state: AggregatorState): void {
  for (const parked of state.parked?.values() ?? []) parked.bytes = pack(parked.bytes);
}
