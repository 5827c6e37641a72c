// /openapi.json, generated from the TypeBox schemas of core/schemas.ts (components.schemas, with
// nested named schemas turned into $refs) plus the paths, parameters, headers and errors below.
import { CHAINS } from '../core/chains.ts';
import { COMPONENT_SCHEMAS, DENOMINATIONS, ERROR_CODES, IDENTITIES, METRICS, TIMEFRAMES } from '../core/schemas.ts';
import {
  CANDLE_CAP,
  CREDIT_COST,
  DEFAULT_CANDLES,
  IDENTITY_TRADES_DEFAULT_LIMIT,
  MAX_PAGE,
  TOKEN_TRADES_DEFAULT_LIMIT,
} from './routes.ts';
import { BODY_LIMIT_BYTES, JSON_LIMITS } from './body.ts';
import { MAX_DETAILS } from './validation.ts';

type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Plain JSON of a TypeBox schema; nested schemas with a component $id become $refs. */
function toComponent(schema: unknown, ids: Map<string, string>, top: boolean): unknown {
  if (Array.isArray(schema)) return schema.map((s) => toComponent(s, ids, false));
  if (schema === null || typeof schema !== 'object') return schema;
  const source = schema as Json;
  const id = typeof source.$id === 'string' ? source.$id : undefined;
  if (!top && id !== undefined && ids.has(id)) return ref(ids.get(id)!);
  const out: Json = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === '$id') continue;
    out[key] = toComponent(value, ids, false);
  }
  return out;
}

function componentSchemas(): Json {
  const ids = new Map<string, string>();
  for (const [name, schema] of Object.entries(COMPONENT_SCHEMAS))
    ids.set(((schema as Json).$id as string | undefined) ?? name, name);
  const out: Json = {};
  for (const [name, schema] of Object.entries(COMPONENT_SCHEMAS)) out[name] = toComponent(schema, ids, true);
  return out;
}

const header = (name: string) => ({ $ref: `#/components/headers/${name}` });
const commonHeaders = { 'X-RateLimit-Remaining': header('XRateLimitRemaining'), 'X-Request-ID': header('XRequestID') };
const meteredHeaders = { 'X-Credits-Cost': header('XCreditsCost'), 'X-Credits-Remaining': header('XCreditsRemaining') };

const jsonBody = (schema: unknown) => ({ 'application/json': { schema } });
const errorResponse = (name: string) => ({ $ref: `#/components/responses/${name}` });

function ok(description: string, schemaName: string): Json {
  return { description, headers: { ...commonHeaders, ...meteredHeaders }, content: jsonBody(ref(schemaName)) };
}

const STANDARD_ERRORS = {
  '400': errorResponse('BadRequest'),
  '401': errorResponse('Unauthorized'),
  '402': errorResponse('CreditsExhausted'),
  '404': errorResponse('NotFound'),
  '405': errorResponse('MethodNotAllowed'),
  '429': errorResponse('TooManyRequests'),
  '500': errorResponse('InternalError'),
  '503': errorResponse('ServiceUnavailable'),
};

const pathParams = [
  {
    name: 'chain',
    in: 'path',
    required: true,
    description: 'Chain slug; an unsupported slug is 400 UNSUPPORTED_CHAIN',
    schema: { type: 'string', enum: [...CHAINS] },
  },
  {
    name: 'address',
    in: 'path',
    required: true,
    description:
      'Token mint (solana, base58) or contract address (EVM, 0x + 40 hex, any case); a wrong format is 400 VALIDATION_ERROR on `address`',
    schema: { type: 'string' },
  },
];

const limitParam = (fallback: number) => ({
  name: 'limit',
  in: 'query',
  required: false,
  description: `Page size; a value outside 1 to ${MAX_PAGE} is moved into that range; ${fallback} when absent; a non-integer is 400 VALIDATION_ERROR`,
  // No minimum/maximum: values outside the range are moved into it, not refused (a generated client must send them).
  schema: { type: 'integer', default: fallback },
});
const cursorParam = {
  name: 'cursor',
  in: 'query',
  required: false,
  description: 'Opaque nextCursor of the previous page; anything else is 400 VALIDATION_ERROR on `cursor`',
  schema: { type: 'string' },
};

const errorEnvelope = (description: string, codes: string[]) => ({
  description: `${description} Codes: ${codes.join(', ')}.`,
  headers: {
    ...commonHeaders,
    'X-Credits-Cost': header('XCreditsCost'),
    'X-Credits-Remaining': header('XCreditsRemaining'),
  },
  content: jsonBody(ref('ErrorEnvelope')),
});

