// The embedded log's storage: one SQLite file (WAL), prepared statements, one transaction per
// append. Non-compacted topics store record batches (one row per partition chunk of an append);
// compacted topics store one row per key, replaced on write.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { LogMessage, ProduceMessage, TopicSpec } from './types.ts';
import { partitionFor } from './partitioner.ts';
import {
  decodeRecords,
  encodeRecords,
  firstRecordAtOrAfter,
  fitsBudget,
  type BatchRecord,
  type EncodedBatch,
  type FetchBudget,
} from './record-batch.ts';
import { createMemo, type Memo } from '../memo.ts';
import { createReadShare, type ReadShare } from './read-share.ts';

export const DEFAULT_PARTITIONS = 4;

/** Up to MAX_BATCH_RECORDS consecutive records of one partition, encoded: one batch row. */
interface EncodedChunk extends EncodedBatch {
  count: number;
  /** The chunk's own largest timestamp (the row stores the partition's running maximum). */
  maxTs: number;
}

export interface TopicMeta {
  id: number;
  name: string;
  partitions: number;
  compacted: boolean;
  retentionMs: number | null;
}

export interface StoreOptions {
  path: string;
  /** Opens an existing file read-only (another process writes it). */
  readonly?: boolean;
  /** 'normal' survives a killed process; 'full' also an OS crash, at one fsync per append. */
  synchronous?: 'normal' | 'full';
  /** Appended key and value UTF-16 units between WAL checkpoints (default 32 Mi). */
  checkpointAfter?: number;
  /** WAL bytes past which a checkpoint also restarts and truncates the WAL (default 512 MiB). */
  walLimit?: number;
  /** Stores new record batches deflated where that is smaller (default true); both forms are read. */
  deflate?: boolean;
  /**
   * Several consumers of this connection read the same messages moments apart (the serving
   * thread): each batch is decoded once for all of them (read-share.ts).
   */
  shareReads?: boolean;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS topics (
  id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, partitions INTEGER NOT NULL,
  compacted INTEGER NOT NULL, retention_ms INTEGER);
CREATE TABLE IF NOT EXISTS partitions (
  topic_id INTEGER NOT NULL, partition INTEGER NOT NULL, next_offset INTEGER NOT NULL, max_ts INTEGER NOT NULL,
  PRIMARY KEY (topic_id, partition)) WITHOUT ROWID;
-- Non-compacted topics: record batches (see record-batch.ts). max_ts (the partition's running
-- maximum through the batch) and appended_at are non-decreasing in offset order, so seek by time
-- and retention bisect on batches_offset. Each further index cost every append dirty 16 KiB pages
-- in the WAL: dropping the two below halved both (appends of 10 messages: 230-260 -> 118-166 us,
-- 658 -> 315 MB of WAL per 3,000).
CREATE TABLE IF NOT EXISTS batches (
  id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, partition INTEGER NOT NULL,
  base_offset INTEGER NOT NULL, last_offset INTEGER NOT NULL, max_ts INTEGER NOT NULL, appended_at INTEGER NOT NULL,
  data TEXT NOT NULL, layout TEXT NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS batches_offset ON batches (topic_id, partition, last_offset);
DROP INDEX IF EXISTS batches_time;
DROP INDEX IF EXISTS batches_appended;
-- Compacted topics: one row per message, the unique key index drops a key's previous row on write.
CREATE TABLE IF NOT EXISTS compacted (
  topic_id INTEGER NOT NULL, partition INTEGER NOT NULL, offset INTEGER NOT NULL,
  key TEXT NOT NULL, value TEXT NOT NULL, ts INTEGER NOT NULL,
  PRIMARY KEY (topic_id, partition, offset)) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS compacted_key ON compacted (topic_id, partition, key);
CREATE TABLE IF NOT EXISTS group_offsets (
  group_name TEXT NOT NULL, topic_id INTEGER NOT NULL, partition INTEGER NOT NULL, offset INTEGER NOT NULL,
  PRIMARY KEY (group_name, topic_id, partition)) WITHOUT ROWID;
`;

/** Batch rows a shared fetch looks at: a fetch may return fewer messages than asked for. */
const SPANS_PER_FETCH = 64;

/** Records per batch row: bounds what a fetch from the middle of a batch decodes and skips. */
const MAX_BATCH_RECORDS = 1000;

/** Bytes appended (UTF-16 units of keys and values) after which the WAL is checkpointed. */
const CHECKPOINT_AFTER = 32 << 20;

/** WAL size at which the checkpoint worker truncates the WAL (see the worker below). */
const WAL_LIMIT = 512 << 20;

/**
 * How long a truncating checkpoint first waits for the writer and readers before it gives up, ms;
 * doubled after each truncation that gave up, to TRUNCATE_WAIT_MAX_MS.
 */
const TRUNCATE_WAIT_MS = 50;
const TRUNCATE_WAIT_MAX_MS = 400;

/** WAL size, in walLimits, past which producers wait for the checkpoint worker (it is behind). */
const WAL_BEHIND_LIMITS = 4;

/** Size a WAL file is cut back to when SQLite restarts it on its own (after a complete checkpoint). */
const WAL_KEPT_BYTES = 64 << 20;

// The checkpoint worker: its own connection to the file, one PASSIVE checkpoint per request
// (writers keep appending meanwhile), the fsyncs included. Under a steady writer a PASSIVE
// checkpoint never reaches the WAL's end, so SQLite never restarts the WAL and the file grows
// (measured: 7.3 GB while catching up at 2,000 swaps/s). Past walLimit a second PASSIVE pass
// catches up on what came in meanwhile, then TRUNCATE, which holds writers while it runs, gets a
// short busy timeout: it gives up rather than wait long for readers, and is tried again later.
// A truncation that gave up is tried again at once with twice the wait (to a cap), so readers that
// keep the WAL busy cannot hold it off for good.
const CHECKPOINT_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('busy_timeout = 5000');
const pageSize = db.pragma('page_size', { simple: true });
let truncateWaitMs = workerData.truncateWaitMs;
parentPort.postMessage({ ready: true });
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    let overLimit = false;
    const [passive] = db.pragma('wal_checkpoint(PASSIVE)');
    if (passive.log * pageSize > workerData.walLimit) {
      db.pragma('wal_checkpoint(PASSIVE)');
      db.pragma('busy_timeout = ' + truncateWaitMs);
      try {
        const [truncate] = db.pragma('wal_checkpoint(TRUNCATE)');
        overLimit = truncate.busy === 1;
        truncateWaitMs = overLimit
          ? Math.min(truncateWaitMs * 2, workerData.truncateWaitMaxMs)
          : workerData.truncateWaitMs;
      } finally {
        db.pragma('busy_timeout = 5000');
      }
    }
    parentPort.postMessage({ error: null, overLimit });
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message || error), overLimit: false });
  }
});
`;

/**
 * Checkpoints the WAL on a worker thread, so the writer's commits never stop for a checkpoint's
 * copy and fsyncs (measured: ~0.4 s of blocked main thread per 64 MiB checkpoint with
 * synchronous=NORMAL). Started on first need; until the worker is ready, and on any worker
 * failure, the writer's own autocheckpoint runs instead, so a worker slow to start on a loaded
 * machine leaves no stretch without checkpoints.
 */
function createCheckpointer(db: Database.Database, file: string, checkpointAfter: number, walLimit: number) {
  // The writer's autocheckpoint, in pages, while the worker is not checkpointing: about walLimit.
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const autocheckpointPages = Math.max(1, Math.min(4000, Math.floor(walLimit / pageSize)));
  let worker: Worker | null = null;
  let ready = false;
  let failed = false;
  let running = false;
  let appended = 0;
  let exited: Promise<void> = Promise.resolve();

  function fallBack(): void {
    if (failed) return;
    failed = true;
    running = false;
    releaseWriters();
    if (db.open) db.pragma(`wal_autocheckpoint = ${autocheckpointPages}`);
  }

  function start(): void {
    try {
      worker = new Worker(CHECKPOINT_WORKER, {
        eval: true,
        execArgv: [],
        workerData: {
          module: createRequire(import.meta.url).resolve('better-sqlite3'),
          path: file,
          walLimit,
          truncateWaitMs: TRUNCATE_WAIT_MS,
          truncateWaitMaxMs: TRUNCATE_WAIT_MAX_MS,
        },
      });
    } catch {
      return fallBack();
    }
    worker.unref();
    worker.on('message', (message: { ready: true } | { error: string | null; overLimit: boolean }) => {
      if ('ready' in message) {
        if (failed || !db.open) return;
        ready = true;
        db.pragma('wal_autocheckpoint = 0');
      } else {
        running = false;
        releaseWriters();
        if (message.error !== null) return fallBack();
        if (message.overLimit) appended = Math.max(appended, checkpointAfter);
      }
      request();
    });
    worker.on('error', fallBack);
    exited = new Promise((resolve) =>
      worker!.once('exit', () => {
        worker = null;
        resolve();
      }),
    );
  }

  function request(): void {
    if (failed || appended < checkpointAfter) return;
    if (running) return holdWritersIfFarBehind();
    if (!worker) start();
    if (!ready) return;
    appended = 0;
    running = true;
    worker!.postMessage('checkpoint');
  }

  // Back-pressure when the worker falls behind (a slow disk, a starved thread): past
  // WAL_BEHIND_LIMITS × walLimit, producers wait for the worker's pass to end before appending,
  // so the file stays bounded whatever the worker's pace.
  let behind: { promise: Promise<void>; resolve: () => void } | null = null;
  function holdWritersIfFarBehind(): void {
    if (behind) return;
    let walBytes: number;
    try {
      walBytes = fs.statSync(`${file}-wal`).size;
    } catch {
      return;
    }
    if (walBytes <= WAL_BEHIND_LIMITS * walLimit) return;
    let resolve!: () => void;
    const promise = new Promise<void>((done) => (resolve = done));
    behind = { promise, resolve };
  }
  function releaseWriters(): void {
    behind?.resolve();
    behind = null;
  }

  db.pragma(`wal_autocheckpoint = ${autocheckpointPages}`);

  return {
    appended(units: number): void {
      appended += units;
      request();
    },
    /** Settles while the worker is far behind the writer: append after it. */
    behind(): Promise<void> | null {
      return behind?.promise ?? null;
    },
    /** Lets the worker finish its checkpoint and close its connection. */
    close(): Promise<void> {
      failed = true;
      releaseWriters();
      if (worker) {
        // Referenced again so the process waits for the worker to close its connection.
        worker.ref();
        worker.postMessage('close');
      }
      return exited;
    },
  };
}

interface BatchBounds {
  base_offset: number;
  last_offset: number;
  max_ts: number;
  appended_at: number;
}

interface CompactedRow {
  offset: number;
  key: string;
  value: string;
  ts: number;
}

export type EmbeddedStore = ReturnType<typeof openStore>;

export interface CommitPosition {
  meta: TopicMeta;
  partition: number;
  offset: number;
}

export function openStore(options: StoreOptions) {
  if (!options.readonly) fs.mkdirSync(path.dirname(options.path), { recursive: true });
  const db = new Database(options.path, {
    readonly: options.readonly ?? false,
    fileMustExist: options.readonly ?? false,
  });
  db.pragma('busy_timeout = 5000');
  if (!options.readonly) {
    // 16 KiB pages and a large WAL between checkpoints: each checkpoint costs an fsync, and
    // batch rows span pages (measured ~4x the append rate of 4 KiB pages / 4 MiB WAL).
    // Checkpoints run on a worker thread (createCheckpointer), not in the writer's commits.
    db.pragma('page_size = 16384');
    db.pragma('journal_mode = WAL');
    db.pragma(`journal_size_limit = ${WAL_KEPT_BYTES}`);
    db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    db.exec(SCHEMA);
  }

  const sql = {
    topicByName: db.prepare<
      [string],
      { id: number; name: string; partitions: number; compacted: number; retention_ms: number | null }
    >('SELECT id, name, partitions, compacted, retention_ms FROM topics WHERE name = ?'),
    allTopics: db.prepare<[], { name: string }>('SELECT name FROM topics'),
    insertTopic: db.prepare('INSERT INTO topics (name, partitions, compacted, retention_ms) VALUES (?, ?, ?, ?)'),
    insertPartition: db.prepare(
      'INSERT OR IGNORE INTO partitions (topic_id, partition, next_offset, max_ts) VALUES (?, ?, 0, -1)',
    ),
    partitionState: db.prepare<[number, number], { next_offset: number; max_ts: number }>(
      'SELECT next_offset, max_ts FROM partitions WHERE topic_id = ? AND partition = ?',
    ),
    updatePartition: db.prepare(
      'UPDATE partitions SET next_offset = ?, max_ts = ? WHERE topic_id = ? AND partition = ?',
    ),
    endOffsets: db.prepare<[number], { partition: number; next_offset: number }>(
      'SELECT partition, next_offset FROM partitions WHERE topic_id = ?',
    ),
    insertBatch: db.prepare(
      'INSERT INTO batches (topic_id, partition, base_offset, last_offset, max_ts, appended_at, data, layout) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    batchesFrom: db.prepare<
      [number, number, number],
      { base_offset: number; data: string | Uint8Array; layout: string }
    >(
      'SELECT base_offset, data, layout FROM batches WHERE topic_id = ? AND partition = ? AND last_offset >= ? ORDER BY last_offset',
    ),
    // Columns before `data` only, so a batch another reader decoded moments ago costs no blob read.
    batchSpans: db.prepare<[number, number, number, number], { id: number; base_offset: number }>(
      'SELECT id, base_offset FROM batches WHERE topic_id = ? AND partition = ? AND last_offset >= ? ORDER BY last_offset LIMIT ?',
    ),
    batchData: db.prepare<[number], EncodedBatch>('SELECT data, layout FROM batches WHERE id = ?'),
    // Columns before `data` only: reading `layout` walks a large batch's overflow pages (measured:
    // ~2x the cost of a seek by time if every bisection step read it).
    batchAt: db.prepare<[number, number, number], BatchBounds>(
      'SELECT base_offset, last_offset, max_ts, appended_at FROM batches WHERE topic_id = ? AND partition = ? AND last_offset >= ? ORDER BY last_offset LIMIT 1',
    ),
    layoutOf: db.prepare<[number, number, number], { layout: string }>(
      'SELECT layout FROM batches WHERE topic_id = ? AND partition = ? AND last_offset = ?',
    ),
    lastAppendedAt: db.prepare<[number, number], { appended_at: number }>(
      'SELECT appended_at FROM batches WHERE topic_id = ? AND partition = ? ORDER BY last_offset DESC LIMIT 1',
    ),
    deleteThrough: db.prepare('DELETE FROM batches WHERE topic_id = ? AND partition = ? AND last_offset <= ?'),
    replaceLatest: db.prepare(
      'INSERT OR REPLACE INTO compacted (topic_id, partition, offset, key, value, ts) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    compactedFrom: db.prepare<[number, number, number, number], CompactedRow>(
      'SELECT offset, key, value, ts FROM compacted WHERE topic_id = ? AND partition = ? AND offset >= ? ORDER BY offset LIMIT ?',
    ),
    compactedAtTime: db.prepare<[number, number, number], { offset: number | null }>(
      'SELECT min(offset) AS offset FROM compacted WHERE topic_id = ? AND partition = ? AND ts >= ?',
    ),
    committed: db.prepare<[string, number], { partition: number; offset: number }>(
      'SELECT partition, offset FROM group_offsets WHERE group_name = ? AND topic_id = ?',
    ),
    commit: db.prepare(
      'INSERT INTO group_offsets (group_name, topic_id, partition, offset) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET offset = excluded.offset',
    ),
  };

  // A read-only instance (a reader thread or process) keeps its groups' offsets in memory: its
  // groups are its own and start anew with it, and the file is not its to write.
  const memoryOffsets = options.readonly ? new Map<string, Map<number, number>>() : null;
  const offsetsKey = (group: string, topic: TopicMeta) => `${group}\u0000${topic.id}`;
  const commitMany = db.transaction((group: string, positions: CommitPosition[]) => {
    for (const p of positions) sql.commit.run(group, p.meta.id, p.partition, p.offset);
  });

  const topics = new Map<string, TopicMeta>();
  // murmur2 over a key's UTF-8 bytes on every message adds up; the same token keys recur.
  const partitionMemo = new Map<number, Memo<number>>();
  function partitionOf(key: string, partitions: number): number {
    let memo = partitionMemo.get(partitions);
    if (!memo) partitionMemo.set(partitions, (memo = createMemo(100_000)));
    return memo.get(key) ?? memo.set(key, partitionFor(key, partitions));
  }
  const checkpointer = options.readonly
    ? null
    : createCheckpointer(db, options.path, options.checkpointAfter ?? CHECKPOINT_AFTER, options.walLimit ?? WAL_LIMIT);

  function commitInMemory(group: string, positions: CommitPosition[]): void {
    for (const p of positions) {
      const key = offsetsKey(group, p.meta);
      let offsets = memoryOffsets!.get(key);
      if (!offsets) memoryOffsets!.set(key, (offsets = new Map()));
      offsets.set(p.partition, p.offset);
    }
  }

  function lookup(name: string): TopicMeta | undefined {
    const cached = topics.get(name);
    if (cached) return cached;
    const row = sql.topicByName.get(name);
    if (!row) return undefined;
    const meta = {
      id: row.id,
      name: row.name,
      partitions: row.partitions,
      compacted: row.compacted === 1,
      retentionMs: row.retention_ms,
    };
    topics.set(name, meta);
    return meta;
  }

  /**
   * The first batch of a partition (in offset order) for which `test` holds, `test` being false on
   * a prefix of the batches and true after it; undefined when it holds for none. Bisects on the
   * offset, one index seek per step.
   */
  function firstBatchWhere(
    topic: TopicMeta,
    partition: number,
    test: (batch: BatchBounds) => boolean,
  ): BatchBounds | undefined {
    const first = sql.batchAt.get(topic.id, partition, 0);
    if (!first || test(first)) return first;
    const end = sql.partitionState.get(topic.id, partition)!.next_offset;
    let found: BatchBounds | undefined;
    // Offsets below `low` are in batches failing the test; the answer starts below `high`
    // (or is `found`, or none).
    let low = first.last_offset + 1;
    let high = end;
    while (low < high) {
      const mid = Math.floor((low + high) / 2);
      const batch = sql.batchAt.get(topic.id, partition, mid);
      if (batch && !test(batch)) {
        low = batch.last_offset + 1;
      } else {
        found = batch;
        high = batch ? Math.min(mid, batch.base_offset) : mid;
      }
    }
    return found;
  }

  // appended_at is stamped max(now, the partition's last stamp), so it never decreases along the
  // offsets: retention then drops a prefix found by bisection. A plain `now` would not be ordered
  // after a clock step back. The last stamp is read from the partition's last batch on first use.
  const lastAppended = new Map<number, number[]>();
  function appendStamp(topic: TopicMeta, partition: number, now: number): number {
    let stamps = lastAppended.get(topic.id);
    if (!stamps) lastAppended.set(topic.id, (stamps = []));
    const last = (stamps[partition] ??=
      sql.lastAppendedAt.get(topic.id, partition)?.appended_at ?? Number.NEGATIVE_INFINITY);
    return (stamps[partition] = Math.max(now, last));
  }

  const createTopic = db.transaction((spec: TopicSpec): TopicMeta => {
    const existing = lookup(spec.name);
    if (existing) return existing;
    const id = Number(
      sql.insertTopic.run(spec.name, spec.partitions, spec.compacted ? 1 : 0, spec.retentionMs ?? null).lastInsertRowid,
    );
    for (let p = 0; p < spec.partitions; p++) sql.insertPartition.run(id, p);
    return lookup(spec.name)!;
  });

  /** Appends one partition's records (a non-compacted topic's already encoded in chunks) and moves its end offset. */
  function appendPartition(
    topic: TopicMeta,
    partition: number,
    records: BatchRecord[],
    chunks: EncodedChunk[],
    now: number,
  ): void {
    const state = sql.partitionState.get(topic.id, partition)!;
    let next = state.next_offset;
    let maxTs = state.max_ts;
    if (topic.compacted) {
      // Only the last value of a key in this append survives compaction; the others still take an offset.
      const lastIndexOfKey = new Map<string, number>();
      records.forEach((record, i) => lastIndexOfKey.set(record.key, i));
      records.forEach((record, i) => {
        if (lastIndexOfKey.get(record.key) === i)
          sql.replaceLatest.run(topic.id, partition, next, record.key, record.value, record.timestamp);
        if (record.timestamp > maxTs) maxTs = record.timestamp;
        next++;
      });
    } else {
      const appendedAt = appendStamp(topic, partition, now);
      for (const chunk of chunks) {
        maxTs = Math.max(maxTs, chunk.maxTs);
        sql.insertBatch.run(
          topic.id,
          partition,
          next,
          next + chunk.count - 1,
          maxTs,
          appendedAt,
          chunk.data,
          chunk.layout,
        );
        next += chunk.count;
      }
    }
    sql.updatePartition.run(next, maxTs, topic.id, partition);
  }

  const append = db.transaction(
    (topic: TopicMeta, byPartition: Map<number, BatchRecord[]>, encoded: Map<number, EncodedChunk[]>, now: number) => {
      for (const [partition, records] of byPartition)
        appendPartition(topic, partition, records, encoded.get(partition) ?? [], now);
    },
  );

  /** A non-compacted topic's chunks, encoded (and deflated) before the write lock is taken. */
  function encodeChunks(records: BatchRecord[]): EncodedChunk[] {
    const chunks: EncodedChunk[] = [];
    for (let from = 0; from < records.length; from += MAX_BATCH_RECORDS) {
      const chunk = records.slice(from, from + MAX_BATCH_RECORDS);
      let maxTs = Number.NEGATIVE_INFINITY;
      for (const record of chunk) if (record.timestamp > maxTs) maxTs = record.timestamp;
      chunks.push({ ...encodeRecords(chunk, options.deflate ?? true), count: chunk.length, maxTs });
    }
    return chunks;
  }

  function readCompacted(
    topic: TopicMeta,
    partition: number,
    fromOffset: number,
    limit: number,
    budget: FetchBudget,
  ): LogMessage[] {
    const out: LogMessage[] = [];
    for (const row of sql.compactedFrom.iterate(topic.id, partition, fromOffset, limit)) {
      if (!fitsBudget(budget, row.key.length + row.value.length, out.length === 0)) break;
      out.push({ topic: topic.name, partition, offset: row.offset, key: row.key, value: row.value, timestamp: row.ts });
    }
    return out;
  }

  const share: ReadShare | null = options.shareReads ? createReadShare() : null;
  const unbounded = (): FetchBudget => ({ chars: Number.POSITIVE_INFINITY, full: false });

  /**
   * fetch through the shared reads: a batch is decoded whole, once, and a compacted read is kept
   * by its first offset. Either answers any later read from there as a prefix, which a fetch may
   * always return (the reader asks again from where it ends).
   */
  function fetchShared(
    share: ReadShare,
    topic: TopicMeta,
    partition: number,
    fromOffset: number,
    limit: number,
    budget: FetchBudget,
  ): LogMessage[] {
    const out: LogMessage[] = [];
    const take = (messages: readonly LogMessage[], from: number): boolean => {
      for (let i = from; i < messages.length; i++) {
        const message = messages[i]!;
        if (out.length >= limit) return false;
        if (!fitsBudget(budget, message.key.length + message.value.length, out.length === 0)) return false;
        out.push(message);
      }
      return true;
    };
    if (topic.compacted) {
      const read = () => readCompacted(topic, partition, fromOffset, limit, { ...budget });
      take(share.get(`c/${topic.id}/${partition}/${fromOffset}`, read), 0);
      return out;
    }
    // Spans first: the connection cannot run another statement while one iterates.
    for (const span of sql.batchSpans.all(topic.id, partition, fromOffset, SPANS_PER_FETCH)) {
      const records = share.get(`b/${topic.id}/${partition}/${span.base_offset}`, () => {
        const all: LogMessage[] = [];
        // Gone when retention dropped it since the spans were read: its messages are skipped, as they would be then.
        const batch = sql.batchData.get(span.id);
        if (batch) decodeRecords(batch, span.base_offset, topic.name, partition, 0, Infinity, all, unbounded());
        return all;
      });
      if (!take(records, Math.max(0, fromOffset - span.base_offset))) break;
    }
    return out;
  }

  return {
    db,
    lookup,
    topicNames: () => sql.allTopics.all().map((row) => row.name),
    /** Creates the topic if absent; an existing topic keeps its partitions and compaction. */
    ensureTopic(spec: TopicSpec): TopicMeta {
      return lookup(spec.name) ?? createTopic.immediate(spec);
    },
    /** Settles when appends may go on: null unless the checkpoint worker is far behind the WAL. */
    checkpointBehind(): Promise<void> | null {
      return checkpointer?.behind() ?? null;
    },
    /** `now` is the wall clock; tests pass their own. */
    append(topic: TopicMeta, messages: ProduceMessage[], now = Date.now()): void {
      const byPartition = new Map<number, BatchRecord[]>();
      // Checkpoints follow the appended units, deflated or not: an append dirties whole pages
      // (index, partition row) whatever its batch's size, so stored bytes undercount the WAL.
      let units = 0;
      for (const message of messages) {
        const partition = partitionOf(message.key, topic.partitions);
        let records = byPartition.get(partition);
        if (!records) byPartition.set(partition, (records = []));
        records.push({ key: message.key, value: message.value, timestamp: message.timestamp ?? now });
        units += message.key.length + message.value.length;
      }
      const encoded = new Map<number, EncodedChunk[]>();
      if (!topic.compacted)
        for (const [partition, records] of byPartition) encoded.set(partition, encodeChunks(records));
      append.immediate(topic, byPartition, encoded, now);
      checkpointer?.appended(units);
    },
    /** Up to `limit` messages of a partition from `fromOffset` on, in offset order. */
    fetch(
      topic: TopicMeta,
      partition: number,
      fromOffset: number,
      limit: number,
      maxChars = Number.POSITIVE_INFINITY,
    ): LogMessage[] {
      const budget: FetchBudget = { chars: maxChars, full: false };
      if (share) return fetchShared(share, topic, partition, fromOffset, limit, budget);
      if (topic.compacted) return readCompacted(topic, partition, fromOffset, limit, budget);
      const out: LogMessage[] = [];
      for (const row of sql.batchesFrom.iterate(topic.id, partition, fromOffset)) {
        decodeRecords(row, row.base_offset, topic.name, partition, fromOffset, limit, out, budget);
        if (out.length >= limit || budget.full) break;
      }
      return out;
    },
    endOffsets(topic: TopicMeta): Map<number, number> {
      const ends = new Map<number, number>();
      for (const row of sql.endOffsets.all(topic.id)) ends.set(row.partition, row.next_offset);
      return ends;
    },
    /** First offset whose timestamp >= `timestamp`, or the end offset when there is none. */
    offsetForTime(topic: TopicMeta, partition: number, timestamp: number): number {
      const end = sql.partitionState.get(topic.id, partition)?.next_offset ?? 0;
      if (topic.compacted) return sql.compactedAtTime.get(topic.id, partition, timestamp)?.offset ?? end;
      // The first batch whose running maximum reaches `timestamp`. Once retention has dropped the
      // batch that raised it, that batch may hold no record >= timestamp: then the end, as ever.
      const batch = firstBatchWhere(topic, partition, (b) => b.max_ts >= timestamp);
      if (!batch) return end;
      const { layout } = sql.layoutOf.get(topic.id, partition, batch.last_offset)!;
      return firstRecordAtOrAfter(layout, batch.base_offset, timestamp) ?? end;
    },
    committed(group: string, topic: TopicMeta): Map<number, number> {
      if (memoryOffsets) return new Map(memoryOffsets.get(offsetsKey(group, topic)));
      const offsets = new Map<number, number>();
      for (const row of sql.committed.all(group, topic.id)) offsets.set(row.partition, row.offset);
      return offsets;
    },
    commit(group: string, topic: TopicMeta, partition: number, offset: number): void {
      if (memoryOffsets) return commitInMemory(group, [{ meta: topic, partition, offset }]);
      sql.commit.run(group, topic.id, partition, offset);
    },
    /** Several positions of one group in one transaction (each commit alone is a WAL write). */
    commitMany(group: string, positions: CommitPosition[]): void {
      if (memoryOffsets) return commitInMemory(group, positions);
      commitMany(group, positions);
    },
    /**
     * Drops whole batches of a non-compacted topic appended longer than its retention ago. By
     * append time, not message time, so a replay of old events is not dropped as it lands.
     */
    applyRetention(topic: TopicMeta, now: number, maxRetentionMs = Number.POSITIVE_INFINITY): number {
      if (topic.compacted || topic.retentionMs === null) return 0;
      const cutoff = now - Math.min(topic.retentionMs, maxRetentionMs);
      let deleted = 0;
      for (let partition = 0; partition < topic.partitions; partition++) {
        // appended_at is non-decreasing along the offsets (appendStamp): the batches before the
        // first one appended at or after the cutoff are exactly those appended before it.
        const kept = firstBatchWhere(topic, partition, (b) => b.appended_at >= cutoff);
        const through = kept ? kept.base_offset - 1 : Number.MAX_SAFE_INTEGER;
        deleted += sql.deleteThrough.run(topic.id, partition, through).changes;
      }
      return deleted;
    },
    /** Closes the file; resolves once the checkpoint worker (if one started) has let go of it too. */
    close(): Promise<void> {
      const workerDone = checkpointer?.close() ?? Promise.resolve();
      db.close();
      return workerDone;
    },
  };
}
