// Stream client: one WebSocket to /v1/stream that survives drops. Every subscription remembers
// the cursor of its last update; after a drop the client reconnects (exponential backoff with
// full jitter, never sooner than a 429's Retry-After) and subscribes again with `resumeFrom`, so
// the handler sees every update exactly once, in order. A cursor the server no longer accepts
// (past the resume window) is reported through onGap and the subscription restarts live.
import WebSocket from 'ws';
import type { Chain } from '../core/chains.ts';
import type {
  Candle,
  Denomination,
  DiscoveryRequest,
  DiscoveryUpdate,
  ErrorCode,
  Identity,
  Metric,
  Timeframe,
  Token,
  Trade,
  ValidationDetail,
} from '../core/schemas.ts';

export type TradesFilters =
  | { chain: Chain; token: string }
  | { chain: Chain; wallet: string }
  | { identity: Identity; chains?: Chain[] };

export interface ChannelFilters {
  'spot.trades': TradesFilters;
  'spot.candles': { chain: Chain; token: string; timeframe?: Timeframe; metric?: Metric; denomination?: Denomination };
  'spot.tokens': { chain: Chain; addresses: string[] };
  'spot.discovery': DiscoveryRequest;
}

export interface ChannelData {
  'spot.trades': Trade;
  'spot.candles': Candle;
  'spot.tokens': Token;
  'spot.discovery': DiscoveryUpdate;
}

export type Channel = keyof ChannelFilters;

export interface UpdateInfo {
  /** The server subscription's seq (starts again at 1 after a reconnect). */
  seq: number;
  cursor: string;
  subscriptionId: string;
}

export interface StreamErrorInfo {
  code: ErrorCode;
  message: string;
  details: ValidationDetail[] | { chain: string } | null;
}

export interface SubscribeHandlers<C extends Channel> {
  onUpdate(data: ChannelData[C], info: UpdateInfo): void;
  /** The server refused the subscription (it is not kept). */
  onError?(error: StreamErrorInfo): void;
  /** The cursor could not be resumed (past the resume window): updates in between are lost. */
  onGap?(error: StreamErrorInfo): void;
}

export interface SubscribeOptions {
  /** The current state first (see docs/stream.md). Not repeated on a resume: the cursor covers it. */
  snapshot?: boolean;
  /** Start after this cursor (from an earlier session). */
  resumeFrom?: string;
}

export interface StreamSubscription {
  /** The cursor of the last update handled, or the resumeFrom given, or null. */
  readonly cursor: string | null;
  /** The server's id of the current session's subscription (null until acknowledged). */
  readonly subscriptionId: string | null;
  /** Resolves on the first ack; rejects on a refusal. */
  readonly ready: Promise<void>;
  unsubscribe(): void;
}

export type StreamEvent =
  | { type: 'open' }
  | { type: 'close'; code: number; reason: string }
  | { type: 'reconnecting'; attempt: number; delayMs: number }
  | { type: 'refused'; status: number; retryAfterSeconds: number | null };

export interface StreamClientOptions {
  /** e.g. `ws://127.0.0.1:8081/v1/stream`. */
  url: string;
  apiKey: string;
  /** First backoff ceiling, ms (default 250); doubles per failed attempt up to maxBackoffMs. */
  minBackoffMs?: number;
  /** Backoff ceiling, ms (default 30 s). */
  maxBackoffMs?: number;
  /** Jitter source in [0, 1) (default Math.random). */
  random?: () => number;
  onEvent?: (event: StreamEvent) => void;
}

export interface StreamClient {
  subscribe<C extends Channel>(
    channel: C,
    filters: ChannelFilters[C],
    handlers: SubscribeHandlers<C>,
    options?: SubscribeOptions,
  ): StreamSubscription;
  /** Resolves once a socket is open. */
  connected(): Promise<void>;
  close(): void;
}

interface Entry {
  channel: Channel;
  filters: unknown;
  handlers: SubscribeHandlers<Channel>;
  snapshot: boolean;
  cursor: string | null;
  subscriptionId: string | null;
  /** The `id` of the subscribe frame in flight, if any. */
  requestId: string | null;
  acked: boolean;
  resolveReady(): void;
  rejectReady(error: Error): void;
  active: boolean;
}

/** Full jitter: a uniform wait in [0, ceiling], the ceiling doubling per attempt. */
export function backoffDelay(attempt: number, minMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, minMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}

