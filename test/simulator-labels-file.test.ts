// The simulator's label list on disk stays bounded: past its size it is rotated, the previous one
// kept as `.1`, each file a CSV the label import reads (with its header).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LABEL_CSV_HEADER, parseLabels } from '../ingest/labels/format.ts';
import { appendLabelLines } from '../ingest/simulator/labels-file.ts';

describe('simulator labels file', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-sim-labels-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('appends under one header and rotates past its size, keeping the previous file', () => {
    const file = path.join(dir, 'simulator-labels.csv');
    const line = (i: number) => `base,0x${i.toString(16).padStart(40, '0')},sniper,,simulator`;
    const maxBytes = 4096;
    let written = 0;
    for (let batch = 0; batch < 20; batch++) {
      appendLabelLines(
        file,
        Array.from({ length: 10 }, (_, k) => line(written + k)),
        maxBytes,
      );
      written += 10;
      assert.ok(fs.statSync(file).size <= maxBytes, `the file stays within ${maxBytes} bytes`);
    }
    appendLabelLines(file, [], maxBytes);
    const current = fs.readFileSync(file, 'utf8');
    const previous = fs.readFileSync(`${file}.1`, 'utf8');
    for (const text of [current, previous]) {
      assert.ok(text.startsWith(`${LABEL_CSV_HEADER}\n`));
      const parsed = parseLabels(text, 'csv');
      assert.equal(parsed.errors.length, 0);
      assert.ok(parsed.lines.length > 0);
    }
    // The newest lines are in the current file, the ones before them in `.1`, none twice.
    const addresses = (text: string) => parseLabels(text, 'csv').lines.map((l) => l.address);
    const kept = [...addresses(previous), ...addresses(current)];
    assert.equal(new Set(kept).size, kept.length);
    assert.equal(kept.at(-1), line(written - 1).split(',')[1]);
    assert.ok(kept.length < written, 'older files were dropped');
    assert.deepEqual(fs.readdirSync(dir).sort(), ['simulator-labels.csv', 'simulator-labels.csv.1']);
  });
});
