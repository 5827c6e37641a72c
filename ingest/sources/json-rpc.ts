// A small JSON-RPC 2.0 client for chain nodes: requests over HTTP (fetch) and requests plus
// subscriptions over WebSocket (the `ws` package; Node 20 has no stable global WebSocket).
import WebSocket from 'ws';
import type { Context } from '../../core/context.ts';
import { textOf } from '../../core/text.ts';

export class JsonRpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(`${method}: ${message} (code ${code})`);
    this.name = 'JsonRpcError';
  }
}

/** A transport failure (socket closed, HTTP status, timeout): worth retrying, unlike most JsonRpcErrors. */
export class RpcTransportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RpcTransportError';
  }
}

/** An answer that is no JSON-RPC answer, or whose result has the wrong shape: a node fault, retried like one. */
export class MalformedAnswerError extends RpcTransportError {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedAnswerError';
  }
}

export interface RpcCaller {
  call<T = unknown>(method: string, params?: unknown): Promise<T>;
}

/** One item of a JSON-RPC batch: its result, or the error the node answered for it alone. */
export type BatchItem<T> = { ok: true; result: T } | { ok: false; error: JsonRpcError };

export interface HttpRpc extends RpcCaller {
  /** Sends `params.length` calls of `method` in one HTTP request; answers in request order. */
  batch<T = unknown>(method: string, params: unknown[]): Promise<BatchItem<T>[]>;
}

interface RpcResponse {
  id?: number | string | null;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
  method?: string;
  params?: { subscription?: string | number; result?: unknown };
}

function unwrap<T>(method: string, response: RpcResponse): T {
  if (response.error) throw new JsonRpcError(method, response.error.code, response.error.message, response.error.data);
  return response.result as T;
}

function isRpcResponse(value: unknown): value is RpcResponse {
  return typeof value === 'object' && value !== null && ('result' in value || 'error' in value);
}

