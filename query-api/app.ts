// The REST query API: Koa + @koa/router on SPOT_HTTP_PORT. Middleware order: request id and the
// last-resort error envelope, then for /v1 the IP budget, routing errors (404, 405, 426), the key
// check, the key budget and credits, then the route. Every /v1 response carries
// X-RateLimit-Remaining; /openapi.json needs no key and spends no budget.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import type { SpotStore } from '../clickhouse/types.ts';
import type { KeyCheck, KeyStore } from '../core/auth/keys.ts';
import {
  createRateLimiter,
  IP_BUDGET_PER_MINUTE,
  KEY_BUDGET_PER_MINUTE,
  type RateLimiter,
} from '../core/auth/rate-limit.ts';
import type { Context } from '../core/context.ts';
import { notFound, SpotError } from '../core/errors.ts';
import type { EventLog } from '../core/eventlog/types.ts';
import { requestIdOf } from '../core/request-id.ts';
import { creditsExhausted, rateLimited, sendError, serviceUnavailable, toSpotError, unauthorized } from './errors.ts';
import { createFastLane } from './fast-lane.ts';
import { createHotViews, type HotViews } from './hot-views.ts';
import { buildOpenApi } from './openapi.ts';
import { createParserErrorHandler } from './parser-errors.ts';
import { createHttpOps, OPS_PATHS, type Ops } from './ops-routes.ts';
import { CONSOLE_API, type ConsoleHandler } from './console/console.ts';
import { createRoutes, CREDIT_COST } from './routes.ts';

export interface QueryApiOptions {
  store: SpotStore;
  /** The event log the hot views read (unused when `views` is given). */
  log: EventLog;
  keys: KeyStore;
  views?: HotViews;
  /** Budgets per minute; SPEC.md's values unless a test injects smaller ones. */
  keyBudgetPerMinute?: number;
  ipBudgetPerMinute?: number;
  now?: () => number;
  bodyLimitBytes?: number;
  /** Request budgets shared with the stream edge's handshakes when both run in one process. */
  limiters?: { key: RateLimiter; ip: RateLimiter };
  /** /metrics, /healthz, /readyz answered before any key or budget check; every request is timed. */
  ops?: Ops;
  /** The live console at / (query-api/console). */
  console?: ConsoleHandler;
  /** How long stop() lets requests in flight finish before it cuts every connection (default 1 s). */
  stopGraceMs?: number;
}

export interface QueryApi {
  app: Koa;
  views: HotViews;
  start(): Promise<{ port: number }>;
  stop(): Promise<void>;
}

/** Header block cap (Node's default, stated): a larger one is a 400 VALIDATION_ERROR. */
export const MAX_HEADER_BYTES = 16 * 1024;

