// The ClickHouse client factory: @clickhouse/client over in-process chDB (embedded default) or over
// HTTP to a ClickHouse server (SPOT_CLICKHOUSE_URL). The same SQL runs on both.
import path from 'node:path';
import fs from 'node:fs';
import { Readable } from 'node:stream';
import { ClickHouseError, createClient, type ClickHouseClient } from '@clickhouse/client';
import { createRequire } from 'node:module';
import type { ChdbConnection } from 'chdb/connection';
import type { Context } from '../core/context.ts';
import { StoreBusyError, StoreUnavailableError } from '../core/errors.ts';

export type { ClickHouseClient };

/** Where the embedded chDB engine keeps its data: <dataDir>/clickhouse. */
export function chdbDataPath(ctx: Context): string {
  return path.join(ctx.config.dataDir, 'clickhouse');
}

// chDB binds one data directory per process. Connections on the same path share the engine
// (chDB reference-counts it), so each client gets its own connection (and its own session
// settings); a second path is refused up front with a message naming both paths.
let boundChdbPath: string | null = null;
let openChdbClients = 0;
/** The chDB connection behind a client, for the zero-copy raw insert. */
const chdbConnections = new WeakMap<ClickHouseClient, ChdbConnection>();

/**
 * chDB's native engine is loaded on first use, not on import: a worker thread that imports this
 * module but talks HTTP (`spot up`'s serving thread) must not load it, as its exit would tear
 * down the engine the main thread uses (measured: the main thread's next query never returns).
 */
function loadChdb(): typeof import('chdb/connection') {
  return createRequire(import.meta.url)('chdb/connection');
}

function chdbClient(ctx: Context): ClickHouseClient {
  const dataPath = chdbDataPath(ctx);
  if (boundChdbPath !== null && boundChdbPath !== dataPath && openChdbClients > 0) {
    throw new Error(`chDB is already bound to ${boundChdbPath} in this process; it cannot also open ${dataPath}`);
  }
  fs.mkdirSync(dataPath, { recursive: true });
  let connection: ChdbConnection;
  try {
    connection = loadChdb().createChdbConnection({ path: dataPath });
  } catch (error) {
    // chDB refuses a data dir whose lock another process holds (a running `spot up`).
    if ((error as { code?: unknown }).code === 'CHDB_CONNECTION') throw new StoreBusyError(dataPath, { cause: error });
    throw error;
  }
  boundChdbPath = dataPath;
  openChdbClients += 1;
  const client = createClient({ connection } as Parameters<typeof createClient>[0]);
  chdbConnections.set(client, connection);
  const close = client.close.bind(client);
  let closed = false;
  client.close = async () => {
    if (closed) return;
    closed = true;
    openChdbClients -= 1;
    await close();
  };
  return client;
}

function httpClient(ctx: Context, rawUrl: string): ClickHouseClient {
  const url = new URL(rawUrl);
  const username = decodeURIComponent(url.username) || 'default';
  const password = decodeURIComponent(url.password);
  url.username = '';
  url.password = '';
  const database = url.pathname.replace(/^\/+|\/+$/g, '') || undefined;
  url.pathname = '/';
  ctx.logger.child({ component: 'clickhouse' }).info({ url: url.origin, username }, 'using ClickHouse over HTTP');
  return createClient({ url: url.origin, username, password, database });
}

/** One client; chDB on <dataDir>/clickhouse when ctx.config.clickhouseUrl is null, else HTTP. */
export function createClickHouseClient(ctx: Context): ClickHouseClient {
  return classifyingErrors(
    ctx.config.clickhouseUrl === null ? chdbClient(ctx) : httpClient(ctx, ctx.config.clickhouseUrl),
  );
}

