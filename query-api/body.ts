// Reads a JSON request body with a size bound, then caps its shape (list lengths, object sizes,
// string lengths, nesting) before any validation runs, so the work a body can cause stays linear
// in its size and small. Any failure is a VALIDATION_ERROR (SPEC.md lists no 413 for discovery,
// so an oversized body is a malformed one).
import type Koa from 'koa';
import { validationError } from '../core/errors.ts';
import type { ValidationDetail } from '../core/schemas.ts';
import { fieldOfPath } from './validation.ts';

/** Largest request body read; a discovery request with full filter lists fits in a fraction of it. */
export const BODY_LIMIT_BYTES = 256 * 1024;

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
  if (Number.isFinite(declared) && declared > limit) {
    ctx.set('Connection', 'close');
    throw bodyError(`The body is larger than ${limit} bytes.`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      ctx.set('Connection', 'close');
      throw bodyError(`The body is larger than ${limit} bytes.`);
    }
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
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
