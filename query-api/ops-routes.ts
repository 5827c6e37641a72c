// Operations endpoints of every port: GET /metrics (Prometheus text), /healthz (the process
// answers), /readyz (the store answers and every consumer group of this process is within
// SPOT_READY_MAX_LAG messages of the log's end). No key, no request budget, not rate limited:
// answered before the API's middleware. docs/operations.md documents the semantics.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { Context } from '../core/context.ts';
import type { EventLog } from '../core/eventlog/types.ts';

export const OPS_PATHS = ['/metrics', '/healthz', '/readyz'] as const;
/** How long /readyz waits for the store's ping. */
const STORE_PING_TIMEOUT_MS = 2000;

interface OpsResponse {
  status: number;
  contentType: string;
  body: string;
}

export interface Ops {
  /** The answer to an ops path, or null for any other path. */
  handle(method: string, path: string): Promise<OpsResponse> | null;
  /** Readiness with its reasons (the /readyz body). */
  readiness(): Promise<Readiness>;
}

export interface OpsDeps {
  log: EventLog;
  /** The store when this process holds one; null: readiness does not check a store. */
  store: () => { ping(): Promise<boolean> } | null;
  /**
   * Another thread of this process (the serving thread asks the main thread): /metrics merges its
   * metrics with this thread's (the peer collects the process-wide ones), /readyz its readiness.
   */
  peer?: OpsPeer;
}

export interface Readiness {
  ready: boolean;
  store: string;
  lag: Record<string, Record<string, number>>;
  maxLag: number;
}

export interface OpsPeer {
  metrics(): Promise<MetricObjectWithValues<MetricValue<string>>[]>;
  readiness(): Promise<Readiness>;
}

const JSON_TYPE = 'application/json; charset=utf-8';

export function createOps(ctx: Context, deps: OpsDeps): Ops {
  const { metrics } = ctx;
  if (!deps.peer) metrics.collectProcessMetrics();
  const maxLag = ctx.config.readyMaxLag;

  /** Lag per group and topic of the partitions each group has reported; sets the lag gauge. */
  async function refreshLag(): Promise<Record<string, Record<string, number>>> {
    const ends = new Map<string, Map<number, number>>();
    const lag: Record<string, Record<string, number>> = {};
    for (const [group, byTopic] of metrics.positions()) {
      lag[group] = {};
      for (const [topic, byPartition] of byTopic) {
        let topicEnds = ends.get(topic);
        if (!topicEnds) ends.set(topic, (topicEnds = await deps.log.endOffsets(topic)));
        let behind = 0;
        for (const [partition, next] of byPartition) behind += Math.max(0, (topicEnds.get(partition) ?? 0) - next);
        lag[group]![topic] = behind;
        metrics.families.consumerLag.set({ group, topic }, behind);
      }
    }
    return lag;
  }

  async function storeState(): Promise<string> {
    const store = deps.store();
    if (!store) return 'none';
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), STORE_PING_TIMEOUT_MS);
    });
    try {
      return (await Promise.race([store.ping(), timeout])) ? 'ok' : 'unreachable';
    } catch {
      return 'unreachable';
    } finally {
      clearTimeout(timer);
    }
  }

  async function readiness(): Promise<Readiness> {
    const [store, lag] = await Promise.all([storeState(), refreshLag().catch(() => null)]);
    const caughtUp =
      lag !== null && Object.values(lag).every((byTopic) => Object.values(byTopic).every((n) => n <= maxLag));
    const own = { ready: store !== 'unreachable' && caughtUp, store, lag: lag ?? {}, maxLag };
    if (!deps.peer) return own;
    const peer = await deps.peer.readiness();
    return {
      ready: own.ready && peer.ready,
      store: own.store === 'unreachable' || peer.store === 'unreachable' ? 'unreachable' : own.store,
      lag: { ...peer.lag, ...own.lag },
      maxLag,
    };
  }

  async function answer(path: string): Promise<OpsResponse> {
    if (path === '/healthz') return { status: 200, contentType: JSON_TYPE, body: '{"status":"ok"}' };
    if (path === '/readyz') {
      const state = await readiness();
      return { status: state.ready ? 200 : 503, contentType: JSON_TYPE, body: JSON.stringify(state) };
    }
    await refreshLag().catch((error) => ctx.logger.warn({ err: error }, 'consumer lag not measured'));
    if (!deps.peer) return { status: 200, contentType: metrics.registry.contentType, body: await metrics.expose() };
    const [own, peer] = await Promise.all([metrics.exposeJSON(), deps.peer.metrics()]);
    const merged = AggregatorRegistry.aggregate([own, peer]);
    return { status: 200, contentType: merged.contentType, body: await merged.metrics() };
  }

  return {
    handle(method, path) {
      if (!(OPS_PATHS as readonly string[]).includes(path)) return null;
      if (method !== 'GET' && method !== 'HEAD')
        return Promise.resolve({
          status: 405,
          contentType: JSON_TYPE,
          body: JSON.stringify({ error: { code: 'METHOD_NOT_ALLOWED', message: `${path} answers GET and HEAD.` } }),
        });
      return answer(path).catch((error) => {
        ctx.logger.error({ err: error, path }, 'ops endpoint failed');
        return { status: 503, contentType: JSON_TYPE, body: '{"status":"error"}' };
      });
    },
    readiness,
  };
}

function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const query = raw.indexOf('?');
  return query < 0 ? raw : raw.slice(0, query);
}

function write(req: http.IncomingMessage, res: http.ServerResponse, answer: OpsResponse): void {
  res.writeHead(answer.status, {
    'Content-Type': answer.contentType,
    'Content-Length': Buffer.byteLength(answer.body),
    'Cache-Control': 'no-store',
    ...(answer.status === 405 ? { Allow: 'GET, HEAD' } : {}),
  });
  res.end(req.method === 'HEAD' ? undefined : answer.body);
}

/**
 * The front of a node HTTP server: times every request into the duration histogram (route pattern
 * from `routeOf`, so the label set stays bounded) and answers ops paths (when `ops` is given).
 * True when answered.
 */
export function createHttpOps(
  ctx: Context,
  ops: Ops | null,
  routeOf: (method: string, path: string) => string,
): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  const histogram = ctx.metrics.families.httpSeconds;
  return (req, res) => {
    const started = process.hrtime.bigint();
    const method = req.method ?? 'GET';
    const path = pathOf(req.url);
    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      histogram.observe({ route: routeOf(method, path), method, status: String(res.statusCode) }, seconds);
    });
    const pending = ops?.handle(method, path);
    if (!pending) return false;
    void pending.then((answer) => write(req, res, answer));
    return true;
  };
}

/** SPOT_METRICS_PORT: the ops endpoints on their own port, for roles that serve no REST port. */
export async function serveOps(ctx: Context, ops: Ops, port: number): Promise<{ port: number; stop(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const pending = ops.handle(req.method ?? 'GET', pathOf(req.url));
    if (pending) void pending.then((answer) => write(req, res, answer));
    else
      write(req, res, { status: 404, contentType: 'text/plain', body: 'metrics port: /metrics, /healthz, /readyz\n' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, ctx.config.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
