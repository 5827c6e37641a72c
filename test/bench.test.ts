// Smoke test of the bench harness: every scenario runs with tiny parameters in its own child
// process and the report has its expected shape. No timing assertion: figures belong to bench/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../core/config.ts';
import { createContext } from '../core/context.ts';
import { createLogger } from '../core/logger.ts';
import { benchCommand, SCENARIOS } from '../bench/run.ts';
import type { MachineShare } from '../bench/lib/machine-cpu.ts';
import type { BenchReport } from '../bench/report.ts';
import { slope } from '../bench/lib/stats.ts';
import { generateInputs, inputCachePath, inputProfile } from '../bench/lib/inputs.ts';
import { kcatAvailable } from './helpers/kafka-mock.ts';

describe('bench stats: slope', () => {
  it('fits a line through noise that alternates around it, and needs two distinct x', () => {
    const points = Array.from({ length: 101 }, (_, i) => [i, 1000 + 0.5 * i + (i % 2 === 0 ? 60 : -60)] as const);
    assert.ok(Math.abs(slope(points) - 0.5) < 0.02, `${slope(points)}`);
    assert.ok(Number.isNaN(slope([[1, 2]])));
    assert.ok(
      Number.isNaN(
        slope([
          [1, 2],
          [1, 5],
        ]),
      ),
    );
  });
});

describe('bench inputs: the profile --set names', () => {
  it("makes the shared inputs with that profile's market, cached apart; refuses an unknown name", () => {
    assert.equal(inputProfile(undefined), 'default');
    assert.equal(inputProfile(''), 'default');
    assert.equal(inputProfile('mainnet'), 'mainnet');
    assert.throws(() => inputProfile('testnet'), /unknown profile "testnet"/);
    const spec = { seed: 7, chains: ['solana' as const], trades: 300, rate: 1000, startAgoMs: 3600_000 };
    const light = generateInputs({ ...spec, profile: 'default' });
    const mainnet = generateInputs({ ...spec, profile: 'mainnet' });
    assert.notEqual(inputCachePath(light.spec), inputCachePath(mainnet.spec));
    // The mainnet market launches and funds far more: more records for the same trades.
    assert.ok(mainnet.records.length > light.records.length, `${mainnet.records.length} vs ${light.records.length}`);
  });
});

