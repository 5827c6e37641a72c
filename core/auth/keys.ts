// API keys: stored as sha256 hashes in a SQLite file, checked in O(1) against an in-memory map.
// Key format (SPEC leaves it open): `spot_` + 32 base62 characters. Keys registered through
// SPOT_API_KEYS may be any 8-256 visible ASCII characters. A key's `id` is the first 12 hex
// characters of its hash: not secret, shown by `spot keys list`, used in logs.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Context } from '../context.ts';

export interface ApiKeyRecord {
  id: string;
  label: string | null;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
  metered: boolean;
  credits: number | null;
}

export type KeyCheck =
  | { ok: true; record: ApiKeyRecord }
  | { ok: false; reason: 'missing' | 'malformed' | 'unknown' | 'revoked' | 'expired' };

export interface KeyStore {
  create(options?: { label?: string; expiresAt?: number | null; metered?: boolean; credits?: number | null }): {
    key: string;
    record: ApiKeyRecord;
  };
  /** Idempotent; SPOT_API_KEYS at start. */
  register(key: string, options?: { label?: string }): ApiKeyRecord;
  /** Parses 'Bearer <key>' strictly, then verifies. */
  check(authorizationHeader: string | undefined, now?: number): KeyCheck;
  list(): ApiKeyRecord[];
  revoke(idOrKey: string): boolean;
  /** Takes `cost` credits from a metered key with a credit budget; returns what is left (never below 0), null otherwise. */
  spendCredits(id: string, cost: number): number | null;
  close(): void;
}

export const KEY_PREFIX = 'spot_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Any key the store accepts: visible ASCII, 8 to 256 characters (generated keys are a subset). */
export const KEY_SHAPE = /^[\x21-\x7e]{8,256}$/;
// Scheme is matched case-insensitively (RFC 9110), then exactly one space and the key.
const BEARER = /^[Bb][Ee][Aa][Rr][Ee][Rr] ([\x21-\x7e]{8,256})$/;

export function hashKey(key: string): string {
  return crypto.createHash('sha256').update(key, 'utf8').digest('hex');
}

export function keyId(hash: string): string {
  return hash.slice(0, 12);
}

export function generateKey(): string {
  // Rejection sampling keeps the 62 symbols uniform.
  let out = KEY_PREFIX;
  while (out.length < KEY_PREFIX.length + 32) {
    for (const byte of crypto.randomBytes(48)) {
      if (byte < 248 && out.length < KEY_PREFIX.length + 32) out += BASE62[byte % 62];
    }
  }
  return out;
}

interface Row {
  id: string;
  hash: string;
  label: string | null;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  metered: number;
  credits: number | null;
}

const toRecord = (row: Row): ApiKeyRecord => ({
  id: row.id,
  label: row.label,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at,
  metered: row.metered === 1,
  credits: row.credits,
});

const RELOAD_INTERVAL_MS = 500;
const RECENT_HASHES = 1024;