export function createHttpRpc(options: { url: string; timeoutMs?: number }): HttpRpc {
  const timeoutMs = options.timeoutMs ?? 30_000;
  let nextId = 1;

  /** POSTs `body`; transport faults, HTTP errors (429, 5xx) and unparsable bodies all throw RpcTransportError. */
  async function post(method: string, body: unknown): Promise<unknown> {
    let response: Response;
    let text: string;
    try {
      response = await fetch(options.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = textOf(Buffer.from(await response.arrayBuffer()));
    } catch (error) {
      throw new RpcTransportError(`${method}: ${(error as Error).message}`);
    }
    if (!response.ok) throw new RpcTransportError(`${method}: HTTP ${response.status}`);
    try {
      return JSON.parse(text);
    } catch {
      throw new MalformedAnswerError(`${method}: answer is not JSON (${text.length} bytes)`);
    }
  }

  return {
    async call<T>(method: string, params: unknown = []): Promise<T> {
      const answer = await post(method, { jsonrpc: '2.0', id: nextId++, method, params });
      if (!isRpcResponse(answer)) throw new MalformedAnswerError(`${method}: not a JSON-RPC answer`);
      return unwrap<T>(method, answer);
    },
    async batch<T>(method: string, params: unknown[]): Promise<BatchItem<T>[]> {
      if (params.length === 0) return [];
      const first = nextId;
      nextId += params.length;
      const answer = await post(
        method,
        params.map((item, i) => ({ jsonrpc: '2.0', id: first + i, method, params: item })),
      );
      if (!Array.isArray(answer)) throw new MalformedAnswerError(`${method}: batch answer is not an array`);
      // Nodes may answer a batch in any order: match by id; a missing answer fails the whole batch.
      const byId = new Map<unknown, RpcResponse>();
      for (const item of answer) if (isRpcResponse(item)) byId.set(item.id, item);
      return params.map((_, i) => {
        const item = byId.get(first + i);
        if (!item) throw new MalformedAnswerError(`${method}: batch answer lacks id ${first + i}`);
        if (item.error)
          return { ok: false, error: new JsonRpcError(method, item.error.code, item.error.message, item.error.data) };
        return { ok: true, result: item.result as T };
      });
    },
  };
}

export interface WsRpcConnection extends RpcCaller {
  /** Subscribes; notifications that arrive before the id is known are delivered, not lost. */
  subscribe(method: string, params: unknown, onNotification: (result: unknown) => void): Promise<string>;
  readonly isOpen: boolean;
  /** Resolves once the socket is closed, for whatever reason. */
  readonly closed: Promise<void>;
  close(): void;
}

export function connectWsRpc(options: { url: string; timeoutMs?: number }): Promise<WsRpcConnection> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const socket = new WebSocket(options.url, { handshakeTimeout: timeoutMs });
  const pending = new Map<
    number,
    { method: string; resolve: (value: unknown) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }
  >();
  const handlers = new Map<string, (result: unknown) => void>();
  // Notifications for a subscription id whose subscribe response is still in flight.
  const early = new Map<string, unknown[]>();
  let nextId = 1;
  let open = false;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));

  const failAll = (reason: string) => {
    for (const entry of pending.values()) {
      clearTimeout(entry.timer);
      entry.reject(new RpcTransportError(`${entry.method}: ${reason}`));
    }
    pending.clear();
  };

  socket.on('message', (raw) => {
    let messages: RpcResponse[];
    try {
      const parsed = JSON.parse(textOf(raw as Buffer)) as RpcResponse | RpcResponse[];
      messages = Array.isArray(parsed) ? parsed : [parsed];
    } catch {
      return;
    }
    for (const message of messages) {
      if (message.params && message.params.subscription !== undefined && message.id === undefined) {
        const id = String(message.params.subscription);
        const handler = handlers.get(id);
        if (handler) handler(message.params.result);
        else {
          const buffered = early.get(id) ?? [];
          buffered.push(message.params.result);
          early.set(id, buffered);
        }
        continue;
      }
      const entry = typeof message.id === 'number' ? pending.get(message.id) : undefined;
      if (!entry) continue;
      pending.delete(message.id as number);
      clearTimeout(entry.timer);
      try {
        entry.resolve(unwrap(entry.method, message));
      } catch (error) {
        entry.reject(error as Error);
      }
    }
  });

  const connection: WsRpcConnection = {
    get isOpen() {
      return open;
    },
    closed,
    call<T>(method: string, params: unknown = []): Promise<T> {
      if (!open) return Promise.reject(new RpcTransportError(`${method}: socket not open`));
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new RpcTransportError(`${method}: timed out after ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(id, { method, resolve: resolve as (value: unknown) => void, reject, timer });
        socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      });
    },
    async subscribe(method, params, onNotification) {
      const id = String(await connection.call<string | number>(method, params));
      handlers.set(id, onNotification);
      const buffered = early.get(id);
      early.delete(id);
      for (const result of buffered ?? []) onNotification(result);
      return id;
    },
    close() {
      socket.close();
    },
  };

  return new Promise((resolve, reject) => {
    socket.once('open', () => {
      open = true;
      resolve(connection);
    });
    socket.on('error', (error) => {
      if (!open) reject(new RpcTransportError(`connect ${redactUrl(options.url)}: ${error.message}`));
    });
    socket.on('close', () => {
      open = false;
      failAll('socket closed');
      resolveClosed();
    });
  });
}

export interface KeptConnection {
  /** The open connection, or null while (re)connecting. */
  current(): WsRpcConnection | null;
  stop(): Promise<void>;
}

/**
 * Keeps one WebSocket connection open: connects, runs `onOpen` (subscriptions, gap fills), and
 * on a close or a failed `onOpen` reconnects with exponential backoff.
 */
export function keepConnected(
  ctx: Context,
  options: {
    url: string;
    name: string;
    onOpen: (connection: WsRpcConnection) => Promise<void>;
    onClose?: () => void;
    minDelayMs?: number;
    maxDelayMs?: number;
    timeoutMs?: number;
  },
): KeptConnection {
  const logger = ctx.logger.child({ component: options.name });
  const minDelay = options.minDelayMs ?? 200;
  const maxDelay = options.maxDelayMs ?? 30_000;
  let stopped = false;
  let connection: WsRpcConnection | null = null;
  const pause = createWakeableSleep();

  const loop = (async () => {
    let delay = minDelay;
    while (!stopped) {
      try {
        const opened = await connectWsRpc({ url: options.url, timeoutMs: options.timeoutMs });
        if (stopped) {
          opened.close();
          break;
        }
        connection = opened;
        try {
          await options.onOpen(opened);
          delay = minDelay;
          logger.info('websocket connected');
        } catch (error) {
          logger.warn({ err: (error as Error).message }, 'websocket setup failed');
          opened.close();
        }
        await opened.closed;
        connection = null;
        ctx.metrics.inc(`${options.name}.disconnects`);
        options.onClose?.();
        if (!stopped) logger.warn('websocket closed; reconnecting');
      } catch (error) {
        logger.warn({ err: (error as Error).message, retryInMs: delay }, 'websocket connect failed');
      }
      if (stopped) break;
      await pause.sleep(delay);
      delay = Math.min(maxDelay, delay * 2);
    }
  })();

  return {
    current: () => (connection?.isOpen ? connection : null),
    async stop() {
      stopped = true;
      connection?.close();
      pause.wake();
      await loop;
    },
  };
}

/** Same endpoint, other scheme: ws(s) <-> http(s). */
export function swapScheme(url: string, to: 'http' | 'ws'): string {
  const parsed = new URL(url);
  const secure = parsed.protocol === 'https:' || parsed.protocol === 'wss:';
  parsed.protocol = to === 'http' ? (secure ? 'https:' : 'http:') : secure ? 'wss:' : 'ws:';
  return parsed.toString();
}

export function isWsUrl(url: string): boolean {
  return url.startsWith('ws://') || url.startsWith('wss://');
}

/** Provider URLs carry API keys in the path or query: log only scheme, host and port. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return '[invalid url]';
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A pause that `wake()` ends early: a poll loop's wait that a notification or stop() cuts short. */
export interface WakeableSleep {
  sleep(ms: number): Promise<void>;
  wake(): void;
}

export function createWakeableSleep(): WakeableSleep {
  let wake: (() => void) | null = null;
  return {
    sleep(ms) {
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          wake = null;
          resolve();
        }, ms);
        wake = () => {
          clearTimeout(timer);
          wake = null;
          resolve();
        };
      });
    },
    wake: () => wake?.(),
  };
}

/** Exponential backoff with full jitter: a random wait in [delay/2, delay], so restarted clients do not retry in step. */
export function jittered(delayMs: number): number {
  return Math.round(delayMs / 2 + Math.random() * (delayMs / 2));
}

/** Retries transient failures (transport errors, rate limits, node-side internal errors) with backoff and jitter. */
export async function withRetry<T>(
  attempt: () => Promise<T>,
  options: {
    retries?: number;
    minDelayMs?: number;
    maxDelayMs?: number;
    isRetryable?: (error: unknown) => boolean;
    stopped?: () => boolean;
  } = {},
): Promise<T> {
  const retries = options.retries ?? 5;
  let delay = options.minDelayMs ?? 100;
  const isRetryable = options.isRetryable ?? isTransient;
  for (let tries = 0; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (tries >= retries || !isRetryable(error) || options.stopped?.()) throw error;
      await sleep(jittered(delay));
      delay = Math.min(options.maxDelayMs ?? 5_000, delay * 2);
    }
  }
}

export function isTransient(error: unknown): boolean {
  if (error instanceof RpcTransportError) return true;
  // -32603 internal error, -32005 limit exceeded, 429 rate limits some providers echo as codes.
  if (error instanceof JsonRpcError) return error.code === -32603 || error.code === -32005 || error.code === 429;
  return false;
}
