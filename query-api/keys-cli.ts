// `spot keys create|list|revoke`: manages the key file the API reads (changes reach a running
// service within about a second). The plain key is printed once, at creation, and never stored.
import path from 'node:path';
import type { Context } from '../core/context.ts';
import { createKeyStore, hashKey, keyId, type ApiKeyRecord } from '../core/auth/keys.ts';

export interface Output {
  write(text: string): unknown;
}

export const KEYS_USAGE = `Usage:
  spot keys create [--label L] [--expires-in 30d|--expires-at ISO] [--metered --credits N]
  spot keys list
  spot keys revoke <id>`;

/** Where the key store lives: <dataDir>/keys.sqlite. */
export function keyStorePath(ctx: Context): string {
  return path.join(ctx.config.dataDir, 'keys.sqlite');
}

const DURATION = /^(\d+)(s|m|h|d|w)$/;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

export function parseDuration(text: string): number | null {
  const match = DURATION.exec(text);
  if (!match) return null;
  const value = Number(match[1]) * UNIT_MS[match[2]!]!;
  return value > 0 ? value : null;
}

const iso = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString());

function describe(record: ApiKeyRecord, now: number): string {
  const status =
    record.revokedAt !== null ? 'revoked' : record.expiresAt !== null && now >= record.expiresAt ? 'expired' : 'active';
  const credits = record.metered ? (record.credits === null ? 'unlimited' : String(record.credits)) : '-';
  return [
    record.id,
    status,
    record.label ?? '-',
    iso(record.createdAt),
    iso(record.expiresAt),
    record.metered ? 'metered' : 'standard',
    credits,
  ].join('\t');
}

class UsageError extends Error {}

function parseCreate(
  args: string[],
  now: number,
): { label?: string; expiresAt: number | null; metered: boolean; credits: number | null } {
  let label: string | undefined;
  let expiresAt: number | null = null;
  let metered = false;
  let credits: number | null = null;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.indexOf('=');
    const flag = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    const inline = arg.startsWith('--') && eq > 0 ? arg.slice(eq + 1) : undefined;
    const value = () => {
      const v = inline ?? args[++i];
      if (v === undefined || v === '') throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--label':
        label = value();
        break;
      case '--expires-in': {
        const raw = value();
        const ms = parseDuration(raw);
        if (ms === null) throw new UsageError(`--expires-in must look like 30d, 12h, 90m, 2w or 3600s, got "${raw}"`);
        expiresAt = now + ms;
        break;
      }
      case '--expires-at': {
        const raw = value();
        const ms = Date.parse(raw);
        if (!Number.isFinite(ms)) throw new UsageError(`--expires-at must be an ISO 8601 time, got "${raw}"`);
        expiresAt = ms;
        break;
      }
      case '--metered':
        metered = true;
        break;
      case '--credits': {
        const raw = value();
        if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)))
          throw new UsageError(`--credits must be a non-negative integer, got "${raw}"`);
        credits = Number(raw);
        break;
      }
      default:
        throw new UsageError(`unknown option "${arg}"`);
    }
  }
  if (credits !== null && !metered) throw new UsageError('--credits needs --metered');
  if (metered && credits === null) throw new UsageError('--metered needs --credits N');
  return { ...(label !== undefined ? { label } : {}), expiresAt, metered, credits };
}

/** Runs one `spot keys` subcommand; returns the exit code. */
export async function keysCommand(
  ctx: Context,
  argv: string[],
  out: Output = process.stdout,
  errors: Output = process.stderr,
): Promise<number> {
  const [sub, ...args] = argv;
  const err = (text: string) => errors.write(text);
  if (sub !== 'create' && sub !== 'list' && sub !== 'revoke') {
    err(`${KEYS_USAGE}\n`);
    return 2;
  }
  const now = Date.now();
  let options: ReturnType<typeof parseCreate> | undefined;
  try {
    if (sub === 'create') options = parseCreate(args, now);
    if (sub === 'list' && args.length > 0) throw new UsageError('list takes no arguments');
    if (sub === 'revoke' && args.length !== 1) throw new UsageError('revoke takes one key id');
  } catch (error) {
    if (error instanceof UsageError) {
      err(`spot keys: ${error.message}\n${KEYS_USAGE}\n`);
      return 2;
    }
    throw error;
  }
  const store = createKeyStore(ctx, { path: keyStorePath(ctx) });
  try {
    if (sub === 'create') {
      const { key, record } = store.create(options);
      out.write(`${key}\n`);
      err(
        `created key ${record.id}${record.expiresAt !== null ? `, expires ${iso(record.expiresAt)}` : ''}; store it now, it is not shown again\n`,
      );
      return 0;
    }
    if (sub === 'list') {
      out.write('id\tstatus\tlabel\tcreatedAt\texpiresAt\ttier\tcredits\n');
      for (const record of store.list()) out.write(`${describe(record, now)}\n`);
      return 0;
    }
    const target = args[0]!;
    if (store.revoke(target)) {
      // Echo the id even when the key itself was given: a key is never printed back.
      const id = store.list().some((r) => r.id === target) ? target : keyId(hashKey(target));
      out.write(`revoked ${id}\n`);
      return 0;
    }
    err(`spot keys: no active key with id "${target}"\n`);
    return 1;
  } finally {
    store.close();
  }
}
