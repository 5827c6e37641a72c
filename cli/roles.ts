// Each role as a function that starts its part on a runtime, and the single-role commands.
import type { Context } from '../core/context.ts';
import { createQueryApi } from '../query-api/app.ts';
import { createStreamEdge } from '../stream-edge/server.ts';
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
  runtime.ctx.logger.info(
    { port },
    `ClickHouse SQL endpoint on http://${runtime.ctx.config.host}:${port} (read-only for analysts)`,
  );
  return port;
}

export { startAggregator } from './aggregate-role.ts';

export async function startApi(runtime: Runtime): Promise<void> {
  const { store } = await runtime.store();
  const api = createQueryApi(runtime.ctx, {
    store,
    log: runtime.log,
    keys: runtime.keys(),
    limiters: runtime.limiters(),
  });
  const { host, httpPort } = runtime.ctx.config;
  const { port } = await api.start().catch((error: unknown) => {
    throw listenError('SPOT_HTTP_PORT', host, httpPort, error);
  });
  runtime.add({ name: 'query-api', stop: () => api.stop() });
  runtime.ctx.logger.info(
    { port },
    `REST API on http://${runtime.ctx.config.host}:${port}/v1 (OpenAPI at /openapi.json)`,
  );
}

export async function startEdge(runtime: Runtime): Promise<void> {
  const { host, wsPort } = runtime.ctx.config;
  // uWebSockets.js listens with SO_REUSEPORT: on a port another process already serves it would
  // share the port (connections split between the two) instead of failing. Probe it first.
  await probePort(host, wsPort).catch((error: unknown) => {
    throw listenError('SPOT_WS_PORT', host, wsPort, error);
  });
  const edge = createStreamEdge(runtime.ctx, { log: runtime.log, keys: runtime.keys(), limiters: runtime.limiters() });
  const { port } = await edge.start().catch((error: unknown) => {
    throw new ConfigError('SPOT_WS_PORT', `cannot listen on ${host}:${wsPort}: ${(error as Error).message}`);
  });
  runtime.add({ name: 'stream-edge', stop: () => edge.stop() });
  runtime.ctx.logger.info({ port }, `WebSocket stream on ws://${runtime.ctx.config.host}:${port}/v1/stream`);
}

/**
 * Starts a process's roles and serves until a shutdown signal. A start-up failure stops what did
 * start; a configuration error (a port in use, …) goes up to main, which prints it naming the variable.
 */
export async function runRole(ctx: Context, start: (runtime: Runtime) => Promise<void>): Promise<number> {
  const runtime = await createRuntime(ctx);
  const done = waitForShutdown(runtime);
  try {
    await start(runtime);
  } catch (error) {
    if (!(error instanceof ConfigError)) ctx.logger.fatal({ err: error }, 'start-up failed');
    await runtime.stop();
    if (error instanceof ConfigError) throw error;
    return 1;
  }
  return done;
}

export const ingestCommand = (ctx: Context) => runRole(ctx, (runtime) => startIngest(runtime));
export const aggregateCommand = (ctx: Context) => runRole(ctx, (runtime) => startAggregator(runtime));
export const apiCommand = (ctx: Context) => runRole(ctx, (runtime) => startApi(runtime));
export const edgeCommand = (ctx: Context) => runRole(ctx, (runtime) => startEdge(runtime));
