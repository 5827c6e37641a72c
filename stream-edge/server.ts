// The WebSocket stream edge: a uWebSockets.js server on /v1/stream fed by the event log.
import crypto from 'node:crypto';
import uWS from 'uWebSockets.js';
import type { WebSocket, us_listen_socket } from 'uWebSockets.js';
import type { Context } from '../core/context.ts';
import type { KeyCheck } from '../core/auth/keys.ts';
import {
  IP_BUDGET_PER_MINUTE,
  KEY_BUDGET_PER_MINUTE,
  createRateLimiter,
  type RateLimiter,
} from '../core/auth/rate-limit.ts';
import type { EventLog } from '../core/eventlog/types.ts';
import {
  BACKPRESSURE_CLOSE_CODE,
  DEFAULT_MAX_UNSENT_FRAMES,
  createOutbox,
  type Outbox,
  type OutboxHub,
} from './backpressure.ts';
import { createLogFeed, type LogFeed } from './feed.ts';
import {
  STREAM_PATH,
  WEBSOCKET_VERSION,
  answerPlainRequest,
  decideHandshake,
  isWebSocketUpgrade,
  remoteAddressOf,
  requestIdOf,
  respond,
  respondError,
} from './handshake.ts';
import { ackFrame, errorFrame, parseClientFrame, type SubscriptionSpec } from './protocol.ts';
import { createRouter, type RouterCounters } from './router.ts';
import { createSubscriptionIndex, type Subscription } from './subscriptions.ts';
import { createFrameAssembler, updatePrefix } from './update-frames.ts';
import type { Ops } from '../query-api/ops-routes.ts';
import { mountOps } from './ops.ts';

export const DEFAULT_MAX_CONNECTIONS_PER_KEY = 100;
export const MAX_SUBSCRIPTIONS_PER_CONNECTION = 100;
export const DEFAULT_PING_INTERVAL_MS = 30_000;
/** Largest client frame accepted; a larger one closes the socket (1009). 100 addresses fit easily. */
export const MAX_CLIENT_FRAME_BYTES = 64 * 1024;
/**
 * What uWS itself reads before dropping the TCP connection with no close frame (1006 at the
 * client). Above MAX_CLIENT_FRAME_BYTES so that an oversized frame up to here gets the 1009 close.
 */
export const MAX_READ_FRAME_BYTES = 1024 * 1024;

export interface StreamEdgeOptions {
  /** Event log to consume spot.trades.v1, spot.candles.v1 and spot.tokens.v1 from; null routes only what route() is given. */
  log: EventLog | null;
  keys: { check(authorizationHeader: string | undefined, now?: number): KeyCheck };
  maxConnectionsPerKey?: number;
  maxUnsentFrames?: number;
  pingIntervalMs?: number;
  /** Request budgets the handshake spends from; shared with the REST API when both run in one process. */
  limiters?: { key: RateLimiter; ip: RateLimiter };
  /** /metrics, /healthz, /readyz on this port (no key, no budget). */
  ops?: Ops;
}

export interface StreamEdgeStats {
  connections: number;
  subscriptions: number;
  /** Frames held by the edge for all connections, not yet handed to a socket. */
  framesQueued: number;
  framesSent: number;
  updatesSent: number;
  messagesRouted: number;
  messagesInvalid: number;
  backpressureCloses: number;
}

export interface StreamEdge {
  start(): Promise<{ port: number }>;
  stop(): Promise<void>;
  stats(): StreamEdgeStats;
  /** Routes one decoded topic message as if it came from the log (benchmarks, tests). */
  route(topic: string, message: unknown): void;
}

interface Connection {
  keyId: string;
  ws: WebSocket<UserData>;
  outbox: Outbox;
  subs: Map<string, Subscription>;
}

interface UserData {
  keyId: string;
  conn: Connection | null;
}

