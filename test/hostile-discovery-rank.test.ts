// Discovery ranking keeps the best `limit` while it scans (bounded work per request, issue 14);
// checked here against the plain definition: filter every member, sort by the column's order
// (missing values last, ties by chain then address), take the first `limit`.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Chain } from '../core/chains.ts';
import { SORT_FIELDS, type SortField, type Token } from '../core/schemas.ts';
import { createDiscoveryIndex, clampLimit } from '../query-api/discovery.ts';
import { discoveryFields } from '../query-api/discovery-fields.ts';
import { compileFilters } from '../query-api/discovery-filters.ts';
import { effectiveSort, sortValue } from '../query-api/discovery-rules.ts';
import { createTokenPacker } from '../query-api/token-pack.ts';
import { evmAddress, makeToken, solanaAddress } from './query-api-env.ts';

const NOW = Date.now();
const CHAINS: Chain[] = ['solana', 'base'];

/** A newPairs token (curve below 40%) with few distinct values, so ties and nulls are common. */
const tokenArb = fc
  .record({
    chain: fc.constantFrom(...CHAINS),
    volume: fc.constantFrom('0', '5', '5', '120.5', '9000'),
    holders: fc.integer({ min: 0, max: 3 }),
    createdMinutesAgo: fc.integer({ min: 0, max: 5 }),
    curve: fc.constantFrom('1', '10', '39.9'),
  })
  .map(({ chain, volume, holders, createdMinutesAgo, curve }) => {
    const token = makeToken({
      chain,
      address: chain === 'solana' ? solanaAddress() : evmAddress(),
      bondingCurvePct: curve,
      createdAt: NOW - createdMinutesAgo * 60_000,
      updatedAt: NOW,
    });
    token.stats['24h'].volume.usd = volume;
    token.holders.count = holders;
    return token;
  });

function reference(tokens: Token[], chains: Chain[], sortBy: SortField, order: 'asc' | 'desc', limit: number) {
  const keep = compileFilters('newPairs', { holderCount: { min: 1 } });
  const field = effectiveSort('newPairs', sortBy);
  const desc = order === 'desc';
  return tokens
    .map((t) => discoveryFields(t))
    .filter((t) => chains.includes(t.chain) && keep(t, NOW))
    .sort((a, b) => {
      const va = sortValue(a, field);
      const vb = sortValue(b, field);
      if (va !== vb) {
        if (va === null) return 1;
        if (vb === null) return -1;
        if (va < vb) return desc ? 1 : -1;
        if (va > vb) return desc ? -1 : 1;
      }
      if (a.chain !== b.chain) return a.chain < b.chain ? -1 : 1;
      return a.address < b.address ? -1 : a.address > b.address ? 1 : 0;
    })
    .slice(0, clampLimit(limit))
    .map((t) => t.address);
}

describe('discovery ranking: top-k selection equals filter, sort and slice', () => {
  it('ranks the same tokens in the same order for any sort field, order, limit and chains', () => {
    const packer = createTokenPacker();
    fc.assert(
      fc.property(
        fc.array(tokenArb, { minLength: 0, maxLength: 150 }),
        fc.constantFrom(...SORT_FIELDS),
        fc.constantFrom('asc' as const, 'desc' as const),
        fc.integer({ min: -2, max: 120 }),
        fc.subarray(CHAINS, { minLength: 1 }),
        (tokens, sortBy, order, limit, chains) => {
          const index = createDiscoveryIndex(() => Buffer.from('{}'));
          for (const token of tokens) index.upsert(packer.entry(`${token.chain}:${token.address}`, token), undefined);
          const body = JSON.parse(
            index
              .rank(chains, { newPairs: { sortBy, order, limit, filters: { holderCount: { min: 1 } } } }, NOW)
              .toString(),
          ) as { columns: { deltas: { address: string }[] }[] };
          assert.deepEqual(
            body.columns[0]!.deltas.map((d) => d.address),
            reference(tokens, chains, sortBy, order, limit),
          );
        },
      ),
      { numRuns: 200, seed: 14 },
    );
  });
});
