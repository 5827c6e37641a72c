// Error responses: every failure leaves as the spec's envelope with the status of its code;
// anything unexpected is a 500 INTERNAL_ERROR, a store outage a 503 SERVICE_UNAVAILABLE.
import type Koa from 'koa';
import { SpotError, isRetryable } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';

/** True for errors that mean the store (or another backend) cannot be reached right now: classified
 * where the driver failed (clickhouse/client.ts), never from message text here. */
export function isUnavailable(error: unknown): boolean {
  return isRetryable(error);
}

export const serviceUnavailable = () =>
  new SpotError('SERVICE_UNAVAILABLE', 'The data store is temporarily unreachable; retry with exponential backoff.');

export const internalError = () =>
  new SpotError(
    'INTERNAL_ERROR',
    'An unexpected error occurred; retry with backoff a few times, then report the X-Request-ID.',
  );

/** Normalises any thrown value into a SpotError, logging the ones the caller did not cause. */
export function toSpotError(error: unknown, log: Logger, requestId: string): SpotError {
  if (error instanceof SpotError) return error;
  if (isUnavailable(error)) {
    log.warn({ err: error, requestId }, 'store unavailable');
    return serviceUnavailable();
  }
  log.error({ err: error, requestId }, 'unexpected error');
  return internalError();
}

/** Writes the envelope (status, JSON body, Retry-After on a 429); headers already set are kept. */
export function sendError(ctx: Koa.Context, error: SpotError): void {
  ctx.status = error.status;
  if (error.code === 'RATE_LIMITED')
    ctx.set('Retry-After', String(Math.max(1, Math.ceil(error.retryAfterSeconds ?? 1))));
  ctx.type = 'application/json';
  ctx.body = JSON.stringify(error.toEnvelope());
}

export const rateLimited = (retryAfterSeconds: number) =>
  new SpotError(
    'RATE_LIMITED',
    `The request budget is spent; retry after ${retryAfterSeconds} s (Retry-After).`,
    undefined,
    retryAfterSeconds,
  );

export const unauthorized = (reason: 'missing' | 'malformed' | 'unknown' | 'revoked' | 'expired') => {
  const what = {
    missing: 'No API key was sent',
    malformed: 'The Authorization header is malformed',
    unknown: 'The API key is not known',
    revoked: 'The API key was revoked',
    expired: 'The API key has expired',
  }[reason];
  return new SpotError('UNAUTHORIZED', `${what}; send "Authorization: Bearer <API_KEY>" with a valid key.`);
};

export const creditsExhausted = () =>
  new SpotError('CREDITS_EXHAUSTED', 'The key has no credits left; add credits to the key or use another key.');
