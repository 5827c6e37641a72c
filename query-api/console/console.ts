// The live console on the REST port: static page at /, its assets under /console/, the one-time
// link /console/open, and /console/api/v1/* — the /v1 routes themselves (same validation, same
// query functions) authorised by the console session cookie instead of a key, spending the IP
// budget. SPOT_CONSOLE: loopback (default: loopback clients only), open, off.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type Koa from 'koa';
import type { RateLimiter } from '../../core/auth/rate-limit.ts';
import type { ConsoleMode } from '../../core/config.ts';
import { notFound, SpotError } from '../../core/errors.ts';
import { rateLimited, sendError } from '../errors.ts';
import { CONSOLE_COOKIE, SESSION_TTL_MS, type ConsoleSessions } from './sessions.ts';

export const CONSOLE_API = '/console/api';

const STATIC_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'static');
// The standalone build (a global LightweightCharts) is not in the package's exports map: found
// beside its package.json, which is.
const CHARTS = path.join(
  path.dirname(createRequire(import.meta.url).resolve('lightweight-charts/package.json')),
  'dist/lightweight-charts.standalone.production.js',
);
/** Same-origin only: the page loads nothing from elsewhere (the network may be closed anyway). */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'";

interface Asset {
  type: string;
  body: Buffer;
}

function loadAssets(): Map<string, Asset> {
  const read = (file: string) => fs.readFileSync(path.join(STATIC_DIR, file));
  return new Map<string, Asset>([
    ['/', { type: 'text/html; charset=utf-8', body: read('index.html') }],
    ['/console/console.js', { type: 'text/javascript; charset=utf-8', body: read('console.js') }],
    ['/console/console.css', { type: 'text/css; charset=utf-8', body: read('console.css') }],
    ['/console/lightweight-charts.js', { type: 'text/javascript; charset=utf-8', body: fs.readFileSync(CHARTS) }],
  ]);
}

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);
/** Host names (of the Host header) that are loopback; koa.hostname strips the port and IPv6 brackets. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
const sessionCookie = (session: string) =>
  `${CONSOLE_COOKIE}=${session}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${SESSION_TTL_MS / 1000}`;

const unauthorizedConsole = () =>
  new SpotError(
    'UNAUTHORIZED',
    'No console session; open the one-time link printed at start (or run `spot console` for a new one).',
  );

export interface ConsoleDeps {
  sessions: ConsoleSessions;
  ipLimiter: RateLimiter;
  mode: ConsoleMode;
  now: () => number;
}

/** Answers console paths (true) or leaves the request to the API (false). */
export type ConsoleHandler = (koa: Koa.Context, dispatchV1: (koa: Koa.Context) => Promise<void>) => Promise<boolean>;

export function createConsole(deps: ConsoleDeps): ConsoleHandler {
  const assets = deps.mode === 'off' ? new Map<string, Asset>() : loadAssets();

  function page(koa: Koa.Context, status: number, text: string): void {
    koa.status = status;
    koa.type = 'text/html; charset=utf-8';
    koa.set('Content-Security-Policy', CSP);
    koa.body = `<!doctype html><meta charset="utf-8"><title>spot console</title><p>${text}</p>\n`;
  }

  return async (koa, dispatchV1) => {
    const isConsole = koa.path === '/' || koa.path === '/console' || koa.path.startsWith('/console/');
    if (!isConsole || deps.mode === 'off') return false;
    if (deps.mode === 'loopback' && !LOOPBACK.has(koa.ip)) {
      throw notFound('The console answers loopback clients only (SPOT_CONSOLE=loopback); set SPOT_CONSOLE=open.');
    }
    koa.set('Cache-Control', 'no-store');
    koa.set('X-Content-Type-Options', 'nosniff');

    if (koa.path === '/console/open') {
      const token = typeof koa.query.token === 'string' ? koa.query.token : '';
      const session = deps.sessions.redeem(token);
      if (!session) {
        page(
          koa,
          401,
          'This console link was already used or has expired. Run <code>spot console</code> for a new one.',
        );
        return true;
      }
      koa.set('Set-Cookie', sessionCookie(session));
      koa.status = 303;
      koa.set('Location', '/');
      koa.body = '';
      return true;
    }

    if (koa.path.startsWith(`${CONSOLE_API}/`)) {
      const v1 = koa.path.slice(CONSOLE_API.length);
      if (!v1.startsWith('/v1/')) throw notFound('Console reads are /console/api/v1/… (the /v1 paths).');
      if (!deps.sessions.valid(koa.cookies.get(CONSOLE_COOKIE))) throw unauthorizedConsole();
      const budget = deps.ipLimiter.take(koa.ip || 'unknown', deps.now());
      koa.set('X-RateLimit-Remaining', String(budget.remaining));
      if (!budget.allowed) throw rateLimited(budget.retryAfterSeconds);
      koa.path = v1;
      try {
        await dispatchV1(koa);
      } catch (error) {
        if (!(error instanceof SpotError)) throw error;
        sendError(koa, error);
      }
      if (koa.status === 404 && koa.body === undefined) throw notFound('No console read has this path.');
      return true;
    }

    const asset = assets.get(koa.path);
    if (!asset) throw notFound('The console has no such file.');
    // On loopback the operator is on this machine: the page itself opens a session, no link needed.
    // The Host must name loopback too, so a page of another origin rebound to 127.0.0.1 gets none.
    if (
      deps.mode === 'loopback' &&
      (koa.path === '/' || koa.path === '/console') &&
      LOOPBACK_HOSTS.has(koa.hostname) &&
      !deps.sessions.valid(koa.cookies.get(CONSOLE_COOKIE))
    ) {
      const session = deps.sessions.redeem(deps.sessions.mintToken());
      if (session) koa.set('Set-Cookie', sessionCookie(session));
    }
    if (koa.method !== 'GET' && koa.method !== 'HEAD') {
      koa.status = 405;
      koa.set('Allow', 'GET, HEAD');
      koa.body = '';
      return true;
    }
    koa.set('Content-Security-Policy', CSP);
    koa.type = asset.type;
    koa.body = asset.body;
    return true;
  };
}
