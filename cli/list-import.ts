// `spot labels|promotions import FILE|URL`: a list file or URL read, applied onto the log through
// the ingest publisher, bad lines reported with their line number and skipped.
import fs from 'node:fs';
import type { Context } from '../core/context.ts';
import { labelFormatOf, type LabelFormat } from '../ingest/labels/format.ts';
import { createIngestPublisher, type IngestPublisher } from '../ingest/publisher.ts';
import { createRuntime, type Runtime } from './runtime.ts';

/** A list file, or a URL fetched (30 s at most). */
async function readSource(where: string): Promise<string> {
  if (/^https?:\/\//i.test(where)) {
    const response = await fetch(where, { signal: AbortSignal.timeout(30_000) });
    if (!response.ok) throw new Error(`GET ${new URL(where).host}: HTTP ${response.status}`);
    return response.text();
  }
  return fs.readFileSync(where, 'utf8');
}

export interface ListImport {
  runtime: Runtime;
  publisher: IngestPublisher;
  text: string;
  format: LabelFormat;
  /** Where the list came from, as recorded: a URL's host and path (its query may hold a key). */
  origin: string;
}

/** Runs `spot <command> import FILE|URL`; `apply` imports the text and says what it applied. */
export async function runListImport(
  ctx: Context,
  command: string,
  args: string[],
  apply: (list: ListImport) => Promise<{ summary: string; errors: Array<{ line: number; message: string }> }>,
): Promise<number> {
  const [action, where, ...extra] = args;
  if (action !== 'import' || !where || extra.length > 0) {
    process.stderr.write(`Usage: spot ${command} import FILE|URL\n`);
    return 2;
  }
  let text: string;
  try {
    text = await readSource(where);
  } catch (error) {
    process.stderr.write(`spot ${command}: cannot read ${where}: ${(error as Error).message}\n`);
    return 1;
  }
  const runtime = await createRuntime(ctx);
  try {
    const publisher = createIngestPublisher(ctx, { log: runtime.log });
    const origin = /^https?:/i.test(where) ? `${new URL(where).host}${new URL(where).pathname}` : where;
    const result = await apply({ runtime, publisher, text, format: labelFormatOf(where, text), origin });
    await publisher.flush();
    for (const error of result.errors) process.stderr.write(`${where}:${error.line}: ${error.message} (skipped)\n`);
    process.stdout.write(`${result.summary}, ${result.errors.length} lines skipped\n`);
    return result.errors.length > 0 ? 1 : 0;
  } finally {
    await runtime.stop();
  }
}
