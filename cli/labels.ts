// `spot labels import FILE|URL`: a wallet-label list (CSV or JSON, docs/sources.md) onto the log.
// Bad lines are reported with their line number and skipped; the good ones are applied together.
import type { Context } from '../core/context.ts';
import { createLabelImporter } from '../ingest/labels/import.ts';
import { runListImport } from './list-import.ts';

export function labelsCommand(ctx: Context, args: string[]): Promise<number> {
  return runListImport(ctx, 'labels', args, async ({ runtime, publisher, text, format, origin }) => {
    const importer = createLabelImporter(ctx, { log: runtime.log, publisher });
    const result = await importer.importText(text, { format, origin });
    return {
      summary: `${result.lines} label lines applied, ${result.wallets} wallets updated`,
      errors: result.errors,
    };
  });
}
