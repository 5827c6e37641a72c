// The store over ClickHouse's HTTP interface (SPOT_SQL_PORT): enough of it for @clickhouse/client,
// curl, Grafana and DBeaver. Analysts are read-only; user spot_writer with the write password may
// run anything, so roles in other processes can use this endpoint as their ClickHouse.
import crypto from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import type { Context } from '../core/context.ts';
import type { ClickHouseClient } from './client.ts';
import { passwordMatches, requestCredentials, writerPassword, WRITER_USER } from './sql-auth.ts';
import { createSqlExecutor, SqlEndpointError, type SqlSummary } from './sql-executor.ts';
import { inspectStatement, isRefusedForAnalyst, parameterType, unescapeText } from './sql-statement.ts';

export interface SqlEndpointOptions {
  port?: number;
  host?: string;
  /** Largest request body (after decompression) for writers; analysts get 1 MiB. */
  maxWriterBodyBytes?: number;
}

export interface SqlEndpoint {
  start(): Promise<{ port: number }>;
  stop(): Promise<void>;
}

const VERSION = '26.7.2.1';
const ANALYST_BODY_BYTES = 1 << 20;
const DEFAULT_WRITER_BODY_BYTES = 256 << 20;

/** URL parameters of the HTTP interface that are not engine settings. */
const NOT_SETTINGS = new Set([
  'query',
  'database',
  'default_format',
  'user',
  'password',
  'query_id',
  'session_id',
  'session_timeout',
  'session_check',
  'compress',
  'decompress',
  'buffer_size',
  'wait_end_of_query',
  'quota_key',
  'role',
  'enable_http_compression',
  'http_zlib_compression_level',
  'add_http_cors_header',
  'send_progress_in_http_headers',
  'http_headers_progress_interval_ms',
  'http_response_buffer_size',
  'http_wait_end_of_query',
  'http_native_compression_disable_checksumming_on_decompress',
  'http_response_compression_method',
  'http_send_progress_interval_ms',
  'query_kind',
  'stacktrace',
]);

/** HTTP status for a ClickHouse error code, as ClickHouse's own HTTP handler maps it. */
function statusOf(code: number): number {
  if (code === 194) return 401;
  if ([192, 193, 516, 497].includes(code)) return 403;
  if ([6, 25, 26, 27, 38, 41, 62, 53, 72, 117, 36, 457, 456].includes(code)) return 400;
  if ([60, 46, 47, 50, 56, 81, 115, 63, 73, 78].includes(code)) return 404;
  if (code === 229) return 413;
  if (code === 48) return 501;
  if (code === 159) return 408;
  if (code === 202) return 503;
  return 500;
}

const CONTENT_TYPES: [RegExp, string][] = [
  [/^JSON/i, 'application/json; charset=UTF-8'],
  [/^(TSV|TabSeparated)/i, 'text/tab-separated-values; charset=UTF-8'],
  [/^CSV/i, 'text/csv; charset=UTF-8; header=absent'],
  [/^(Parquet|Arrow|ArrowStream|Native|RowBinary.*|ORC|Avro|MsgPack)$/i, 'application/octet-stream'],
];

function contentTypeOf(format: string): string {
  return CONTENT_TYPES.find(([pattern]) => pattern.test(format))?.[1] ?? 'text/plain; charset=UTF-8';
}

