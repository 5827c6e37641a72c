// The contract between the bench parent (bench/run.ts) and a scenario child process: the parent
// spawns `node --import tsx bench/scenarios/<name>.ts '<params JSON>'`, the child does its work on
// a temp data dir of its own (chDB binds one data dir per process) and prints one result line.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../core/config.ts';
import { createContext, type Context } from '../../core/context.ts';
import { createLogger, type LogLevel } from '../../core/logger.ts';

/** Marks the one stdout line the parent parses; anything else a child prints is ignored. */
export const RESULT_MARKER = 'SPOT_BENCH_RESULT ';

export interface TargetCheck {
  /** What the target says, e.g. "pipeline >= 100,000 swaps/s". */
  label: string;
  metric: string;
  op: '>=' | '<=';
  target: number;
  actual: number;
  unit: string;
  pass: boolean;
}

export interface Measurement {
  /** Row label in the table, e.g. "spot pipeline (embedded)" or "raw chDB insert". */
  subject: string;
  metric: string;
  value: number;
  unit: string;
  /** Extra figures of the same row (percentiles, counts). */
  extra?: Record<string, number>;
}

export interface ScenarioResult {
  scenario: string;
  params: Record<string, unknown>;
  measurements: Measurement[];
  /** name -> value: the service's figure divided by its baseline's, both from this run. */
  ratios: Record<string, number>;
  targets: TargetCheck[];
  notes: string[];
  /** Figures that explain a result (stage timings, counts); shown under the table. */
  evidence?: Record<string, unknown>;
  durationMs: number;
}

export function check(
  label: string,
  metric: string,
  op: '>=' | '<=',
  target: number,
  actual: number,
  unit: string,
): TargetCheck {
  const pass = Number.isFinite(actual) && (op === '>=' ? actual >= target : actual <= target);
  return { label, metric, op, target, actual, unit, pass };
}

export interface ScenarioEnv {
  ctx: Context;
  /** Temp dir of this child: the data dir (event log, chDB, keys); removed on exit. */
  dir: string;
}

export type ScenarioBody<P> = (
  env: ScenarioEnv,
  params: P,
) => Promise<Omit<ScenarioResult, 'scenario' | 'params' | 'durationMs'> & { params?: Record<string, unknown> }>;

export function scenarioContext(dir: string, overrides: Record<string, string> = {}): Context {
  const level = (process.env.SPOT_BENCH_LOG_LEVEL || 'warn') as LogLevel;
  const config = loadConfig({
    SPOT_DATA_DIR: dir,
    SPOT_LOG_LEVEL: level,
    SPOT_HTTP_PORT: '0',
    SPOT_WS_PORT: '0',
    SPOT_SQL_PORT: '0',
    ...overrides,
  });
  // stdout carries the result line: logs go to stderr.
  return createContext(config, createLogger(level, process.stderr));
}

/** Entry of a scenario file: parses params, runs the body on a fresh temp dir, prints the result, exits. */
export function runScenarioMain<P extends object>(scenario: string, defaults: P, body: ScenarioBody<P>): void {
  const given = process.argv[2] ? (JSON.parse(process.argv[2]) as Partial<P>) : {};
  const params = { ...defaults, ...given } as P;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `spot-bench-${scenario}-`));
  const started = Date.now();
  const ctx = scenarioContext(dir);
  const cleanup = () => fs.rmSync(dir, { recursive: true, force: true });
  body({ ctx, dir }, params).then(
    (result) => {
      const full: ScenarioResult = {
        scenario,
        ...result,
        params: { ...(params as Record<string, unknown>), ...(result.params ?? {}) },
        durationMs: Date.now() - started,
      };
      process.stdout.write(`${RESULT_MARKER}${JSON.stringify(full)}\n`, () => {
        cleanup();
        process.exit(0);
      });
    },
    (error: unknown) => {
      // The data dir stays: a failed run's logs and state are what explains it.
      process.stderr.write(
        `bench scenario ${scenario} failed (its data dir is kept at ${dir}): ${(error as Error)?.stack ?? String(error)}\n`,
      );
      process.exit(1);
    },
  );
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Wall-clock epoch time in ms with sub-ms precision; comparable across processes of one machine. */
export const epochNow = () => performance.timeOrigin + performance.now();
