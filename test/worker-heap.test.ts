// A worker's heap limits of its own (cli/worker-heap.ts): the serving thread's scavenges stay short
// while the main thread keeps the process's larger semi-spaces, and each thread's old generation
// has the limit its role chose, whatever the process's --max-old-space-size.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const MB = 1024 * 1024;

describe('cli/worker-heap', () => {
  it("sizes a worker's heap under the process's --max-semi-space-size and --max-old-space-size, and leaves the flags to later workers", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--max-semi-space-size=32',
        '--max-old-space-size=2000',
        '--import',
        'tsx',
        'test/fixtures/worker-heap-child.ts',
      ],
      { timeout: 60_000 },
    );
    type Heap = { newSpace: number; limit: number };
    const result = JSON.parse(stdout) as {
      processSemiSpaceMb: number;
      processOldSpaceMb: number;
      sized: Heap;
      plain: Heap;
      mainLimit: number;
    };
    assert.equal(result.processSemiSpaceMb, 32);
    assert.equal(result.processOldSpaceMb, 2000);
    // New space is both semi-spaces: 24 MB of young generation is 2 x 8 MB (and 8 MB of large objects).
    assert.ok(result.sized.newSpace <= 16 * MB, `sized worker's new space ${result.sized.newSpace / MB} MB`);
    assert.ok(result.plain.newSpace > 32 * MB, `plain worker's new space ${result.plain.newSpace / MB} MB`);
    // The heap limit is the old generation plus the young one.
    assert.ok(result.sized.limit < 600 * MB, `sized worker's heap limit ${result.sized.limit / MB} MB`);
    assert.ok(result.plain.limit >= 2000 * MB, `plain worker's heap limit ${result.plain.limit / MB} MB`);
    assert.ok(result.mainLimit >= 2000 * MB, `main thread's heap limit ${result.mainLimit / MB} MB`);
  });
});
