// HTTP side of the stream port: the upgrade decision (key, request budget, connections per key)
// and the plain responses for requests that are not WebSocket upgrades.
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import type { KeyCheck } from '../core/auth/keys.ts';
import type { RateLimiter } from '../core/auth/rate-limit.ts';
import { requestIdOf as requestIdFromHeader } from '../core/request-id.ts';
import type { ErrorCode } from '../core/schemas.ts';

export const STREAM_PATH = '/v1/stream';
/** Retry-After of a handshake refused for the connection limit: a slot frees when a socket closes. */
export const CONNECTION_LIMIT_RETRY_SECONDS = 1;

/**
 * The REST rule (core/request-id.ts). uWS trims bytes >= 0x80 at the ends of a header value
 * (`r🦄` arrives as `r`), so such a value cannot be told from its ASCII rest; non-ASCII inside
 * the value arrives and is replaced. See docs/hostile-input.md.
 */
export function requestIdOf(req: HttpRequest): string {
  return requestIdFromHeader(req.getHeader('x-request-id'));
}

export function remoteAddressOf(res: HttpResponse): string {
  return Buffer.from(res.getRemoteAddressAsText()).toString();
}

const STATUS_LINE: Record<number, string> = {
  400: '400 Bad Request',
  401: '401 Unauthorized',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  426: '426 Upgrade Required',
  429: '429 Too Many Requests',
};

export function respond(res: HttpResponse, status: number, headers: Record<string, string>, body: string | null): void {
  res.cork(() => {
    res.writeStatus(STATUS_LINE[status] ?? String(status));
    for (const [name, value] of Object.entries(headers)) res.writeHeader(name, value);
    res.end(body ?? '');
  });
}

export function respondError(
  res: HttpResponse,
  status: number,
  code: ErrorCode,
  message: string,
  headers: Record<string, string>,
): void {
  respond(
    res,
    status,
    { ...headers, 'Content-Type': 'application/json' },
    JSON.stringify({ error: { code, message } }),
  );
}

export type HandshakeDecision =
  | { ok: true; keyId: string; remaining: number }
  | { ok: false; status: number; code: ErrorCode; message: string; remaining: number; retryAfter?: number };

export interface HandshakeDeps {
  check(authorizationHeader: string | undefined, now?: number): KeyCheck;
  limiters: { key: RateLimiter; ip: RateLimiter };
  openConnections(keyId: string): number;
  maxConnectionsPerKey: number;
}

/**
 * The order follows the REST surface: the IP budget, then the key (401 reports the IP budget),
 * then the key's request budget, then its open connections. The handshake is one request; frames
 * over the socket spend nothing.
 */
export function decideHandshake(deps: HandshakeDeps, authorization: string, ip: string): HandshakeDecision {
  const byIp = deps.limiters.ip.take(ip);
  if (!byIp.allowed) {
    return {
      ok: false,
      status: 429,
      code: 'RATE_LIMITED',
      message: 'Too many requests from this address; retry after the Retry-After seconds.',
      remaining: 0,
      retryAfter: byIp.retryAfterSeconds,
    };
  }
  const key = deps.check(authorization === '' ? undefined : authorization);
  if (!key.ok) {
    const what =
      key.reason === 'missing' ? 'is missing' : key.reason === 'malformed' ? 'is malformed' : `is ${key.reason}`;
    return {
      ok: false,
      status: 401,
      code: 'UNAUTHORIZED',
      message: `The API key ${what}; send Authorization: Bearer <API_KEY> with a valid key.`,
      remaining: byIp.remaining,
    };
  }
  const byKey = deps.limiters.key.take(key.record.id);
  if (!byKey.allowed) {
    return {
      ok: false,
      status: 429,
      code: 'RATE_LIMITED',
      message: 'The key spent its request budget; retry after the Retry-After seconds.',
      remaining: 0,
      retryAfter: byKey.retryAfterSeconds,
    };
  }
  if (deps.openConnections(key.record.id) >= deps.maxConnectionsPerKey) {
    return {
      ok: false,
      status: 429,
      code: 'RATE_LIMITED',
      remaining: byKey.remaining,
      retryAfter: CONNECTION_LIMIT_RETRY_SECONDS,
      message: `The key holds ${deps.maxConnectionsPerKey} open stream connections, the limit; close one or retry after the Retry-After seconds.`,
    };
  }
  return { ok: true, keyId: key.record.id, remaining: byKey.remaining };
}

/** `Upgrade: websocket` (a token list, any case; RFC 6455 4.2.1). */
export function isWebSocketUpgrade(req: HttpRequest): boolean {
  return req
    .getHeader('upgrade')
    .toLowerCase()
    .split(',')
    .some((token) => token.trim() === 'websocket');
}

/** The only WebSocket version served (RFC 6455); another one is answered 426 naming it. */
export const WEBSOCKET_VERSION = '13';

/**
 * Requests that are not usable upgrades: 426 plain text on the stream path (400 for an upgrade
 * without Sec-WebSocket-Key), 405 for other methods there, 404 elsewhere.
 */
export function answerPlainRequest(res: HttpResponse, req: HttpRequest, limiters: { ip: RateLimiter }): void {
  const requestId = requestIdOf(req);
  const url = req.getUrl();
  const method = req.getMethod();
  const headers: Record<string, string> = { 'X-Request-ID': requestId };
  if (url.startsWith('/v1/') || url === '/v1') {
    const byIp = limiters.ip.take(remoteAddressOf(res));
    headers['X-RateLimit-Remaining'] = String(byIp.remaining);
    if (!byIp.allowed) {
      headers['Retry-After'] = String(byIp.retryAfterSeconds);
      return respondError(
        res,
        429,
        'RATE_LIMITED',
        'Too many requests from this address; retry after the Retry-After seconds.',
        headers,
      );
    }
  }
  if (url === STREAM_PATH) {
    if (method !== 'get') return respond(res, 405, { ...headers, Allow: 'GET' }, null);
    // uWS hands an upgrade only when Sec-WebSocket-Key is present; one without it lands here.
    if (isWebSocketUpgrade(req) && req.getHeader('sec-websocket-key') === '') {
      return respond(
        res,
        400,
        { ...headers, 'Content-Type': 'text/plain; charset=utf-8' },
        'Bad Request: the upgrade has no Sec-WebSocket-Key; connect with a WebSocket client.\n',
      );
    }
    return respond(
      res,
      426,
      {
        ...headers,
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': WEBSOCKET_VERSION,
        'Content-Type': 'text/plain; charset=utf-8',
      },
      'Upgrade Required: /v1/stream is a WebSocket endpoint; connect with a WebSocket client and Authorization: Bearer <API_KEY>.\n',
    );
  }
  respondError(
    res,
    404,
    'NOT_FOUND',
    `Nothing at ${url} on the stream port; connect a WebSocket to ${STREAM_PATH}.`,
    headers,
  );
}
