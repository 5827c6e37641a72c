// A SIGKILL of a real aggregator process mid-stream, then a restart, gives the same tables and
// compacted topics as an uninterrupted run. Each child has its own chDB data dir and log copy.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { loadConfig } from '../core/config.ts';
import { createContext } from '../core/context.ts';
import { createLogger } from '../core/logger.ts';
import { createEmbeddedLog } from '../core/eventlog/embedded.ts';
import { TOPICS } from '../core/topics.ts';
import { makeScenario, produceScenario } from './fixtures/aggregator-scenario.ts';
import { latestPerKey } from './fixtures/aggregator-dump.ts';

const CHILD = path.resolve('test/fixtures/aggregator-child.ts');

interface Run {
  lines: Array<{ processed?: number; snapshot?: boolean; done?: boolean }>;
  signal: NodeJS.Signals | null;
  code: number | null;
}

/** Runs the child; `killWhen` decides from each output line whether to SIGKILL it. */
function runChild(
  env: Record<string, string>,
  killWhen?: (line: { processed?: number; snapshot?: boolean }) => boolean,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: Run['lines'] = [];
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    readline.createInterface({ input: child.stdout }).on('line', (text) => {
      const line = JSON.parse(text);
      lines.push(line);
      if (killWhen && !line.done && killWhen(line)) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code !== 0 && signal !== 'SIGKILL') reject(new Error(`child exited ${code}: ${stderr.slice(-2000)}`));
      else resolve({ lines, signal, code });
    });
  });
}

describe('aggregator crash recovery (SIGKILL of a child process)', function () {
  this.timeout(180_000);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-agg-crash-'));
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it('a killed and restarted run writes the same tables and topics as an uninterrupted one', async () => {
    const ctx = createContext(loadConfig({ SPOT_DATA_DIR: root, SPOT_LOG_LEVEL: 'silent' }), createLogger('silent'));
    const scenario = makeScenario(11, 2500);
    const source = path.join(root, 'source.sqlite');
    // The killed run reads the chains published one after the other (each partition then taken
    // out of offset order, positions above the watermarks in its snapshots); the uninterrupted
    // one reads them interleaved in event time. Each chain's order, so every table, is the same.
    const byChain = path.join(root, 'source-by-chain.sqlite');
    for (const [file, chainAfterChain] of [
      [source, false],
      [byChain, true],
    ] as const) {
      const log = createEmbeddedLog(ctx, { path: file, retentionIntervalMs: 0 });
      await produceScenario(log, scenario, chainAfterChain);
      await log.close();
    }
    const total = scenario.swaps.length + scenario.events.length;
    const setup = (name: string, from: string) => {
      const dir = path.join(root, name);
      fs.mkdirSync(dir);
      fs.copyFileSync(from, path.join(dir, 'log.sqlite'));
      return {
        SPOT_DATA_DIR: dir,
        AGG_LOG_PATH: path.join(dir, 'log.sqlite'),
        AGG_DUMP_PATH: path.join(dir, 'dump.json'),
        AGG_FLUSH_EVERY: '150',
        AGG_SNAPSHOT_EVERY: '600',
      };
    };

    const crashed = setup('crashed', byChain);
    // Killed after its second snapshot, with work left: the restart resumes from a snapshot and
    // re-processes what was sunk after it.
    let snapshots = 0;
    const killed = await runChild(
      crashed,
      (line) => (line.snapshot ? ++snapshots : snapshots) >= 2 && (line.processed ?? 0) < total * 0.7,
    );
    assert.equal(killed.signal, 'SIGKILL');
    const reached = Math.max(...killed.lines.map((l) => l.processed ?? 0));
    assert.ok(reached > 0 && reached < total, `killed mid-stream (${reached} of ${total})`);
    assert.ok(!fs.existsSync(crashed.AGG_DUMP_PATH));
    const resumed = await runChild(crashed);
    // It resumed from a snapshot (at least two were written), not from offset 0.
    assert.ok((resumed.lines[0]?.processed ?? 0) >= 1200, `resumed at ${resumed.lines[0]?.processed}`);
    assert.equal(resumed.lines.at(-1)?.done, true);
    assert.equal(resumed.lines.at(-1)?.processed, total);

    const clean = setup('clean', source);
    const uninterrupted = await runChild({ ...clean, AGG_FLUSH_EVERY: '5000', AGG_SNAPSHOT_EVERY: '100000' });
    assert.equal(uninterrupted.lines.at(-1)?.processed, total);

    const a = JSON.parse(fs.readFileSync(crashed.AGG_DUMP_PATH, 'utf8'));
    const b = JSON.parse(fs.readFileSync(clean.AGG_DUMP_PATH, 'utf8'));
    assert.ok(a.trades.length > 1000 && a.candles.length > 1000 && a.tokens.length === scenario.tokens.length);
    for (const table of Object.keys(b)) assert.deepEqual(a[table], b[table], `table ${table}`);

    // Compacted topics: the latest value of every key agrees.
    const logA = createEmbeddedLog(ctx, { path: crashed.AGG_LOG_PATH, readonly: true });
    const logB = createEmbeddedLog(ctx, { path: clean.AGG_LOG_PATH, readonly: true });
    try {
      for (const topic of [TOPICS.tokens.name, TOPICS.candles.name]) {
        assert.deepEqual(await latestPerKey(logA, topic), await latestPerKey(logB, topic), topic);
      }
      // Trades may be published twice after a crash (at least once), never lost.
      const ids = async (l: typeof logA) => {
        const set = new Set<string>();
        await l.readToEnd(TOPICS.trades.name, (m) => set.add(JSON.parse(m.value).trade.id));
        return [...set].sort();
      };
      assert.deepEqual(await ids(logA), await ids(logB));
    } finally {
      await logA.close();
      await logB.close();
    }
  });
});
