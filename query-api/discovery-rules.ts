// Sort values of discovery, exact where SPEC.md ranks on money: USD figures compare as exact
// decimals (bigint) rather than floats, so distinct values never tie by rounding. Column
// membership, bondingCurveActivity and the default sorts come from aggregators/discovery.ts,
// the one definition the aggregator and the stream share.
import * as dec from '../core/decimal.ts';
import type { SortField, Token } from '../core/schemas.ts';
import { bondingCurveActivity, sortValue as numericSortValue } from '../aggregators/discovery.ts';

export { columnOf, effectiveSort, DEFAULT_SORT, bondingCurveActivity } from '../aggregators/discovery.ts';

/** A comparable sort value; null where the token has none (ranked last in either order). */
export type SortValue = number | bigint | null;

export function sortValue(token: Token, sortBy: SortField): SortValue {
  switch (sortBy) {
    case 'volume24hUsd':
      return dec.parse(token.stats['24h'].volume.usd);
    case 'marketCapUsd':
      return dec.parse(token.marketCap.usd);
    case 'liquidityUsd':
      return dec.parse(token.liquidity.usd);
    case 'bondingCurvePct':
      return token.bondingCurvePct == null ? null : dec.parse(token.bondingCurvePct);
    case 'bondingCurveActivity':
      return token.bondingCurvePct == null ? null : bondingCurveActivity(token);
    default:
      return numericSortValue(token, sortBy);
  }
}
