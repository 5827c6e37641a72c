// Decimal → string for the hot path: the same text as core/decimal.ts toString (trailing zeros
// removed), from one bigint → string conversion instead of a division, a modulo and a regex.
import { SCALE, fromUnits, parse, type Dec } from '../core/decimal.ts';

const ZEROS = '0'.repeat(SCALE + 1);

/**
 * `compute` memoised on the value in two generations of `size` entries: a value seen in either
 * stays in the newer one, so what recurs is kept and memory stays bounded.
 */
function memoised<V>(size: number, compute: (value: Dec) => V): (value: Dec) => V {
  let newer = new Map<Dec, V>();
  let older = new Map<Dec, V>();
  return (value) => {
    let result = newer.get(value);
    if (result !== undefined) return result;
    result = older.get(value) ?? compute(value);
    if (newer.size >= size) {
      older = newer;
      newer = new Map();
    }
    newer.set(value, result);
    return result;
  };
}

// Token objects and open candles print the same totals, prices and highs/lows again at every view
// flush and across timeframes: their texts are remembered.
export const decText = memoised(16_384, printDec);

/** decText without the memo, for a value printed once (a trade's price, volume): remembering it costs more than it saves. */
export const decTextOnce = printDec;

/** decText(fromUnits(units, decimals)) straight from the digits of a base-unit amount. */
export function unitsText(units: string, decimals: number): string {
  let start = 0;
  const length = units.length;
  for (let i = 0; i < length; i++) {
    const code = units.charCodeAt(i);
    if (code < 48 || code > 57) return decText(fromUnits(units, decimals));
  }
  if (length === 0 || decimals > SCALE) return decText(fromUnits(units, decimals));
  while (start < length && units.charCodeAt(start) === 48) start++;
  if (start === length) return '0';
  const digits = start === 0 ? units : units.slice(start);
  if (decimals === 0) return digits;
  let end = digits.length;
  while (end > 0 && digits.length - end < decimals && digits.charCodeAt(end - 1) === 48) end--;
  const cut = digits.length - decimals;
  if (cut <= 0) {
    // All fractional: "0." and the leading zeros the digits lack.
    return '0.' + ZEROS.slice(0, -cut) + digits.slice(0, end);
  }
  return end === cut ? digits.slice(0, cut) : digits.slice(0, cut) + '.' + digits.slice(cut, end);
}

/** Number(decText(value)) for candle values (JSON numbers), memoised the same way. */
export const decNumber = memoised(8_192, (value) => Number(decText(value)));

function printDec(value: Dec): string {
  if (value === 0n) return '0';
  const negative = value < 0n;
  let digits = (negative ? -value : value).toString();
  if (digits.length <= SCALE) digits = ZEROS.slice(0, SCALE + 1 - digits.length) + digits;
  const cut = digits.length - SCALE;
  let end = digits.length;
  while (end > cut && digits.charCodeAt(end - 1) === 48) end--;
  const text = end === cut ? digits.slice(0, cut) : digits.slice(0, cut) + '.' + digits.slice(cut, end);
  return negative ? '-' + text : text;
}

/** A percentage text clamped to 0..100. */
export function clampPct(text: string): string {
  const value = parse(text);
  const hundred = 100n * 10n ** BigInt(SCALE);
  return decText(value < 0n ? 0n : value > hundred ? hundred : value);
}
