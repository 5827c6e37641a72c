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
import { CHAINS } from '../core/chains.ts';
import type { ErrorCode } from '../core/schemas.ts';
import type { ErrorDetails } from '../core/errors.ts';
import { TOPICS } from '../core/topics.ts';
import type { HotViews } from '../query-api/hot-views.ts';
import { cursorHead, parseCursor, statePosition } from './cursor.ts';
import { DISCOVERY_INTERVAL_MS, createDiscoveryChannel, type DiscoverySubscription } from './discovery.ts';
import { ackFrame, errorFrame, parseClientFrame, type SubscriptionSpec, type TradesSpec } from './protocol.ts';
import { createSlots, startCatchUp, tradeText, type CatchUpRun } from './resume.ts';
import { createRouter, type RouterCounters } from './router.ts';
import { createSubscriptionIndex, type Subscription } from './subscriptions.ts';
import type { Ops } from '../query-api/ops-routes.ts';
import { mountOps, type StreamEdgeStats } from './ops.ts';

export type { StreamEdgeStats };
import { createFrameAssembler, cursorPrefix, updatePrefix, updateTail } from './update-frames.ts';

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
/** Trades a spot.trades snapshot sends at most (the newest, oldest first). */
export const SNAPSHOT_TRADES = 50;
/** Resume log readers running at once per edge; more resumes wait for a slot. */
export const MAX_CONCURRENT_RESUMES = 16;
/** How long live copies of snapshot trades are skipped (the views may run ahead of the feed). */
const SNAPSHOT_DEDUP_MS = 10_000;

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
  /**
   * The REST API's hot views: current state for `snapshot` and for resumes of spot.candles /
   * spot.tokens, and the spot.discovery boards. Without them those are refused (SERVICE_UNAVAILABLE).
   */
  views?: HotViews;
  /**
   * Write to sockets in slices of this many ms, with the thread's other work between them: set
   * where the REST API answers on the same thread (a write to 1,000 sockets took up to 15–27 ms
   * that requests waited behind). Unset, each turn's frames are written at once: with no requests
   * to let through, each slice would only add a turn between a frame and its socket.
   */
  writeSliceMs?: number;
  now?: () => number;
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
  /** Log readers of resumed spot.trades subscriptions still catching up. */
  catchUps: Map<string, CatchUpRun>;
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
    flushed: 0,
    assembler: createFrameAssembler(),
    counters: { framesSent: 0, framesQueued: 0 },
  };
  const outboxCounters = hub.counters;
  const routerCounters: RouterCounters = { messagesRouted: 0, messagesInvalid: 0, updatesSent: 0 };
  const tradePositions = new Array<number>(TOPICS.trades.partitions).fill(0);
  const router = createRouter(ctx, {
    index,
    hub,
    counters: routerCounters,
    tradePositions,
    writeSliceMs: options.writeSliceMs,
  });
  const now = options.now ?? Date.now;
  const views = options.views ?? null;
  const discovery = views ? createDiscoveryChannel({ discovery: views.discovery, now }) : null;
  const resumeSlots = createSlots(MAX_CONCURRENT_RESUMES);
  const connections = new Set<Connection>();
  // Counted from the accepted handshake to the close.
  const openByKey = new Map<string, number>();
  let backpressureCloses = 0;

  const release = (keyId: string) => {
    const left = (openByKey.get(keyId) ?? 1) - 1;
    if (left <= 0) openByKey.delete(keyId);
    else openByKey.set(keyId, left);
  };

  const refuse = (
    conn: Connection,
    code: ErrorCode,
    message: string,
    details: ErrorDetails | null,
    id: string | null,
  ) => conn.outbox.push(errorFrame(code, message, details, id));
  const sendUpdate = (sub: Subscription, data: string) => {
    routerCounters.updatesSent++;
    sub.outbox.pushUpdate(sub.prefix, ++sub.seq, updateTail(data, statePosition(now())), sub.cursorPrefix);
  };

  const subscribe = (
    conn: Connection,
    spec: SubscriptionSpec,
    id: string | null,
    resumeFrom: string | null,
    snapshot: boolean,
  ) => {
    if (conn.subs.size >= MAX_SUBSCRIPTIONS_PER_CONNECTION) {
      refuse(
        conn,
        'RATE_LIMITED',
        `This connection holds ${MAX_SUBSCRIPTIONS_PER_CONNECTION} subscriptions, the limit; unsubscribe from one or open another connection.`,
        null,
        id,
      );
      return;
    }
    const cursor = resumeFrom === null ? null : parseCursor(resumeFrom, spec, tradePositions.length, now());
    if (cursor && !cursor.ok) {
      refuse(conn, 'VALIDATION_ERROR', cursor.message, [{ field: 'resumeFrom', message: cursor.message }], id);
      return;
    }
    const resumeTrades = cursor?.ok && cursor.kind === 'trades' ? cursor.offsets : null;
    if (resumeTrades && !options.log) {
      refuse(conn, 'SERVICE_UNAVAILABLE', 'This edge reads no event log, so it cannot resume spot.trades.', null, id);
      return;
    }
    const needsState = spec.channel === 'spot.discovery' || snapshot || (cursor !== null && resumeTrades === null);
    if (needsState && !views) {
      refuse(
        conn,
        'SERVICE_UNAVAILABLE',
        'This edge holds no current state: spot.discovery, snapshot and resumes of spot.candles / spot.tokens are unavailable here.',
        null,
        id,
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
      cursorPrefix: cursorPrefix(cursorHead(spec)),
      catchUp: null,
      sentIds: null,
    };
    conn.subs.set(subscriptionId, sub);
    conn.outbox.push(ackFrame(spec.channel, subscriptionId, id, `Subscribed to ${spec.channel}.`));
    if (resumeTrades) {
      // In the index at once: the router hands each partition over once the reader reached it.
      index.add(sub);
      const run = startCatchUp(ctx, {
        log: options.log!,
        sub: sub as Subscription & { spec: TradesSpec },
        feed: tradePositions,
        from: resumeTrades,
        deliver: (target, tail) => {
          routerCounters.updatesSent++;
          target.outbox.pushUpdate(target.prefix, ++target.seq, tail, target.cursorPrefix);
          target.outbox.flush();
        },
        unsent: () => conn.outbox.unsent(),
        slots: resumeSlots,
        resumeBelow: Math.floor(maxUnsentFrames / 2),
        onGap: () => {
          if (!conn.subs.has(subscriptionId)) return;
          conn.subs.delete(subscriptionId);
          index.remove(sub);
          const message =
            'resumeFrom is past the log retention: trades after it are gone; read them with GET /v1/trades. The subscription ended.';
          refuse(conn, 'VALIDATION_ERROR', message, [{ field: 'resumeFrom', message }], id);
          conn.outbox.flush();
        },
      });
      conn.catchUps.set(subscriptionId, run);
      void run.done.then(() => conn.catchUps.delete(subscriptionId));
      return;
    }
    if (needsState) sendState(sub);
    index.add(sub);
  };

  /** Current state first (snapshot, or a resume of a state channel), from the hot views. */
  const sendState = (sub: Subscription) => {
    const spec = sub.spec;
    const state = views!;
    if (spec.channel === 'spot.discovery') {
      sendUpdate(sub, discovery!.first(sub as DiscoverySubscription));
    } else if (spec.channel === 'spot.candles') {
      const candle = state.openCandle(spec.chain, spec.token, spec.timeframe, spec.metric, spec.denomination);
      if (candle)
        sendUpdate(
          sub,
          `{"time":${candle.time},"open":${candle.open},"high":${candle.high},"low":${candle.low},"close":${candle.close},"volume":${candle.volume}}`,
        );
    } else if (spec.channel === 'spot.tokens') {
      for (const address of spec.addresses) {
        const entry = state.token(spec.chain, address);
        if (entry) sendUpdate(sub, state.tokenBody(entry).toString('utf8'));
      }
    } else {
      const trades = recentTrades(spec);
      sub.sentIds = new Set(trades.map((t) => t.id));
      for (const trade of trades) sendUpdate(sub, tradeText(spec, trade));
      setTimeout(() => (sub.sentIds = null), SNAPSHOT_DEDUP_MS).unref();
    }
  };

  /** The newest trades the views hold for the subscription (up to SNAPSHOT_TRADES), oldest first. */
  const recentTrades = (spec: TradesSpec) => {
    const state = views!;
    const read = (count: number) =>
      spec.by === 'token'
        ? state.tokenTrades(spec.chain, spec.token, count)
        : spec.by === 'identity'
          ? state.identityTrades(spec.identity, spec.chains ?? CHAINS, count)
          : null; // no wallet view in memory: the snapshot holds no trades
    // The views answer only when they hold at least `count`: fewer for a young token.
    let items = null;
    for (let count = SNAPSHOT_TRADES; count >= 1 && items === null; count = Math.floor(count / 2)) items = read(count);
    return (items ?? []).map((item) => JSON.parse(item.json)).reverse();
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
    conn.catchUps.get(subscriptionId)?.cancel();
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
        catchUps: new Map(),
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
      if (frame.kind === 'subscribe') subscribe(conn, frame.spec, frame.id, frame.resumeFrom, frame.snapshot);
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
      for (const run of conn.catchUps.values()) run.cancel();
      conn.subs.clear();
      connections.delete(conn);
    },
  });
  if (options.ops) mountOps(app, options.ops);
  app.any('/*', (res, req) => answerPlainRequest(res, req, limiters));

  let listenSocket: us_listen_socket | null = null;
  let feed: LogFeed | null = null;
  let pingTimer: NodeJS.Timeout | null = null;
  let discoveryTimer: NodeJS.Timeout | null = null;

  return {
    async start() {
      if (options.log) {
        feed = createLogFeed(ctx, { log: options.log, router, tradePositions });
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
      if (discovery) {
        discoveryTimer = setInterval(() => {
          discovery.beat();
          for (const sub of index.discovery()) {
            if (sub.outbox.closed) continue;
            const delta = discovery.delta(sub);
            if (delta !== null) sendUpdate(sub, delta);
          }
          router.flushSoon();
        }, DISCOVERY_INTERVAL_MS);
        discoveryTimer.unref();
      }
      log.info({ port, host: ctx.config.host }, 'stream edge listening');
      return { port };
    },

    async stop() {
      if (pingTimer) clearInterval(pingTimer);
      pingTimer = null;
      if (discoveryTimer) clearInterval(discoveryTimer);
      discoveryTimer = null;
      const readers: Array<Promise<void>> = [];
      for (const conn of connections) {
        for (const run of conn.catchUps.values()) {
          run.cancel();
          readers.push(run.done);
        }
      }
      await Promise.all(readers); // their consumers have left the log before it may close
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
