// `spot bench [scenario…] [--quick] [--set key=value …] [--out DIR] [--cpu-prof DIR]` (and `npm run bench`): makes the
// simulator inputs once, runs each scenario in a child process of its own (chDB binds one data
// dir per process; a server never shares an event loop with its load), and writes
// <out>/latest.json and <out>/latest.md. A full run with the default output also refreshes
// bench/RESULTS.md, the committed copy of the table.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Chain } from '../core/chains.ts';
import type { Context } from '../core/context.ts';
import { kcatAvailable } from '../test/helpers/kafka-mock.ts';
import { countSwaps, ensureDecoded, ensureInputs, inputProfile, readDecoded, type InputSpec } from './lib/inputs.ts';
import { RESULT_MARKER, type ScenarioResult } from './lib/scenario.ts';
import { SERVICE_CPU_PROF_ENV, SERVICE_NODE_ARGS } from './lib/spot-process.ts';
import { gitInfo, machineInfo, renderMarkdown, type BenchReport, type ScenarioFailure } from './report.ts';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.dirname(BENCH_DIR);
const ALL_CHAINS: Chain[] = ['solana', 'base', 'bsc', 'robinhood', 'arc'];

interface ScenarioSpec {
  file: string;
  params: Record<string, unknown>;
  /** Tiny parameters for the smoke test (`--quick`). */
  quick: Record<string, unknown>;
  nodeArgs?: string[];
  requires?: () => string | null;
  /** How long the scenario may take beyond its own `durationSeconds` parameter, when it has one. */
  timeoutMs: number;
}

export const SCENARIOS: Record<string, ScenarioSpec> = {
  pipeline: { file: 'pipeline.ts', params: { transport: 'embedded', split: true }, quick: {}, timeoutMs: 240_000 },
  'pipeline-kafka': {
    file: 'pipeline.ts',
    params: { transport: 'kafka', split: false },
    quick: {},
    timeoutMs: 240_000,
    requires: () => (kcatAvailable() ? null : 'kcat is not installed (no Kafka mock cluster)'),
  },
  latency: {
    file: 'latency.ts',
    params: { swapsPerSecond: 5000, subscribers: 1000, seconds: 4, warmupSeconds: 1 },
    quick: { swapsPerSecond: 300, subscribers: 20, seconds: 0.5, warmupSeconds: 0.2 },
    timeoutMs: 180_000,
  },
  fanout: {
    file: 'fanout.ts',
    params: { subscribers: 1000, messages: 300 },
    quick: { subscribers: 20, messages: 20 },
    timeoutMs: 180_000,
  },
  resume: { file: 'resume.ts', params: {}, quick: {}, timeoutMs: 180_000 },
  rest: {
    file: 'rest.ts',
    params: { connections: 10, durationSeconds: 3 },
    quick: { connections: 2, durationSeconds: 0.3, candleBuckets: 50 },
    timeoutMs: 180_000,
  },
  replay: { file: 'replay.ts', params: {}, quick: {}, timeoutMs: 240_000 },
  store: { file: 'store.ts', params: {}, quick: { copies: 1, rounds: 1 }, timeoutMs: 240_000 },
  reads: {
    file: 'reads.ts',
    params: {},
    quick: { trades: 3000, rowsPerInsert: 500, pages: 6, candleDays: 0.05, candleReads: 4 },
    timeoutMs: 240_000,
  },
  partitioned: { file: 'partitioned.ts', params: {}, quick: {}, timeoutMs: 240_000 },
  fuzz: {
    file: 'fuzz.ts',
    params: { cases: 5000, tokens: 20_000 },
    quick: { cases: 50, tokens: 200 },
    timeoutMs: 600_000,
  },
  rpc: {
    file: 'rpc.ts',
    params: { minutes: 2, rate: 1500 },
    quick: { minutes: 0.5, rate: 50 },
    timeoutMs: 240_000,
  },
  day: {
    file: 'day.ts',
    params: { minutes: 60, rate: 2000 },
    quick: { minutes: 0.5, rate: 200 },
    nodeArgs: ['--expose-gc'],
    // 7.2M swaps and ~10M token events at ~2,400 swaps/s on 2 cores: about 67 minutes.
    timeoutMs: 2 * 3_600_000,
  },
  soak: {
    file: 'live.ts',
    params: { mode: 'soak', rate: 2000, subscribers: 1000, restPerSecond: 200, durationSeconds: 600 },
    quick: {
      rate: 200,
      subscribers: 20,
      restPerSecond: 20,
      durationSeconds: 12,
      warmupSeconds: 6,
      frameWindowEverySeconds: 3,
      frameWindowSeconds: 2,
      // The growth line from 10 s on, over at least 3 s of samples: the figure and its check run.
      growthFromSeconds: 10,
      growthMinSpanSeconds: 3,
    },
    timeoutMs: 300_000,
  },
  idle: {
    file: 'live.ts',
    params: { mode: 'idle', rate: 200, subscribers: 0, restPerSecond: 0, durationSeconds: 60 },
    quick: { durationSeconds: 4, warmupSeconds: 4 },
    timeoutMs: 240_000,
  },
  check: {
    file: 'check.ts',
    params: { rate: 2000, warmHours: 24, durationSeconds: 360 },
    quick: {
      rate: 200,
      profile: '',
      warmHours: 0.05,
      durationSeconds: 20,
      windowSeconds: 5,
      growthFromSeconds: 8,
      growthToSeconds: 18,
      cpuFromSeconds: 8,
      storeWindowSeconds: 10,
    },
    timeoutMs: 240_000,
  },
  memory: {
    file: 'memory.ts',
    params: { tokens: 20_000 },
    quick: { tokens: 200, aggTokens: 50, aggFewTrades: 10, aggManyTrades: 100, aggWallets: 2000 },
    nodeArgs: ['--expose-gc'],
    timeoutMs: 120_000,
  },
};

