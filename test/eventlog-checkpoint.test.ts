// The embedded log checkpoints its WAL on a worker thread: appends keep going while it runs,
// nothing is lost or reordered, and close waits for the worker to let go of the file.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createEmbeddedLog } from '../core/eventlog/index.ts';
import type { LogMessage } from '../core/eventlog/types.ts';
import { createContext } from '../core/context.ts';
import { loadConfig } from '../core/config.ts';
import { createLogger } from '../core/logger.ts';

describe('embedded log WAL checkpoints', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-checkpoint-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('keeps every message through off-thread checkpoints and closes cleanly', async () => {
    const ctx = createContext(loadConfig({ SPOT_DATA_DIR: dir }), createLogger('fatal'));
    const file = path.join(dir, 'log.sqlite');
    // A 64 KiB threshold: the 2 MiB below asks for a checkpoint many times over.
    const log = createEmbeddedLog(ctx, { path: file, checkpointAfter: 64 << 10, retentionIntervalMs: 0 });
    await log.ensureTopics([
      { name: 'bulk', partitions: 2, compacted: false },
      { name: 'latest', partitions: 2, compacted: true },
    ]);
    const value = (i: number) => `${i}:${'x'.repeat(1000)}`;
    for (let round = 0; round < 64; round++) {
      const messages = Array.from({ length: 32 }, (_, j) => ({
        key: `k${(round * 32 + j) % 50}`,
        value: value(round * 32 + j),
        timestamp: round * 32 + j,
      }));
      await log.produce('bulk', messages);
      await log.produce('latest', messages);
      // Let the worker's replies in, so checkpoints overlap the next appends.
      await new Promise((resolve) => setImmediate(resolve));
    }
    await log.close();

    // The file alone (WAL folded back in by the last connection to close) holds every message.
    const db = new Database(file, { readonly: true });
    try {
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
      const counts = db
        .prepare(
          'SELECT (SELECT sum(last_offset - base_offset + 1) FROM batches) AS bulk, (SELECT count(*) FROM compacted) AS latest',
        )
        .get() as { bulk: number; latest: number };
      assert.deepEqual(counts, { bulk: 64 * 32, latest: 50 });
    } finally {
      db.close();
    }
    const reopened = createEmbeddedLog(ctx, { path: file, readonly: true });
    const seen: LogMessage[] = [];
    await reopened.readToEnd('bulk', (message) => seen.push(message));
    await reopened.close();
    assert.equal(seen.length, 64 * 32);
    const byPartition = new Map<number, number[]>();
    for (const message of seen) {
      const list = byPartition.get(message.partition) ?? [];
      list.push(Number(message.value.split(':')[0]));
      byPartition.set(message.partition, list);
      assert.equal(message.value, value(Number(message.value.split(':')[0])));
    }
    for (const list of byPartition.values())
      assert.deepEqual(
        list,
        [...list].sort((a, b) => a - b),
      );
  });

  it('keeps the WAL file bounded under a writer that never pauses', async () => {
    const ctx = createContext(loadConfig({ SPOT_DATA_DIR: dir }), createLogger('fatal'));
    const file = path.join(dir, 'steady.sqlite');
    const walLimit = 4 << 20;
    const log = createEmbeddedLog(ctx, {
      path: file,
      checkpointAfter: 256 << 10,
      walLimit,
      retentionIntervalMs: 0,
    });
    await log.ensureTopics([
      { name: 'bulk', partitions: 4, compacted: false },
      { name: 'latest', partitions: 4, compacted: true },
    ]);
    // Appends at a steady pace, as ingest does at mainnet rate: each checkpoint finishes behind
    // the writer, so without the truncation SQLite never restarts the WAL.
    const payload = 'y'.repeat(2000);
    let largestWal = 0;
    for (let round = 0; round < 1024; round++) {
      const messages = Array.from({ length: 16 }, (_, j) => ({
        key: `k${(round * 16 + j) % 500}`,
        value: `${round}:${j}:${payload}`,
        timestamp: round,
      }));
      await log.produce('bulk', messages);
      await log.produce('latest', messages);
      largestWal = Math.max(largestWal, fs.statSync(`${file}-wal`).size);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const walAtEnd = fs.statSync(`${file}-wal`).size;
    await log.close();
    // The limit plus what one catch-up pass lets in: far below the 64+ MiB written.
    assert.ok(largestWal < 6 * walLimit, `largest WAL ${largestWal} bytes`);
    assert.ok(walAtEnd < 6 * walLimit, `WAL at end ${walAtEnd} bytes`);
    const reopened = createEmbeddedLog(ctx, { path: file, readonly: true });
    let count = 0;
    await reopened.readToEnd('bulk', () => count++);
    await reopened.close();
    assert.equal(count, 1024 * 16);
  });
});
