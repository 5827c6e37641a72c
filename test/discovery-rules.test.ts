// The discovery rules of SPEC.md (query-api/discovery-rules.ts): columns, activity, sort values.
import assert from 'node:assert/strict';
import { parse } from '../core/decimal.ts';
import type { Token } from '../core/schemas.ts';
import { discoveryFields, type DiscoveryFields } from '../query-api/discovery-fields.ts';
import { bondingCurveActivity, columnOf, effectiveSort, sortValue } from '../query-api/discovery-rules.ts';
import { createTokenPacker } from '../query-api/token-pack.ts';
import { sampleToken } from './fixtures/spec-samples.ts';

describe('discovery rules', () => {
  const base = {
    launchpad: 'pumpfun',
    graduatedAt: null,
    bondingCurvePct: '10',
    createdAt: 5,
    volume1hUsd: '99',
    volume24hUsd: '7',
    buys24h: 2,
    sells24h: 3,
  } as unknown as DiscoveryFields;
  it('places launchpad tokens in the column their curve selects', () => {
    assert.equal(columnOf(base), 'newPairs');
    assert.equal(columnOf({ ...base, bondingCurvePct: '39.99' }), 'newPairs');
    assert.equal(columnOf({ ...base, bondingCurvePct: '40' }), 'graduating');
    assert.equal(columnOf({ ...base, bondingCurvePct: '100', graduatedAt: 9 }), 'graduated');
    assert.equal(columnOf({ ...base, bondingCurvePct: null }), 'graduated');
    assert.equal(columnOf({ ...base, launchpad: null }), null);
  });
  it('ranks bondingCurveActivity as pct × ln(1 + 1h USD volume)', () => {
    assert.equal(bondingCurveActivity(base), 10 * Math.log(100));
    assert.equal(bondingCurveActivity({ ...base, bondingCurvePct: null }), 0);
    assert.equal(sortValue(base, 'tradeCount24h'), 5);
    assert.equal(sortValue(base, 'volume24hUsd'), parse('7'));
    assert.equal(sortValue(base, 'bondingCurveActivity'), 10 * Math.log(100));
    assert.equal(sortValue({ ...base, bondingCurvePct: null }, 'bondingCurveActivity'), null);
    assert.equal(sortValue(base, 'graduatedAt'), null);
  });
});

describe('discovery fields (discovery-fields.ts)', () => {
  it('copies what discovery reads from a token, flat, with absent optional fields as null', () => {
    const token = sampleToken() as unknown as Token;
    const fields = discoveryFields(token);
    assert.equal(fields.chain, token.chain);
    assert.equal(fields.address, token.address);
    assert.equal(fields.holderCount, token.holders.count);
    assert.equal(fields.top10Pct, token.holders.top10Pct);
    assert.equal(fields.liquidityUsd, token.liquidity.usd);
    assert.equal(fields.marketCapUsd, token.marketCap.usd);
    assert.equal(fields.volume24hUsd, token.stats['24h'].volume.usd);
    assert.equal(fields.volume1hUsd, token.stats['1h'].volume.usd);
    assert.equal(fields.buys24h + fields.sells24h, token.stats['24h'].buyCount + token.stats['24h'].sellCount);
    assert.equal(fields.feesDexUsd, token.totals.fees.dex.usd);
    assert.equal(fields.feesPlatformUsd, token.totals.fees.platform.usd);
    assert.equal(fields.funder, token.devFunding.funder);
    assert.equal(fields.twitter, token.metadata.twitter);
    for (const value of Object.values(fields)) assert.ok(value === null || typeof value !== 'object', 'flat');

    const bare: Token = { ...token, annotations: [{ kind: 'mayhem_mode' }] };
    delete bare.bondingCurvePct;
    delete bare.graduatedAt;
    delete bare.launchpad;
    const flat = discoveryFields(bare);
    assert.equal(flat.mayhem, true);
    assert.equal(flat.bondingCurvePct, null);
    assert.equal(flat.graduatedAt, null);
    assert.equal(flat.launchpad, null);
    assert.equal(discoveryFields({ ...token, annotations: [] }).mayhem, false);
  });
});

describe('discovery default sorts', () => {
  it('ranks graduating on activity when asked for bondingCurvePct', () => {
    assert.equal(effectiveSort('graduating', 'bondingCurvePct'), 'bondingCurveActivity');
    assert.equal(effectiveSort('newPairs', null), 'createdAt');
    assert.equal(effectiveSort('graduated', undefined), 'graduatedAt');
  });
});

describe('token versions as the views hold them (token-pack.ts)', () => {
  const version = (name: string) => ({ ...(sampleToken() as unknown as Token), name });

  it('serves a version plain until it is packed, then the same bytes inflated', () => {
    const packer = createTokenPacker();
    const token = version('Plain');
    const entry = packer.entry('solana:x', token);
    assert.equal(entry.packed, null);
    assert.equal(packer.body(entry).toString(), JSON.stringify(token));
    assert.equal(packer.pack(Number.NEGATIVE_INFINITY), 1, 'made after the cut: stays plain');
    assert.equal(packer.pack(Number.POSITIVE_INFINITY), 0);
    assert.equal(entry.plain, null);
    const packed = entry.packed as string | null;
    assert.ok(packed !== null && packed.length < JSON.stringify(token).length / 2);
    assert.equal(packer.body(entry).toString(), JSON.stringify(token));
  });

  it('never deflates a version replaced while plain, keeps its body for readers, and bounds the plain ones', () => {
    const packer = createTokenPacker({ maxPlain: 2 });
    const first = packer.entry('solana:x', version('First'));
    packer.drop(first);
    assert.equal(packer.pack(Number.POSITIVE_INFINITY), 0);
    assert.equal(first.packed, null, 'dropped: not packed');
    assert.equal(JSON.parse(packer.body(first).toString()).name, 'First');
    const [a, b, c] = ['A', 'B', 'C'].map((name) => packer.entry(`solana:${name}`, version(name)));
    assert.ok(a!.packed !== null && b!.packed === null && c!.packed === null, 'the oldest past the bound is packed');
    assert.equal(JSON.parse(packer.body(a!).toString()).name, 'A');
    let asked = 0;
    assert.equal(
      packer.pack(Number.POSITIVE_INFINITY, () => asked++ > 0),
      1,
      'the slice ended after one',
    );
    assert.ok(b!.packed !== null && c!.packed === null);
  });
});
