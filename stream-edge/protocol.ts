// Client frames in, server frames out: parsing and validation of subscribe / unsubscribe
// frames, and the text of ack and error frames. Update frames are assembled by update-frames.ts.
import { canonicalAddress, isChain, type Chain } from '../core/chains.ts';
import {
  DENOMINATIONS,
  IDENTITIES,
  METRICS,
  STREAM_CHANNELS,
  TIMEFRAMES,
  type Denomination,
  type ErrorCode,
  type Identity,
  type Metric,
  type StreamChannel,
  type Timeframe,
  type ValidationDetail,
} from '../core/schemas.ts';
import { SpotError, type ErrorDetails } from '../core/errors.ts';
import type { Column, ColumnConfig } from '../core/schemas.ts';
import { parseDiscoveryRequest } from '../query-api/routes.ts';

export const MAX_TOKEN_ADDRESSES = 100;

export type TradesSpec =
  | { channel: 'spot.trades'; by: 'token'; chain: Chain; token: string }
  | { channel: 'spot.trades'; by: 'wallet'; chain: Chain; wallet: string }
  | { channel: 'spot.trades'; by: 'identity'; identity: Identity; chains: Chain[] | null };

export interface CandlesSpec {
  channel: 'spot.candles';
  chain: Chain;
  token: string;
  timeframe: Timeframe;
  metric: Metric;
  denomination: Denomination;
}

export interface TokensSpec {
  channel: 'spot.tokens';
  chain: Chain;
  /** Canonical addresses, each once. */
  addresses: string[];
}

/** The body of POST /v1/discovery, checked by the REST code itself. */
export interface DiscoverySpec {
  channel: 'spot.discovery';
  chains: Chain[];
  columns: Partial<Record<Column, ColumnConfig>>;
}

export type SubscriptionSpec = TradesSpec | CandlesSpec | TokensSpec | DiscoverySpec;

export interface FrameError {
  kind: 'error';
  code: ErrorCode;
  message: string;
  details: ErrorDetails | null;
  /** The refused frame's `id` when it carried a string one. */
  id: string | null;
}

export type ClientFrame =
  | { kind: 'subscribe'; id: string | null; spec: SubscriptionSpec; resumeFrom: string | null; snapshot: boolean }
  | { kind: 'unsubscribe'; id: string | null; subscriptionId: string }
  | FrameError;

const VALIDATION_MESSAGE = 'The frame was refused; fix the fields listed in details and send it again.';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const validation = (details: ValidationDetail[], id: string | null, message = VALIDATION_MESSAGE): FrameError => ({
  kind: 'error',
  code: 'VALIDATION_ERROR',
  message,
  details,
  id,
});

const unsupported = (chain: string, id: string | null): FrameError => ({
  kind: 'error',
  code: 'UNSUPPORTED_CHAIN',
  message: `Chain "${chain}" is not supported; use one of solana, base, bsc, robinhood, arc.`,
  details: { chain },
  id,
});

/** Parses one client frame (JSON text). Never throws. */
export function parseClientFrame(text: string): ClientFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return validation(
      [{ field: 'body', message: 'The frame is not valid JSON.' }],
      null,
      'The frame is not valid JSON; send one JSON object per frame.',
    );
  }
  if (!isObject(value)) {
    return validation(
      [{ field: 'body', message: 'The frame must be a JSON object.' }],
      null,
      'The frame is not a JSON object; send one JSON object per frame.',
    );
  }
  const rawId = value.id;
  const id = typeof rawId === 'string' ? rawId : null;
  const frame = parseObjectFrame(value, id);
  if (rawId === undefined || rawId === null || typeof rawId === 'string') return frame;
  // A non-string id is one more problem of the frame: listed with the others in one
  // VALIDATION_ERROR, never instead of them (an unsupported chain still takes precedence).
  const idProblem: ValidationDetail = { field: 'id', message: 'id must be a string.' };
  if (frame.kind !== 'error') return validation([idProblem], null);
  if (frame.code !== 'VALIDATION_ERROR') return frame;
  return validation([idProblem, ...(frame.details as ValidationDetail[])], null);
}

