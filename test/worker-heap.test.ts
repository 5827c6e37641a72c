// A worker's young generation of its own (cli/worker-heap.ts): the serving thread's scavenges stay
// short while the main thread keeps the process's larger semi-spaces.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const MB = 1024 * 1024;

describe('cli/worker-heap', () => {
  it("sizes a worker's young generation under the process's --max-semi-space-size, and leaves the flag to later workers", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--max-semi-space-size=32', '--import', 'tsx', 'test/fixtures/worker-heap-child.ts'],
      { timeout: 60_000 },
    );
    const result = JSON.parse(stdout) as { processSemiSpaceMb: number; sized: number; plain: number };
    assert.equal(result.processSemiSpaceMb, 32);
    // New space is both semi-spaces: 24 MB of young generation is 2 x 8 MB (and 8 MB of large objects).
    assert.ok(result.sized <= 16 * MB, `sized worker's new space ${result.sized / MB} MB`);
    assert.ok(result.plain > 32 * MB, `plain worker's new space ${result.plain / MB} MB`);
  });
});
