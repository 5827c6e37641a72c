// Reads a JSON request body with a size bound. Any failure is a VALIDATION_ERROR on `body`
// (SPEC.md lists no 413 for discovery, so an oversized body is a malformed one).
import type Koa from 'koa';
import { validationError } from '../core/errors.ts';

export const BODY_LIMIT_BYTES = 1024 * 1024;

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
  try {
    return JSON.parse(text);
  } catch {
    throw bodyError('The body is not valid JSON.');
  }
}
