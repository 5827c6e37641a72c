// `spot labels import FILE|URL`: a wallet-label list (CSV or JSON, docs/sources.md) onto the log.
// Bad lines are reported with their line number and skipped; the good ones are applied together.
import fs from 'node:fs';
import type { Context } from '../core/context.ts';
import { createIngestPublisher } from '../ingest/publisher.ts';
import { labelFormatOf } from '../ingest/labels/format.ts';
import { createLabelImporter } from '../ingest/labels/import.ts';
import { createRuntime } from './runtime.ts';

const USAGE = 'Usage: spot labels import FILE|URL';

/** A list file, or a URL fetched (30 s at most). */
export async function readSource(where: string): Promise<string> {
  if (/^https?:\/\//i.test(where)) {
    const response = await fetch(where, { signal: AbortSignal.timeout(30_000) });
    if (!response.ok) throw new Error(`GET ${new URL(where).host}: HTTP ${response.status}`);
    return response.text();
  }
  return fs.readFileSync(where, 'utf8');
}

export async function labelsCommand(ctx: Context, args: string[]): Promise<number> {
  const [action, where, ...extra] = args;
  if (action !== 'import' || !where || extra.length > 0) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  let text: string;
  try {
    text = await readSource(where);
  } catch (error) {
    process.stderr.write(`spot labels: cannot read ${where}: ${(error as Error).message}\n`);
    return 1;
  }
  const runtime = await createRuntime(ctx);
  try {
    const publisher = createIngestPublisher(ctx, { log: runtime.log });
    const importer = createLabelImporter(ctx, { log: runtime.log, publisher });
    // A URL's query may hold a key: the origin recorded is its host and path.
    const origin = /^https?:/i.test(where) ? `${new URL(where).host}${new URL(where).pathname}` : where;
    const result = await importer.importText(text, { format: labelFormatOf(where, text), origin });
    await publisher.flush();
    for (const error of result.errors) process.stderr.write(`${where}:${error.line}: ${error.message} (skipped)\n`);
    process.stdout.write(
      `${result.lines} label lines applied, ${result.wallets} wallets updated, ${result.errors.length} lines skipped\n`,
    );
    return result.errors.length > 0 ? 1 : 0;
  } finally {
    await runtime.stop();
  }
}
