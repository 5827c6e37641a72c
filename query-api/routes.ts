// The /v1 endpoints. Hot reads come from the in-memory views; history, cold keys and anything
// the views cannot answer exactly come from the store (ClickHouse).
import Router from '@koa/router';
import type Koa from 'koa';
import type { SpotStore, TradeCursor } from '../clickhouse/types.ts';
import { CHAINS, canonicalAddress, isChain, type Chain } from '../core/chains.ts';
import { notFound, unsupportedChain } from '../core/errors.ts';
import {
  COLUMNS,
  ColumnConfig,
  DENOMINATIONS,
  DiscoveryRequest,
  IDENTITIES,
  METRICS,
  TIMEFRAMES,
  type Column,
  type Identity,
} from '../core/schemas.ts';
import { readJsonBody } from './body.ts';
import { createCandleCache } from './candle-cache.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { checkRanges } from './discovery-filters.ts';
import type { HotViews } from './hot-views.ts';
import { pageJson, rowItem, type TradeItem } from './trade-json.ts';
import { Problems, checkSchema, clampedLimit, enumParam, integerParam, single, type Query } from './validation.ts';

export const TOKEN_TRADES_DEFAULT_LIMIT = 50;
export const IDENTITY_TRADES_DEFAULT_LIMIT = 20;
export const MAX_PAGE = 100;
export const CANDLE_CAP = 5000;
export const DEFAULT_CANDLES = 500;
/**
 * Latest window bound passed to the store: 9999-12-31T23:59:59.999Z. A later `from` or `to`
 * selects the same candles (none trade that late), and bounds beyond 2^53 ms cannot be bound
 * as query parameters, so larger values are lowered to it rather than failing the query.
 */
export const TIME_CEILING_MS = 253_402_300_799_999;

/** Credits a 2xx costs on a metered key, by route name (non-2xx responses cost 0). */
export const CREDIT_COST: Record<string, number> = {
  token: 1,
  ohlcv: 2,
  tokenTrades: 1,
  identityTrades: 1,
  discovery: 5,
};

export interface RouteDeps {
  store: SpotStore;
  views: HotViews;
  now: () => number;
  bodyLimitBytes?: number;
}

const json = (ctx: Koa.Context, text: string | Buffer) => {
  ctx.status = 200;
  ctx.type = 'application/json';
  ctx.body = text;
};

/** Chain slug then address: an unsupported slug is UNSUPPORTED_CHAIN, a wrong address a problem on `address`. */
function tokenPath(params: Record<string, string>, problems: Problems): { chain: Chain; address: string } {
  const chain = params.chain ?? '';
  if (!isChain(chain)) throw unsupportedChain(chain);
  const raw = params.address ?? '';
  const address = canonicalAddress(chain, raw);
  if (address === null) problems.add('address', `"${raw}" is not a ${chain} token address.`);
  return { chain, address: address ?? raw };
}

function cursorParam(query: Query, problems: Problems): TradeCursor | undefined {
  const raw = single(query, 'cursor', problems);
  if (raw === undefined) return undefined;
  try {
    return decodeCursor(raw);
  } catch (_error) {
    problems.add(
      'cursor',
      'The cursor is not one this service issued; pass nextCursor from the previous page unchanged.',
    );
    return undefined;
  }
}

const encodeItem = (item: TradeItem) => encodeCursor({ timestamp: item.timestamp, id: item.id });