describe('bench harness (spot bench --quick)', function () {
  this.timeout(300_000); // soak and idle each start a spot up child
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-bench-test-'));
  after(() => fs.rmSync(out, { recursive: true, force: true }));

  let code: number;
  let report: BenchReport;

  before(async () => {
    const ctx = createContext(loadConfig({ SPOT_LOG_LEVEL: 'silent', SPOT_DATA_DIR: out }), createLogger('silent'));
    const write = process.stdout.write.bind(process.stdout);
    // The command prints the markdown table; keep the test output readable.
    process.stdout.write = (() => true) as typeof process.stdout.write;
    try {
      code = await benchCommand(ctx, ['--quick', '--out', out]);
    } finally {
      process.stdout.write = write;
    }
    report = JSON.parse(fs.readFileSync(path.join(out, 'latest.json'), 'utf8')) as BenchReport;
  });

  it('runs every scenario (the Kafka one only where kcat exists)', () => {
    assert.deepEqual(
      report.failures.filter((f) => !f.error.startsWith('skipped:')),
      [],
    );
    assert.equal(code, 0);
    const ran = report.scenarios.map((s) => s.scenario).sort();
    const expected = Object.keys(SCENARIOS)
      .filter((name) => name !== 'pipeline-kafka' || kcatAvailable())
      .sort();
    assert.deepEqual(ran, expected);
  });

  it('records the machine, the commit and the inputs', () => {
    assert.equal(report.machine.cpus, os.cpus().length);
    assert.equal(report.machine.node, process.version);
    assert.ok(report.machine.memoryBytes > 0);
    assert.ok(report.command.startsWith('spot bench'));
    assert.ok(report.git.commit === null || /^[0-9a-f]{40}$/.test(report.git.commit));
    assert.ok((report.input.swaps as number) > 0, 'the simulator produced swaps');
    assert.equal(report.input.profile, 'default');
  });

  it('gives every scenario parameters, finite figures and checked targets', () => {
    for (const s of report.scenarios) {
      assert.ok(Object.keys(s.params).length > 0, `${s.scenario} params`);
      assert.ok(s.measurements.length > 0, `${s.scenario} measurements`);
      for (const m of s.measurements)
        if (!Number.isFinite(m.value))
          assert.fail(
            `${s.scenario}: ${m.subject} = ${m.value}; evidence ${JSON.stringify(s.evidence ?? null).slice(0, 3000)}`,
          );
      for (const t of s.targets) assert.equal(t.pass, t.op === '>=' ? t.actual >= t.target : t.actual <= t.target);
    }
    const byName = new Map(report.scenarios.map((s) => [s.scenario, s]));
    assert.ok(Number.isFinite(byName.get('pipeline')!.ratios.pipeline_embedded_vs_raw_chdb_insert));
    assert.ok(Number.isFinite(byName.get('fanout')!.ratios.spot_vs_raw_uws_publish));
    assert.ok(Number.isFinite(byName.get('rest')!.ratios.token_details_vs_koa_hello));
    // The reads scenario compares its two forms of each read itself (it fails if they differ).
    const reads = byName.get('reads')!.ratios;
    assert.ok(Number.isFinite(reads.trades_cursor_page_p50_former_vs_current));
    assert.ok(Number.isFinite(reads.candles_busy_1s_500_p50_unbounded_vs_newest));
    // The store scenario checks every insert form against today's rows itself (it fails otherwise).
    const store = byName.get('store')!;
    assert.ok(store.measurements.some((m) => m.subject.startsWith('live cadence') && m.value > 0));
    assert.ok(Number.isFinite(store.ratios.trades_rowBinaryFile_vs_jsonCompact));
    assert.equal(
      report.targets.length,
      report.scenarios.reduce((n, s) => n + s.targets.length, 0),
    );
    const rest = byName.get('rest')!;
    assert.equal(rest.measurements.length, 6, 'Koa baseline and five endpoints');
    for (const m of rest.measurements) assert.equal(m.extra?.non2xx, 0, `${m.subject} answered 2xx`);
  });

  it("records the machine's CPU beside the soak: the run and each frame window", function () {
    if (!fs.existsSync('/proc/stat')) this.skip();
    const soak = report.scenarios.find((s) => s.scenario === 'soak')!;
    const evidence = soak.evidence as {
      machine: MachineShare | null;
      frameWindows: Array<{ machine: MachineShare | null }>;
    };
    assert.ok(evidence.frameWindows.length > 0, 'the quick soak has frame windows');
    for (const share of [evidence.machine, ...evidence.frameWindows.map((w) => w.machine)]) {
      assert.ok(share, 'read from /proc/stat');
      for (const value of [share.busy, share.steal, share.iowait]) assert.ok(value >= 0 && value <= 1, `${value}`);
      assert.ok(share.busy > 0, 'a soak keeps the cores busy');
    }
  });

  it('fits the RSS growth line once the soak runs past its start, and checks it; idle runs too short', () => {
    const soak = report.scenarios.find((s) => s.scenario === 'soak')!;
    const growth = soak.measurements.find((m) => m.metric === 'rssGrowth');
    assert.ok(growth, 'the quick soak goes past growthFromSeconds by growthMinSpanSeconds');
    assert.equal(growth.unit, 'MB/h');
    assert.ok((growth.extra?.samples as number) >= 3, 'a line through the 1 s samples');
    assert.ok(soak.targets.some((t) => t.metric === 'rssGrowth' && t.actual === growth.value));
    const idle = report.scenarios.find((s) => s.scenario === 'idle')!;
    assert.ok(!idle.measurements.some((m) => m.metric === 'rssGrowth'), 'no figure without the span');
  });

  it("runs the issue's check: token details and a bare server answered one after the other, growth and exit checked", () => {
    const run = report.scenarios.find((s) => s.scenario === 'check')!;
    const [tokenDetails, bare] = run.measurements.filter((m) => m.metric === 'p99');
    assert.ok(tokenDetails && bare, 'the service and the bare server');
    assert.ok((tokenDetails.extra?.requests as number) > 0, 'token details were asked');
    assert.equal(tokenDetails.extra?.non2xx, 0);
    // One bare request follows each token request, unless the run ended between the two.
    assert.ok(Math.abs((bare.extra?.requests as number) - (tokenDetails.extra?.requests as number)) <= 1);
    assert.ok(
      Object.keys(tokenDetails.extra ?? {}).some((k) => k.startsWith('p99At')),
      'windows',
    );
    const labels = run.targets.map((t) => t.metric).sort();
    assert.deepEqual(labels, ['p99', 'rssGrowth', 'shutdownMs', 'tradesPerSecond']);
    // The store's rate stands beside what the chain appended and the aggregator priced.
    const store = run.measurements.find((m) => m.metric === 'tradesPerSecond')!;
    assert.ok((store.extra?.swapsOnLogPerSecond as number) > 0, JSON.stringify(store.extra));
    const tradesPerSwap = store.extra?.tradesPerSwapOnLog as number;
    assert.ok(tradesPerSwap > 0 && tradesPerSwap <= 1, JSON.stringify(store.extra));
    const exit = run.measurements.find((m) => m.metric === 'shutdownMs')!;
    assert.equal(exit.extra?.exitCode, 0);
    assert.ok(run.ratios.tokenDetailsP99OverBareServerP99! > 0);
  });

  it('writes the markdown table', () => {
    const md = fs.readFileSync(path.join(out, 'latest.md'), 'utf8');
    assert.match(md, /\| Scenario \| Subject \| Result \| Details \|/);
    assert.match(md, /\| Target \| Actual \| Pass \|/);
    for (const s of report.scenarios) assert.ok(md.includes(`| ${s.scenario} |`), s.scenario);
  });
});
