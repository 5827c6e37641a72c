// Console sessions: the page never holds an API key. An operator opens a session with a one-time
// link minted from a secret in the data dir (printed at start, or by `spot console`); the link
// sets an HttpOnly, SameSite=Strict cookie naming a session held in memory. Links are HMAC
// signed, so `spot console` mints one in another process without talking to the service.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const CONSOLE_COOKIE = 'spot_console';
/** A link not used within this time is dead. */
export const LINK_TTL_MS = 15 * 60_000;
export const SESSION_TTL_MS = 12 * 3600_000;
/** Sessions held at most; opening one more drops the oldest (memory stays bounded). */
export const MAX_SESSIONS = 64;

export interface ConsoleSessions {
  /** A one-time token for /console/open?token=…. */
  mintToken(): string;
  /** Spends a token; the new session id, or null when the token is forged, used or expired. */
  redeem(token: string): string | null;
  valid(sessionId: string | undefined): boolean;
}

/** The data dir's console secret, created once (0600): who can read the data dir can open the console. */
export function consoleSecret(dataDir: string): Buffer {
  const file = path.join(dataDir, 'console.key');
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    fs.writeFileSync(file, `${crypto.randomBytes(32).toString('hex')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'hex');
}

const mac = (secret: Buffer, payload: string) =>
  crypto.createHmac('sha256', secret).update(payload).digest('base64url');

/** Mints a token with the secret alone (the CLI does this without a running service). */
export function mintConsoleToken(secret: Buffer, now = Date.now()): string {
  const payload = `${now + LINK_TTL_MS}.${crypto.randomBytes(12).toString('base64url')}`;
  return `${payload}.${mac(secret, payload)}`;
}

export function createConsoleSessions(secret: Buffer, now: () => number = Date.now): ConsoleSessions {
  const sessions = new Map<string, number>();
  /** Nonces spent, until their link would have expired anyway. */
  const spent = new Map<string, number>();

  const prune = (at: number) => {
    for (const [nonce, expires] of spent) if (expires <= at) spent.delete(nonce);
    for (const [id, expires] of sessions) if (expires <= at) sessions.delete(id);
  };

  return {
    mintToken: () => mintConsoleToken(secret, now()),
    redeem(token) {
      const at = now();
      prune(at);
      const [expiresRaw, nonce, signature] = token.split('.');
      if (!expiresRaw || !nonce || !signature || !/^\d+$/.test(expiresRaw)) return null;
      const expected = Buffer.from(mac(secret, `${expiresRaw}.${nonce}`));
      const given = Buffer.from(signature);
      if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return null;
      const expires = Number(expiresRaw);
      if (expires <= at || expires > at + LINK_TTL_MS || spent.has(nonce)) return null;
      spent.set(nonce, expires);
      if (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value!);
      const id = crypto.randomBytes(24).toString('base64url');
      sessions.set(id, at + SESSION_TTL_MS);
      return id;
    },
    valid(id) {
      if (id === undefined) return false;
      const expires = sessions.get(id);
      return expires !== undefined && expires > now();
    },
  };
}
