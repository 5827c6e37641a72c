// Request checks shared by the routes: query parameters, and the
// mapping of TypeBox errors to the spec's {field, message} details (one per problem).
import { Kind, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { validationError } from '../core/errors.ts';
import type { ValidationDetail } from '../core/schemas.ts';

export type Query = Record<string, string | string[] | undefined>;

/** Detail entries one response lists; further problems are counted in one last entry. */
export const MAX_DETAILS = 20;

/**
 * Collects problems, one per field, so one response lists them; at most MAX_DETAILS are kept
 * (a hostile body can hold thousands), the rest only counted, so the work stays linear.
 */
export class Problems {
  readonly list: ValidationDetail[] = [];
  private readonly fields = new Set<string>();
  private more = 0;
  /** True once MAX_DETAILS problems are held: callers may stop looking for more. */
  get full(): boolean {
    return this.list.length >= MAX_DETAILS;
  }
  add(field: string, message: string): void {
    if (this.fields.has(field)) return;
    this.fields.add(field);
    if (this.full) this.more++;
    else this.list.push({ field, message });
  }
  /** Counts problems not looked at one by one. */
  addUncounted(count: number): void {
    this.more += count;
  }
  throwIfAny(): void {
    if (this.list.length === 0) return;
    const details =
      this.more > 0
        ? [...this.list, { field: 'body', message: `${this.more} more problems are not listed; fix these first.` }]
        : this.list;
    throw validationError(details);
  }
}

/** One value of a query parameter; a parameter sent twice is a problem. */
export function single(query: Query, name: string, problems: Problems): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) {
    problems.add(name, `"${name}" was sent ${value.length} times; send it once.`);
    return undefined;
  }
  return value;
}

const INTEGER = /^-?\d+$/;

/**
 * Integer query parameter (decimal digits, optional minus); undefined when absent. Any number of
 * digits is an integer: a value too large to hold exactly comes back approximate (at most
 * Infinity) and is refused by `bounds` or clamped by the caller, never called "not an integer".
 */
export function integerParam(
  query: Query,
  name: string,
  problems: Problems,
  bounds: { min?: number; max?: number } = {},
): number | undefined {
  const raw = single(query, name, problems);
  if (raw === undefined) return undefined;
  if (!INTEGER.test(raw)) {
    problems.add(name, `"${name}" must be an integer, got "${raw}".`);
    return undefined;
  }
  const value = Number(raw);
  if ((bounds.min !== undefined && value < bounds.min) || (bounds.max !== undefined && value > bounds.max)) {
    const range =
      bounds.max === undefined
        ? `at least ${bounds.min}`
        : bounds.min === undefined
          ? `at most ${bounds.max}`
          : `between ${bounds.min} and ${bounds.max}`;
    problems.add(name, `"${name}" must be ${range}, got ${raw.length > 24 ? `${raw.slice(0, 24)}…` : raw}.`);
    return undefined;
  }
  return value;
}

/** Enum query parameter with a default. */
export function enumParam<T extends string>(
  query: Query,
  name: string,
  allowed: readonly T[],
  fallback: T,
  problems: Problems,
): T {
  const raw = single(query, name, problems);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    problems.add(name, `"${name}" must be one of ${allowed.join(', ')}, got "${raw}".`);
    return fallback;
  }
  return raw as T;
}

/** Integer clamped into [min, max] (the spec's "lowered to 100" limits); default when absent. */
export function clampedLimit(query: Query, problems: Problems, fallback: number, min = 1, max = 100): number {
  const value = integerParam(query, 'limit', problems);
  if (value === undefined) return fallback;
  return Math.min(max, Math.max(min, value));
}

/** JSON-pointer path of a TypeBox error → the field as sent: `newPairs.filters.holderCount.min`, `chains[1]`. */
export function fieldOfPointer(pointer: string, root = 'body'): string {
  if (pointer === '' || pointer === '/') return root;
  let field = '';
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    field += /^\d+$/.test(part) ? `[${part}]` : field === '' ? part : `.${part}`;
  }
  return field || root;
}

