// Update cursors: `<kind><filters hash>.<position>`, opaque to clients. The hash ties a cursor to
// one channel and filter set; a spot.trades position is the log position after the update
// (`<ms base36>.<next offset per partition of spot.trades.v1, base36, '-'-joined>`), the same on
// every edge replica because every replica reads the same log. Other channels resume from their
// current state, so their position is only the time of the update.
import crypto from 'node:crypto';
import type { StreamChannel } from '../core/schemas.ts';
import type { SubscriptionSpec } from './protocol.ts';

/** How far back a spot.trades cursor may point: the log keeps trades longer (7 days). */
export const RESUME_WINDOW_MS = 60 * 60 * 1000;

const KIND: Record<StreamChannel, string> = {
  'spot.trades': 't',
  'spot.candles': 'c',
  'spot.tokens': 'k',
  'spot.discovery': 'd',
};

/** `<kind><hash>.`: the constant start of every cursor of a subscription with this spec. */
export function cursorHead(spec: SubscriptionSpec): string {
  // Specs are built field by field in a fixed order, so equal filters give equal JSON.
  const hash = crypto.createHash('sha256').update(JSON.stringify(spec)).digest('hex').slice(0, 12);
  return `${KIND[spec.channel]}${hash}.`;
}

/** Position of a spot.trades update: every partition's next offset, at `at` ms. */
export function tradePosition(offsets: readonly number[], at: number): string {
  let text = `${at.toString(36)}.`;
  for (let i = 0; i < offsets.length; i++) text += `${i === 0 ? '' : '-'}${offsets[i]!.toString(36)}`;
  return text;
}

/** Position of an update of a state channel (candles, tokens, discovery). */
export const statePosition = (at: number) => at.toString(36);

export type ParsedCursor =
  | { ok: true; kind: 'trades'; at: number; offsets: number[] }
  | { ok: true; kind: 'state'; at: number }
  | { ok: false; message: string };

const BASE36 = /^[0-9a-z]{1,12}$/;

/** Checks a resumeFrom cursor against the subscription it is offered to. */
export function parseCursor(cursor: string, spec: SubscriptionSpec, partitions: number, now: number): ParsedCursor {
  const head = cursorHead(spec);
  if (!cursor.startsWith(head)) {
    return {
      ok: false,
      message:
        'resumeFrom is not a cursor of this channel and these filters; resume with the same channel and filters the cursor came from, or subscribe without resumeFrom.',
    };
  }
  const parts = cursor.slice(head.length).split('.');
  const malformed = { ok: false as const, message: 'resumeFrom is not a cursor this service wrote.' };
  if (!BASE36.test(parts[0] ?? '')) return malformed;
  const at = Number.parseInt(parts[0]!, 36);
  if (spec.channel !== 'spot.trades') return parts.length === 1 ? { ok: true, kind: 'state', at } : malformed;
  if (parts.length !== 2) return malformed;
  const offsets = parts[1]!.split('-');
  if (offsets.length !== partitions || offsets.some((o) => !BASE36.test(o))) return malformed;
  if (now - at > RESUME_WINDOW_MS) {
    return {
      ok: false,
      message: `resumeFrom is past the resume window (${RESUME_WINDOW_MS / 60_000} minutes); read the missed trades with GET /v1/trades and subscribe without resumeFrom.`,
    };
  }
  return { ok: true, kind: 'trades', at, offsets: offsets.map((o) => Number.parseInt(o, 36)) };
}
