// Typed REST client: one method per endpoint of SPEC.md, bodies typed by the TypeBox schemas of
// core/schemas.ts (the ones the server validates and publishes in /openapi.json). Errors come
// back as SpotApiError with the envelope's code; a 429 is retried after its Retry-After.
import type { Chain } from '../core/chains.ts';
import type {
  Candle,
  Denomination,
  DiscoveryRequest,
  DiscoveryResponse,
  ErrorCode,
  Identity,
  Metric,
  Timeframe,
  Token,
  TradePage,
  ValidationDetail,
} from '../core/schemas.ts';

export class SpotApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode | 'HTTP_ERROR',
    message: string,
    readonly details: ValidationDetail[] | { chain: string } | undefined,
    /** Seconds the server asked to wait (429), when it said. */
    readonly retryAfterSeconds: number | undefined,
  ) {
    super(message);
    this.name = 'SpotApiError';
  }
}

export interface OhlcvQuery {
  timeframe?: Timeframe;
  metric?: Metric;
  denomination?: Denomination;
  from?: number;
  to?: number;
  countBack?: number;
}

export interface PageQuery {
  limit?: number;
  cursor?: string;
}

export interface IdentityTradesQuery extends PageQuery {
  identity: Identity;
  chains?: Chain[];
}

export interface RestClientOptions {
  /** e.g. `http://127.0.0.1:8080` (no trailing `/v1`). */
  baseUrl: string;
  apiKey: string;
  /** Retries of a 429 after its Retry-After (default 2; 0 gives the error at once). */
  maxRateLimitRetries?: number;
  /** Longest Retry-After honoured, seconds (default 60): a longer one is thrown instead. */
  maxRetryAfterSeconds?: number;
  fetch?: typeof fetch;
}

export interface RestClient {
  token(chain: Chain, address: string): Promise<Token>;
  ohlcv(chain: Chain, address: string, query?: OhlcvQuery): Promise<{ candles: Candle[] }>;
  tokenTrades(chain: Chain, address: string, query?: PageQuery): Promise<TradePage>;
  /** GET /v1/trades: one identity feed across tokens. */
  trades(query: IdentityTradesQuery): Promise<TradePage>;
  discovery(body: DiscoveryRequest): Promise<DiscoveryResponse>;
  openapi(): Promise<Record<string, unknown>>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function queryString(query: object): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    params.set(name, Array.isArray(value) ? value.join(',') : String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

export function createRestClient(options: RestClientOptions): RestClient {
  const base = options.baseUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? fetch;
  const maxRetries = options.maxRateLimitRetries ?? 2;
  const maxWait = options.maxRetryAfterSeconds ?? 60;

  async function request<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const response = await doFetch(`${base}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${options.apiKey}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      if (response.ok) return JSON.parse(text) as T;
      const retryAfter = Number.parseInt(response.headers.get('retry-after') ?? '', 10);
      const retryAfterSeconds = Number.isFinite(retryAfter) ? retryAfter : undefined;
      if (response.status === 429 && attempt < maxRetries && (retryAfterSeconds ?? 1) <= maxWait) {
        await sleep((retryAfterSeconds ?? 1) * 1000);
        continue;
      }
      let envelope: { error?: { code?: ErrorCode; message?: string; details?: SpotApiError['details'] } } = {};
      try {
        envelope = JSON.parse(text);
      } catch {
        // not the JSON envelope (a proxy's page): reported as HTTP_ERROR below
      }
      throw new SpotApiError(
        response.status,
        envelope.error?.code ?? 'HTTP_ERROR',
        envelope.error?.message ?? `HTTP ${response.status}`,
        envelope.error?.details,
        retryAfterSeconds,
      );
    }
  }

  const tokenPath = (chain: Chain, address: string) =>
    `/v1/tokens/${encodeURIComponent(chain)}/${encodeURIComponent(address)}`;

  return {
    token: (chain, address) => request('GET', tokenPath(chain, address)),
    ohlcv: (chain, address, query = {}) => request('GET', `${tokenPath(chain, address)}/ohlcv${queryString(query)}`),
    tokenTrades: (chain, address, query = {}) =>
      request('GET', `${tokenPath(chain, address)}/trades${queryString(query)}`),
    trades: (query) => request('GET', `/v1/trades${queryString(query)}`),
    discovery: (body) => request('POST', '/v1/discovery', body),
    openapi: () => request('GET', '/openapi.json'),
  };
}
