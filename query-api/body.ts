// Reads a JSON request body with a size bound, then caps its shape (list lengths, object sizes,
// string lengths, nesting) before any validation runs, so the work a body can cause stays linear
// in its size and small. Any failure is a VALIDATION_ERROR (SPEC.md lists no 413 for discovery,
// so an oversized body is a malformed one).
import type { IncomingMessage } from 'node:http';
import type Koa from 'koa';
import { validationError } from '../core/errors.ts';
import type { ValidationDetail } from '../core/schemas.ts';
import { fieldOfPath } from './validation.ts';

/** Largest request body read; a discovery request with full filter lists fits in a fraction of it. */
export const BODY_LIMIT_BYTES = 256 * 1024;

/**
 * An oversized body is read on and dropped, up to these bounds, before the refusal is sent and the
 * connection closed: a client still sending when the socket closes gets a reset instead of the 400
 * (measured with fetch, 3 MB bodies, 8 at a time: 18 % EPIPE with a length, 63 % chunked).
 */
export const OVERSIZED_DRAIN = { maxBytes: 32 * 1024 * 1024, maxMs: 2000 } as const;

/** Caps on the parsed body, checked before validation (docs/hostile-input.md). */
export const JSON_LIMITS = {
  /** Entries of one list (chains, protocols, excludeDevAddresses, ...). */
  maxListItems: 1000,
  /** Properties of one object (unknown filter names are ignored but still counted). */
  maxObjectKeys: 200,
  /** Characters of one string (a word, an address, a URL). */
  maxStringLength: 1024,
  /** Nesting of lists and objects. */
  maxDepth: 16,
} as const;

/** Detail entries one refusal lists; the rest are counted in a last entry. */
const MAX_SHAPE_PROBLEMS = 20;

const bodyError = (message: string) =>
  validationError([{ field: 'body', message }], 'The request body is malformed; send one JSON object and retry.');

export async function readJsonBody(ctx: Koa.Context, limit = BODY_LIMIT_BYTES): Promise<unknown> {
  const declared = Number(ctx.get('content-length') || NaN);
  const body = await readUpTo(ctx.req, Number.isFinite(declared) && declared > limit ? -1 : limit);
  if (body === OVERSIZED) {
    ctx.set('Connection', 'close');
    throw bodyError(`The body is larger than ${limit} bytes.`);
  }
  // The client went away mid-body: the refusal reaches no one, but it is the caller's doing, not a 500.
  if (body === CUT_SHORT) throw bodyError('The connection closed before the body ended.');
  const text = body.toString('utf8');
  if (text.trim() === '') throw bodyError('The body is empty; send a JSON object.');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw bodyError('The body is not valid JSON.');
  }
  const problems = checkJsonShape(value);
  if (problems.length > 0)
    throw validationError(problems, 'The request body exceeds a size limit; shorten the fields listed in details.');
  return value;
}

const OVERSIZED = Symbol('oversized');
const CUT_SHORT = Symbol('cut short');

/**
 * The whole body, CUT_SHORT if it never ends, or OVERSIZED once it passes `limit` (-1: a declared
 * length already did); an oversized body's rest is read and dropped up to OVERSIZED_DRAIN first.
 */
function readUpTo(req: IncomingMessage, limit: number): Promise<Buffer | typeof OVERSIZED | typeof CUT_SHORT> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let drainTimer: NodeJS.Timeout | undefined;
    const settle = (result: Buffer | typeof OVERSIZED | typeof CUT_SHORT) => {
      clearTimeout(drainTimer);
      req.off('data', onData).off('end', onEnd).off('error', onCutShort).off('close', onCutShort);
      req.pause();
      resolve(result);
    };
    const oversized = () => drainTimer !== undefined || size > limit;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (!oversized()) return void chunks.push(chunk);
      if (drainTimer === undefined) {
        chunks.length = 0;
        drainTimer = setTimeout(() => settle(OVERSIZED), OVERSIZED_DRAIN.maxMs);
      }
      if (size > limit + OVERSIZED_DRAIN.maxBytes) settle(OVERSIZED);
    };
    const onEnd = () => settle(oversized() ? OVERSIZED : Buffer.concat(chunks));
    const onCutShort = () => settle(oversized() ? OVERSIZED : CUT_SHORT);
    if (limit < 0) drainTimer = setTimeout(() => settle(OVERSIZED), OVERSIZED_DRAIN.maxMs);
    req.on('data', onData).on('end', onEnd).on('error', onCutShort).on('close', onCutShort);
    req.resume();
  });
}

/**
 * One iterative pass over a parsed JSON value: each list, object and string over its cap is a
 * problem named by its field (`newPairs.filters.protocols`); the pass does not enter a value over
 * its cap, so it visits each node at most once.
 */
function checkJsonShape(root: unknown, limits = JSON_LIMITS): ValidationDetail[] {
  const problems: ValidationDetail[] = [];
  let more = 0;
  const add = (path: (string | number)[], message: string) => {
    if (problems.length < MAX_SHAPE_PROBLEMS) problems.push({ field: fieldOfPath(path), message });
    else more++;
  };
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value: root, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      if (value.length > limits.maxStringLength)
        add(path, `The string has ${value.length} characters; at most ${limits.maxStringLength} are accepted.`);
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (path.length >= limits.maxDepth) {
      add(path, `The value is nested deeper than ${limits.maxDepth} levels.`);
      continue;
    }
    if (Array.isArray(value)) {
      if (value.length > limits.maxListItems) {
        add(path, `The list has ${value.length} entries; at most ${limits.maxListItems} are accepted.`);
        continue;
      }
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: [...path, i] });
      continue;
    }
    const keys = Object.keys(value);
    if (keys.length > limits.maxObjectKeys) {
      add(path, `The object has ${keys.length} fields; at most ${limits.maxObjectKeys} are accepted.`);
      continue;
    }
    for (let i = keys.length - 1; i >= 0; i--)
      stack.push({ value: (value as Record<string, unknown>)[keys[i]!], path: [...path, keys[i]!] });
  }
  if (more > 0) problems.push({ field: 'body', message: `${more} more fields exceed a limit; they are not listed.` });
  return problems;
}
