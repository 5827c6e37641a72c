// Where chain sources remember their position across restarts: one JSON value per source id
// in a small SQLite file (WAL), written only after the records it covers were acknowledged.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Context } from '../core/context.ts';

/** EVM: the last fully processed block and the hashes of recent processed blocks (reorg checks). */
export interface EvmCursor {
  block: number;
  /** [blockNumber, blockHash] pairs, ascending, at most the source's reorg window. */
  hashes: Array<[number, string]>;
}

/** Solana: the last processed slot and, per followed program, its last processed signature. */
export interface SolanaCursor {
  slot: number;
  signatures: Record<string, string>;
}

export interface CursorStore {
  get<T>(source: string): T | undefined;
  set<T>(source: string, value: T): void;
  close(): void;
}

export function createCursorStore(ctx: Context, options: { path: string }): CursorStore {
  fs.mkdirSync(path.dirname(options.path), { recursive: true });
  const db = new Database(options.path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(
    'CREATE TABLE IF NOT EXISTS cursors (source TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at INTEGER NOT NULL)',
  );
  const select = db.prepare<[string], { value: string }>('SELECT value FROM cursors WHERE source = ?');
  const upsert = db.prepare(
    'INSERT INTO cursors (source, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(source) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
  );
  ctx.logger.child({ component: 'cursor-store' }).debug({ path: options.path }, 'cursor store open');
  return {
    get<T>(source: string): T | undefined {
      const row = select.get(source);
      return row ? (JSON.parse(row.value) as T) : undefined;
    },
    set<T>(source: string, value: T) {
      upsert.run(source, JSON.stringify(value), Date.now());
    },
    close() {
      if (db.open) db.close();
    },
  };
}