function parseObjectFrame(value: Record<string, unknown>, id: string | null): ClientFrame {
  if (value.action === 'subscribe') return parseSubscribe(value, id);
  if (value.action === 'unsubscribe') {
    if (typeof value.subscriptionId !== 'string' || value.subscriptionId === '') {
      return validation(
        [{ field: 'subscriptionId', message: 'subscriptionId must be the string an ack returned.' }],
        id,
      );
    }
    return { kind: 'unsubscribe', id, subscriptionId: value.subscriptionId };
  }
  const shown = typeof value.action === 'string' ? `"${value.action}"` : 'missing';
  return validation(
    [{ field: 'action', message: `Unknown action (${shown}); use subscribe or unsubscribe.` }],
    id,
    `The action is ${value.action === undefined ? 'missing' : 'unknown'}; send "subscribe" or "unsubscribe".`,
  );
}

function parseSubscribe(frame: Record<string, unknown>, id: string | null): ClientFrame {
  const channel = frame.channel;
  const filters = frame.filters ?? {};
  const filtersProblem: ValidationDetail[] = isObject(filters)
    ? []
    : [{ field: 'filters', message: 'filters must be a JSON object.' }];
  if (typeof channel !== 'string' || !(STREAM_CHANNELS as readonly string[]).includes(channel)) {
    const shown = typeof channel === 'string' ? `"${channel}"` : 'missing';
    return validation(
      [
        { field: 'channel', message: `Unknown channel (${shown}); use one of ${STREAM_CHANNELS.join(', ')}.` },
        ...filtersProblem,
      ],
      id,
      'The channel is unknown; subscribe to spot.trades, spot.candles, spot.tokens or spot.discovery.',
    );
  }
  const optionProblems: ValidationDetail[] = [];
  const resumeFrom = frame.resumeFrom ?? null;
  if (resumeFrom !== null && (typeof resumeFrom !== 'string' || resumeFrom === ''))
    optionProblems.push({ field: 'resumeFrom', message: 'resumeFrom must be the cursor string of an update.' });
  const snapshot = frame.snapshot ?? false;
  if (typeof snapshot !== 'boolean') optionProblems.push({ field: 'snapshot', message: 'snapshot must be a boolean.' });
  if (resumeFrom !== null && snapshot === true)
    optionProblems.push({
      field: 'snapshot',
      message: 'snapshot does not combine with resumeFrom: a resume already starts from the cursor.',
    });
  if (!isObject(filters)) return validation([...filtersProblem, ...optionProblems], id);
  const result = parseFilters(channel as StreamChannel, filters);
  if ('code' in result) {
    if (result.code !== 'VALIDATION_ERROR' || optionProblems.length === 0) return { kind: 'error', ...result, id };
    return validation([...(result.details as ValidationDetail[]), ...optionProblems], id);
  }
  if (optionProblems.length) return validation(optionProblems, id);
  return { kind: 'subscribe', id, spec: result, resumeFrom: resumeFrom as string | null, snapshot: snapshot === true };
}

type FilterProblem = Omit<FrameError, 'kind' | 'id'>;

export function parseFilters(
  channel: StreamChannel,
  filters: Record<string, unknown>,
): SubscriptionSpec | FilterProblem {
  switch (channel) {
    case 'spot.trades':
      return parseTradesFilters(filters);
    case 'spot.candles':
      return parseCandlesFilters(filters);
    case 'spot.tokens':
      return parseTokensFilters(filters);
    case 'spot.discovery':
      return parseDiscoveryFilters(filters);
  }
}

/** Same rules, defaults, clamping and errors as POST /v1/discovery (field names as REST gives them). */
function parseDiscoveryFilters(filters: Record<string, unknown>): DiscoverySpec | FilterProblem {
  try {
    const { chains, columns } = parseDiscoveryRequest(filters);
    return { channel: 'spot.discovery', chains, columns };
  } catch (error) {
    if (!(error instanceof SpotError)) throw error;
    return { code: error.code, message: error.message, details: error.details ?? null };
  }
}