// The shared inputs' market runs the profile `--set profile` names (the default one without it).
const FULL_INPUT: Omit<InputSpec, 'profile'> = {
  seed: 7,
  chains: ALL_CHAINS,
  trades: 20_000,
  rate: 1000,
  startAgoMs: 2 * 3600_000,
};
const QUICK_INPUT: Omit<InputSpec, 'profile'> = { ...FULL_INPUT, trades: 300 };

interface Options {
  scenarios: string[];
  quick: boolean;
  out: string | null;
  cpuProfDir: string | null;
  /** `--set key=value`: overrides a parameter of every scenario run (numbers parsed as numbers). */
  overrides: Record<string, unknown>;
}

function parseOverride(text: string): [string, unknown] {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new Error(`--set takes key=value, got "${text}"`);
  const raw = text.slice(eq + 1);
  const number = Number(raw);
  return [text.slice(0, eq), raw !== '' && Number.isFinite(number) ? number : raw];
}

function parseArgs(args: string[]): Options {
  const options: Options = { scenarios: [], quick: false, out: null, cpuProfDir: null, overrides: {} };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--quick') options.quick = true;
    else if (arg === '--out') options.out = path.resolve(args[++i] ?? '');
    else if (arg === '--cpu-prof') options.cpuProfDir = path.resolve(args[++i] ?? '');
    else if (arg === '--set') {
      const [key, value] = parseOverride(args[++i] ?? '');
      options.overrides[key] = value;
    } else if (arg.startsWith('-')) throw new Error(`unknown option ${arg}`);
    else if (!SCENARIOS[arg]) throw new Error(`unknown scenario "${arg}"; one of ${Object.keys(SCENARIOS).join(', ')}`);
    else options.scenarios.push(arg);
  }
  if (options.scenarios.length === 0) options.scenarios = Object.keys(SCENARIOS);
  return options;
}