export function createStreamClient(options: StreamClientOptions): StreamClient {
  const minBackoff = options.minBackoffMs ?? 250;
  const maxBackoff = options.maxBackoffMs ?? 30_000;
  const random = options.random ?? Math.random;
  const emit = (event: StreamEvent) => options.onEvent?.(event);
  const entries = new Set<Entry>();
  const byRequest = new Map<string, Entry>();
  const bySubscription = new Map<string, Entry>();
  let ws: WebSocket | null = null;
  let open = false;
  let closed = false;
  let attempt = 0;
  let retryAfterMs = 0;
  let nextRequest = 1;
  let timer: NodeJS.Timeout | null = null;
  let openWaiters: Array<() => void> = [];

  const send = (entry: Entry) => {
    if (!open || !ws) return;
    const requestId = `c${nextRequest++}`;
    entry.requestId = requestId;
    byRequest.set(requestId, entry);
    const frame: Record<string, unknown> = {
      action: 'subscribe',
      channel: entry.channel,
      filters: entry.filters,
      id: requestId,
    };
    if (entry.cursor !== null) frame.resumeFrom = entry.cursor;
    else if (entry.snapshot) frame.snapshot = true;
    ws.send(JSON.stringify(frame));
  };

  const onMessage = (text: string) => {
    let frame: Record<string, any>;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    if (frame.type === 'update') {
      const entry = bySubscription.get(frame.subscriptionId);
      if (!entry?.active) return;
      entry.cursor = frame.cursor;
      entry.handlers.onUpdate(frame.data, {
        seq: frame.seq,
        cursor: frame.cursor,
        subscriptionId: frame.subscriptionId,
      });
      return;
    }
    const entry = typeof frame.id === 'string' ? byRequest.get(frame.id) : undefined;
    if (!entry) return;
    byRequest.delete(frame.id);
    entry.requestId = null;
    if (frame.type === 'ack') {
      if (!entry.active) {
        // Unsubscribed while the subscribe was in flight.
        ws?.send(JSON.stringify({ action: 'unsubscribe', subscriptionId: frame.subscriptionId }));
        return;
      }
      entry.subscriptionId = frame.subscriptionId;
      bySubscription.set(frame.subscriptionId, entry);
      if (!entry.acked) {
        entry.acked = true;
        entry.resolveReady();
      }
      return;
    }
    if (frame.type !== 'error') return;
    const error: StreamErrorInfo = { code: frame.code, message: frame.message, details: frame.details };
    const aboutCursor =
      Array.isArray(frame.details) && frame.details.some((d: ValidationDetail) => d.field === 'resumeFrom');
    if (aboutCursor && entry.cursor !== null && entry.active) {
      // The cursor cannot be resumed: say so, then follow live from now.
      entry.cursor = null;
      entry.handlers.onGap?.(error);
      send(entry);
      return;
    }
    entry.active = false;
    entries.delete(entry);
    entry.handlers.onError?.(error);
    entry.rejectReady(Object.assign(new Error(`${error.code}: ${error.message}`), { error }));
  };

  const scheduleReconnect = () => {
    if (closed || timer) return;
    const delayMs = Math.max(retryAfterMs, backoffDelay(attempt, minBackoff, maxBackoff, random));
    retryAfterMs = 0;
    attempt++;
    emit({ type: 'reconnecting', attempt, delayMs });
    timer = setTimeout(() => {
      timer = null;
      connect();
    }, delayMs);
  };

  const connect = () => {
    if (closed) return;
    const socket = new WebSocket(options.url, { headers: { Authorization: `Bearer ${options.apiKey}` } });
    ws = socket;
    socket.on('open', () => {
      open = true;
      attempt = 0;
      emit({ type: 'open' });
      bySubscription.clear();
      byRequest.clear();
      for (const entry of entries) send(entry);
      const waiters = openWaiters;
      openWaiters = [];
      for (const w of waiters) w();
    });
    socket.on('message', (data) => onMessage(data.toString()));
    socket.on('unexpected-response', (_req, res) => {
      const header = res.headers['retry-after'];
      const seconds = Number.parseInt(Array.isArray(header) ? (header[0] ?? '') : (header ?? ''), 10);
      const retryAfterSeconds = Number.isFinite(seconds) ? seconds : null;
      if (res.statusCode === 429 && retryAfterSeconds !== null) retryAfterMs = retryAfterSeconds * 1000;
      emit({ type: 'refused', status: res.statusCode ?? 0, retryAfterSeconds });
      res.resume();
      socket.terminate();
    });
    socket.on('error', () => undefined); // 'close' follows and schedules the reconnect
    socket.on('close', (code, reason) => {
      if (ws !== socket) return;
      open = false;
      ws = null;
      emit({ type: 'close', code, reason: reason.toString() });
      scheduleReconnect();
    });
  };

  connect();

  return {
    subscribe(channel, filters, handlers, subscribeOptions = {}) {
      let resolveReady!: () => void;
      let rejectReady!: (error: Error) => void;
      const ready = new Promise<void>((resolve, reject) => {
        resolveReady = resolve;
        rejectReady = reject;
      });
      ready.catch(() => undefined); // a refusal also reaches onError
      const entry: Entry = {
        channel,
        filters,
        handlers: handlers as unknown as SubscribeHandlers<Channel>,
        snapshot: subscribeOptions.snapshot ?? false,
        cursor: subscribeOptions.resumeFrom ?? null,
        subscriptionId: null,
        requestId: null,
        acked: false,
        resolveReady,
        rejectReady,
        active: true,
      };
      entries.add(entry);
      send(entry);
      return {
        get cursor() {
          return entry.cursor;
        },
        get subscriptionId() {
          return entry.subscriptionId;
        },
        ready,
        unsubscribe() {
          if (!entry.active) return;
          entry.active = false;
          entries.delete(entry);
          if (entry.subscriptionId !== null) {
            bySubscription.delete(entry.subscriptionId);
            if (open) ws?.send(JSON.stringify({ action: 'unsubscribe', subscriptionId: entry.subscriptionId }));
          }
        },
      };
    },
    connected() {
      if (open) return Promise.resolve();
      return new Promise((resolve) => openWaiters.push(resolve));
    },
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = null;
      ws?.terminate();
      ws = null;
      open = false;
    },
  };
}
