// Reading a number out of JSON text without parsing it (spot.trades.v1 and spot.candles.v1 values).

/** The non-negative integer written at `at`, or -1 when no digit is there. */
export function integerAt(text: string, at: number): number {
  let value = 0;
  let end = at;
  for (let c = text.charCodeAt(end); c >= 48 && c <= 57; c = text.charCodeAt(++end)) value = value * 10 + c - 48;
  return end > at ? value : -1;
}
