// Credentials of the SQL endpoint: user "spot_writer" with the write password may run anything;
// every other caller is an analyst and runs read-only. The password comes from
// SPOT_SQL_WRITE_PASSWORD or is generated once into <dataDir>/sql-writer.password (mode 0600), so
// roles started as other processes on the same data dir can read it.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { IncomingMessage } from 'node:http';
import type { Context } from '../core/context.ts';

export const WRITER_USER = 'spot_writer';

export function writerPasswordPath(ctx: Context): string {
  return path.join(ctx.config.dataDir, 'sql-writer.password');
}

/** The write password: configured, stored, or generated now and stored (never logged). */
export function writerPassword(ctx: Context): string {
  if (ctx.config.sqlWritePassword !== null) return ctx.config.sqlWritePassword;
  const file = writerPasswordPath(ctx);
  fs.mkdirSync(ctx.config.dataDir, { recursive: true });
  try {
    // 'wx' fails when the file exists, so two processes starting together keep one password.
    fs.writeFileSync(file, crypto.randomBytes(24).toString('base64url') + '\n', { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const password = fs.readFileSync(file, 'utf8').trim();
  if (!password) throw new Error(`${file} is empty; delete it to generate a new SQL write password`);
  return password;
}

/** URL other roles use as SPOT_CLICKHOUSE_URL to write through a running endpoint. */
export function writerUrl(ctx: Context, port = ctx.config.sqlPort): string {
  return `http://${WRITER_USER}:${encodeURIComponent(writerPassword(ctx))}@${ctx.config.host}:${port}`;
}

export interface Credentials {
  user: string;
  password: string;
}

/** ClickHouse's ways to send credentials: X-ClickHouse-User/Key, Basic auth, user/password params. */
export function requestCredentials(req: IncomingMessage, params: URLSearchParams): Credentials {
  const headerUser = req.headers['x-clickhouse-user'];
  if (typeof headerUser === 'string' && headerUser !== '') {
    const key = req.headers['x-clickhouse-key'];
    return { user: headerUser, password: typeof key === 'string' ? key : '' };
  }
  const authorization = req.headers.authorization;
  if (typeof authorization === 'string' && /^basic /i.test(authorization)) {
    const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon === -1
      ? { user: decoded, password: '' }
      : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  return { user: params.get('user') || 'default', password: params.get('password') ?? '' };
}

export function passwordMatches(given: string, expected: string): boolean {
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}