export function buildOpenApi(): Json {
  const costs = Object.entries(CREDIT_COST)
    .map(([route, cost]) => `${route} ${cost}`)
    .join(', ');
  return {
    openapi: '3.1.0',
    info: {
      title: 'Spot market data API',
      version: '1.0.0',
      description:
        'Real-time and historical spot market data for DEX tokens on solana, base, bsc, robinhood and arc. ' +
        'Every /v1 request sends `Authorization: Bearer <API_KEY>`. Limits: 12,000 requests per minute per key and 60,000 per IP address, ' +
        `refilling evenly. Metered keys pay credits per 2xx response (${costs}); any non-2xx costs 0.`,
    },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    tags: [{ name: 'tokens' }, { name: 'trades' }, { name: 'discovery' }, { name: 'stream' }, { name: 'meta' }],
    paths: {
      '/v1/tokens/{chain}/{address}': {
        get: {
          operationId: 'getToken',
          tags: ['tokens'],
          summary: 'Token details',
          parameters: pathParams,
          responses: { '200': ok('The token object.', 'Token'), ...STANDARD_ERRORS },
        },
      },
      '/v1/tokens/{chain}/{address}/ohlcv': {
        get: {
          operationId: 'getTokenOhlcv',
          tags: ['tokens'],
          summary: 'Candles of a token, oldest first; buckets without trades are left out',
          parameters: [
            ...pathParams,
            {
              name: 'timeframe',
              in: 'query',
              required: false,
              description:
                'Bucket size; 7d buckets open on Mondays 00:00 UTC, the others on multiples of their size since the epoch',
              schema: { type: 'string', enum: [...TIMEFRAMES], default: '1m' },
            },
            {
              name: 'metric',
              in: 'query',
              required: false,
              schema: { type: 'string', enum: [...METRICS], default: 'marketCap' },
            },
            {
              name: 'denomination',
              in: 'query',
              required: false,
              description: 'usd: US dollars; native: the chain native unit',
              schema: { type: 'string', enum: [...DENOMINATIONS], default: 'usd' },
            },
            {
              name: 'from',
              in: 'query',
              required: false,
              description:
                'Window start, inclusive, Unix ms; ignored when countBack is set; after `to` is 400 VALIDATION_ERROR',
              schema: { type: 'integer', minimum: 0 },
            },
            {
              name: 'to',
              in: 'query',
              required: false,
              description: 'Window end, exclusive, Unix ms',
              schema: { type: 'integer', minimum: 0 },
            },
            {
              name: 'countBack',
              in: 'query',
              required: false,
              description: `The most recent N buckets before \`to\`; takes priority over \`from\`; outside 1 to ${CANDLE_CAP} is 400 VALIDATION_ERROR. With neither countBack nor from, the newest ${DEFAULT_CANDLES} buckets; a window holding more than ${CANDLE_CAP} keeps the newest.`,
              schema: { type: 'integer', minimum: 1, maximum: CANDLE_CAP },
            },
          ],
          responses: { '200': ok('Candles, oldest first.', 'CandlesResponse'), ...STANDARD_ERRORS },
        },
      },
      '/v1/tokens/{chain}/{address}/trades': {
        get: {
          operationId: 'getTokenTrades',
          tags: ['trades'],
          summary: 'Trades of a token, newest first',
          parameters: [...pathParams, limitParam(TOKEN_TRADES_DEFAULT_LIMIT), cursorParam],
          responses: { '200': ok('A trade page.', 'TradePage'), ...STANDARD_ERRORS },
        },
      },
      '/v1/trades': {
        get: {
          operationId: 'getIdentityTrades',
          tags: ['trades'],
          summary: 'Trades of one identity feed across tokens, newest first',
          parameters: [
            {
              name: 'identity',
              in: 'query',
              required: true,
              description:
                'kol: wallets labelled as key opinion leaders; fomoscan: wallets with a profile on a social-trading service',
              schema: { type: 'string', enum: [...IDENTITIES] },
            },
            {
              name: 'chains',
              in: 'query',
              required: false,
              description:
                'Comma-separated chain slugs; absent means every chain; a list that names nothing (e.g. empty) is 400 VALIDATION_ERROR on `chains`; an unknown slug is 400 UNSUPPORTED_CHAIN',
              schema: { type: 'string', examples: ['solana,base'] },
            },
            limitParam(IDENTITY_TRADES_DEFAULT_LIMIT),
            cursorParam,
          ],
          responses: {
            '200': ok('A trade page; each trade names its chain and token.', 'TradePage'),
            ...STANDARD_ERRORS,
          },
        },
      },
      '/v1/discovery': {
        post: {
          operationId: 'postDiscovery',
          tags: ['discovery'],
          summary: 'Ranked discovery columns (newPairs, graduating, graduated)',
          description:
            `Request limits, checked before validation; over one is a 400 VALIDATION_ERROR naming the field: ` +
            `body at most ${BODY_LIMIT_BYTES} bytes, a list at most ${JSON_LIMITS.maxListItems} entries, an object at most ` +
            `${JSON_LIMITS.maxObjectKeys} fields, a string at most ${JSON_LIMITS.maxStringLength} characters, nesting at most ` +
            `${JSON_LIMITS.maxDepth} levels. A VALIDATION_ERROR lists at most ${MAX_DETAILS} details, then one more ` +
            'entry (field "body") counting the problems not listed.',
          requestBody: { required: true, content: jsonBody(ref('DiscoveryRequest')) },
          responses: {
            '200': ok(
              'One entry per requested column, in the order newPairs, graduating, graduated.',
              'DiscoveryResponse',
            ),
            ...STANDARD_ERRORS,
          },
        },
      },
      '/v1/stream': {
        get: {
          operationId: 'stream',
          tags: ['stream'],
          summary: 'WebSocket stream, served on the stream port; on this port a plain-text 426 names it',
          responses: {
            '101': { description: 'WebSocket upgrade (on the stream port).' },
            '426': {
              description: 'Not a WebSocket upgrade on the stream port: plain text naming the stream port.',
              headers: commonHeaders,
              content: { 'text/plain': { schema: { type: 'string' } } },
            },
            '401': STANDARD_ERRORS['401'],
            '405': STANDARD_ERRORS['405'],
            '429': STANDARD_ERRORS['429'],
          },
        },
      },
      '/openapi.json': {
        get: {
          operationId: 'openapi',
          tags: ['meta'],
          summary: 'This interface description; needs no key and spends no budget',
          security: [],
          responses: {
            '200': {
              description: 'OpenAPI 3.1 document.',
              headers: { 'X-Request-ID': header('XRequestID') },
              content: jsonBody({ type: 'object' }),
            },
            '405': {
              description: 'Wrong method; no body.',
              headers: { Allow: header('Allow'), 'X-Request-ID': header('XRequestID') },
            },
          },
        },
      },
    },
    components: {
      schemas: componentSchemas(),
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'Authorization: Bearer <API_KEY>; keys look like spot_ followed by 32 base62 characters',
        },
      },
      headers: {
        XRateLimitRemaining: {
          description:
            'Requests left in the current window; the IP address budget on a 401, an IP 429 and a 503 when the key could not be checked',
          schema: { type: 'integer', minimum: 0 },
        },
        XRequestID: {
          description:
            "Trace ID: the request's own when it is 1-128 visible ASCII characters without spaces, else a generated UUID",
          schema: { type: 'string' },
        },
        RetryAfter: { description: 'Whole seconds to wait, never 0', schema: { type: 'integer', minimum: 1 } },
        XCreditsCost: {
          description: `Credits this response cost; metered keys only; 0 on any non-2xx (${costs})`,
          schema: { type: 'integer', minimum: 0 },
        },
        XCreditsRemaining: {
          description: 'Credits left on the key; metered keys only',
          schema: { type: 'integer', minimum: 0 },
        },
        Allow: { description: 'Methods the path accepts', schema: { type: 'string' } },
      },
      responses: {
        BadRequest: errorEnvelope(
          'A path parameter, query parameter or body is malformed (details lists {field, message} per problem), or the chain is not supported (details {chain}).',
          ['VALIDATION_ERROR', 'UNSUPPORTED_CHAIN'],
        ),
        Unauthorized: errorEnvelope('The key is missing, malformed, unknown, revoked or expired.', ['UNAUTHORIZED']),
        CreditsExhausted: errorEnvelope('A metered key has no credits left.', ['CREDITS_EXHAUSTED']),
        NotFound: errorEnvelope('The path or the resource does not exist.', ['NOT_FOUND']),
        MethodNotAllowed: {
          description: 'Wrong method for the path; no body.',
          headers: { ...commonHeaders, Allow: header('Allow') },
        },
        TooManyRequests: {
          description: 'A rate limit was met; retry after Retry-After. Codes: RATE_LIMITED.',
          headers: { ...commonHeaders, 'Retry-After': header('RetryAfter'), ...meteredHeaders },
          content: jsonBody(ref('ErrorEnvelope')),
        },
        InternalError: errorEnvelope('Unexpected failure; retry with backoff a few times.', ['INTERNAL_ERROR']),
        ServiceUnavailable: errorEnvelope(
          'The store is unreachable or the key could not be checked; retry with backoff.',
          ['SERVICE_UNAVAILABLE'],
        ),
      },
    },
    'x-error-codes': [...ERROR_CODES],
  };
}