/** Code and text of any failure, in ClickHouse's `Code: N. DB::Exception: …` form. */
function describeError(error: unknown): { code: number; text: string } {
  if (error instanceof SqlEndpointError) {
    return {
      code: error.code,
      text: `Code: ${error.code}. DB::Exception: ${error.message}. (${error.type}) (version ${VERSION})`,
    };
  }
  const err = error as { message?: unknown; clickhouseCode?: unknown; code?: unknown; type?: unknown };
  const message = String(err?.message ?? error);
  const match = /Code: (\d+)\./.exec(message);
  const code = Number(err?.clickhouseCode ?? match?.[1] ?? (/^\d+$/.test(String(err?.code)) ? err.code : 1002));
  if (message.startsWith('Code: ')) return { code, text: message };
  const type = typeof err?.type === 'string' ? err.type : 'UNKNOWN_EXCEPTION';
  return { code, text: `Code: ${code}. DB::Exception: ${message}. (${type}) (version ${VERSION})` };
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit) {
      reject(
        new SqlEndpointError(
          229,
          'QUERY_IS_TOO_LARGE',
          `Request body of ${declared} bytes exceeds the limit of ${limit} bytes`,
        ),
      );
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new SqlEndpointError(229, 'QUERY_IS_TOO_LARGE', `Request body exceeds the limit of ${limit} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function decodeBody(body: Buffer, encoding: string | undefined, limit: number): Buffer {
  if (!encoding || encoding === 'identity' || body.length === 0) return body;
  const options = { maxOutputLength: limit };
  try {
    if (encoding === 'gzip' || encoding === 'x-gzip') return zlib.gunzipSync(body, options);
    if (encoding === 'deflate') return zlib.inflateSync(body, options);
    if (encoding === 'br') return zlib.brotliDecompressSync(body, options);
  } catch (error) {
    throw new SqlEndpointError(
      271,
      'CANNOT_DECOMPRESS',
      `Cannot decompress the ${encoding} request body: ${(error as Error).message}`,
    );
  }
  throw new SqlEndpointError(
    48,
    'NOT_IMPLEMENTED',
    `Content-Encoding ${encoding} is not supported; use gzip, deflate, br or none`,
  );
}

function compressBody(data: Buffer, acceptEncoding: string): { data: Buffer; encoding: string | null } {
  const accepted = acceptEncoding.toLowerCase();
  if (/\bgzip\b/.test(accepted)) return { data: zlib.gzipSync(data), encoding: 'gzip' };
  if (/\bdeflate\b/.test(accepted)) return { data: zlib.deflateSync(data), encoding: 'deflate' };
  if (/\bbr\b/.test(accepted)) return { data: zlib.brotliCompressSync(data), encoding: 'br' };
  return { data, encoding: null };
}

export function createSqlEndpoint(
  ctx: Context,
  client: ClickHouseClient,
  options: SqlEndpointOptions = {},
): SqlEndpoint {
  const logger = ctx.logger.child({ component: 'sql-endpoint' });
  const executor = createSqlExecutor(ctx, client);
  const expectedPassword = writerPassword(ctx);
  const maxWriterBody = options.maxWriterBodyBytes ?? DEFAULT_WRITER_BODY_BYTES;
  let server: http.Server | null = null;

  function send(
    res: ServerResponse,
    status: number,
    headers: Record<string, string>,
    body: Buffer | string,
    head: boolean,
  ) {
    if (res.headersSent) return res.end();
    res.writeHead(status, { 'X-ClickHouse-Server-Display-Name': 'spot', 'X-ClickHouse-Timezone': 'UTC', ...headers });
    res.end(head ? undefined : body);
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const params = url.searchParams;
    const method = req.method ?? 'GET';
    const head = method === 'HEAD';
    const queryId = params.get('query_id') || crypto.randomUUID();
    const cors: Record<string, string> =
      params.get('add_http_cors_header') === '1' || req.headers.origin
        ? {
            'Access-Control-Allow-Origin': '*',
            'Access-Control-Allow-Headers':
              'origin, x-requested-with, x-clickhouse-format, x-clickhouse-user, x-clickhouse-key, authorization, content-type',
            'Access-Control-Expose-Headers':
              'X-ClickHouse-Query-Id, X-ClickHouse-Summary, X-ClickHouse-Format, X-ClickHouse-Exception-Code',
          }
        : {};
    const fail = (error: unknown) => {
      const { code, text } = describeError(error);
      send(
        res,
        statusOf(code),
        {
          ...cors,
          'Content-Type': 'text/plain; charset=UTF-8',
          'X-ClickHouse-Exception-Code': String(code),
          'X-ClickHouse-Query-Id': queryId,
        },
        text.endsWith('\n') ? text : `${text}\n`,
        head,
      );
    };

    if (method === 'OPTIONS')
      return send(res, 204, { ...cors, 'Access-Control-Allow-Methods': 'GET, POST, OPTIONS' }, '', true);
    if (url.pathname === '/ping' || url.pathname === '/replicas_status')
      return send(res, 200, { ...cors, 'Content-Type': 'text/plain; charset=UTF-8' }, 'Ok.\n', head);
    if (url.pathname !== '/') {
      return send(
        res,
        404,
        { 'Content-Type': 'text/plain; charset=UTF-8' },
        `There is no handle ${url.pathname}\n\nUse / or /ping.\n`,
        head,
      );
    }
    if (!['GET', 'POST', 'HEAD'].includes(method)) return send(res, 405, { Allow: 'GET, POST' }, '', true);

    try {
      const credentials = requestCredentials(req, params);
      let writer = false;
      if (credentials.user === WRITER_USER) {
        if (!passwordMatches(credentials.password, expectedPassword)) {
          req.resume();
          throw new SqlEndpointError(
            516,
            'AUTHENTICATION_FAILED',
            `${WRITER_USER}: Authentication failed: password is incorrect, or there is no user with such name`,
          );
        }
        writer = method === 'POST'; // as in ClickHouse, GET requests are read-only
      }
      if (params.get('compress') === '1' || params.get('decompress') === '1') {
        req.resume();
        throw new SqlEndpointError(
          48,
          'NOT_IMPLEMENTED',
          'ClickHouse block compression (compress=1, decompress=1) is not supported here; turn it off and use HTTP compression (enable_http_compression=1)',
        );
      }
      if (/^multipart\//i.test(req.headers['content-type'] ?? '')) {
        req.resume();
        throw new SqlEndpointError(
          48,
          'NOT_IMPLEMENTED',
          'multipart/form-data requests are not supported here; send parameters as param_<name> URL parameters',
        );
      }
      const limit = writer ? maxWriterBody : ANALYST_BODY_BYTES;
      const raw = await readBody(req, limit);
      const body = decodeBody(raw, req.headers['content-encoding']?.toLowerCase(), limit).toString('utf8');
      const queryParam = params.get('query');
      const sql = queryParam !== null ? (body.length > 0 ? `${queryParam}\n${body}` : queryParam) : body;
      if (sql.trim() === '') {
        if (method !== 'POST')
          return send(res, 200, { ...cors, 'Content-Type': 'text/plain; charset=UTF-8' }, 'Ok.\n', head);
        throw new SqlEndpointError(62, 'SYNTAX_ERROR', 'Empty query');
      }

      const info = inspectStatement(writer ? (queryParam ?? sql).slice(0, 65_536) : sql);
      if (!writer) {
        if (info.statements > 1) throw new SqlEndpointError(62, 'SYNTAX_ERROR', 'Multi-statements are not allowed');
        if (isRefusedForAnalyst(info)) {
          throw new SqlEndpointError(
            164,
            'READONLY',
            `${credentials.user}: Cannot execute query in readonly mode; only SELECT, WITH, SHOW, DESCRIBE, EXPLAIN and EXISTS run without the write credential`,
          );
        }
      }

      const settings: Record<string, string> = {};
      const queryParams: Record<string, string> = {};
      for (const [name, value] of params) {
        if (name.startsWith('param_')) {
          // String values arrive in the escaped text format; composite literals ([…], (…)) as is.
          const type = parameterType(sql, name.slice(6)) ?? '';
          queryParams[name.slice(6)] = /^(Nullable\(|LowCardinality\()*(String|FixedString)/.test(type)
            ? unescapeText(value)
            : value;
        } else if (!NOT_SETTINGS.has(name)) settings[name] = value;
      }
      // ClickHouse server's default; chDB's differs (@clickhouse/client expects quoted 64-bit integers).
      settings.output_format_json_quote_64bit_integers ??= '1';
      const defaultFormat =
        params.get('default_format') ||
        (typeof req.headers['x-clickhouse-format'] === 'string' ? req.headers['x-clickhouse-format'] : '') ||
        'TabSeparated';
      const format = info.kind !== 'INSERT' && info.format ? info.format : defaultFormat;
      const database =
        params.get('database') ||
        (typeof req.headers['x-clickhouse-database'] === 'string' ? req.headers['x-clickhouse-database'] : null);

      const started = performance.now();
      const result = await executor.run({
        sql,
        format: defaultFormat,
        database,
        settings,
        params: queryParams,
        readonly: !writer,
        queryId,
      });
      logger.debug(
        {
          user: credentials.user,
          writer,
          kind: info.kind,
          ms: Math.round(performance.now() - started),
          bytes: result.data.length,
        },
        'sql query',
      );

      const headers: Record<string, string> = {
        ...cors,
        'Content-Type': contentTypeOf(format),
        'X-ClickHouse-Format': format,
        'X-ClickHouse-Query-Id': queryId,
        'X-ClickHouse-Summary': JSON.stringify(result.summary satisfies SqlSummary),
      };
      let payload = result.data;
      if (params.get('enable_http_compression') === '1' && typeof req.headers['accept-encoding'] === 'string') {
        const compressed = compressBody(payload, req.headers['accept-encoding']);
        payload = compressed.data;
        if (compressed.encoding) headers['Content-Encoding'] = compressed.encoding;
      }
      send(res, 200, headers, payload, head);
    } catch (error) {
      const { code } = describeError(error);
      logger.debug({ code, user: params.get('user') ?? undefined }, 'sql query failed');
      fail(error);
    }
  }

  return {
    start() {
      return new Promise((resolve, reject) => {
        const created = http.createServer({ maxHeaderSize: 1 << 20 }, (req, res) => {
          handle(req, res).catch((error) => {
            logger.error({ err: error }, 'sql endpoint request failed');
            if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=UTF-8' });
            res.end();
          });
        });
        created.on('clientError', (_error, socket) => {
          if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
          else socket.destroy();
        });
        created.once('error', reject);
        created.listen(options.port ?? ctx.config.sqlPort, options.host ?? ctx.config.host, () => {
          created.off('error', reject);
          server = created;
          const { port } = created.address() as AddressInfo;
          logger.info(
            { host: options.host ?? ctx.config.host, port },
            'SQL endpoint listening (ClickHouse HTTP interface)',
          );
          resolve({ port });
        });
      });
    },
    stop() {
      const current = server;
      server = null;
      if (!current) return Promise.resolve();
      return new Promise((resolve) => {
        current.close(() => resolve());
        current.closeAllConnections();
      });
    },
  };
}
