// The simulator's label list on disk (<dataDir>/simulator-labels.csv): what its market labelled,
// in the label import's CSV, for a user to read or import elsewhere. Live at 2,000 swaps/s it grows
// by about 140 MB a day (19 lines a second), so past a size it is rotated: the previous file is
// kept as `.1`.
import fs from 'node:fs';
import { LABEL_CSV_HEADER } from '../labels/format.ts';

export const SIMULATOR_LABELS_FILE = 'simulator-labels.csv';
export const SIMULATOR_LABELS_MAX_BYTES = 32 * 1024 * 1024;

/** Appends CSV lines (no header) to `file`, rotating it first when they would take it past `maxBytes`. */
export function appendLabelLines(file: string, lines: string[], maxBytes = SIMULATOR_LABELS_MAX_BYTES): void {
  if (lines.length === 0) return;
  const text = `${lines.join('\n')}\n`;
  let size = fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0;
  if (size > 0 && size + Buffer.byteLength(text) > maxBytes) {
    fs.renameSync(file, `${file}.1`);
    size = 0;
  }
  if (size === 0) fs.writeFileSync(file, `${LABEL_CSV_HEADER}\n`);
  fs.appendFileSync(file, text);
}
