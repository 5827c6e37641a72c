// Fetches a token's off-chain metadata JSON: http(s), ipfs:// (through the configured gateway) and
// ar:// URIs. Every attempt is bounded (deadline, size cap, redirect count), every hop passes the
// SSRF guard, failures that may pass are retried with backoff, and each host is asked at most once
// per interval so one launchpad's host is not hammered by a burst of new tokens.
import http from 'node:http';
import https from 'node:https';
import { GuardError, type UrlGuard } from './url-guard.ts';

export interface FetcherOptions {
  guard: UrlGuard;
  /** Base URL ipfs:// paths are appended to, e.g. https://ipfs.io/ipfs/ */
  ipfsGateway: string;
  /** Base URL ar:// ids are appended to. */
  arweaveGateway?: string;
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  /** Attempts after the first, for timeouts, connection errors, 429 and 5xx. */
  retries?: number;
  backoffMs?: number;
  /** Least time between two requests to one host. */
  hostIntervalMs?: number;
  /** Hosts remembered by the rate limiter (oldest forgotten first): memory stays bounded. */
  maxHosts?: number;
  /**
   * Host → origin that serves it, set by the operator (the simulator maps its URIs' host onto its
   * local metadata server): like a hosts-file entry, the mapped hop is trusted; redirects are not.
   */
  hostMap?: Readonly<Record<string, string>>;
}

export type FetchOutcome =
  | { ok: true; json: unknown; url: string }
  | { ok: false; reason: string /** worth asking again later (host down, timeout) */; transient: boolean };

export interface MetadataFetcher {
  fetchJson(uri: string): Promise<FetchOutcome>;
  /** Aborts requests in flight and refuses new ones: shutdown never waits for a slow host. */
  close(): void;
}

class FetchFailure extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
  }
}

/** http(s) URL a metadata URI is fetched from; null for schemes that are not fetched. */
export function resolveUri(uri: string, ipfsGateway: string, arweaveGateway = 'https://arweave.net/'): URL | null {
  const text = uri.trim();
  const join = (base: string, path: string) => new URL(base.replace(/\/?$/, '/') + path.replace(/^\/+/, ''));
  try {
    if (/^ipfs:\/\//i.test(text)) return join(ipfsGateway, text.slice(7).replace(/^ipfs\//i, ''));
    if (/^ar:\/\//i.test(text)) return join(arweaveGateway, text.slice(5));
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
  } catch {
    return null;
  }
}

/** A wait that does not keep the process alive. */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

export function createMetadataFetcher(options: FetcherOptions): MetadataFetcher {
  const timeoutMs = options.timeoutMs ?? 5000;
  const maxBytes = options.maxBytes ?? 256 * 1024;
  const maxRedirects = options.maxRedirects ?? 3;
  const retries = options.retries ?? 2;
  const backoffMs = options.backoffMs ?? 500;
  const hostIntervalMs = options.hostIntervalMs ?? 200;
  const maxHosts = options.maxHosts ?? 10_000;
  const { guard } = options;
  /** host → earliest time of its next request (insertion order = age, for eviction). */
  const nextSlot = new Map<string, number>();
  const active = new Set<http.ClientRequest>();
  let closed = false;

  async function waitForHost(host: string): Promise<void> {
    const now = Date.now();
    const slot = Math.max(now, nextSlot.get(host) ?? 0);
    nextSlot.delete(host);
    nextSlot.set(host, slot + hostIntervalMs);
    if (nextSlot.size > maxHosts) nextSlot.delete(nextSlot.keys().next().value!);
    if (slot > now) await sleep(slot - now);
  }

  /** One request: resolves the body, or a redirect target; rejects with FetchFailure. */
  function request(url: URL): Promise<{ body: Buffer } | { location: URL }> {
    return new Promise((resolve, reject) => {
      const lib = url.protocol === 'https:' ? https : http;
      const req = lib.request(url, {
        method: 'GET',
        lookup: guard.lookup,
        headers: { accept: 'application/json', 'accept-encoding': 'identity', 'user-agent': 'spot-metadata/1' },
        agent: false,
      });
      active.add(req);
      req.on('close', () => active.delete(req));
      const fail = (failure: FetchFailure) => {
        req.destroy();
        reject(failure);
      };
      const deadline = setTimeout(
        () => fail(new FetchFailure(`timed out after ${timeoutMs} ms`, true)),
        timeoutMs,
      ).unref();
      req.on('error', (error) => {
        clearTimeout(deadline);
        reject(
          error instanceof FetchFailure
            ? error
            : new FetchFailure(error.message, !(error instanceof GuardError) && !(error.cause instanceof GuardError)),
        );
      });
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && res.headers.location) {
          clearTimeout(deadline);
          res.resume();
          try {
            resolve({ location: new URL(res.headers.location, url) });
          } catch {
            reject(new FetchFailure('bad redirect location', false));
          }
          return;
        }
        if (status !== 200) {
          clearTimeout(deadline);
          res.resume();
          reject(new FetchFailure(`HTTP ${status}`, status === 429 || status >= 500));
          return;
        }
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) {
          clearTimeout(deadline);
          fail(new FetchFailure(`body of ${declared} bytes is over the ${maxBytes}-byte cap`, false));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            clearTimeout(deadline);
            fail(new FetchFailure(`body over the ${maxBytes}-byte cap`, false));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          clearTimeout(deadline);
          resolve({ body: Buffer.concat(chunks) });
        });
        res.on('error', (error) => {
          clearTimeout(deadline);
          reject(new FetchFailure(error.message, true));
        });
      });
      req.end();
    });
  }

  async function attempt(start: URL): Promise<{ json: unknown; url: string }> {
    let url = start;
    for (let hop = 0; ; hop++) {
      const mapped = options.hostMap?.[url.host.toLowerCase()];
      if (mapped) url = new URL(url.pathname + url.search, mapped);
      else {
        try {
          guard.checkUrl(url);
        } catch (error) {
          throw new FetchFailure((error as Error).message, false);
        }
      }
      await waitForHost(url.host);
      const result = await request(url);
      if ('location' in result) {
        if (hop >= maxRedirects) throw new FetchFailure(`more than ${maxRedirects} redirects`, false);
        url = result.location;
        continue;
      }
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(result.body);
      } catch {
        throw new FetchFailure('body is not valid UTF-8', false);
      }
      try {
        return { json: JSON.parse(text.replace(/^\uFEFF/, '')), url: url.href };
      } catch {
        throw new FetchFailure('body is not JSON', false);
      }
    }
  }

  return {
    async fetchJson(uri) {
      const url = resolveUri(uri, options.ipfsGateway, options.arweaveGateway);
      if (!url) return { ok: false, reason: 'not a fetchable URI', transient: false };
      for (let tries = 0; ; tries++) {
        if (closed) return { ok: false, reason: 'fetcher closed', transient: true };
        try {
          return { ok: true, ...(await attempt(url)) };
        } catch (error) {
          const failure =
            error instanceof FetchFailure ? error : new FetchFailure(String((error as Error).message), true);
          if (!failure.transient || tries >= retries)
            return { ok: false, reason: failure.message, transient: failure.transient };
          await sleep(backoffMs * 2 ** tries);
        }
      }
    },
    close() {
      closed = true;
      for (const req of active) req.destroy();
      active.clear();
    },
  };
}
