// A lane in front of Koa for the hottest read: GET /v1/tokens/:chain/:address answered from the
// hot views for an unmetered key. It writes the same status, headers and body the Koa route
// would, with no per-request context objects and the body as a Buffer serialised once per token
// version. It decides before spending any budget: every other request (other paths, HEAD, a
// query string it does not need to read, metered or invalid keys, cold tokens) goes to Koa as is.
import type http from 'node:http';
import type { KeyCheck, KeyStore } from '../core/auth/keys.ts';
import type { RateLimiter } from '../core/auth/rate-limit.ts';
import { canonicalAddress, isChain } from '../core/chains.ts';
import { requestIdOf } from '../core/request-id.ts';
import type { SpotError } from '../core/errors.ts';
import { rateLimited } from './errors.ts';
import type { HotViews } from './hot-views.ts';

export interface FastLaneDeps {
  views: HotViews;
  keys: KeyStore;
  keyLimiter: RateLimiter;
  ipLimiter: RateLimiter;
  now: () => number;
}

/** Handles the request and returns true, or returns false without side effects (Koa answers). */
export type FastLane = (req: http.IncomingMessage, res: http.ServerResponse) => boolean;

const JSON_TYPE = 'application/json; charset=utf-8';
const PREFIX = '/v1/tokens/';

export function createFastLane(deps: FastLaneDeps): FastLane {
  const { views, keys, keyLimiter, ipLimiter, now } = deps;

  function sendError(res: http.ServerResponse, requestId: string, remaining: number, error: SpotError): void {
    const body = JSON.stringify(error.toEnvelope());
    res.writeHead(error.status, {
      'X-Request-ID': requestId,
      'X-RateLimit-Remaining': String(remaining),
      'Retry-After': String(Math.max(1, Math.ceil(error.retryAfterSeconds ?? 1))),
      'Content-Type': JSON_TYPE,
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(body);
  }

  return (req, res) => {
    if (req.method !== 'GET') return false;
    const url = req.url;
    if (url === undefined || !url.startsWith(PREFIX)) return false;
    // Exactly two segments, nothing percent-encoded, no query string (Koa decodes and validates those).
    const slash = url.indexOf('/', PREFIX.length);
    if (slash < 0 || url.indexOf('/', slash + 1) >= 0 || url.includes('?') || url.includes('%')) return false;
    const chain = url.slice(PREFIX.length, slash);
    if (!isChain(chain)) return false;
    const address = canonicalAddress(chain, url.slice(slash + 1));
    if (address === null) return false;
    const entry = views.token(chain, address);
    if (entry === undefined) return false;
    let check: KeyCheck;
    try {
      check = keys.check(req.headers.authorization || undefined, now());
    } catch {
      return false;
    }
    if (!check.ok || check.record.metered) return false;

    const requestId = requestIdOf(req.headers['x-request-id']);
    const at = now();
    const ipDecision = ipLimiter.take(req.socket.remoteAddress || 'unknown', at);
    if (!ipDecision.allowed) {
      sendError(res, requestId, 0, rateLimited(ipDecision.retryAfterSeconds));
      return true;
    }
    const keyDecision = keyLimiter.take(check.record.id, at);
    if (!keyDecision.allowed) {
      sendError(res, requestId, keyDecision.remaining, rateLimited(keyDecision.retryAfterSeconds));
      return true;
    }
    const body = views.tokenBody(entry);
    res.writeHead(200, {
      'X-Request-ID': requestId,
      'X-RateLimit-Remaining': String(keyDecision.remaining),
      'Content-Type': JSON_TYPE,
      'Content-Length': body.length,
    });
    res.end(body);
    return true;
  };
}
