// Decimal → string for the hot path: the same text as core/decimal.ts toString (trailing zeros
// removed), from one bigint → string conversion instead of a division, a modulo and a regex.
import { SCALE, parse, type Dec } from '../core/decimal.ts';

const ZEROS = '0'.repeat(SCALE + 1);

export function decText(value: Dec): string {
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
