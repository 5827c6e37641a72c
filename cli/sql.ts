// `spot sql` and `spot migrate`.
import type { Context } from '../core/context.ts';
import { createClickHouseClient } from '../clickhouse/client.ts';
import { migrate } from '../clickhouse/migrations.ts';
import { runSqlCli } from '../clickhouse/sql-cli.ts';
import { storeBusy } from './errors.ts';

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
    const busy = storeBusy('sql', error);
    if (busy) {
      const { host, sqlPort } = ctx.config;
      process.stderr.write(
        `${busy}; no SQL endpoint answered on ${host}:${sqlPort}: run spot sql with the SPOT_SQL_PORT (and SPOT_HOST) of the running service\n`,
      );
      return 1;
    }
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

export async function migrateCommand(ctx: Context): Promise<number> {
  let client: ReturnType<typeof createClickHouseClient>;
  try {
    client = createClickHouseClient(ctx);
  } catch (error) {
    const busy = storeBusy('migrate', error);
    if (!busy) throw error;
    process.stderr.write(`${busy}; a running service applied the migrations when it started\n`);
    return 1;
  }
  try {
    const applied = await migrate(client);
    ctx.logger.info({ applied }, applied.length ? 'migrations applied' : 'schema up to date');
    return 0;
  } finally {
    await client.close();
  }
}