function runChild(
  name: string,
  spec: ScenarioSpec,
  params: Record<string, unknown>,
  cpuProfDir: string | null,
): Promise<ScenarioResult> {
  // One folder per scenario and Node's default file names (they carry the thread id), so the
  // tsx loader thread's profile does not overwrite the main thread's.
  const nodeArgs = [
    ...SERVICE_NODE_ARGS,
    ...(spec.nodeArgs ?? []),
    ...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(cpuProfDir, name)}`] : []),
  ];
  const child = spawn(
    process.execPath,
    [...nodeArgs, '--import', 'tsx', path.join(BENCH_DIR, 'scenarios', spec.file), JSON.stringify(params)],
    {
      cwd: REPO,
      // The scenario's `spot up` children are profiled too (spot-process.ts): they are what a soak measures.
      env: cpuProfDir ? { ...process.env, [SERVICE_CPU_PROF_ENV]: path.join(cpuProfDir, name, 'spot') } : process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => (out += chunk));
  child.stderr.on('data', (chunk: string) => {
    if (err.length < 200_000) err += chunk;
  });
  // A long soak (--set durationSeconds=5400) is given its own length on top.
  const timeoutMs = spec.timeoutMs + (typeof params.durationSeconds === 'number' ? params.durationSeconds * 1000 : 0);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const line = out.split('\n').find((l) => l.startsWith(RESULT_MARKER));
      if (code === 0 && line)
        return resolve({ ...(JSON.parse(line.slice(RESULT_MARKER.length)) as ScenarioResult), scenario: name });
      reject(
        new Error(
          `exited ${signal ?? code}${signal === 'SIGKILL' ? ` (over ${timeoutMs} ms)` : ''}: ${err.trim().split('\n').slice(-15).join('\n')}`,
        ),
      );
    });
  });
}

export async function benchCommand(ctx: Context, args: string[]): Promise<number> {
  const log = ctx.logger.child({ component: 'bench' });
  let options: Options;
  try {
    options = parseArgs(args);
  } catch (error) {
    process.stderr.write(`spot bench: ${(error as Error).message}\n`);
    return 2;
  }
  const outDir = options.out ?? path.join(BENCH_DIR, 'results');
  let inputSpec: InputSpec;
  try {
    inputSpec = { ...(options.quick ? QUICK_INPUT : FULL_INPUT), profile: inputProfile(options.overrides.profile) };
  } catch (error) {
    process.stderr.write(`spot bench: ${(error as Error).message}\n`);
    return 2;
  }
  const command = `spot bench${args.length ? ` ${args.join(' ')}` : ''}`;
  const machine = machineInfo();

  // Inputs ahead of every timed section: encoded chain records, and their decoded form.
  const inputStarted = Date.now();
  log.info(
    { trades: inputSpec.trades, profile: inputSpec.profile },
    'bench: preparing simulator inputs (cached across runs)',
  );
  const inputFile = ensureInputs(inputSpec);
  ensureDecoded(inputFile);
  const counts = countSwaps(readDecoded(inputFile));
  log.info({ inputFile, ...counts, ms: Date.now() - inputStarted }, 'bench: inputs ready');

  const scenarios: ScenarioResult[] = [];
  const failures: ScenarioFailure[] = [];
  if (options.cpuProfDir) fs.mkdirSync(options.cpuProfDir, { recursive: true });
  for (const name of options.scenarios) {
    const spec = SCENARIOS[name]!;
    const missing = spec.requires?.();
    if (missing) {
      failures.push({ scenario: name, error: `skipped: ${missing}` });
      log.warn({ scenario: name, reason: missing }, 'bench: scenario skipped');
      continue;
    }
    const params = { inputFile, ...spec.params, ...(options.quick ? spec.quick : {}), ...options.overrides };
    log.info({ scenario: name }, 'bench: running');
    try {
      const result = await runChild(name, spec, params, options.cpuProfDir);
      scenarios.push(result);
      for (const t of result.targets)
        log.info({ scenario: name, target: t.label, actual: t.actual, pass: t.pass }, 'bench: target');
    } catch (error) {
      failures.push({ scenario: name, error: (error as Error).message });
      log.error({ scenario: name, err: (error as Error).message }, 'bench: scenario failed');
    }
  }

  const report: BenchReport = {
    generatedAt: new Date().toISOString(),
    command,
    machine,
    git: gitInfo(REPO),
    input: { ...inputSpec, ...counts, source: 'market simulator (model + chain writer), decoded by the real decoders' },
    scenarios,
    failures,
    targets: scenarios.flatMap((s) => s.targets.map((t) => ({ ...t, scenario: s.scenario }))),
  };
  const markdown = renderMarkdown(report);
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  fs.writeFileSync(path.join(outDir, 'latest.md'), markdown);
  const complete =
    !options.quick &&
    options.out === null &&
    Object.keys(options.overrides).length === 0 &&
    options.scenarios.length === Object.keys(SCENARIOS).length;
  if (complete) fs.writeFileSync(path.join(BENCH_DIR, 'RESULTS.md'), `# Benchmark results\n\n${markdown}`);
  process.stdout.write(markdown);
  return failures.some((f) => !f.error.startsWith('skipped:')) ? 1 : 0;
}
