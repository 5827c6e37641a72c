// `spot promotions import FILE|URL`: a paid-promotion list (CSV or JSON, docs/sources.md) onto the
// log as `promotion` token events. Bad lines are reported with their line number and skipped.
import type { Context } from '../core/context.ts';
import { importPromotions } from '../ingest/promotions/import.ts';
import { runListImport } from './list-import.ts';

export function promotionsCommand(ctx: Context, args: string[]): Promise<number> {
  return runListImport(ctx, 'promotions', args, async ({ publisher, text, format, origin }) => {
    const result = await importPromotions(ctx, publisher, text, { format, origin });
    return { summary: `${result.lines} promotions applied`, errors: result.errors };
  });
}
