// Exact decimal arithmetic for money: a fixed-point bigint with SCALE fractional digits.
// Sums and products of base-unit amounts are exact; a quotient is rounded half away from
// zero at the 30th fractional digit, which keeps 20 significant digits on a 1e-10 price.

export type Dec = bigint;

export const SCALE = 30;
const ONE_SCALED = 10n ** BigInt(SCALE);
const POW10: bigint[] = Array.from({ length: 80 }, (_, i) => 10n ** BigInt(i));

export const ZERO: Dec = 0n;
export const ONE: Dec = ONE_SCALED;

function pow10(n: number): bigint {
  return POW10[n] ?? 10n ** BigInt(n);
}

const DECIMAL_TEXT = /^-?(\d+)(\.(\d+))?$/;

/** Parses a plain decimal string ("-12.5"); throws on anything else (no exponents). */
export function parse(text: string): Dec {
  const match = DECIMAL_TEXT.exec(text);
  if (!match) throw new RangeError(`not a decimal string: ${JSON.stringify(text)}`);
  const negative = text.startsWith('-');
  const whole = BigInt(match[1]!);
  let fraction = match[3] ?? '';
  let roundUp = false;
  if (fraction.length > SCALE) {
    roundUp = fraction.charCodeAt(SCALE) >= 53; // '5'
    fraction = fraction.slice(0, SCALE);
  }
  let value = whole * ONE_SCALED + (fraction ? BigInt(fraction) * pow10(SCALE - fraction.length) : 0n);
  if (roundUp) value += 1n;
  return negative ? -value : value;
}

/** An integer count of base units with `decimals` places, e.g. lamports with 9. */
export function fromUnits(units: string | bigint, decimals: number): Dec {
  const raw = typeof units === 'bigint' ? units : BigInt(units);
  if (decimals <= SCALE) return raw * pow10(SCALE - decimals);
  return roundedDiv(raw, pow10(decimals - SCALE));
}

export function fromInt(value: number | bigint): Dec {
  return BigInt(value) * ONE_SCALED;
}

/** Plain decimal string with trailing zeros removed ("1.5", "0", "-0.000001"). */
export function decToString(value: Dec): string {
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const whole = abs / ONE_SCALED;
  const fraction = abs % ONE_SCALED;
  let text = whole.toString();
  if (fraction !== 0n) {
    text += '.' + fraction.toString().padStart(SCALE, '0').replace(/0+$/, '');
  }
  return negative ? '-' + text : text;
}

/** Rounded to `digits` fractional digits, then printed without trailing zeros. */
export function toFixedString(value: Dec, digits: number): string {
  if (digits >= SCALE) return decToString(value);
  const unit = pow10(SCALE - digits);
  return decToString(roundedDiv(value, unit) * unit);
}

export function add(a: Dec, b: Dec): Dec {
  return a + b;
}

export function sub(a: Dec, b: Dec): Dec {
  return a - b;
}

const HALF_ONE = ONE_SCALED / 2n;

export function mul(a: Dec, b: Dec): Dec {
  if (b === ONE_SCALED) return a;
  if (a === ONE_SCALED) return b;
  // roundedDiv by an even constant: one division (half away from zero).
  const n = a * b;
  return n >= 0n ? (n + HALF_ONE) / ONE_SCALED : -((HALF_ONE - n) / ONE_SCALED);
}

/** a / b; division by zero yields zero, the value the service shows for an unknown ratio. */
export function div(a: Dec, b: Dec): Dec {
  if (b === 0n) return 0n;
  return roundedDiv(a * ONE_SCALED, b);
}

export function cmp(a: Dec, b: Dec): -1 | 0 | 1 {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function abs(a: Dec): Dec {
  return a < 0n ? -a : a;
}

/** (b - a) / a * 100, the signed percentage change; zero when a is zero. */
export function pctChange(from: Dec, to: Dec): Dec {
  if (from === 0n) return 0n;
  return div((to - from) * 100n, from);
}

/** part / whole * 100, zero when whole is zero. */
export function pct(part: Dec, whole: Dec): Dec {
  if (whole === 0n) return 0n;
  return div(part * 100n, whole);
}

/** Integer division rounded half away from zero. */
export function roundedDiv(numerator: bigint, denominator: bigint): bigint {
  if (denominator < 0n) {
    numerator = -numerator;
    denominator = -denominator;
  }
  // floor((2n + d) / 2d) is n / d rounded half up for n >= 0: one division instead of two.
  const twice = denominator + denominator;
  return numerator >= 0n
    ? (numerator + numerator + denominator) / twice
    : -((denominator - numerator - numerator) / twice);
}
