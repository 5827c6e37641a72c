// Opaque page cursors: base64url of the last trade's (timestamp, id). The next page holds the
// trades strictly older in (timestamp, id) order, so pages stay stable while new trades arrive.
import type { TradeCursor } from '../clickhouse/types.ts';
import { validationError } from '../core/errors.ts';

const VERSION = 1;

export function encodeCursor(cursor: TradeCursor): string {
  return Buffer.from(JSON.stringify([VERSION, cursor.timestamp, cursor.id]), 'utf8').toString('base64url');
}

/** Decodes a cursor; anything this service did not issue is a VALIDATION_ERROR on `cursor`. */
export function decodeCursor(text: string): TradeCursor {
  const refuse = () =>
    validationError([
      {
        field: 'cursor',
        message: 'The cursor is not one this service issued; pass nextCursor from the previous page unchanged.',
      },
    ]);
  if (text.length === 0 || text.length > 400 || !/^[A-Za-z0-9_-]+$/.test(text)) throw refuse();
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw refuse();
  }
  if (!Array.isArray(value) || value.length !== 3) throw refuse();
  const [version, timestamp, id] = value as unknown[];
  if (
    version !== VERSION ||
    !Number.isSafeInteger(timestamp) ||
    (timestamp as number) < 0 ||
    typeof id !== 'string' ||
    id.length === 0 ||
    id.length > 200
  ) {
    throw refuse();
  }
  return { timestamp: timestamp as number, id };
}

/** Newest-first order of trades: timestamp, then id (the order ClickHouse pages in). */
export function compareNewestFirst(a: TradeCursor, b: TradeCursor): number {
  if (a.timestamp !== b.timestamp) return b.timestamp - a.timestamp;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
