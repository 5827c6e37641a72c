// SIGTERM under load, checked from outside: a `spot up` child on a temp data dir ingesting 2,000
// swaps/s exits cleanly within 10 s; restarted on the same dir, every priced trade the aggregator
// put on spot.trades.v1 is in the store exactly once.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSpot, type SpotProcess } from '../bench/lib/spot-process.ts';
import { loadConfig } from '../core/config.ts';
import { createContext } from '../core/context.ts';
import { createEmbeddedLog, embeddedLogPath } from '../core/eventlog/index.ts';
import { createLogger } from '../core/logger.ts';
import { TOPICS } from '../core/topics.ts';
import { waitFor } from './helpers/ports.ts';

const TRADE_PREFIX = '{"trade":{"id":"';

async function tradeIdsOnLog(dataDir: string): Promise<Set<string>> {
  const ctx = createContext(loadConfig({ SPOT_DATA_DIR: dataDir }), createLogger('fatal'));
  const log = createEmbeddedLog(ctx, { path: embeddedLogPath(dataDir), readonly: true });
  const ids = new Set<string>();
  try {
    await log.readToEnd(TOPICS.trades.name, (m) => {
      assert.ok(m.value.startsWith(TRADE_PREFIX), m.value.slice(0, 80));
      ids.add(m.value.slice(TRADE_PREFIX.length, m.value.indexOf('"', TRADE_PREFIX.length)));
    });
  } finally {
    await log.close();
  }
  return ids;
}

/** True while `pid` runs (an exited child its parent has not reaped yet is a zombie: not running). */
function running(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The simulator node's pid: spot up serves REST before its intake (and the node) starts. */
async function nodeProcessOf(spot: SpotProcess): Promise<number | null> {
  return waitFor(async () => spot.simulatorNodePid() ?? undefined, 30_000, 'the simulator node process').catch(
    () => null,
  );
}

describe('spot up shutdown under load (child process)', function () {
  this.timeout(240_000);
  let dataDir: string;
  let spot: SpotProcess | null = null;

  before(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-shutdown-'));
  });
  after(async () => {
    await spot?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('exits within 10 s of SIGTERM at 2,000 swaps/s, and a restart stores every trade exactly once', async () => {
    spot = await startSpot(dataDir, { SPOT_SIM_RATE: '2000', SPOT_SIM_WARM_HOURS: '0' });
    const nodePid = await nodeProcessOf(spot);
    assert.ok(nodePid !== null, 'the simulator node runs as a child process');
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    // A machine busy with other work gets there later: the signal must still come under load.
    const trading = spot;
    await waitFor(
      async () => {
        const [row] = await trading.query<{ rows: string }>('SELECT count() AS rows FROM spot.trades');
        return Number(row?.rows) > 10_000 || undefined;
      },
      90_000,
      'over 10,000 trades stored',
    );
    const stopped = await spot.stop();
    assert.equal(stopped.code, 0, spot.output().slice(-3000));
    assert.ok(stopped.ms <= 10_000, `SIGTERM → exit took ${Math.round(stopped.ms)} ms`);
    assert.equal(running(nodePid), false, 'the simulator node exited with spot up');

    const onLog = await tradeIdsOnLog(dataDir);
    assert.ok(onLog.size > 10_000, `only ${onLog.size} trades were produced under load`);

    // Restarted without intake: whatever the first run left unstored would be written now.
    spot = await startSpot(dataDir, { SPOT_SIM_RATE: '0', SPOT_SIM_WARM_HOURS: '0' });
    const expected = await tradeIdsOnLog(dataDir);
    const stored = await waitFor(
      async () => {
        const [row] = await spot!.query<{ rows: string; ids: string }>(
          'SELECT count() AS rows, uniqExact(id) AS ids FROM spot.trades FINAL',
        );
        return Number(row?.ids) >= expected.size ? row : undefined;
      },
      60_000,
      `${expected.size} trades in the store`,
    );
    assert.equal(Number(stored.rows), expected.size, 'one row per trade');
    assert.equal(Number(stored.ids), expected.size, 'no trade the log does not have');
    const ids = new Set((await spot.query<{ id: string }>('SELECT DISTINCT id FROM spot.trades')).map((r) => r.id));
    const missing = [...onLog].filter((id) => !ids.has(id));
    assert.deepEqual(missing.slice(0, 5), [], `${missing.length} trades of the first run not stored`);
    const final = await spot.stop();
    assert.equal(final.code, 0);
    spot = null;
  });

  it('takes one stop request delivered twice (`timeout` signals the process, then its group) as one: an ordered exit 0', async () => {
    spot = await startSpot(dataDir, { SPOT_SIM_RATE: '200', SPOT_SIM_WARM_HOURS: '0', SPOT_LOG_LEVEL: 'info' });
    await nodeProcessOf(spot);
    const child = spot.child;
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    child.kill('SIGTERM');
    // Apart enough to arrive as two signals rather than one pending signal.
    await new Promise((resolve) => setTimeout(resolve, 100));
    child.kill('SIGTERM');
    assert.deepEqual(await exited, { code: 0, signal: null }, spot.output().slice(-3000));
    assert.match(spot.output(), /store and event log closed/);
    spot = null;
  });

  it("takes the simulator node down with it when killed (no orphan serving a dead process's chains)", async () => {
    spot = await startSpot(dataDir, { SPOT_SIM_RATE: '200', SPOT_SIM_WARM_HOURS: '0' });
    const nodePid = await nodeProcessOf(spot);
    assert.ok(nodePid !== null, 'the simulator node runs as a child process');
    spot.child.kill('SIGKILL');
    const killed = await spot.stop();
    assert.equal(killed.signal, 'SIGKILL');
    spot = null;
    await waitFor(async () => (running(nodePid) ? undefined : true), 10_000, 'the node process to exit');
  });
});