export function createRoutes(deps: RouteDeps): Router {
  const { store, views } = deps;
  // Paths are case-sensitive (RFC 3986): /v1/Trades is not a path of the API, so it is a 404.
  const router = new Router({ sensitive: true });
  const candleCache = createCandleCache({ store, views, now: deps.now });

  async function tokenExists(chain: Chain, address: string): Promise<boolean> {
    return views.token(chain, address) !== undefined || (await store.getToken(chain, address)) !== null;
  }
  const unknownToken = () => notFound('No token with this chain and address is known; check both and retry.');

  router.get('token', '/v1/tokens/:chain/:address', async (ctx) => {
    const problems = new Problems();
    const { chain, address } = tokenPath(ctx.params, problems);
    problems.throwIfAny();
    const entry = views.token(chain, address);
    if (entry) {
      ctx.status = 200;
      ctx.type = 'application/json';
      ctx.body = views.tokenBody(entry);
      return;
    }
    const token = await store.getToken(chain, address);
    if (!token) throw unknownToken();
    json(ctx, JSON.stringify(token));
  });

  router.get('ohlcv', '/v1/tokens/:chain/:address/ohlcv', async (ctx) => {
    const problems = new Problems();
    const { chain, address } = tokenPath(ctx.params, problems);
    const query = ctx.query as Query;
    const timeframe = enumParam(query, 'timeframe', TIMEFRAMES, '1m', problems);
    const metric = enumParam(query, 'metric', METRICS, 'marketCap', problems);
    const denomination = enumParam(query, 'denomination', DENOMINATIONS, 'usd', problems);
    const fromSent = integerParam(query, 'from', problems, { min: 0 });
    const toSent = integerParam(query, 'to', problems, { min: 0 });
    const from = fromSent === undefined ? undefined : Math.min(fromSent, TIME_CEILING_MS);
    const to = toSent === undefined ? undefined : Math.min(toSent, TIME_CEILING_MS);
    const countBack = integerParam(query, 'countBack', problems, { min: 1, max: CANDLE_CAP });
    // `from` is ignored when countBack is set, so only a window that is used can be inverted.
    if (countBack === undefined && fromSent !== undefined && toSent !== undefined && fromSent > toSent) {
      problems.add('from', `"from" (${fromSent}) is after "to" (${toSent}); send from <= to.`);
    }
    problems.throwIfAny();
    if (!(await tokenExists(chain, address))) throw unknownToken();

    const windowFrom = countBack === undefined ? from : undefined;
    const limit = countBack ?? (from !== undefined ? CANDLE_CAP : DEFAULT_CANDLES);
    ctx.status = 200;
    ctx.type = 'application/json';
    ctx.body = await candleCache.body({
      chain,
      token: address,
      timeframe,
      metric,
      denomination,
      from: windowFrom,
      to,
      limit,
    });
  });

  router.get('tokenTrades', '/v1/tokens/:chain/:address/trades', async (ctx) => {
    const problems = new Problems();
    const { chain, address } = tokenPath(ctx.params, problems);
    const query = ctx.query as Query;
    const limit = clampedLimit(query, problems, TOKEN_TRADES_DEFAULT_LIMIT, 1, MAX_PAGE);
    const cursor = cursorParam(query, problems);
    problems.throwIfAny();
    const held = views.tokenTrades(chain, address, limit + 1, cursor);
    if (held) return json(ctx, pageJson(held, limit, encodeItem));
    const items = cursor
      ? (await store.queryTokenTrades(chain, address, limit + 1, cursor)).map(rowItem)
      : await views.storedTokenTrades(chain, address, limit + 1, async (count) =>
          (await store.queryTokenTrades(chain, address, count)).map(rowItem),
        );
    if (items.length === 0 && !(await tokenExists(chain, address))) throw unknownToken();
    json(ctx, pageJson(items, limit, encodeItem));
  });

  router.get('identityTrades', '/v1/trades', async (ctx) => {
    const problems = new Problems();
    const query = ctx.query as Query;
    const identityRaw = single(query, 'identity', problems);
    let identity: Identity | undefined;
    if (identityRaw === undefined) {
      if (!problems.list.some((p) => p.field === 'identity'))
        problems.add('identity', `"identity" is required: one of ${IDENTITIES.join(', ')}.`);
    } else if (!(IDENTITIES as readonly string[]).includes(identityRaw)) {
      problems.add('identity', `"identity" must be one of ${IDENTITIES.join(', ')}, got "${identityRaw}".`);
    } else {
      identity = identityRaw as Identity;
    }
    const { chains, unsupported } = chainsParam(query, problems);
    const limit = clampedLimit(query, problems, IDENTITY_TRADES_DEFAULT_LIMIT, 1, MAX_PAGE);
    const cursor = cursorParam(query, problems);
    problems.throwIfAny();
    if (unsupported !== undefined) throw unsupportedChain(unsupported);
    if (!cursor) {
      const items = views.identityTrades(identity!, chains, limit + 1);
      if (items) return json(ctx, pageJson(items, limit, encodeItem));
    }
    const rows = await store.queryIdentityTrades(identity!, chains, limit + 1, cursor);
    json(ctx, pageJson(rows.map(rowItem), limit, encodeItem));
  });

  router.post('discovery', '/v1/discovery', async (ctx) => {
    const body = await readJsonBody(ctx, deps.bodyLimitBytes);
    const { chains, columns } = parseDiscoveryRequest(body);
    json(ctx, views.discovery.rank(chains, columns, deps.now()));
  });

  return router;
}

/** `chains` of /v1/trades: absent = every chain; empty entries are skipped; a list naming nothing is refused. */
function chainsParam(query: Query, problems: Problems): { chains: Chain[]; unsupported?: string } {
  if (query.chains === undefined) return { chains: [...CHAINS] };
  const raw = single(query, 'chains', problems) ?? '';
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (names.length === 0) {
    problems.add('chains', '"chains" names no chain; omit it for every chain or list slugs separated by commas.');
    return { chains: [] };
  }
  const unsupported = names.find((name) => !isChain(name));
  return { chains: [...new Set(names)] as Chain[], ...(unsupported !== undefined ? { unsupported } : {}) };
}

/**
 * The body of POST /v1/discovery checked and reduced to what ranking takes; throws the REST
 * error (VALIDATION_ERROR, UNSUPPORTED_CHAIN). The spot.discovery stream channel uses it too.
 */
export function parseDiscoveryRequest(body: unknown): {
  chains: Chain[];
  columns: Partial<Record<Column, ColumnConfig>>;
} {
  const problems = new Problems();
  checkSchema(DiscoveryRequest, body, problems);
  const request = body as DiscoveryRequest;
  const columns: Partial<Record<Column, ColumnConfig>> = {};
  // Checks the schema cannot express run on any object body, so a request with several
  // problems (e.g. `{}`: no chain and no column) gets one detail per problem.
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    for (const column of COLUMNS) {
      const config = request[column];
      if (config === undefined || config === null) continue;
      columns[column] = config;
      if (checkSchema(ColumnConfig, config, new Problems()) && config.filters)
        checkRanges(column, config.filters, problems);
    }
    if (Object.keys(columns).length === 0)
      problems.add(
        'body',
        'No column is requested; send at least one of newPairs, graduating, graduated (use {} for its defaults).',
      );
  }
  problems.throwIfAny();
  const chains = [...new Set(request.chains)];
  for (const chain of chains) if (!isChain(chain)) throw unsupportedChain(chain);
  return { chains: chains as Chain[], columns };
}
