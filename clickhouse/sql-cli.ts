// `spot sql "<query>"`: the analyst's view of the store. Goes through the running service's SQL
// endpoint when one listens on SPOT_SQL_PORT (chDB allows one process per data dir), otherwise
// opens the store directly. Read-only either way.
import crypto from 'node:crypto';
import http from 'node:http';
import type { Context } from '../core/context.ts';
import { createClickHouseClient } from './client.ts';
import { createSqlExecutor } from './sql-executor.ts';
import { inspectStatement, isRefusedForAnalyst } from './sql-statement.ts';

export const CLI_FORMAT = 'PrettyCompactMonoBlock';

function request(
  ctx: Context,
  path: string,
  body: string | null,
  timeoutMs: number,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: ctx.config.host,
        port: ctx.config.sqlPort,
        path,
        method: body === null ? 'GET' : 'POST',
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

async function endpointListening(ctx: Context): Promise<boolean> {
  try {
    const { status, text } = await request(ctx, '/ping', null, 1000);
    return status === 200 && text === 'Ok.\n';
  } catch {
    return false;
  }
}

async function viaEndpoint(ctx: Context, query: string): Promise<string> {
  const { status, text } = await request(ctx, `/?default_format=${CLI_FORMAT}&database=spot`, query, 0);
  if (status !== 200) throw new Error(text.trim());
  return text;
}

async function direct(ctx: Context, query: string): Promise<string> {
  const info = inspectStatement(query);
  if (info.statements > 1) throw new Error('Code: 62. DB::Exception: Multi-statements are not allowed. (SYNTAX_ERROR)');
  if (isRefusedForAnalyst(info))
    throw new Error(
      'Code: 164. DB::Exception: Cannot execute query in readonly mode; spot sql runs reading statements only. (READONLY)',
    );
  const client = createClickHouseClient(ctx);
  try {
    const executor = createSqlExecutor(ctx, client);
    const result = await executor.run({
      sql: query,
      format: CLI_FORMAT,
      database: 'spot',
      settings: {},
      params: {},
      readonly: true,
      queryId: crypto.randomUUID(),
    });
    return result.data.toString('utf8');
  } catch (error) {
    throw new Error(String((error as Error).message ?? error).trim());
  } finally {
    await client.close();
  }
}

/** Runs one read-only query and writes its result table to `out`; rejects with ClickHouse's error text. */
export async function runSqlCli(ctx: Context, query: string, out: NodeJS.WritableStream): Promise<void> {
  const text = (await endpointListening(ctx)) ? await viaEndpoint(ctx, query) : await direct(ctx, query);
  out.write(text);
}