export function createStreamEdge(ctx: Context, options: StreamEdgeOptions): StreamEdge {
  const log = ctx.logger.child({ component: 'stream-edge' });
  const maxConnectionsPerKey = options.maxConnectionsPerKey ?? DEFAULT_MAX_CONNECTIONS_PER_KEY;
  const maxUnsentFrames = options.maxUnsentFrames ?? DEFAULT_MAX_UNSENT_FRAMES;
  const pingIntervalMs = options.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS;
  const ownLimiters = options.limiters === undefined;
  const limiters = options.limiters ?? {
    key: createRateLimiter({ perMinute: KEY_BUDGET_PER_MINUTE }),
    ip: createRateLimiter({ perMinute: IP_BUDGET_PER_MINUTE }),
  };

  const index = createSubscriptionIndex();
  const hub: OutboxHub = {
    pending: [],
    assembler: createFrameAssembler(),
    counters: { framesSent: 0, framesQueued: 0 },
  };
  const outboxCounters = hub.counters;
  const routerCounters: RouterCounters = { messagesRouted: 0, messagesInvalid: 0, updatesSent: 0 };
  const router = createRouter(ctx, { index, hub, counters: routerCounters });
  const connections = new Set<Connection>();
  // Counted from the accepted handshake to the close.
  const openByKey = new Map<string, number>();
  let backpressureCloses = 0;

  const release = (keyId: string) => {
    const left = (openByKey.get(keyId) ?? 1) - 1;
    if (left <= 0) openByKey.delete(keyId);
    else openByKey.set(keyId, left);
  };

  const subscribe = (conn: Connection, spec: SubscriptionSpec, id: string | null) => {
    if (conn.subs.size >= MAX_SUBSCRIPTIONS_PER_CONNECTION) {
      conn.outbox.push(
        errorFrame(
          'RATE_LIMITED',
          `This connection holds ${MAX_SUBSCRIPTIONS_PER_CONNECTION} subscriptions, the limit; unsubscribe from one or open another connection.`,
          null,
          id,
        ),
      );
      return;
    }
    const subscriptionId = crypto.randomUUID();
    const sub: Subscription = {
      id: subscriptionId,
      spec,
      outbox: conn.outbox,
      seq: 0,
      prefix: updatePrefix(spec.channel, subscriptionId),
    };
    conn.subs.set(subscriptionId, sub);
    index.add(sub);
    conn.outbox.push(ackFrame(spec.channel, subscriptionId, id, `Subscribed to ${spec.channel}.`));
  };

  const unsubscribe = (conn: Connection, subscriptionId: string, id: string | null) => {
    const sub = conn.subs.get(subscriptionId);
    if (!sub) {
      conn.outbox.push(
        errorFrame(
          'NOT_FOUND',
          'This connection has no such subscription; use a subscriptionId from an ack on this connection.',
          null,
          id,
        ),
      );
      return;
    }
    conn.subs.delete(subscriptionId);
    index.remove(sub);
    conn.outbox.push(
      ackFrame(sub.spec.channel, subscriptionId, id, `Unsubscribed from ${sub.spec.channel}; no more updates follow.`),
    );
  };

  const app = uWS.App();
  app.ws<UserData>(STREAM_PATH, {
    compression: uWS.DISABLED,
    maxPayloadLength: MAX_READ_FRAME_BYTES,
    // The outbox hands uWS a frame only when it buffers nothing, so this never drops a frame.
    maxBackpressure: 16 * 1024 * 1024,
    closeOnBackpressureLimit: 0,
    // uWS closes a peer silent (no pong, no frame) for this long; its granularity is 4 s.
    idleTimeout: Math.max(8, Math.ceil((2 * pingIntervalMs) / 4000) * 4),
    sendPingsAutomatically: false,

    upgrade(res, req, context) {
      // uWS upgrades on Sec-WebSocket-Key alone; without `Upgrade: websocket` or with another
      // version it is no RFC 6455 handshake: the plain answer (426), never a 101.
      if (!isWebSocketUpgrade(req) || req.getHeader('sec-websocket-version') !== WEBSOCKET_VERSION) {
        answerPlainRequest(res, req, limiters);
        return;
      }
      const requestId = requestIdOf(req);
      const secKey = req.getHeader('sec-websocket-key');
      const secProtocol = req.getHeader('sec-websocket-protocol');
      const secExtensions = req.getHeader('sec-websocket-extensions');
      const authorization = req.getHeader('authorization');
      const headers: Record<string, string> = { 'X-Request-ID': requestId };
      if (secKey === '') {
        // Not a usable WebSocket handshake: plain text, like any request without upgrade headers.
        respond(
          res,
          400,
          { ...headers, 'Content-Type': 'text/plain; charset=utf-8' },
          'Bad Request: the upgrade has no Sec-WebSocket-Key; connect with a WebSocket client.\n',
        );
        return;
      }
      const decision = decideHandshake(
        {
          check: (header, now) => options.keys.check(header, now),
          limiters,
          openConnections: (keyId) => openByKey.get(keyId) ?? 0,
          maxConnectionsPerKey,
        },
        authorization,
        remoteAddressOf(res),
      );
      headers['X-RateLimit-Remaining'] = String(decision.remaining);
      if (!decision.ok) {
        if (decision.retryAfter !== undefined) headers['Retry-After'] = String(decision.retryAfter);
        respondError(res, decision.status, decision.code, decision.message, headers);
        return;
      }
      openByKey.set(decision.keyId, (openByKey.get(decision.keyId) ?? 0) + 1);
      res.cork(() => {
        res.writeStatus('101 Switching Protocols');
        for (const [name, value] of Object.entries(headers)) res.writeHeader(name, value);
        res.upgrade<UserData>({ keyId: decision.keyId, conn: null }, secKey, secProtocol, secExtensions, context);
      });
    },

    open(ws) {
      const data = ws.getUserData();
      const conn: Connection = {
        keyId: data.keyId,
        ws,
        subs: new Map(),
        outbox: createOutbox(ws, {
          maxUnsentFrames,
          hub,
          onOverflow: () => {
            backpressureCloses++;
            log.warn({ keyId: data.keyId, maxUnsentFrames }, 'closing a stream connection that stopped reading');
            ws.end(BACKPRESSURE_CLOSE_CODE, 'backpressure: too many unsent frames');
          },
        }),
      };
      data.conn = conn;
      connections.add(conn);
    },

    message(ws, message) {
      const conn = ws.getUserData().conn;
      if (!conn || conn.outbox.closed) return;
      if (message.byteLength > MAX_CLIENT_FRAME_BYTES) {
        ws.end(1009, `frame too large: at most ${MAX_CLIENT_FRAME_BYTES} bytes`);
        return;
      }
      const frame = parseClientFrame(Buffer.from(message).toString('utf8'));
      if (frame.kind === 'subscribe') subscribe(conn, frame.spec, frame.id);
      else if (frame.kind === 'unsubscribe') unsubscribe(conn, frame.subscriptionId, frame.id);
      else conn.outbox.push(errorFrame(frame.code, frame.message, frame.details, frame.id));
      conn.outbox.flush();
    },

    drain(ws) {
      ws.getUserData().conn?.outbox.flush();
    },

    close(ws) {
      const data = ws.getUserData();
      const conn = data.conn;
      release(data.keyId);
      if (!conn) return;
      data.conn = null;
      conn.outbox.markClosed();
      for (const sub of conn.subs.values()) index.remove(sub);
      conn.subs.clear();
      connections.delete(conn);
    },
  });
  if (options.ops) mountOps(app, options.ops);
  app.any('/*', (res, req) => answerPlainRequest(res, req, limiters));

  let listenSocket: us_listen_socket | null = null;
  let feed: LogFeed | null = null;
  let pingTimer: NodeJS.Timeout | null = null;

  return {
    async start() {
      if (options.log) {
        feed = createLogFeed(ctx, { log: options.log, router });
        await feed.start();
      }
      const port = await new Promise<number>((resolve, reject) => {
        app.listen(ctx.config.host, ctx.config.wsPort, (socket) => {
          if (!socket)
            return reject(new Error(`stream edge could not listen on ${ctx.config.host}:${ctx.config.wsPort}`));
          listenSocket = socket;
          resolve(uWS.us_socket_local_port(socket as unknown as uWS.us_socket));
        });
      });
      pingTimer = setInterval(() => {
        for (const conn of connections) if (!conn.outbox.closed) conn.ws.ping();
      }, pingIntervalMs);
      pingTimer.unref();
      log.info({ port, host: ctx.config.host }, 'stream edge listening');
      return { port };
    },

    async stop() {
      if (pingTimer) clearInterval(pingTimer);
      pingTimer = null;
      if (feed) await feed.stop();
      feed = null;
      if (listenSocket) uWS.us_listen_socket_close(listenSocket);
      listenSocket = null;
      for (const conn of [...connections]) conn.ws.end(1001, 'server shutting down');
      app.close();
      if (ownLimiters) {
        limiters.key.stop();
        limiters.ip.stop();
      }
    },

    stats() {
      const stats: StreamEdgeStats = {
        connections: connections.size,
        subscriptions: index.size(),
        framesQueued: outboxCounters.framesQueued,
        framesSent: outboxCounters.framesSent,
        updatesSent: routerCounters.updatesSent,
        messagesRouted: routerCounters.messagesRouted,
        messagesInvalid: routerCounters.messagesInvalid,
        backpressureCloses,
      };
      for (const [name, value] of Object.entries(stats)) ctx.metrics.set(`stream.${name}`, value);
      return stats;
    },

    route: (topic, message) => router.route(topic, message),
  };
}
