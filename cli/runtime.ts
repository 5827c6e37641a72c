// Composition root: builds the parts a role needs from the factories and stops them in a fixed
// order (stop intake, flush, commit, close), so a SIGINT or SIGTERM loses nothing.
import fs from 'node:fs';
import path from 'node:path';
import type { Context } from '../core/context.ts';
import { createEventLog } from '../core/eventlog/index.ts';
import type { EventLog } from '../core/eventlog/types.ts';
import { ALL_TOPICS } from '../core/topics.ts';
import { createKeyStore, type KeyStore } from '../core/auth/keys.ts';
import {
  createRateLimiter,
  IP_BUDGET_PER_MINUTE,
  KEY_BUDGET_PER_MINUTE,
  type RateLimiter,
} from '../core/auth/rate-limit.ts';
import { createClickHouseClient, type ClickHouseClient } from '../clickhouse/client.ts';
import { migrate } from '../clickhouse/migrations.ts';
import { StoreUnavailableError } from '../core/errors.ts';
import { createStore } from '../clickhouse/store.ts';
import type { SpotStore } from '../clickhouse/types.ts';
import { createOps, serveOps, type Ops, type OpsPeer } from '../query-api/ops-routes.ts';
import { AggregatorRegistry } from 'prom-client';
import type { MetricsJSON } from '../core/metrics.ts';

export interface Stoppable {
  name: string;
  stop(): Promise<void>;
  /**
   * Its stop needs nothing of the parts stopped after it, nor they of it (a thread of its own with
   * its own log connection): it runs alongside them instead of before them.
   */
  alongside?: boolean;
}

/** Base URLs of what this process serves, filled as the roles start (the start-up banner). */
export interface Endpoints {
  rest?: string;
  stream?: string;
  sql?: string;
  /** One-time link that opens a console session in a browser. */
  console?: string;
}

/** Another thread of this process that keeps its own metrics (the ingest thread). */
export interface MetricsThread {
  metrics(): Promise<MetricsJSON>;
}

export interface Runtime {
  ctx: Context;
  endpoints: Endpoints;
  log: EventLog;
  /** Parts in start order; stop() runs them in reverse. */
  parts: Stoppable[];
  add(part: Stoppable): void;
  store(): Promise<{ client: ClickHouseClient; store: SpotStore }>;
  keys(): KeyStore;
  /** One request budget per key and per IP, shared by the REST API and the stream handshakes. */
  limiters(): { key: RateLimiter; ip: RateLimiter };
  /** Includes another thread's metrics in metricsJSON(). */
  addMetricsThread(thread: MetricsThread): void;
  /** This thread's metrics merged with those of the threads added (what another thread's /metrics merges). */
  metricsJSON(): Promise<MetricsJSON>;
  /** /metrics, /healthz, /readyz of this process (served on the REST and stream ports, or SPOT_METRICS_PORT). */
  ops(): Ops;
  /** Serves the ops endpoints on SPOT_METRICS_PORT when set (roles without a REST port). */
  serveMetricsPort(): Promise<void>;
  stop(): Promise<void>;
  /**
   * A part that cannot go on (a fatal error inward): the process shuts down in order and exits 1,
   * so a supervisor restarts it from its snapshot and the log instead of it serving stale state.
   */
  fail(part: string, error: Error): void;
  /** Resolves with the first failure reported through fail(). */
  readonly failed: Promise<{ part: string; error: Error }>;
}

export interface RuntimeOptions {
  /** The event log to use (a serving thread's read-only reader); default: the configured transport, topics ensured. */
  log?: EventLog;
  /** Another thread of this process whose metrics and readiness the ops endpoints include. */
  opsPeer?: OpsPeer;
}

/** How long start-up waits for a store that does not answer yet (a ClickHouse server still booting). */
const STORE_WAIT_MS = 30_000;

/** Migrations, retried while the store is unreachable (retryable), up to STORE_WAIT_MS. */
async function migrateWhenReachable(ctx: Context, client: ClickHouseClient): Promise<number[]> {
  const started = performance.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await migrate(client);
    } catch (error) {
      if (!(error instanceof StoreUnavailableError) || performance.now() - started > STORE_WAIT_MS) throw error;
      const waitMs = Math.min(2000, 250 * 2 ** attempt);
      ctx.logger.warn({ err: error.message, waitMs }, 'the store does not answer yet; retrying');
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}

