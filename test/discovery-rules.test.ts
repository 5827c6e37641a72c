// The discovery rules of SPEC.md (query-api/discovery-rules.ts): columns, activity, sort values.
import assert from 'node:assert/strict';
import { parse } from '../core/decimal.ts';
import type { Token } from '../core/schemas.ts';
import { bondingCurveActivity, columnOf, effectiveSort, sortValue } from '../query-api/discovery-rules.ts';

describe('discovery rules', () => {
  const base = {
    launchpad: 'pumpfun',
    graduatedAt: null,
    bondingCurvePct: '10',
    createdAt: 5,
    stats: { '1h': { volume: { usd: '99' } }, '24h': { volume: { usd: '7' }, buyCount: 2, sellCount: 3 } },
  } as unknown as Token;
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

describe('discovery default sorts', () => {
  it('ranks graduating on activity when asked for bondingCurvePct', () => {
    assert.equal(effectiveSort('graduating', 'bondingCurvePct'), 'bondingCurveActivity');
    assert.equal(effectiveSort('newPairs', null), 'createdAt');
    assert.equal(effectiveSort('graduated', undefined), 'graduatedAt');
  });
});
