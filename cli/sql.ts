// `spot sql` and `spot migrate`.
import type { Context } from '../core/context.ts';
import { createClickHouseClient } from '../clickhouse/client.ts';
import { migrate } from '../clickhouse/migrations.ts';
import { runSqlCli } from '../clickhouse/sql-cli.ts';

export async function sqlCommand(ctx: Context, args: string[]): Promise<number> {
  const query = args.join(' ').trim();
  if (!query) {
    process.stderr.write('usage: spot sql "<query>"\n');
    return 2;
  }
  try {
    await runSqlCli(ctx, query, process.stdout);
    return 0;
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

export async function migrateCommand(ctx: Context): Promise<number> {
  const client = createClickHouseClient(ctx);
  try {
    const applied = await migrate(client);
    ctx.logger.info({ applied }, applied.length ? 'migrations applied' : 'schema up to date');
    return 0;
  } finally {
    await client.close();
  }
}
