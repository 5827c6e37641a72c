// Snapshot suite (issue 13, in the style of tardis-node's mapper tests): every real transaction
// under test/fixtures/mainnet/solana decodes to the reviewed records kept beside it in
// snapshots/. A layout or convention change shows up as a diff here. After reviewing a wanted
// change, rewrite the snapshots with UPDATE_SNAPSHOTS=1 npx mocha test/decoders-snapshot.test.ts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'mocha';
import { decodeSolanaJson } from '../ingest/solana/index.ts';

const ROOT = path.join(import.meta.dirname, 'fixtures', 'mainnet');
const INPUTS = path.join(ROOT, 'solana');
const SNAPSHOTS = path.join(ROOT, 'snapshots');
const update = process.env.UPDATE_SNAPSHOTS === '1';

describe('decoder snapshots of real mainnet transactions', () => {
  const files = fs.readdirSync(INPUTS).filter((name) => name.endsWith('.json'));
  it('has transactions to check', () => assert.ok(files.length > 0));
  for (const name of files) {
    it(name, () => {
      const input = JSON.parse(fs.readFileSync(path.join(INPUTS, name), 'utf8')) as { provenance: unknown };
      assert.ok(input.provenance, `${name}: every fixture names its source`);
      const decoded = JSON.parse(JSON.stringify(decodeSolanaJson(input)));
      const file = path.join(SNAPSHOTS, name);
      if (update) {
        fs.mkdirSync(SNAPSHOTS, { recursive: true });
        fs.writeFileSync(file, `${JSON.stringify(decoded, null, 2)}\n`);
        return;
      }
      assert.ok(fs.existsSync(file), `${name}: no snapshot yet (review, then UPDATE_SNAPSHOTS=1)`);
      assert.deepEqual(decoded, JSON.parse(fs.readFileSync(file, 'utf8')));
    });
  }
});