export function createQueryApi(ctx: Context, options: QueryApiOptions): QueryApi {
  const log = ctx.logger.child({ component: 'query-api' });
  const now = options.now ?? Date.now;
  const stopGraceMs = options.stopGraceMs ?? 1000;
  const ownViews = options.views === undefined;
  const views = options.views ?? createHotViews(ctx, { log: options.log, store: options.store, now });
  const keyLimiter: RateLimiter =
    options.limiters?.key ?? createRateLimiter({ perMinute: options.keyBudgetPerMinute ?? KEY_BUDGET_PER_MINUTE });
  const ipLimiter: RateLimiter =
    options.limiters?.ip ?? createRateLimiter({ perMinute: options.ipBudgetPerMinute ?? IP_BUDGET_PER_MINUTE });
  const router = createRoutes({ store: options.store, views, now, bodyLimitBytes: options.bodyLimitBytes });
  const routes = router.routes();
  const dispatch = (koa: Koa.Context) => routes(koa as never, async () => {});
  const openApiJson = JSON.stringify(buildOpenApi());

  const app = new Koa();
  app.silent = true;

  const setRemaining = (koa: Koa.Context, remaining: number) => koa.set('X-RateLimit-Remaining', String(remaining));

  /** A wrong method, an unknown /v1 path or the stream path: no key needed, but a valid key pays. */
  function routingResponse(koa: Koa.Context, allowed: string[] | null, ipRemaining: number): void {
    let check: KeyCheck | null = null;
    try {
      check = options.keys.check(koa.get('authorization') || undefined, now());
    } catch {
      check = null;
    }
    if (check?.ok) {
      const decision = keyLimiter.take(check.record.id, now());
      setRemaining(koa, decision.remaining);
      // A 404/405/426/429 is a non-2xx: a metered key sees X-Credits-Cost: 0 here too.
      if (check.record.metered) {
        koa.set('X-Credits-Cost', '0');
        const remaining = options.keys.spendCredits(check.record.id, 0);
        if (remaining !== null) koa.set('X-Credits-Remaining', String(remaining));
      }
      if (!decision.allowed) throw rateLimited(decision.retryAfterSeconds);
    } else {
      setRemaining(koa, ipRemaining);
    }
    if (koa.path === '/v1/stream' || koa.path === '/v1/stream/') {
      if (allowed === null) {
        koa.status = 426;
        koa.set('Upgrade', 'websocket');
        koa.type = 'text/plain';
        koa.body = `Upgrade required: the stream is a WebSocket served on port ${ctx.config.wsPort} (ws://<host>:${ctx.config.wsPort}/v1/stream), not on this port.\n`;
        return;
      }
    }
    if (allowed !== null) return methodNotAllowed(koa, allowed);
    throw notFound('No endpoint has this path; check the path against /openapi.json.');
  }

  function methodNotAllowed(koa: Koa.Context, allowed: string[]): void {
    koa.status = 405;
    koa.set('Allow', allowed.join(', '));
    // An empty body (Koa would turn a null body into a 204).
    koa.body = '';
    koa.remove('Content-Type');
  }

  async function v1(koa: Koa.Context): Promise<void> {
    const ip = koa.ip || 'unknown';
    const ipDecision = ipLimiter.take(ip, now());
    if (!ipDecision.allowed) {
      setRemaining(koa, 0);
      throw rateLimited(ipDecision.retryAfterSeconds);
    }
    const isStream = koa.path === '/v1/stream' || koa.path === '/v1/stream/';
    const match = router.match(koa.path, koa.method);
    if (isStream || !match.route) {
      const methods = [...new Set(match.path.flatMap((layer) => layer.methods))];
      const streamAllowed = isStream && (koa.method === 'GET' || koa.method === 'HEAD');
      return routingResponse(
        koa,
        streamAllowed ? null : isStream ? ['GET', 'HEAD'] : methods.length > 0 ? methods : null,
        ipDecision.remaining,
      );
    }

    let check: KeyCheck;
    try {
      check = options.keys.check(koa.get('authorization') || undefined, now());
    } catch (error) {
      log.error({ err: error }, 'key check failed');
      setRemaining(koa, ipDecision.remaining);
      throw serviceUnavailable();
    }
    if (!check.ok) {
      setRemaining(koa, ipDecision.remaining);
      throw unauthorized(check.reason);
    }
    const record = check.record;
    const keyDecision = keyLimiter.take(record.id, now());
    setRemaining(koa, keyDecision.remaining);
    const metered = record.metered;
    const routeName = match.pathAndMethod.find((layer) => layer.methods.length > 0)?.name ?? '';
    try {
      if (!keyDecision.allowed) throw rateLimited(keyDecision.retryAfterSeconds);
      if (metered && record.credits !== null && record.credits <= 0) throw creditsExhausted();
      await dispatch(koa);
    } catch (error) {
      sendError(koa, toSpotError(error, log, koa.state.requestId as string));
    }
    if (metered) {
      const ok = koa.status >= 200 && koa.status < 300;
      const cost = ok ? (CREDIT_COST[routeName] ?? 1) : 0;
      const remaining = options.keys.spendCredits(record.id, cost);
      koa.set('X-Credits-Cost', String(cost));
      if (remaining !== null) koa.set('X-Credits-Remaining', String(remaining));
    }
  }

  /** Methods served at a path, null when none (405 versus 404 for a method the parser refuses). */
  function allowedMethods(path: string): string[] | null {
    if (path === '/openapi.json' || path === '/v1/stream' || path === '/v1/stream/') return ['GET', 'HEAD'];
    const methods = [...new Set(router.match(path, 'GET').path.flatMap((layer) => layer.methods))];
    return methods.length > 0 ? methods : null;
  }

  app.use(async (koa) => {
    const requestId = requestIdOf(koa.get('x-request-id'));
    koa.state.requestId = requestId;
    koa.set('X-Request-ID', requestId);
    try {
      if (options.console && (await options.console(koa, dispatch))) return;
      if (koa.path === '/openapi.json') {
        if (koa.method !== 'GET' && koa.method !== 'HEAD') return methodNotAllowed(koa, ['GET', 'HEAD']);
        koa.type = 'application/json';
        koa.body = openApiJson;
        return;
      }
      if (koa.path === '/v1' || koa.path.startsWith('/v1/')) return await v1(koa);
      throw notFound('No endpoint has this path; every endpoint starts with /v1 (see /openapi.json).');
    } catch (error) {
      sendError(koa, error instanceof SpotError ? error : toSpotError(error, log, requestId));
    }
  });

  /** The matched route pattern (a bounded label set for the duration histogram). */
  const routeLabel = (method: string, path: string): string => {
    if (path.startsWith(`${CONSOLE_API}/`)) return `/console/api${routeLabel(method, path.slice(CONSOLE_API.length))}`;
    const pattern = router.match(path, method).pathAndMethod.find((layer) => layer.methods.length > 0)?.path;
    if (typeof pattern === 'string') return pattern;
    return path === '/openapi.json' || OPS_PATHS.includes(path as never) ? path : 'other';
  };

  let server: http.Server | null = null;

  return {
    app,
    views,
    async start() {
      if (ownViews) await views.start();
      const koaHandler = app.callback();
      const fastLane = createFastLane({ views, keys: options.keys, keyLimiter, ipLimiter, now });
      const front = createHttpOps(ctx, options.ops ?? null, routeLabel);
      // No Host header is no reason to refuse (the parser would send a bare 400); parser refusals
      // get the envelope from parser-errors.ts.
      server = http.createServer({ requireHostHeader: false, maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
        if (!front(req, res) && !fastLane(req, res)) void koaHandler(req, res);
      });
      server.on(
        'clientError',
        createParserErrorHandler(server, { ipLimiter, allowedMethods, now, log, maxHeaderBytes: MAX_HEADER_BYTES }),
      );
      server.keepAliveTimeout = 65_000;
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(ctx.config.httpPort, ctx.config.host, () => resolve());
      });
      const port = (server.address() as AddressInfo).port;
      log.info({ port, host: ctx.config.host }, 'query API listening');
      return { port };
    },
    async stop() {
      keyLimiter.stop();
      ipLimiter.stop();
      if (server) {
        const s = server;
        server = null;
        s.closeIdleConnections?.();
        const closed = new Promise<void>((resolve) => s.close(() => resolve()));
        // A client that does not read its response holds the connection open (measured: a
        // readiness probe that left /openapi.json unread held the serving thread's stop to its
        // 5 s cut-off). Requests in flight get a grace period, then every connection is cut.
        const cut = setTimeout(() => s.closeAllConnections?.(), stopGraceMs);
        await closed;
        clearTimeout(cut);
      }
      if (ownViews) await views.stop();
    },
  };
}
