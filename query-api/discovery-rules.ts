// Discovery rules (SPEC.md): a token's column, bondingCurveActivity, the default sort of each
// column and the value each sort field ranks on. USD figures compare as exact decimals (bigint)
// rather than floats, so distinct values never tie by rounding. Pure functions of a token's
// discovery fields (discovery-fields.ts).
import * as dec from '../core/decimal.ts';
import type { Column, SortField } from '../core/schemas.ts';
import type { DiscoveryFields } from './discovery-fields.ts';

export const GRADUATING_FROM_PCT = 40;

/**
 * Launchpad tokens only: graduated (or no curve reading) → graduated; below 40% of the curve →
 * newPairs; otherwise graduating. Tokens without a launchpad are in no column.
 */
export function columnOf(token: DiscoveryFields): Column | null {
  if (!token.launchpad) return null;
  if (token.graduatedAt != null) return 'graduated';
  if (token.bondingCurvePct == null) return 'graduated';
  return Number(token.bondingCurvePct) < GRADUATING_FROM_PCT ? 'newPairs' : 'graduating';
}

/** bondingCurvePct × ln(1 + USD volume of the 1h window); 0 without a curve reading. */
export function bondingCurveActivity(token: DiscoveryFields): number {
  if (token.bondingCurvePct == null) return 0;
  const volume = Number(token.volume1hUsd);
  return Number(token.bondingCurvePct) * Math.log1p(Math.max(0, volume));
}

/** The column's default ranking (SPEC.md): newPairs by createdAt, graduating by activity, graduated by graduatedAt. */
export const DEFAULT_SORT: Record<Column, SortField> = {
  newPairs: 'createdAt',
  graduating: 'bondingCurveActivity',
  graduated: 'graduatedAt',
};

/** SPEC.md: on graduating, bondingCurvePct ranks on bondingCurveActivity instead. */
export function effectiveSort(column: Column, sortBy: SortField | null | undefined): SortField {
  const field = sortBy ?? DEFAULT_SORT[column];
  return column === 'graduating' && field === 'bondingCurvePct' ? 'bondingCurveActivity' : field;
}

/** A comparable sort value; null where the token has none (ranked last in either order). */
export type SortValue = number | bigint | null;

/** The value a column ranks on for `sortBy` (null sorts last: e.g. graduatedAt before graduation). */
export function sortValue(token: DiscoveryFields, sortBy: SortField): SortValue {
  switch (sortBy) {
    case 'createdAt':
      return token.createdAt;
    case 'volume24hUsd':
      return dec.parse(token.volume24hUsd);
    case 'marketCapUsd':
      return dec.parse(token.marketCapUsd);
    case 'liquidityUsd':
      return dec.parse(token.liquidityUsd);
    case 'holdersCount':
      return token.holderCount;
    case 'tradeCount24h':
      return token.buys24h + token.sells24h;
    case 'bondingCurvePct':
      return token.bondingCurvePct == null ? null : dec.parse(token.bondingCurvePct);
    case 'bondingCurveActivity':
      return token.bondingCurvePct == null ? null : bondingCurveActivity(token);
    case 'graduatedAt':
      return token.graduatedAt;
  }
}
