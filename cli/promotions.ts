// `spot promotions import FILE|URL`: a paid-promotion list (CSV or JSON, docs/sources.md) onto the
// log as `promotion` token events. Bad lines are reported with their line number and skipped.
import type { Context } from '../core/context.ts';
import { labelFormatOf } from '../ingest/labels/format.ts';
import { importPromotions } from '../ingest/promotions/import.ts';
import { createIngestPublisher } from '../ingest/publisher.ts';
import { readSource } from './labels.ts';
import { createRuntime } from './runtime.ts';

const USAGE = 'Usage: spot promotions import FILE|URL';

export async function promotionsCommand(ctx: Context, args: string[]): Promise<number> {
  const [action, where, ...extra] = args;
  if (action !== 'import' || !where || extra.length > 0) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  let text: string;
  try {
    text = await readSource(where);
  } catch (error) {
    process.stderr.write(`spot promotions: cannot read ${where}: ${(error as Error).message}\n`);
    return 1;
  }
  const runtime = await createRuntime(ctx);
  try {
    const publisher = createIngestPublisher(ctx, { log: runtime.log });
    // A URL's query may hold a key: the origin recorded is its host and path.
    const origin = /^https?:/i.test(where) ? `${new URL(where).host}${new URL(where).pathname}` : where;
    const result = await importPromotions(ctx, publisher, text, { format: labelFormatOf(where, text), origin });
    await publisher.flush();
    for (const error of result.errors) process.stderr.write(`${where}:${error.line}: ${error.message} (skipped)\n`);
    process.stdout.write(`${result.lines} promotions applied, ${result.errors.length} lines skipped\n`);
    return result.errors.length > 0 ? 1 : 0;
  } finally {
    await runtime.stop();
  }
}
