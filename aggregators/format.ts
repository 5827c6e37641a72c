// Decimal → string for the hot path: the same text as core/decimal.ts toString (trailing zeros
// removed), from one bigint → string conversion instead of a division, a modulo and a regex.
import { SCALE, fromUnits, parse, type Dec } from '../core/decimal.ts';

const ZEROS = '0'.repeat(SCALE + 1);

// Texts of recent values: token objects and open candles print the same totals, prices and
// highs/lows again at every view flush and across timeframes. Two generations keep the memory
// bounded (a value seen in either is kept in the newer one).
const GENERATION = 16_384;
let texts = new Map<Dec, string>();
let olderTexts = new Map<Dec, string>();

export function decText(value: Dec): string {
  let text = texts.get(value);
  if (text !== undefined) return text;
  text = olderTexts.get(value) ?? printDec(value);
  if (texts.size >= GENERATION) {
    olderTexts = texts;
    texts = new Map();
  }
  texts.set(value, text);
  return text;
}

/** decText without the memo, for a value printed once (a trade's price, volume): remembering it costs more than it saves. */
export function decTextOnce(value: Dec): string {
  return printDec(value);
}

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
const NUMBERS_GENERATION = 8_192;
let numbers = new Map<Dec, number>();
let olderNumbers = new Map<Dec, number>();

export function decNumber(value: Dec): number {
  let n = numbers.get(value);
  if (n !== undefined) return n;
  n = olderNumbers.get(value) ?? Number(decText(value));
  if (numbers.size >= NUMBERS_GENERATION) {
    olderNumbers = numbers;
    numbers = new Map();
  }
  numbers.set(value, n);
  return n;
}

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
