// Each role as a function that starts its part on a runtime, and the single-role commands.
import type { Context } from '../core/context.ts';
import { createQueryApi, type QueryApi } from '../query-api/app.ts';
import { createHotViews, type HotViews } from '../query-api/hot-views.ts';
import { SLICE_MS } from '../core/slices.ts';
import { createStreamEdge } from '../stream-edge/server.ts';
import { trackStreamStats } from '../stream-edge/ops.ts';
import { createConsole } from '../query-api/console/console.ts';
import { consoleSecret, createConsoleSessions } from '../query-api/console/sessions.ts';
import { consoleHost } from './console.ts';
import { watchStartup } from './progress.ts';
import { createRuntime, waitForShutdown, type Runtime } from './runtime.ts';
import { listenError, probePort } from './errors.ts';
import { ConfigError } from '../core/config.ts';
import { startIngest } from './ingest-role.ts';
import { startAggregator } from './aggregate-role.ts';

/** Starts the SQL endpoint; resolves with the port it listens on. */
export async function startSqlEndpoint(runtime: Runtime): Promise<number> {
  const { client } = await runtime.store();
  // Imported here, not at the top: it loads chDB's engine, which the serving thread must not (see clickhouse/client.ts).
  const { createSqlEndpoint } = await import('../clickhouse/sql-endpoint.ts');
  const endpoint = createSqlEndpoint(runtime.ctx, client);
  const { host, sqlPort } = runtime.ctx.config;
  const { port } = await endpoint.start().catch((error: unknown) => {
    throw listenError('SPOT_SQL_PORT', host, sqlPort, error);
  });
  runtime.add({ name: 'sql-endpoint', stop: () => endpoint.stop() });
  runtime.endpoints.sql = `http://${host}:${port}`;
  runtime.ctx.logger.info(
    { port },
    `ClickHouse SQL endpoint on http://${runtime.ctx.config.host}:${port} (read-only for analysts)`,
  );
  return port;
}

export { startAggregator } from './aggregate-role.ts';

export async function startApi(runtime: Runtime): Promise<QueryApi> {
  const { store } = await runtime.store();
  const { config } = runtime.ctx;
  const sessions = config.console === 'off' ? null : createConsoleSessions(consoleSecret(config.dataDir));
  const api = createQueryApi(runtime.ctx, {
    store,
    log: runtime.log,
    keys: runtime.keys(),
    limiters: runtime.limiters(),
    ops: runtime.ops(),
    ...(sessions && {
      console: createConsole({ sessions, ipLimiter: runtime.limiters().ip, mode: config.console, now: Date.now }),
    }),
  });
  const { host, httpPort } = runtime.ctx.config;
  const { port } = await api.start().catch((error: unknown) => {
    throw listenError('SPOT_HTTP_PORT', host, httpPort, error);
  });
  runtime.add({ name: 'query-api', stop: () => api.stop() });
  runtime.endpoints.rest = `http://${host}:${port}`;
  if (sessions)
    runtime.endpoints.console = `http://${consoleHost(host)}:${port}/console/open?token=${sessions.mintToken()}`;
  runtime.ctx.logger.info(
    { port },
    `REST API on http://${runtime.ctx.config.host}:${port}/v1 (OpenAPI at /openapi.json)`,
  );
  return api;
}

/** Hot views of an edge running without the REST API: the state behind snapshot and spot.discovery. */
async function edgeViews(runtime: Runtime): Promise<HotViews> {
  const { store } = await runtime.store();
  const views = createHotViews(runtime.ctx, { log: runtime.log, store });
  await views.start();
  runtime.add({ name: 'edge-hot-views', stop: () => views.stop() });
  return views;
}

/** `views`: the REST API's hot views when both run in this process (else the edge reads its own). */
export async function startEdge(runtime: Runtime, views?: HotViews): Promise<void> {
  const { host, wsPort } = runtime.ctx.config;
  // uWebSockets.js listens with SO_REUSEPORT: on a port another process already serves it would
  // share the port (connections split between the two) instead of failing. Probe it first.
  await probePort(host, wsPort).catch((error: unknown) => {
    throw listenError('SPOT_WS_PORT', host, wsPort, error);
  });
  const edge = createStreamEdge(runtime.ctx, {
    log: runtime.log,
    keys: runtime.keys(),
    limiters: runtime.limiters(),
    ops: runtime.ops(),
    views: views ?? (await edgeViews(runtime)),
    // Given views are the REST API's: it answers on this thread, between the edge's writes.
    writeSliceMs: views ? SLICE_MS : undefined,
  });
  const { port } = await edge.start().catch((error: unknown) => {
    throw new ConfigError('SPOT_WS_PORT', `cannot listen on ${host}:${wsPort}: ${(error as Error).message}`);
  });
  runtime.add({ name: 'stream-edge', stop: () => edge.stop() });
  runtime.endpoints.stream = `ws://${host}:${port}/v1/stream`;
  trackStreamStats(runtime.ctx.metrics, () => edge.stats());
  runtime.ctx.logger.info({ port }, `WebSocket stream on ws://${runtime.ctx.config.host}:${port}/v1/stream`);
}

/**
 * Starts a process's roles and serves until a shutdown signal. A start-up failure stops what did
 * start; a configuration error (a port in use, …) goes up to main, which prints it naming the variable.
 */
export async function runRole(ctx: Context, start: (runtime: Runtime) => Promise<void>): Promise<number> {
  const runtime = await createRuntime(ctx);
  const starting = start(runtime);
  const done = waitForShutdown(runtime, starting);
  try {
    await starting;
  } catch (error) {
    if (!(error instanceof ConfigError)) ctx.logger.fatal({ err: error }, 'start-up failed');
    await runtime.stop();
    if (error instanceof ConfigError) throw error;
    return 1;
  }
  return done;
}

// Roles without a REST port serve /metrics, /healthz and /readyz on SPOT_METRICS_PORT when set.
export const ingestCommand = (ctx: Context) =>
  runRole(ctx, async (runtime) => {
    await runtime.serveMetricsPort();
    await startIngest(runtime);
  });
export const aggregateCommand = (ctx: Context) =>
  runRole(ctx, async (runtime) => {
    await runtime.serveMetricsPort();
    await startAggregator(runtime);
    watchStartup(runtime);
  });
export const apiCommand = (ctx: Context) => runRole(ctx, async (runtime) => void (await startApi(runtime)));
export const edgeCommand = (ctx: Context) => runRole(ctx, (runtime) => startEdge(runtime));