const TRADES_FIELDS = ['chain', 'token', 'wallet', 'identity', 'chains'];
const CANDLES_FIELDS = ['chain', 'token', 'timeframe', 'metric', 'denomination'];
const TOKENS_FIELDS = ['chain', 'addresses'];

function unknownFields(filters: Record<string, unknown>, allowed: string[], details: ValidationDetail[]): void {
  for (const name of Object.keys(filters)) {
    if (!allowed.includes(name))
      details.push({ field: name, message: `Unknown filter; this channel takes ${allowed.join(', ')}.` });
  }
}

/** An unsupported chain slug is answered before anything else (it carries its own code). */
function unsupportedChainOf(value: unknown): string | null {
  return typeof value === 'string' && value !== '' && !isChain(value) ? value : null;
}

/** Required chain; pushes a detail and returns null when it is missing or not a string. */
function requiredChain(value: unknown, details: ValidationDetail[]): Chain | null {
  if (value === undefined || value === null || value === '') {
    details.push({ field: 'chain', message: 'chain is required; use one of solana, base, bsc, robinhood, arc.' });
    return null;
  }
  if (typeof value !== 'string') {
    details.push({ field: 'chain', message: 'chain must be a chain slug string.' });
    return null;
  }
  return isChain(value) ? value : null;
}

function address(
  field: string,
  value: unknown,
  chain: Chain | null,
  details: ValidationDetail[],
  required = true,
): string | null {
  if (value === undefined || value === null || value === '') {
    if (required) details.push({ field, message: `${field} is required.` });
    return null;
  }
  if (typeof value !== 'string') {
    details.push({ field, message: `${field} must be an address string.` });
    return null;
  }
  if (chain === null) return null;
  const canonical = canonicalAddress(chain, value);
  if (canonical === null) details.push({ field, message: `${field} is not a ${chain} address.` });
  return canonical;
}

function oneOf<T extends string>(
  field: string,
  value: unknown,
  allowed: readonly T[],
  fallback: T,
  details: ValidationDetail[],
): T {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  details.push({ field, message: `Unknown ${field}; use one of ${allowed.join(', ')}.` });
  return fallback;
}

function parseTradesFilters(filters: Record<string, unknown>): TradesSpec | FilterProblem {
  const bad = unsupportedChainOf(filters.chain);
  if (bad !== null) return unsupported(bad, null);
  const details: ValidationDetail[] = [];
  unknownFields(filters, TRADES_FIELDS, details);

  if (filters.identity !== undefined) {
    const identity = oneOf('identity', filters.identity, IDENTITIES, IDENTITIES[0], details);
    for (const other of ['chain', 'token', 'wallet'] as const) {
      if (filters[other] !== undefined)
        details.push({
          field: other,
          message: `${other} does not combine with identity; use chains to narrow an identity feed.`,
        });
    }
    let chains: Chain[] | null = null;
    if (filters.chains !== undefined) {
      const raw = filters.chains;
      const list =
        typeof raw === 'string'
          ? raw
              .split(',')
              .map((c) => c.trim())
              .filter(Boolean)
          : raw;
      if (!Array.isArray(list) || list.some((c) => typeof c !== 'string')) {
        details.push({
          field: 'chains',
          message: 'chains must be a list of chain slugs (or a comma-separated string).',
        });
      } else if (list.length === 0) {
        details.push({
          field: 'chains',
          message: 'chains names no chain; name at least one or leave chains out for every chain.',
        });
      } else {
        const unknown = (list as string[]).find((c) => !isChain(c));
        if (unknown !== undefined) return unsupported(unknown, null);
        chains = [...new Set(list as Chain[])];
      }
    }
    if (details.length) return validationProblem(details);
    return { channel: 'spot.trades', by: 'identity', identity, chains };
  }

  if (filters.chains !== undefined)
    details.push({ field: 'chains', message: 'chains applies only to identity subscriptions.' });
  const chain = requiredChain(filters.chain, details);
  const hasToken = filters.token !== undefined;
  const hasWallet = filters.wallet !== undefined;
  if (hasToken && hasWallet) {
    details.push({ field: 'wallet', message: 'Subscribe by token or by wallet, not both; use two subscriptions.' });
  }
  if (!hasToken && !hasWallet) {
    details.push({ field: 'token', message: 'token is required (or wallet, or identity instead of chain).' });
  }
  const token = hasToken ? address('token', filters.token, chain, details) : null;
  const wallet = hasWallet ? address('wallet', filters.wallet, chain, details) : null;
  if (details.length || chain === null) return validationProblem(details);
  if (token !== null) return { channel: 'spot.trades', by: 'token', chain, token };
  return { channel: 'spot.trades', by: 'wallet', chain, wallet: wallet! };
}

