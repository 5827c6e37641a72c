// Tokens as the views hold them: the JSON deflated against a dictionary of the Token schema's
// shape (about a fifth of the text), plus a flat object of the fields discovery reads.
// The full JSON of recently read tokens is kept in a bounded LRU of response Buffers, so hot
// reads cost a Map lookup and cold ones one inflate (tens of microseconds). A new version stays
// plain until it has not been replaced for a while (pack()): a token trading all the time gets a
// version every views pass, and deflating each (~50 µs) was most of the serving thread's catch-up.
import zlib from 'node:zlib';
import type { TSchema } from '@sinclair/typebox';
import { createMemo } from '../core/memo.ts';
import { Token as TokenSchema, type Column, type SortField, type Token } from '../core/schemas.ts';
import { discoveryFields, type DiscoveryFields } from './discovery-fields.ts';
import { columnOf, type SortValue } from './discovery-rules.ts';
import { createPackQueue } from './pack-queue.ts';

/** A token version as the views hold it. */
export interface TokenEntry {
  key: string;
  /** The fields discovery filters, sorts and columns read. */
  fields: DiscoveryFields;
  /** deflate-raw output as a latin1 string: one byte per byte inside the JS heap, no Buffer object (null while plain). */
  packed: string | null;
  /** The JSON until it is packed (an entry dropped while plain keeps it for readers still holding it). */
  plain: Buffer | null;
  column: Column | null;
  sortCache: Partial<Record<SortField, SortValue>>;
}

export interface TokenPacker {
  /** `text` is the token's JSON when the caller has it (a log message), else it is serialised here. */
  entry(key: string, token: Token, text?: string): TokenEntry;
  /** The token's full JSON (the token details body). */
  body(entry: TokenEntry): Buffer;
  /** The entry was replaced or removed: its body is not needed any more. */
  drop(entry: TokenEntry): void;
  /**
   * Deflates the plain versions made before `madeBefore` (performance.now()), oldest first, while
   * `due` says the slice has time left; returns how many stay plain.
   */
  pack(madeBefore: number, due?: () => boolean): number;
}

/** Plain versions kept at most (~5 KB each); past it, the oldest is deflated at once. */
const MAX_PLAIN = 4096;
/** Distinct chain, launchpad and anchor-symbol strings shared at most (the real sets are a few dozen). */
const MAX_SHARED = 1024;

/** A JSON value shaped like the schema, strings as "0": the keys and punctuation a token repeats. */
function skeleton(schema: TSchema): unknown {
  const s = schema as TSchema & {
    type?: string;
    properties?: Record<string, TSchema>;
    anyOf?: TSchema[];
    items?: TSchema;
    patternProperties?: Record<string, TSchema>;
  };
  if (s.anyOf) return skeleton(s.anyOf.find((x) => (x as { type?: string }).type !== 'null') ?? s.anyOf[0]!);
  if (s.type === 'object' && s.properties)
    return Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, skeleton(v)]));
  if (s.type === 'array') return [];
  if (s.type === 'integer' || s.type === 'number') return 0;
  if (s.type === 'boolean') return false;
  if (s.type === 'null') return null;
  return '0';
}

const STATS_WINDOWS = ['5m', '30m', '1h', '6h', '24h'];
const DICTIONARY = (() => {
  const shape = skeleton(TokenSchema) as Record<string, unknown>;
  // `stats` is a record keyed by window: spell the windows out.
  const window =
    (shape.stats as Record<string, unknown> | undefined)?.['5m'] ?? Object.values((shape.stats as object) ?? {})[0];
  if (window !== undefined) shape.stats = Object.fromEntries(STATS_WINDOWS.map((w) => [w, window]));
  return Buffer.from(JSON.stringify(shape));
})();

export function createTokenPacker(options: { hotBodies?: number; maxPlain?: number } = {}): TokenPacker {
  const capacity = options.hotBodies ?? 1024;
  const maxPlain = options.maxPlain ?? MAX_PLAIN;
  // Least recently read first.
  const hot = new Map<TokenEntry, Buffer>();
  // Chains, launchpads and anchor symbols: a few values repeated over every token version, one copy each.
  const shared = createMemo<string>(MAX_SHARED);
  const intern = (text: string) => shared.get(text) ?? shared.set(text, text);

  const remember = (entry: TokenEntry, body: Buffer) => {
    hot.set(entry, body);
    if (hot.size > capacity) hot.delete(hot.keys().next().value as TokenEntry);
  };

  function packOne(entry: TokenEntry): void {
    // Level 1: a token version is packed once per update, so packing speed matters more than the last bytes.
    entry.packed = zlib.deflateRawSync(entry.plain!, { dictionary: DICTIONARY, level: 1 }).toString('latin1');
    entry.plain = null;
  }
  // Versions not deflated yet.
  const plain = createPackQueue(packOne, maxPlain);

  return {
    entry(key, token, text) {
      const fields = discoveryFields(token, intern);
      const entry: TokenEntry = {
        key,
        fields,
        packed: null,
        plain: Buffer.from(text ?? JSON.stringify(token)),
        column: columnOf(fields),
        sortCache: {},
      };
      plain.add(entry);
      return entry;
    },
    body(entry) {
      if (entry.plain) return entry.plain;
      let body = hot.get(entry);
      if (body !== undefined) {
        hot.delete(entry);
      } else {
        body = zlib.inflateRawSync(Buffer.from(entry.packed!, 'latin1'), { dictionary: DICTIONARY });
      }
      remember(entry, body);
      return body;
    },
    drop(entry) {
      plain.delete(entry);
      hot.delete(entry);
    },
    pack: (madeBefore, due) => plain.pack(madeBefore, due),
  };
}
