// Discovery boards from memory: per chain, the tokens of each column are kept in a set that is
// updated when a token changes, so a request ranks only the members of the columns it names
// (bounded by the 24 h staleness rule), never every token.
import type { Chain } from '../core/chains.ts';
import { CHAINS } from '../core/chains.ts';
import { COLUMNS, type Column, type ColumnConfig, type SortField } from '../core/schemas.ts';
import { compileFilters } from './discovery-filters.ts';
import { effectiveSort, sortValue, type SortValue } from './discovery-rules.ts';
import type { TokenEntry } from './token-pack.ts';

export type { TokenEntry } from './token-pack.ts';

function sortOf(entry: TokenEntry, field: SortField): SortValue {
  if (!(field in entry.sortCache)) entry.sortCache[field] = sortValue(entry.fields, field);
  return entry.sortCache[field]!;
}

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

export const clampLimit = (limit: number | null | undefined) =>
  Math.min(MAX_LIMIT, Math.max(1, limit ?? DEFAULT_LIMIT));

export interface DiscoveryIndex {
  /** Places a token version in its column (moving it out of the previous one). */
  upsert(entry: TokenEntry, previous: TokenEntry | undefined): void;
  remove(entry: TokenEntry): void;
  size(chain: Chain, column: Column): number;
  /** The ranked columns as the response body. */
  rank(chains: Chain[], columns: Partial<Record<Column, ColumnConfig>>, now: number): Buffer;
}

/** `body` gives a token's full JSON (the `data` of a delta). */
export function createDiscoveryIndex(body: (entry: TokenEntry) => Buffer): DiscoveryIndex {
  const sets = new Map<string, Set<TokenEntry>>();
  for (const chain of CHAINS) for (const column of COLUMNS) sets.set(`${chain}:${column}`, new Set());
  const setOf = (chain: string, column: Column) => sets.get(`${chain}:${column}`);

  function rankColumn(chains: Chain[], column: Column, config: ColumnConfig, now: number): TokenEntry[] {
    const keep = compileFilters(column, config.filters);
    const field = effectiveSort(column, config.sortBy);
    const desc = (config.order ?? 'desc') === 'desc';
    const limit = clampLimit(config.limit);
    // Missing values rank last in either order; equal values keep a fixed order (chain, address).
    const compare = (a: TokenEntry, b: TokenEntry) => {
      const va = sortOf(a, field);
      const vb = sortOf(b, field);
      if (va !== vb) {
        if (va === null) return 1;
        if (vb === null) return -1;
        if (va < vb) return desc ? 1 : -1;
        if (va > vb) return desc ? -1 : 1;
      }
      if (a.fields.chain !== b.fields.chain) return a.fields.chain < b.fields.chain ? -1 : 1;
      return a.fields.address < b.fields.address ? -1 : a.fields.address > b.fields.address ? 1 : 0;
    };
    // The best `limit` kept sorted while scanning: one comparison with the worst kept rejects most
    // members, so a request costs about one filter and one comparison per member, not a full sort.
    const top: TokenEntry[] = [];
    for (const chain of chains) {
      for (const entry of setOf(chain, column) ?? []) {
        if (top.length === limit && compare(entry, top[limit - 1]!) >= 0) continue;
        if (!keep(entry.fields, now)) continue;
        let lo = 0;
        let hi = top.length;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (compare(entry, top[mid]!) < 0) hi = mid;
          else lo = mid + 1;
        }
        top.splice(lo, 0, entry);
        if (top.length > limit) top.pop();
      }
    }
    return top;
  }

  return {
    upsert(entry, previous) {
      if (previous?.column) setOf(previous.fields.chain, previous.column)?.delete(previous);
      if (entry.column) setOf(entry.fields.chain, entry.column)?.add(entry);
    },
    remove(entry) {
      if (entry.column) setOf(entry.fields.chain, entry.column)?.delete(entry);
    },
    size(chain, column) {
      return setOf(chain, column)?.size ?? 0;
    },
    rank(chains, columns, now) {
      // Buffers throughout: each token's JSON is copied once, never decoded to a string.
      const chunks: Buffer[] = [];
      let text = '{"columns":[';
      let firstColumn = true;
      for (const column of COLUMNS) {
        const config = columns[column];
        if (!config) continue;
        text += `${firstColumn ? '' : ','}{"column":"${column}","deltas":[`;
        firstColumn = false;
        const ranked = rankColumn(chains, column, config, now);
        ranked.forEach((e, i) => {
          text += `${i === 0 ? '' : ','}{"chain":${JSON.stringify(e.fields.chain)},"address":${JSON.stringify(e.fields.address)},"rank":${i + 1},"data":`;
          chunks.push(Buffer.from(text), body(e));
          text = '}';
        });
        text += ']}';
      }
      chunks.push(Buffer.from(`${text}]}`));
      return Buffer.concat(chunks);
    },
  };
}