function parseCandlesFilters(filters: Record<string, unknown>): CandlesSpec | FilterProblem {
  const bad = unsupportedChainOf(filters.chain);
  if (bad !== null) return unsupported(bad, null);
  const details: ValidationDetail[] = [];
  unknownFields(filters, CANDLES_FIELDS, details);
  const chain = requiredChain(filters.chain, details);
  const token = address('token', filters.token, chain, details);
  const timeframe = oneOf('timeframe', filters.timeframe, TIMEFRAMES, '1m', details);
  const metric = oneOf('metric', filters.metric, METRICS, 'marketCap', details);
  const denomination = oneOf('denomination', filters.denomination, DENOMINATIONS, 'usd', details);
  if (details.length || chain === null || token === null) return validationProblem(details);
  return { channel: 'spot.candles', chain, token, timeframe, metric, denomination };
}

function parseTokensFilters(filters: Record<string, unknown>): TokensSpec | FilterProblem {
  const bad = unsupportedChainOf(filters.chain);
  if (bad !== null) return unsupported(bad, null);
  const details: ValidationDetail[] = [];
  unknownFields(filters, TOKENS_FIELDS, details);
  const chain = requiredChain(filters.chain, details);
  const raw = filters.addresses;
  const addresses = new Set<string>();
  if (raw === undefined || raw === null) {
    details.push({ field: 'addresses', message: 'addresses is required: a list of 1 to 100 token addresses.' });
  } else if (!Array.isArray(raw)) {
    details.push({ field: 'addresses', message: 'addresses must be a list of token addresses.' });
  } else if (raw.length === 0) {
    details.push({ field: 'addresses', message: 'addresses names no token; send 1 to 100 addresses.' });
  } else if (raw.length > MAX_TOKEN_ADDRESSES) {
    details.push({
      field: 'addresses',
      message: `addresses holds ${raw.length} entries; at most ${MAX_TOKEN_ADDRESSES} per subscription, so split them over several subscriptions.`,
    });
  } else {
    raw.forEach((entry, index) => {
      if (typeof entry !== 'string') {
        details.push({ field: 'addresses', message: `addresses[${index}] must be an address string.` });
      } else if (chain !== null) {
        const canonical = canonicalAddress(chain, entry);
        if (canonical === null)
          details.push({ field: 'addresses', message: `addresses[${index}] is not a ${chain} address.` });
        else addresses.add(canonical);
      }
    });
  }
  if (details.length || chain === null) return validationProblem(details);
  return { channel: 'spot.tokens', chain, addresses: [...addresses] };
}

function validationProblem(details: ValidationDetail[]): FilterProblem {
  return { code: 'VALIDATION_ERROR', message: VALIDATION_MESSAGE, details };
}

// ---- server frames ----

export function ackFrame(channel: string, subscriptionId: string, id: string | null, message: string): string {
  return JSON.stringify({ type: 'ack', channel, subscriptionId, id, status: 'success', message });
}

export function errorFrame(code: ErrorCode, message: string, details: ErrorDetails | null, id: string | null): string {
  return JSON.stringify({ type: 'error', code, message, details, id });
}