export async function createRuntime(ctx: Context, options: RuntimeOptions = {}): Promise<Runtime> {
  fs.mkdirSync(ctx.config.dataDir, { recursive: true });
  const log = options.log ?? createEventLog(ctx);
  if (!options.log) await log.ensureTopics(ALL_TOPICS);
  const parts: Stoppable[] = [];
  let storeParts: { client: ClickHouseClient; store: SpotStore } | null = null;
  let keyStore: KeyStore | null = null;
  let limiters: { key: RateLimiter; ip: RateLimiter } | null = null;
  let ops: Ops | null = null;
  let stopping: Promise<void> | null = null;
  const metricsThreads: MetricsThread[] = [];

  let reportFailure!: (failure: { part: string; error: Error }) => void;
  const failed = new Promise<{ part: string; error: Error }>((resolve) => (reportFailure = resolve));
  const runtime: Runtime = {
    ctx,
    failed,
    fail(part, error) {
      reportFailure({ part, error });
    },
    endpoints: {},
    log,
    parts,
    add(part) {
      parts.push(part);
    },
    async store() {
      if (!storeParts) {
        const client = createClickHouseClient(ctx);
        const applied = await migrateWhenReachable(ctx, client);
        if (applied.length) ctx.logger.info({ applied }, 'clickhouse migrations applied');
        storeParts = { client, store: createStore(ctx, client) };
      }
      return storeParts;
    },
    addMetricsThread(thread) {
      metricsThreads.push(thread);
    },
    async metricsJSON() {
      const own = await ctx.metrics.exposeJSON();
      if (metricsThreads.length === 0) return own;
      const others = await Promise.all(metricsThreads.map((thread) => thread.metrics()));
      return AggregatorRegistry.aggregate([own, ...others]).getMetricsAsJSON();
    },
    keys() {
      if (!keyStore) {
        keyStore = createKeyStore(ctx, { path: path.join(ctx.config.dataDir, 'keys.sqlite') });
        for (const key of ctx.config.apiKeys) keyStore.register(key, { label: 'SPOT_API_KEYS' });
      }
      return keyStore;
    },
    limiters() {
      limiters ??= {
        key: createRateLimiter({ perMinute: KEY_BUDGET_PER_MINUTE }),
        ip: createRateLimiter({ perMinute: IP_BUDGET_PER_MINUTE }),
      };
      return limiters;
    },
    ops() {
      ops ??= createOps(ctx, {
        log,
        store: () => storeParts?.store ?? null,
        ...(options.opsPeer ? { peer: options.opsPeer } : {}),
      });
      return ops;
    },
    async serveMetricsPort() {
      if (ctx.config.metricsPort === null) return;
      const served = await serveOps(ctx, runtime.ops(), ctx.config.metricsPort);
      parts.push({ name: 'metrics-port', stop: () => served.stop() });
      ctx.logger.info({ port: served.port }, `metrics on http://${ctx.config.host}:${served.port}/metrics`);
    },
    stop() {
      stopping ??= (async () => {
        const stopPart = async (part: Stoppable) => {
          const from = performance.now();
          try {
            await part.stop();
            // Per part, with its time: what a slow shutdown spent its seconds on.
            ctx.logger.info({ part: part.name, ms: Math.round(performance.now() - from) }, 'stopped');
          } catch (error) {
            ctx.logger.error({ err: error, part: part.name }, 'stop failed');
          }
        };
        const alongside: Promise<void>[] = [];
        for (const part of [...parts].reverse()) {
          if (part.alongside) alongside.push(stopPart(part));
          else await stopPart(part);
        }
        await Promise.all(alongside);
        keyStore?.close();
        limiters?.key.stop();
        limiters?.ip.stop();
        const closing = performance.now();
        if (storeParts) await storeParts.store.close();
        const logClosing = performance.now();
        await log.close();
        ctx.logger.info(
          { storeMs: Math.round(logClosing - closing), logMs: Math.round(performance.now() - logClosing) },
          'store and event log closed',
        );
      })();
      return stopping;
    },
  };
  return runtime;
}

/** A signal this soon after the first is the same stop request delivered twice, not a second one. */
const REPEATED_SIGNAL_MS = 1_000;

/**
 * Runs until SIGINT/SIGTERM, then stops the runtime; a second signal (a second or more later) exits
 * at once. A signal that lands while the roles are still starting waits for `started`: a part added
 * after stop() ran would be left running (and a chain source publishing to a closed log keeps the
 * process alive).
 */
export function waitForShutdown(
  runtime: Runtime,
  started: Promise<unknown> = Promise.resolve(),
  signals: Pick<NodeJS.EventEmitter, 'on'> = process,
): Promise<number> {
  return new Promise((resolve) => {
    let signalled = false;
    let signalledAt = 0;
    /** Stops the runtime once start-up is over; resolves `exitCode`, or 1 when stopping fails. */
    const shutdown = (exitCode: number) =>
      void started
        .then(
          () => undefined,
          () => undefined,
        )
        .then(() => runtime.stop())
        .then(
          () => resolve(exitCode),
          (error) => {
            runtime.ctx.logger.error({ err: error }, 'shutdown failed');
            resolve(1);
          },
        );
    const onSignal = (signal: NodeJS.Signals) => {
      if (signalled) {
        // One stop request often arrives twice at once (`timeout` signals the process, then its group).
        if (performance.now() - signalledAt < REPEATED_SIGNAL_MS) return;
        process.exit(130);
      }
      signalled = true;
      signalledAt = performance.now();
      runtime.ctx.logger.info({ signal }, 'shutting down: stop intake, flush, commit, close');
      shutdown(0);
    };
    // Listening for good: with no listener left, Node's default action would kill the process mid-shutdown.
    signals.on('SIGINT', onSignal);
    signals.on('SIGTERM', onSignal);
    void runtime.failed.then(({ part, error }) => {
      if (signalled) return;
      signalled = true;
      runtime.ctx.logger.fatal(
        { part, err: error },
        'a part failed: shutting down (exit 1) to restart from the snapshot',
      );
      shutdown(1);
    });
  });
}