// Server error codes that a later attempt may not hit: timeouts, overload, replicas or the network.
const TRANSIENT_SERVER_CODES = new Set([
  '159', // TIMEOUT_EXCEEDED
  '160', // TOO_SLOW
  '202', // TOO_MANY_SIMULTANEOUS_QUERIES
  '203', // NO_FREE_CONNECTION
  '209', // SOCKET_TIMEOUT
  '210', // NETWORK_ERROR
  '241', // MEMORY_LIMIT_EXCEEDED
  '242', // TABLE_IS_READ_ONLY
  '252', // TOO_MANY_PARTS
  '285', // TOO_FEW_LIVE_REPLICAS
  '319', // UNKNOWN_STATUS_OF_INSERT
  '999', // KEEPER_EXCEPTION
]);

/**
 * The one place store errors are classified (inward taxonomy, core/errors.ts): a ClickHouse error
 * (the server or chDB answered) is retryable only for a transient code and otherwise stays as it is
 * (bad SQL is a bug, not an outage); any other failure of a client call is the transport's (refused,
 * reset, timed out) and becomes a StoreUnavailableError.
 */
export function classifyStoreError(error: unknown): unknown {
  if (error instanceof StoreUnavailableError || error instanceof StoreBusyError) return error;
  if (error instanceof ClickHouseError) {
    return TRANSIENT_SERVER_CODES.has(error.code)
      ? new StoreUnavailableError(`the store is overloaded or unreachable (code ${error.code})`, { cause: error })
      : error;
  }
  if (error instanceof TypeError || error instanceof RangeError || error instanceof SyntaxError) return error;
  return new StoreUnavailableError('the store cannot be reached', { cause: error });
}

async function classified<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw classifyStoreError(error);
  }
}

/** Routes every failure of the client's calls, and of reading a result, through classifyStoreError. */
function classifyingErrors(client: ClickHouseClient): ClickHouseClient {
  const query = client.query.bind(client);
  const insert = client.insert.bind(client);
  const exec = client.exec.bind(client);
  const command = client.command.bind(client);
  client.query = (async (params: Parameters<typeof query>[0]) => {
    const result = await classified(() => query(params));
    const json = result.json.bind(result);
    const text = result.text.bind(result);
    result.json = (() => classified(() => json())) as typeof result.json;
    result.text = () => classified(() => text());
    return result;
  }) as typeof client.query;
  client.insert = ((params: Parameters<typeof insert>[0]) => classified(() => insert(params))) as typeof client.insert;
  client.exec = (params) => classified(() => exec(params));
  client.command = (params) => classified(() => command(params));
  return client;
}

/** The text formats rows are encoded in (clickhouse/rows.ts); chDB's raw insert takes text only. */
export type RowTextFormat = 'JSONCompactEachRow' | 'TabSeparated';

const bytesOf = (text: string | Buffer): Buffer => (typeof text === 'string' ? Buffer.from(text) : text);

/**
 * Inserts rows already encoded as text (clickhouse/rows.ts), as a string or its UTF-8 bytes. On
 * chDB the text goes to the engine as one Buffer (zero-copy, not spliced into an SQL string, parsed
 * on chDB's worker threads). Over HTTP it is the body of `INSERT … FORMAT`, as clickhouse-client
 * sends it.
 */
export async function insertRowText(
  client: ClickHouseClient,
  table: string,
  columns: readonly string[],
  text: string | Buffer,
  format: RowTextFormat,
  settings?: Record<string, number>,
): Promise<void> {
  if (text.length === 0) return;
  const connection = chdbConnections.get(client);
  if (connection) {
    await classified(() => connection.chdb.rawInsert({ table, columns, values: bytesOf(text), format, settings }));
    return;
  }
  await classified(async () => {
    const result = await client.exec({
      query: `INSERT INTO ${table} (${columns.join(', ')}) FORMAT ${format}`,
      values: Readable.from([bytesOf(text)]),
      clickhouse_settings: settings,
    });
    // The response body is empty; reading it to the end frees the socket for the next request.
    for await (const _ of result.stream) void _;
  });
}
