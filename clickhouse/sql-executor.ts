// Runs one SQL endpoint request. On chDB each request gets its own session on the store's data
// dir (chDB shares the engine between sessions on one path), so a request's settings, USE and
// readonly=1 never leak into another request or into the store. Over HTTP (SPOT_CLICKHOUSE_URL)
// the request goes to the server with per-query settings.
import { Session } from 'chdb';
import type { Context } from '../core/context.ts';
import { chdbDataPath, type ClickHouseClient } from './client.ts';

export interface SqlRun {
  sql: string;
  /** Format used when the SQL has no FORMAT clause. */
  format: string;
  database: string | null;
  settings: Record<string, string>;
  params: Record<string, string>;
  readonly: boolean;
  queryId: string;
}

export interface SqlSummary {
  read_rows: string;
  read_bytes: string;
  written_rows: string;
  written_bytes: string;
  total_rows_to_read: string;
  result_rows: string;
  result_bytes: string;
  elapsed_ns: string;
}

export interface SqlResult {
  data: Buffer;
  summary: SqlSummary;
}

export interface SqlExecutor {
  run(request: SqlRun): Promise<SqlResult>;
}

/** Thrown for requests refused before they reach the engine; carries ClickHouse's code and name. */
export class SqlEndpointError extends Error {
  constructor(
    readonly code: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
    this.name = 'SqlEndpointError';
  }
}

const SETTING_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const DATABASE_NAME = /^[A-Za-z0-9_]+$/;
/** Analysts' queries stop after this many seconds unless they ask for another limit. */
const ANALYST_MAX_EXECUTION_SECONDS = '120';

const quote = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

function summaryOf(data: Buffer, rows: number, bytes: number, elapsedSeconds: number, isWrite: boolean): SqlSummary {
  return {
    read_rows: String(rows),
    read_bytes: String(bytes),
    written_rows: isWrite ? String(rows) : '0',
    written_bytes: isWrite ? String(bytes) : '0',
    total_rows_to_read: '0',
    result_rows: isWrite ? '0' : String(rows),
    result_bytes: String(data.length),
    elapsed_ns: String(Math.round(elapsedSeconds * 1e9)),
  };
}

/** At most `limit` requests run at once; the rest wait their turn. */
function createGate(limit: number) {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async <T>(work: () => Promise<T>): Promise<T> => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await work();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

function createChdbExecutor(ctx: Context): SqlExecutor {
  const dataPath = chdbDataPath(ctx);
  const gate = createGate(8);
  return {
    run: (request) =>
      gate(async () => {
        for (const name of Object.keys(request.settings)) {
          if (!SETTING_NAME.test(name))
            throw new SqlEndpointError(
              115,
              'UNKNOWN_SETTING',
              `Setting ${name} is neither a builtin setting nor started with the prefix 'custom_'`,
            );
        }
        const session = new Session(dataPath);
        try {
          const settings = { ...request.settings };
          if (request.readonly) {
            settings.max_execution_time ??= ANALYST_MAX_EXECUTION_SECONDS;
            delete settings.readonly;
          }
          const assignments = Object.entries(settings).map(([name, value]) => `${name} = ${quote(value)}`);
          if (assignments.length > 0) await session.queryAsync(`SET ${assignments.join(', ')}`);
          if (request.database !== null) {
            if (!DATABASE_NAME.test(request.database))
              throw new SqlEndpointError(81, 'UNKNOWN_DATABASE', `Database ${request.database} does not exist`);
            await session.queryAsync(`USE \`${request.database}\``);
          }
          // Last, so nothing after it can lift it: the session refuses writes, file and network
          // table functions, and any further setting change.
          if (request.readonly) await session.queryAsync('SET readonly = 1');
          const options = { format: request.format };
          const result =
            Object.keys(request.params).length > 0
              ? await session.queryBindAsync(request.sql, request.params, options)
              : await session.queryAsync(request.sql, options);
          const data = Buffer.from(result.bytes());
          const isWrite = /^\s*INSERT\b/i.test(request.sql);
          return { data, summary: summaryOf(data, result.rowsRead, result.bytesRead, result.elapsed, isWrite) };
        } finally {
          session.close();
        }
      }),
  };
}

function createRemoteExecutor(client: ClickHouseClient): SqlExecutor {
  return {
    async run(request) {
      const started = performance.now();
      const settings: Record<string, string> = { ...request.settings, default_format: request.format };
      if (request.readonly) settings.readonly = '1';
      const result = await client.exec({
        query: request.sql,
        clickhouse_settings: settings as never,
        query_params: request.params,
        query_id: request.queryId,
      });
      const chunks: Buffer[] = [];
      for await (const chunk of result.stream) chunks.push(Buffer.from(chunk as Buffer));
      const data = Buffer.concat(chunks);
      const summary = result.summary as Partial<SqlSummary> | undefined;
      return {
        data,
        summary: { ...summaryOf(data, 0, 0, (performance.now() - started) / 1000, false), ...summary },
      };
    },
  };
}

export function createSqlExecutor(ctx: Context, client: ClickHouseClient): SqlExecutor {
  return ctx.config.clickhouseUrl === null ? createChdbExecutor(ctx) : createRemoteExecutor(client);
}