export function createKeyStore(ctx: Context, options: { path: string }): KeyStore {
  const log = ctx.logger.child({ component: 'keys' });
  fs.mkdirSync(path.dirname(options.path), { recursive: true });
  const db = new Database(options.path);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.exec(`CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    label TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    revoked_at INTEGER,
    metered INTEGER NOT NULL DEFAULT 0,
    credits INTEGER
  )`);

  const insert = db.prepare(
    'INSERT OR IGNORE INTO api_keys (id, hash, label, created_at, expires_at, revoked_at, metered, credits) VALUES (?, ?, ?, ?, ?, NULL, ?, ?)',
  );
  const selectAll = db.prepare('SELECT * FROM api_keys ORDER BY created_at, id');
  const selectByHash = db.prepare('SELECT * FROM api_keys WHERE hash = ?');
  const revokeStmt = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE (id = ? OR hash = ?) AND revoked_at IS NULL');
  const spendStmt = db.prepare(
    'UPDATE api_keys SET credits = MAX(credits - ?, 0) WHERE id = ? AND metered = 1 AND credits IS NOT NULL RETURNING credits',
  );

  // hash -> record; byId lets spendCredits and revoke reach the same objects.
  let byHash = new Map<string, ApiKeyRecord>();
  let byId = new Map<string, ApiKeyRecord>();
  const load = () => {
    const nextByHash = new Map<string, ApiKeyRecord>();
    const nextById = new Map<string, ApiKeyRecord>();
    for (const row of selectAll.all() as Row[]) {
      const record = toRecord(row);
      nextByHash.set(row.hash, record);
      nextById.set(row.id, record);
    }
    byHash = nextByHash;
    byId = nextById;
  };
  load();

  // data_version changes only when another connection commits: `spot keys revoke` in another
  // process becomes visible within RELOAD_INTERVAL_MS.
  let dataVersion = db.pragma('data_version', { simple: true }) as number;
  const reloadIfChanged = () => {
    try {
      const current = db.pragma('data_version', { simple: true }) as number;
      if (current !== dataVersion) {
        dataVersion = current;
        load();
      }
    } catch (error) {
      log.warn({ err: error }, 'key reload failed');
    }
  };
  const timer = setInterval(reloadIfChanged, RELOAD_INTERVAL_MS);
  timer.unref();

  // key -> sha256 of the keys seen lately, so a request pays a Map lookup instead of a hash.
  // Verdicts are not cached: revocation and expiry are read from the record every time.
  const recentHashes = new Map<string, string>();

  const addKey = (
    key: string,
    label: string | null,
    expiresAt: number | null,
    metered: boolean,
    credits: number | null,
  ): ApiKeyRecord => {
    const hash = hashKey(key);
    const id = keyId(hash);
    insert.run(id, hash, label, Date.now(), expiresAt, metered ? 1 : 0, credits);
    const record = toRecord(selectByHash.get(hash) as Row);
    byHash.set(hash, record);
    byId.set(record.id, record);
    return record;
  };

  return {
    create(opts = {}) {
      const key = generateKey();
      const metered = opts.metered ?? false;
      const credits = metered ? (opts.credits ?? null) : null;
      if (credits !== null && (!Number.isInteger(credits) || credits < 0))
        throw new RangeError('credits must be a non-negative integer');
      const record = addKey(key, opts.label ?? null, opts.expiresAt ?? null, metered, credits);
      log.info({ keyId: record.id, label: record.label }, 'API key created');
      return { key, record };
    },

    register(key, opts = {}) {
      if (!KEY_SHAPE.test(key)) throw new RangeError('an API key must be 8-256 visible ASCII characters');
      const existing = byHash.get(hashKey(key));
      if (existing) return existing;
      return addKey(key, opts.label ?? null, null, false, null);
    },

    check(header, now = Date.now()) {
      // A closed store cannot vouch for revocations: the caller answers 503, not 401.
      if (!db.open) throw new Error('the key store is closed');
      if (header === undefined || header === '') return { ok: false, reason: 'missing' };
      const match = BEARER.exec(header);
      if (!match) return { ok: false, reason: 'malformed' };
      const key = match[1]!;
      let hash = recentHashes.get(key);
      if (hash === undefined) {
        hash = hashKey(key);
        // Bounded: a flood of distinct keys empties it rather than growing it.
        if (recentHashes.size >= RECENT_HASHES) recentHashes.clear();
        recentHashes.set(key, hash);
      }
      let record = byHash.get(hash);
      if (!record) {
        // A key just created by `spot keys create` works at once (one cheap pragma read).
        reloadIfChanged();
        record = byHash.get(hash);
        if (!record) return { ok: false, reason: 'unknown' };
      }
      if (record.revokedAt !== null) return { ok: false, reason: 'revoked' };
      if (record.expiresAt !== null && now >= record.expiresAt) return { ok: false, reason: 'expired' };
      return { ok: true, record };
    },

    list() {
      return [...byId.values()].sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
    },

    revoke(idOrKey) {
      const hash = hashKey(idOrKey);
      const now = Date.now();
      const changed = revokeStmt.run(now, idOrKey, hash).changes > 0;
      if (changed) {
        const record = byId.get(idOrKey) ?? byHash.get(hash);
        if (record) record.revokedAt = now;
        log.info({ keyId: record?.id }, 'API key revoked');
      }
      return changed;
    },

    spendCredits(id, cost) {
      const record = byId.get(id);
      if (!record?.metered || record.credits === null) return null;
      if (cost <= 0) return record.credits;
      const row = spendStmt.get(cost, id) as { credits: number } | undefined;
      record.credits = row ? row.credits : Math.max(record.credits - cost, 0);
      return record.credits;
    },

    close() {
      clearInterval(timer);
      recentHashes.clear();
      if (db.open) db.close();
    },
  };
}
