// The ClickHouse client factory: @clickhouse/client over in-process chDB (embedded default) or over
// HTTP to a ClickHouse server (SPOT_CLICKHOUSE_URL). The same SQL runs on both.
import path from 'node:path';
import fs from 'node:fs';
import { Readable } from 'node:stream';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createRequire } from 'node:module';
import type { ChdbConnection } from 'chdb/connection';
import type { Context } from '../core/context.ts';

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
  const connection = loadChdb().createChdbConnection({ path: dataPath });
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
  return ctx.config.clickhouseUrl === null ? chdbClient(ctx) : httpClient(ctx, ctx.config.clickhouseUrl);
}

/**
 * Inserts rows already encoded as JSONCompactEachRow text (clickhouse/rows.ts). On chDB the text
 * goes to the engine as one Buffer (zero-copy, not spliced into an SQL string, parsed on chDB's
 * worker thread). Over HTTP it is the body of `INSERT … FORMAT`, as clickhouse-client sends it.
 */
export async function insertCompactRows(
  client: ClickHouseClient,
  table: string,
  columns: readonly string[],
  text: string,
): Promise<void> {
  if (text.length === 0) return;
  const connection = chdbConnections.get(client);
  if (connection) {
    await connection.chdb.rawInsert({
      table,
      columns,
      values: Buffer.from(text),
      format: 'JSONCompactEachRow',
    });
    return;
  }
  const result = await client.exec({
    query: `INSERT INTO ${table} (${columns.join(', ')}) FORMAT JSONCompactEachRow`,
    values: Readable.from([Buffer.from(text)]),
  });
  // The response body is empty; reading it to the end frees the socket for the next request.
  for await (const _ of result.stream) void _;
}
