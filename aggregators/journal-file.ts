// The journal saved beside the aggregator's snapshot, at the same position, so an instance that
// restarts from its snapshot still holds the outputs other partitions' owners have not made
// durable yet. A snapshot without its journal is usable only when every partition's durable
// position covers it; otherwise it is set aside and the instance replays from offset 0.
import fs from 'node:fs';
import v8 from 'node:v8';
import type { Logger } from '../core/logger.ts';
import type { Journal, JournalDump } from './journal.ts';
import { readSnapshot } from './snapshot.ts';

export interface JournalFile {
  save(journal: Journal, position: number): void;
  /** Loads the journal saved with the snapshot, or sets a snapshot aside that cannot be resumed safely. */
  restore(journal: Journal, durable: ReadonlyMap<number, number>, partitions: number, logger: Logger): void;
}

export function createJournalFile(snapshotFile: string): JournalFile {
  const file = snapshotFile.replace(/snapshot-([^/\\]*)\.bin$/, 'journal-$1.bin');
  if (file === snapshotFile) throw new Error(`unexpected snapshot file name ${snapshotFile}`);

  return {
    save(journal, position) {
      const tmp = `${file}.tmp`;
      fs.writeFileSync(tmp, v8.serialize({ version: 1, position, dump: journal.dump() }));
      fs.renameSync(tmp, file);
    },

    restore(journal, durable, partitions, logger) {
      if (!fs.existsSync(snapshotFile)) {
        fs.rmSync(file, { force: true });
        return;
      }
      const at = readSnapshot(snapshotFile)?.processed ?? 0;
      let saved: { position: number; dump: JournalDump } | null = null;
      try {
        saved = v8.deserialize(fs.readFileSync(file)) as { position: number; dump: JournalDump };
      } catch {
        saved = null;
      }
      if (saved && saved.position === at) {
        journal.load(saved.dump);
        for (const [p, position] of durable) journal.trim(p, position);
        logger.info({ position: at, partitions: journal.partitions() }, 'journal restored with the snapshot');
        return;
      }
      const behind = Array.from({ length: partitions }, (_, p) => p).filter((p) => at > (durable.get(p) ?? 0));
      if (behind.length === 0) return;
      fs.renameSync(snapshotFile, `${snapshotFile}.stale`);
      fs.rmSync(file, { force: true });
      logger.warn({ snapshotAt: at, partitionsBehind: behind }, 'the snapshot is ahead of some partitions\' durable progress and its journal is missing: replaying from offset 0');
    },
  };
}
