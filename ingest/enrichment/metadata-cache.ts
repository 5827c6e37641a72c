// Persistent cache of resolved metadata URIs (SQLite under the data dir): a restart or a token
// reusing a URI costs no fetch. Failures are kept too — permanent ones for good, transient ones
// (host down, timeout) until `retryAfterMs` has passed — so a bad host is not asked on every restart.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { TokenMetadata } from './metadata-json.ts';

export type CachedMetadata =
  | { ok: true; metadata: TokenMetadata; fetchedAt: number }
  | { ok: false; reason: string; transient: boolean; fetchedAt: number };

export interface MetadataCache {
  /** The entry, or undefined when there is none or a transient failure is due to be retried. */
  get(uri: string, now?: number): CachedMetadata | undefined;
  set(uri: string, entry: CachedMetadata): void;
  close(): void;
}

export function createMetadataCache(options: { path: string; retryAfterMs?: number }): MetadataCache {
  const retryAfterMs = options.retryAfterMs ?? 15 * 60_000;
  if (options.path !== ':memory:') fs.mkdirSync(path.dirname(options.path), { recursive: true });
  const db = new Database(options.path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE IF NOT EXISTS metadata_uris (uri TEXT PRIMARY KEY, entry TEXT NOT NULL)');
  const select = db.prepare<[string], { entry: string }>('SELECT entry FROM metadata_uris WHERE uri = ?');
  const upsert = db.prepare(
    'INSERT INTO metadata_uris (uri, entry) VALUES (?, ?) ON CONFLICT(uri) DO UPDATE SET entry = excluded.entry',
  );
  return {
    get(uri, now = Date.now()) {
      if (!db.open) return undefined; // closed at shutdown while a fetch was in flight
      const row = select.get(uri);
      if (!row) return undefined;
      const entry = JSON.parse(row.entry) as CachedMetadata;
      if (!entry.ok && entry.transient && now - entry.fetchedAt >= retryAfterMs) return undefined;
      return entry;
    },
    set(uri, entry) {
      if (!db.open) return;
      upsert.run(uri, JSON.stringify(entry));
    },
    close() {
      if (db.open) db.close();
    },
  };
}