/** A parsed path (`['newPairs', 'filters', 'protocols', 3]`) → the field as sent. */
export function fieldOfPath(path: readonly (string | number)[], root = 'body'): string {
  let field = '';
  for (const part of path) field += typeof part === 'number' ? `[${part}]` : field === '' ? part : `.${part}`;
  return field || root;
}

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

interface SchemaError {
  path: string;
  message: string;
  schema: TSchema;
  errors: Iterable<SchemaError>[];
}

const isNullSchema = (schema: TSchema) => (schema as { [Kind]?: string })[Kind] === 'Null';

/** Literals a union allows, from at most `budget` of its branch errors (enums have one each). */
function literalsOf(errors: Iterable<SchemaError>, budget = { left: 64 }): string[] {
  const out: string[] = [];
  for (const e of errors) {
    if (budget.left-- <= 0) break;
    const value = (e.schema as { const?: unknown }).const;
    if (typeof value === 'string') out.push(value);
    for (const it of e.errors) out.push(...literalsOf(it, budget));
  }
  return out;
}

interface Branch {
  head: SchemaError[];
  rest: Iterator<SchemaError>;
}

/** The first two errors of a branch (enough to tell the null branch) and the rest, unread. */
function peek(errors: Iterable<SchemaError>): Branch {
  const rest = errors[Symbol.iterator]();
  const head: SchemaError[] = [];
  for (let i = 0; i < 2; i++) {
    const next = rest.next();
    if (next.done) break;
    head.push(next.value);
  }
  return { head, rest };
}

function* drain(branch: Branch): Generator<SchemaError> {
  yield* branch.head;
  for (let next = branch.rest.next(); !next.done; next = branch.rest.next()) yield next.value;
}

/**
 * Flattens TypeBox errors to the offending leaves, lazily, so a caller that has enough stops
 * the work. For a union (nullable fields, enums) the null branch is set aside when the value is
 * not null; a single remaining branch is followed, otherwise the union itself is the problem
 * (named by its allowed literals when it has them).
 */
function* leaves(error: SchemaError): Generator<{ path: string; message: string }> {
  if (error.errors.length === 0) {
    yield {
      path: error.path,
      message: error.message.startsWith('Unexpected property')
        ? 'This field is not part of the request; remove it'
        : error.message,
    };
    return;
  }
  const branches = error.errors.map(peek).filter((b) => !(b.head.length === 1 && isNullSchema(b.head[0]!.schema)));
  if (branches.length === 1) {
    for (const e of drain(branches[0]!)) yield* leaves(e);
    return;
  }
  const literals = literalsOf(
    (function* () {
      for (const b of branches) yield* drain(b);
    })(),
  );
  yield {
    path: error.path,
    message: literals.length > 0 ? `Expected one of ${literals.join(', ')}` : 'Expected a value of another type',
  };
}

/**
 * Checks `value` against a schema; adds one problem per offending field. Once `problems` is full
 * the remaining errors are only counted, unexpanded: linear in the number of errors.
 */
export function checkSchema(schema: TSchema, value: unknown, problems: Problems, root = 'body'): boolean {
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  if (check.Check(value)) return true;
  const seen = new Set<string>();
  // An error under a field already reported is the same problem seen deeper.
  const underSeen = (path: string) => {
    for (let i = path.indexOf('/', 1); i !== -1; i = path.indexOf('/', i + 1))
      if (seen.has(path.slice(0, i))) return true;
    return seen.has(path);
  };
  let uncounted = 0;
  for (const error of check.Errors(value)) {
    if (problems.full) {
      uncounted++;
      continue;
    }
    for (const { path, message } of leaves(error as unknown as SchemaError)) {
      if (problems.full) break;
      if (underSeen(path)) continue;
      seen.add(path);
      problems.add(fieldOfPointer(path, root), `${message}.`);
    }
  }
  problems.addUncounted(uncounted);
  return false;
}
