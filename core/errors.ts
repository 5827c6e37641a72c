// One error taxonomy: the spec's codes outward, retryable or not inward.
import type { ErrorCode, ValidationDetail } from './schemas.ts';

export const STATUS_OF: Record<ErrorCode, number> = {
  VALIDATION_ERROR: 400,
  UNSUPPORTED_CHAIN: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  CREDITS_EXHAUSTED: 402,
  NOT_FOUND: 404,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
};

export type ErrorDetails = ValidationDetail[] | { chain: string };

export class SpotError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;
  readonly retryAfterSeconds: number | undefined;
  constructor(code: ErrorCode, message: string, details?: ErrorDetails, retryAfterSeconds?: number) {
    super(message);
    this.name = 'SpotError';
    this.code = code;
    this.details = details;
    this.retryAfterSeconds = retryAfterSeconds;
  }
  get status(): number {
    return STATUS_OF[this.code];
  }
  toEnvelope(): { error: { code: ErrorCode; message: string; details?: ErrorDetails } } {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details !== undefined ? { details: this.details } : {}),
      },
    };
  }
}

export const validationError = (
  details: ValidationDetail[],
  message = 'The request is malformed; fix the fields listed in details and retry.',
) => new SpotError('VALIDATION_ERROR', message, details);

export const unsupportedChain = (chain: string) =>
  new SpotError(
    'UNSUPPORTED_CHAIN',
    `Chain "${chain}" is not supported; use one of solana, base, bsc, robinhood, arc.`,
    { chain },
  );

export const notFound = (message = 'The resource does not exist; check the path and identifiers.') =>
  new SpotError('NOT_FOUND', message);

/** Inward: a failure that a retry may cure (a broker or store hiccup) versus one it will not. */
export class RetryableError extends Error {
  readonly retryable = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RetryableError';
  }
}

export function isRetryable(error: unknown): boolean {
  return (
    error instanceof RetryableError ||
    (typeof error === 'object' && error !== null && (error as { retryable?: unknown }).retryable === true)
  );
}

/** Inward, retryable: the store cannot be reached or is overloaded right now (classified in clickhouse/client.ts). */
export class StoreUnavailableError extends RetryableError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/** Inward, fatal: another process holds the embedded store's data dir (chDB opens a data dir in one process). */
export class StoreBusyError extends Error {
  constructor(
    readonly dataPath: string,
    options?: { cause?: unknown },
  ) {
    super(`the store in ${dataPath} is open in another process`, options);
    this.name = 'StoreBusyError';
  }
}
