// Parked wallet facts on local disk (one SQLite file beside the snapshot): a wallet idle in memory
// moves here after a snapshot and comes back on its next read. A day of the mainnet profile brings
// millions of wallets, most holding dust of a dead token; on disk they cost no memory. The holder
// records of those wallets (token, wallet → balance, attributes) park beside them: the busiest
// tokens gain thousands of one-off holders a minute and keep them as long as they trade.
//
// Rows are written between a snapshot's confirmation and the next capture, versioned by the state's
// `processed` then. Each row keeps the version before it while that one is the newest a written
// snapshot may name, so a restart from an older snapshot (the last write crashed) rolls every row
// back to what that snapshot expects.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

export interface ParkedWalletRow {
  key: string;
  chain: string;
  /** The wallet's last activity (event time): forgotten rows are idle and unpinned. */
  at: number;
  /** Something depends on it (a holding, a creation, a label): never forgotten. */
  pinned: boolean;
  facts: Uint8Array;
}

/** A parked holder record, with the categories its token's holder index counted it in (-1: not counted). */
export interface ParkedHolderRow {
  /** The token's key (`chain:address`). */
  token: string;
  wallet: string;
  bal: bigint;
  attrs: number;
  mask: number;
}

export interface WalletStore {
  get(key: string): Buffer | undefined;
  /** Writes parked wallets at the version of the snapshot that follows. */
  put(rows: ParkedWalletRow[], version: number): void;
  /** The snapshot of this version is on disk: rows up to it are what a restart finds. */
  confirm(version: number): void;
  /** At start, with the loaded snapshot's version (0 without one): rows written after it are undone. */
  rollback(version: number): void;
  /** Drops rows of wallets forgotten in memory (idle and unpinned; docs/memory.md). */
  remove(keys: string[]): void;
  /** Drops the chain's unpinned rows idle since `idleBefore` whose version a snapshot confirmed. */
  forget(chain: string, idleBefore: number): number;
  /** Rows on disk. */
  count(): number;
  /** The parked holder record of the wallet in the token, if there is one. */
  holder(token: string, wallet: string): ParkedHolderRow | undefined;
  /** Every parked holder record of the token (a record back in memory keeps its row until parked again). */
  holdersOf(token: string): IterableIterator<ParkedHolderRow>;
  /** The token's parked records counted by its holder index (mask ≥ 0), largest balance first. */
  countedByBalance(token: string): IterableIterator<ParkedHolderRow>;
  /** Writes parked holder records at the version of the snapshot that follows. */
  putHolders(rows: ParkedHolderRow[], version: number): void;
  /** Holder rows on disk. */
  holderCount(): number;
  close(): void;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS wallets (
  key TEXT PRIMARY KEY, chain TEXT NOT NULL, at INTEGER NOT NULL, pinned INTEGER NOT NULL,
  version INTEGER NOT NULL, facts BLOB NOT NULL,
  prev_version INTEGER, prev_at INTEGER, prev_pinned INTEGER, prev_facts BLOB);
CREATE INDEX IF NOT EXISTS wallets_idle ON wallets (chain, at) WHERE pinned = 0;
CREATE TABLE IF NOT EXISTS holders (
  token TEXT NOT NULL, wallet TEXT NOT NULL, version INTEGER NOT NULL, rec TEXT NOT NULL,
  prev_version INTEGER, prev_rec TEXT, PRIMARY KEY (token, wallet)) WITHOUT ROWID;`;

/**
 * The counted balance's order as text (its digit count, two digits, then the digits), null when
 * the index does not count the holder: a refill of a token's top-10 list reads the largest few
 * instead of every parked row (tens of thousands on the busiest tokens). Added to older files.
 */
const SCHEMA_BALANCE_ORDER = `
ALTER TABLE holders ADD COLUMN top TEXT;
ALTER TABLE holders ADD COLUMN prev_top TEXT;
UPDATE holders SET top = holder_top(rec), prev_top = holder_top(prev_rec);
CREATE INDEX holders_top ON holders (token, top) WHERE top IS NOT NULL;`;

const HOLDERS_PAGE = 2_000;

/** A holder row's record as text: balance (may be negative on EVM), attributes, mask. */
const recText = (row: ParkedHolderRow): string => `${row.bal} ${row.attrs} ${row.mask}`;

function balanceOrder(row: Pick<ParkedHolderRow, 'bal' | 'mask'>): string | null {
  if (row.mask === -1 || row.bal <= 0n) return null;
  const digits = row.bal.toString();
  return `${String(digits.length).padStart(2, '0')}${digits}`;
}

function holderRow(token: string, wallet: string, rec: string): ParkedHolderRow {
  const [bal, attrs, mask] = rec.split(' ');
  return { token, wallet, bal: BigInt(bal!), attrs: Number(attrs), mask: Number(mask) };
}

/**
 * The statements of a table whose rows keep the version before them (this file's header): an
 * upsert of a row at a version (`@durable`: the newest version a written snapshot names), and the
 * rollback to a snapshot's version. `fixed` columns are written once, with the key.
 */
function versionedTable(db: Database.Database, table: string, keys: string[], fixed: string[], values: string[]) {
  const inserted = [...keys, ...fixed, 'version', ...values];
  const kept = ['version', ...values];
  const upsert = db.prepare(`
INSERT INTO ${table} (${inserted.join(', ')}) VALUES (${inserted.map((c) => `@${c}`).join(', ')})
ON CONFLICT (${keys.join(', ')}) DO UPDATE SET
  ${kept.map((c) => `prev_${c} = CASE WHEN version <= @durable THEN ${c} ELSE prev_${c} END`).join(',\n  ')},
  ${kept.map((c) => `${c} = excluded.${c}`).join(', ')}`);
  const dropNew = db.prepare(`DELETE FROM ${table} WHERE version > ? AND (prev_version IS NULL OR prev_version > ?)`);
  const restorePrev = db.prepare(
    `UPDATE ${table} SET ${kept.map((c) => `${c} = prev_${c}, prev_${c} = NULL`).join(', ')} WHERE version > ?`,
  );
  return {
    upsert,
    rollback(version: number): void {
      dropNew.run(version, version);
      restorePrev.run(version);
    },
  };
}

/** Opens the store; `fresh` starts it empty (no snapshot names any of its rows). */
export function openWalletStore(file: string, fresh = false): WalletStore {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (fresh) for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('cache_size = -8192');
  db.exec(SCHEMA);
  const columns = db.prepare<[], { name: string }>('PRAGMA table_info(holders)').all();
  if (!columns.some((c) => c.name === 'top')) {
    db.function('holder_top', { deterministic: true }, (rec: unknown) =>
      typeof rec === 'string' ? balanceOrder(holderRow('', '', rec)) : null,
    );
    db.transaction(() => db.exec(SCHEMA_BALANCE_ORDER))();
  }
  // The newest version a written snapshot names: rows above it may still be undone.
  let durable = 0;
  let get = db.prepare<[string], { facts: Buffer }>('SELECT facts FROM wallets WHERE key = ?');
  let closed = false;
  const wallets = versionedTable(db, 'wallets', ['key'], ['chain'], ['at', 'pinned', 'facts']);
  const removeOne = db.prepare('DELETE FROM wallets WHERE key = ?');
  const forgetIdle = db.prepare('DELETE FROM wallets WHERE chain = ? AND pinned = 0 AND at <= ? AND version <= ?');
  const countAll = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM wallets');
  const holders = versionedTable(db, 'holders', ['token', 'wallet'], [], ['rec', 'top']);
  const countHolders = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM holders');
  const holderSql = 'SELECT rec FROM holders WHERE token = ? AND wallet = ?';
  // Pages in key order: nothing stays open between them (the caller may read or write in between).
  const holdersOfSql = 'SELECT wallet, rec FROM holders WHERE token = ? AND wallet > ? ORDER BY wallet LIMIT ?';
  // Pages in (top, wallet) descending order, the index's (a WITHOUT ROWID index ends with the key).
  const byBalanceSql =
    'SELECT wallet, rec, top FROM holders WHERE token = ? AND top IS NOT NULL AND (top, wallet) < (?, ?) ORDER BY top DESC, wallet DESC LIMIT ?';
  let getHolder = db.prepare<[string, string], { rec: string }>(holderSql);
  let listHolders = db.prepare<[string, string, number], { wallet: string; rec: string }>(holdersOfSql);
  let listByBalance = db.prepare<[string, string, string, number], { wallet: string; rec: string; top: string }>(
    byBalanceSql,
  );

  const putAll = db.transaction((rows: ParkedWalletRow[], version: number) => {
    for (const row of rows)
      wallets.upsert.run({
        key: row.key,
        chain: row.chain,
        at: row.at,
        pinned: row.pinned ? 1 : 0,
        version,
        facts: row.facts,
        durable,
      });
  });
  const putAllHolders = db.transaction((rows: ParkedHolderRow[], version: number) => {
    for (const row of rows)
      holders.upsert.run({
        token: row.token,
        wallet: row.wallet,
        version,
        rec: recText(row),
        top: balanceOrder(row),
        durable,
      });
  });
  const removeAll = db.transaction((keys: string[]) => {
    for (const key of keys) removeOne.run(key);
  });
  const rollbackAll = db.transaction((version: number) => {
    wallets.rollback(version);
    holders.rollback(version);
  });
  /** Reads after close (a stopped aggregator's tokens) go to a read-only connection. */
  function reopenForReads(): void {
    if (!closed || get.database.open) return;
    const readOnly = new Database(file, { readonly: true });
    get = readOnly.prepare('SELECT facts FROM wallets WHERE key = ?');
    getHolder = readOnly.prepare(holderSql);
    listHolders = readOnly.prepare(holdersOfSql);
    listByBalance = readOnly.prepare(byBalanceSql);
  }

  return {
    get(key) {
      reopenForReads();
      return get.get(key)?.facts;
    },
    holder(token, wallet) {
      reopenForReads();
      const found = getHolder.get(token, wallet);
      return found && holderRow(token, wallet, found.rec);
    },
    *holdersOf(token) {
      reopenForReads();
      for (let after = ''; ; ) {
        const page = listHolders.all(token, after, HOLDERS_PAGE);
        for (const { wallet, rec } of page) yield holderRow(token, wallet, rec);
        if (page.length < HOLDERS_PAGE) return;
        after = page[page.length - 1]!.wallet;
      }
    },
    *countedByBalance(token) {
      reopenForReads();
      // Small pages first: a refill reads the first few rows.
      for (let top = '~', after = '', size = 64; ; size = Math.min(size * 4, HOLDERS_PAGE)) {
        const page = listByBalance.all(token, top, after, size);
        for (const row of page) yield holderRow(token, row.wallet, row.rec);
        if (page.length < size) return;
        ({ top, wallet: after } = page[page.length - 1]!);
      }
    },
    putHolders(rows, version) {
      if (rows.length > 0) putAllHolders(rows, version);
    },
    holderCount: () => countHolders.get()!.n,
    put(rows, version) {
      if (rows.length > 0) putAll(rows, version);
    },
    confirm(version) {
      if (version > durable) durable = version;
    },
    rollback(version) {
      rollbackAll(version);
      durable = version;
    },
    remove(keys) {
      if (keys.length > 0) removeAll(keys);
    },
    forget: (chain, idleBefore) => forgetIdle.run(chain, idleBefore, durable).changes,
    count: () => countAll.get()!.n,
    close() {
      closed = true;
      db.close();
    },
  };
}
