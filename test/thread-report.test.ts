// A thread's loop report (cli/thread-report.ts): its GC pauses split into scavenges and
// mark-compacts, each with its count, total and longest pause, and the kernel's id of the thread.
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { reportThreadLoop } from '../cli/thread-report.ts';
import { captureLog } from './helpers/log-lines.ts';

interface Pauses {
  count: number;
  totalMs: number;
  maxMs: number;
}
interface Report {
  component: string;
  tid: number | null;
  msg: string;
  gc: Pauses & { scavenges: Pauses; markCompacts: Pauses };
  heapCommittedMB: number;
  newSpaceMB: number;
  oldSpaceMB: number;
  largeObjectSpaceMB: number;
}

describe('thread loop report', () => {
  it('reports scavenges and mark-compacts apart, and where the committed heap sits', async () => {
    const { logger, lines } = captureLog<Report>();
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const stop = reportThreadLoop(logger, 'test-loop', 'test thread event loop', 400);
    try {
      // Young garbage until a scavenge has run, then one full collection.
      let keep: unknown[] = [];
      for (let i = 0; i < 2_000_000; i++) {
        keep.push({ i });
        if (keep.length > 1000) keep = [];
      }
      // A string past a heap page's size lives in the large-object space until the report.
      keep = ['x'.repeat(2_000_000).split('').join('')];
      gc();
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      stop();
    }
    const report = lines.find((line) => line.gc.count > 0);
    assert.ok(report, 'a report with GC pauses');
    assert.equal(report.component, 'test-loop');
    assert.equal(report.msg, 'test thread event loop');
    // The kernel's id of the reporting thread: the main thread's is the process id.
    if (process.platform === 'linux') assert.equal(report.tid, process.pid);
    const { scavenges, markCompacts } = report.gc;
    assert.ok(scavenges.count >= 1, `scavenges ${JSON.stringify(report.gc)}`);
    assert.ok(markCompacts.count >= 1, `mark-compacts ${JSON.stringify(report.gc)}`);
    assert.ok(scavenges.count + markCompacts.count <= report.gc.count);
    assert.ok(report.oldSpaceMB > 0 && report.newSpaceMB > 0, JSON.stringify(report));
    assert.ok(report.largeObjectSpaceMB >= 2, `a 2 MB string: ${report.largeObjectSpaceMB}`);
    assert.ok(report.oldSpaceMB + report.newSpaceMB + report.largeObjectSpaceMB <= report.heapCommittedMB + 2);
    for (const pauses of [scavenges, markCompacts])
      assert.ok(pauses.maxMs <= pauses.totalMs + 1 && pauses.totalMs <= report.gc.totalMs + 1);
  });
});
