// A promotions list (CSV or JSON; docs/sources.md) onto the log as `promotion` token events, like
// the label import: the whole text is parsed first, every bad line is reported with its number and
// skipped, the good ones go out in one publish. An entry's event id is a digest of its content, so
// importing a list again changes nothing (the aggregator keeps one entry per platform and time).
import type { Context } from '../../core/context.ts';
import { parseRecords, type LabelFormat, type LabelLineError, type RecordSpec } from '../labels/format.ts';
import type { IngestPublisher } from '../publisher.ts';
import { checkPromotion, promotionEvent, type PromotionEntry } from './entry.ts';

export const PROMOTION_COLUMNS = ['chain', 'token', 'platform', 'paidAt', 'product', 'source'] as const;

export interface PromotionImportResult {
  /** Good lines published. */
  lines: number;
  errors: LabelLineError[];
}

/** Every entry of a promotions list, and each bad line with its number (lines without a source get `origin`). */
export function parsePromotions(
  text: string,
  format: LabelFormat,
  options: { origin: string; now: number },
): { lines: PromotionEntry[]; errors: LabelLineError[] } {
  const spec: RecordSpec<PromotionEntry> = {
    required: ['chain', 'token', 'platform', 'paidAt'],
    columns: PROMOTION_COLUMNS,
    listKey: 'promotions',
    check: (raw) => checkPromotion(raw, { now: options.now, source: options.origin }),
  };
  return parseRecords(text, format, spec);
}

export async function importPromotions(
  ctx: Context,
  publisher: Pick<IngestPublisher, 'publish'>,
  text: string,
  options: { format: LabelFormat; origin: string; now?: number },
): Promise<PromotionImportResult> {
  const logger = ctx.logger.child({ component: 'promotion-import' });
  const parsed = parsePromotions(text, options.format, { origin: options.origin, now: options.now ?? Date.now() });
  for (const error of parsed.errors) logger.warn({ origin: options.origin, ...error }, 'promotion line skipped');
  const events = parsed.lines.map(promotionEvent);
  if (events.length > 0) await publisher.publish({ swaps: [], events });
  ctx.metrics.inc('ingest.promotions.imported', events.length);
  ctx.metrics.inc('ingest.promotions.bad_lines', parsed.errors.length);
  logger.info({ origin: options.origin, lines: events.length, skipped: parsed.errors.length }, 'promotions imported');
  return { lines: events.length, errors: parsed.errors };
}
