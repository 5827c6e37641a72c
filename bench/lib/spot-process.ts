// A real `spot up` child process on a scenario's data dir, as a user starts it (bin/spot.js), with
// its CPU and RSS read from /proc: the soak, idle-cost and shutdown scenarios measure the product,
// not parts wired by hand.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@clickhouse/client';
import { answersOk, freePort, waitFor } from '../../test/helpers/ports.ts';
import { epochNow } from './scenario.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLOCK_TICKS_PER_SECOND = 100;
export const BENCH_API_KEY = 'bench-soak-key-0001';

export interface ProcessSample {
  /** Epoch ms of the sample. */
  at: number;
  /** User + system CPU time of the whole process (every thread), ms. */
  cpuMs: number;
  rssBytes: number;
}

export interface SpotProcess {
  child: ChildProcess;
  http: string;
  ws: string;
  sql: string;
  authorization: string;
  sample(): ProcessSample;
  /** The simulator's chain node: a child process of spot up (ingest/simulator/node-process.ts); null when there is none. */
  simulatorNodePid(): number | null;
  /** The same figures for the simulator's node process, or null. */
  simulatorNodeSample(): ProcessSample | null;
  /** CPU ms of each thread of the process now, by the kernel's thread id. */
  threadCpu(): ThreadCpu;
  /** The loop thread (main, serving or ingest) with that kernel id, once its loop report gave it; null for others. */
  loopThreadOf(tid: string): LoopThread | null;
  /** The most traded tokens so far, from the store through the SQL endpoint. */
  topTokens(limit: number): Promise<Array<{ chain: string; token: string }>>;
  /** Rows of a query on the SQL endpoint (read-only analyst access). */
  query<T>(sql: string): Promise<T[]>;
  output(): string;
  /**
   * How long each part took to stop at the last shutdown (runtime.ts logs it at info), ms by part,
   * with the aggregator's phases as `aggregator.<phase>`.
   */
  stopTimes(): Record<string, number>;
  /**
   * A thread's event-loop reports so far (logged every 30 s at info): the serving thread's, the
   * main thread's (the aggregator's and the store's) or the ingest thread's.
   */
  loopReports(thread: LoopThread): LoopReport[];
  /** SIGTERM; resolves with the exit code and the ms from the signal to the exit. */
  stop(timeoutMs?: number): Promise<{ code: number | null; signal: string | null; ms: number }>;
}

export type LoopThread = 'serving' | 'main' | 'ingest';
export const LOOP_THREADS: readonly LoopThread[] = ['serving', 'main', 'ingest'];
/** Each thread with what its report line holds (cli/thread-report.ts's component). */
const LOOP_COMPONENTS = LOOP_THREADS.map((thread) => [thread, `"component":"${thread}-loop"`] as const);

/** A thread's event-loop report (cli/thread-report.ts). */
export interface LoopReport {
  /** Epoch ms of the log line. */
  time: number;
  /** The kernel's id of the thread (null off Linux). */
  tid: number | null;
  delayMs: { p50: number; p99: number; max: number };
  utilization: number;
  /** The thread's GC pauses over the report's 30 s. */
  gc: { count: number; totalMs: number; maxMs: number };
  /** Its V8 heap: used, committed, and the committed size of the spaces that hold most of it. */
  heapMB: number;
  heapCommittedMB: number;
  newSpaceMB: number;
  oldSpaceMB: number;
  largeObjectSpaceMB: number;
}

/**
 * CPU ms of each thread by the kernel's thread id, with the thread's name and the ms it waited
 * runnable for a core (schedstat's run-queue wait: a niced thread on a busy machine waits there).
 */
export type ThreadCpu = Record<string, { name: string; ms: number; waitMs: number }>;

/**
 * Share of a core per thread between two readings `spanMs` apart: the loop threads by role, the
 * others summed by name (comm: V8's and libuv's helper threads are "node", chDB names its pools).
 * Under half a percent is left out, as are threads that ended in between.
 */
export function threadShares(
  spot: SpotProcess,
  from: ThreadCpu,
  to: ThreadCpu,
  spanMs: number,
  figure: 'ms' | 'waitMs' = 'ms',
): Record<string, number> {
  const msByRole: Record<string, number> = {};
  for (const [tid, reading] of Object.entries(to)) {
    const role = spot.loopThreadOf(tid) ?? reading.name;
    msByRole[role] = (msByRole[role] ?? 0) + reading[figure] - (from[tid]?.[figure] ?? 0);
  }
  const shares: Record<string, number> = {};
  for (const [role, ms] of Object.entries(msByRole))
    if (ms / spanMs >= 0.005) shares[role] = Math.round((ms / spanMs) * 1000) / 1000;
  return shares;
}

/** The ms a thread has waited runnable for a core, from its schedstat (0 where the kernel keeps none). */
function runQueueWaitMs(file: string): number {
  try {
    return Number(fs.readFileSync(file, 'utf8').split(' ')[1]) / 1e6 || 0;
  } catch {
    return 0;
  }
}

function processSample(pid: number): ProcessSample {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at index 2 = state.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const rssPages = Number(fs.readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]);
  return { at: epochNow(), cpuMs: (ticks * 1000) / CLOCK_TICKS_PER_SECOND, rssBytes: rssPages * 4096 };
}

/** The child process of `pid` that runs the simulator's node, from the kernel's list of children. */
export function simulatorNodePid(pid: number): number | null {
  let children: string[];
  try {
    children = fs
      .readdirSync(`/proc/${pid}/task`)
      .flatMap((task) => fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' '))
      .filter(Boolean);
  } catch {
    return null;
  }
  for (const child of children) {
    try {
      if (fs.readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('node-process-main')) return Number(child);
    } catch {
      // exited meanwhile
    }
  }
  return null;
}

/** The figures of `parent`'s simulator node process, or null when it has none (or it just exited). */
export function simulatorNodeSample(parent: number): ProcessSample | null {
  const pid = simulatorNodePid(parent);
  try {
    return pid === null ? null : processSample(pid);
  } catch {
    return null; // it exited between the lookup and the read
  }
}

/**
 * The Node flags `npm start` runs the service with (package.json): a 32 MiB young-generation
 * semi-space (V8's default is 16) cut scavenge time enough to add ~40% to log → sinks throughput
 * (7.7k → 10.6–11k swaps/s in back-to-back bench runs), for ~50 MiB more heap reservation; a 2,000
 * MiB old generation, under which V8 grows a heap to ~2x its live size between full collections
 * instead of 4x (docs/commands.md).
 */
export const SERVICE_NODE_ARGS = ['--max-semi-space-size=32', '--max-old-space-size=2000'];

/** glibc's malloc arenas as `npm start` caps them (package.json, docs/commands.md), unless the caller set them. */
export const SERVICE_MALLOC_ARENA_MAX = process.env.MALLOC_ARENA_MAX ?? '2';

/** Set by `spot bench --cpu-prof DIR`: the folder for V8 profiles of each thread of `spot up`. */
export const SERVICE_CPU_PROF_ENV = 'SPOT_BENCH_SERVICE_CPU_PROF_DIR';

function serviceNodeArgs(): string[] {
  const profDir = process.env[SERVICE_CPU_PROF_ENV];
  return profDir ? [...SERVICE_NODE_ARGS, '--cpu-prof', `--cpu-prof-dir=${profDir}`] : SERVICE_NODE_ARGS;
}

/** Starts `spot up` with `env` on `dataDir`; resolves once the REST API answers. */
export async function startSpot(dataDir: string, env: Record<string, string>): Promise<SpotProcess> {
  const [httpPort, wsPort, sqlPort] = [await freePort(), await freePort(), await freePort()];
  let output = '';
  // Every line the child writes, on disk beside its data: a child that exits mid-scenario leaves its cause.
  const logFile = fs.createWriteStream(path.join(dataDir, 'spot-up.log'), { flags: 'a' });
  const child = spawn(process.execPath, [...serviceNodeArgs(), path.join(REPO, 'bin', 'spot.js'), 'up'], {
    cwd: REPO,
    env: {
      ...process.env,
      MALLOC_ARENA_MAX: SERVICE_MALLOC_ARENA_MAX,
      SPOT_DATA_DIR: dataDir,
      SPOT_HTTP_PORT: String(httpPort),
      SPOT_WS_PORT: String(wsPort),
      SPOT_SQL_PORT: String(sqlPort),
      SPOT_API_KEYS: BENCH_API_KEY,
      SPOT_LOG_LEVEL: process.env.SPOT_BENCH_LOG_LEVEL || 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const loopReports = new Map<LoopThread, LoopReport[]>(LOOP_THREADS.map((thread) => [thread, []]));
  const threadOfTid = new Map<string, LoopThread>();
  const stopTimes: Record<string, number> = {};
  let partial = '';
  const keep = (chunk: Buffer) => {
    logFile.write(chunk);
    const text = chunk.toString();
    output = (output + text).slice(-20_000);
    const lines = (partial + text).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      const thread = LOOP_COMPONENTS.find(([, component]) => line.includes(component))?.[0];
      if (thread) {
        const report = JSON.parse(line) as LoopReport;
        loopReports.get(thread)!.push(report);
        if (report.tid !== null && report.tid !== undefined) threadOfTid.set(String(report.tid), thread);
      } else if (line.includes('"msg":"stopped"')) {
        const { part, ms } = JSON.parse(line) as { part: string; ms: number };
        stopTimes[part] = ms;
      } else if (line.includes('"msg":"aggregator stop phases"')) {
        const { phasesMs } = JSON.parse(line) as { phasesMs: Record<string, number> };
        for (const [phase, ms] of Object.entries(phasesMs)) stopTimes[`aggregator.${phase}`] = ms;
      } else if (line.includes('"msg":"store and event log closed"')) {
        const { storeMs, logMs } = JSON.parse(line) as { storeMs: number; logMs: number };
        Object.assign(stopTimes, { 'store close': storeMs, 'log close': logMs });
      }
    }
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  child.once('close', () => logFile.end());
  const sampleLive = () => {
    try {
      return processSample(child.pid!);
    } catch (error) {
      const gone = child.exitCode !== null || child.signalCode !== null || !fs.existsSync(`/proc/${child.pid}`);
      if (!gone) throw error;
      throw new Error(
        `spot up exited mid-scenario (code ${child.exitCode}, signal ${child.signalCode}); its output is in ${logFile.path}:\n${output.slice(-3000)}`,
      );
    }
  };
  const http = `http://127.0.0.1:${httpPort}`;
  const sql = `http://127.0.0.1:${sqlPort}`;
  const ready = waitFor(() => answersOk(`${http}/openapi.json`), 120_000, 'spot up to serve REST');
  await Promise.race([
    ready,
    exited.then(({ code }) => {
      throw new Error(`spot up exited during start-up (code ${code}):\n${output.slice(-3000)}`);
    }),
  ]);
  // Long: under load a count waits behind the store's inserts on the main thread's chDB.
  const client = createClient({ url: sql, request_timeout: 120_000 });
  const query = async <T>(text: string) =>
    (await (await client.query({ query: text, format: 'JSONEachRow' })).json()) as T[];

  return {
    child,
    http,
    ws: `ws://127.0.0.1:${wsPort}/v1/stream`,
    sql,
    authorization: `Bearer ${BENCH_API_KEY}`,
    sample: sampleLive,
    simulatorNodePid: () => simulatorNodePid(child.pid!),
    simulatorNodeSample: () => simulatorNodeSample(child.pid!),
    threadCpu() {
      const byTid: ThreadCpu = {};
      for (const task of fs.readdirSync(`/proc/${child.pid}/task`)) {
        let stat: string;
        try {
          stat = fs.readFileSync(`/proc/${child.pid}/task/${task}/stat`, 'utf8');
        } catch {
          continue; // the thread ended between the listing and the read
        }
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        byTid[task] = {
          name,
          ms: ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND,
          waitMs: runQueueWaitMs(`/proc/${child.pid}/task/${task}/schedstat`),
        };
      }
      return byTid;
    },
    loopThreadOf: (tid) => (tid === String(child.pid) ? 'main' : (threadOfTid.get(tid) ?? null)),
    query,
    topTokens: (limit) =>
      query<{ chain: string; token: string }>(
        `SELECT chain, token FROM spot.trades GROUP BY chain, token ORDER BY count() DESC LIMIT ${limit}`,
      ),
    output: () => output,
    loopReports: (thread) => loopReports.get(thread)!,
    stopTimes: () => stopTimes,
    async stop(timeoutMs = 30_000) {
      await client.close();
      if (child.exitCode !== null) return { ...(await exited), ms: 0 };
      const from = epochNow();
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const result = await exited;
      clearTimeout(timer);
      return { ...result, ms: epochNow() - from };
    },
  };
}

/** Share of one core between two samples (1 = a whole core). */
export const coreShare = (a: ProcessSample, b: ProcessSample) => (b.cpuMs - a.cpuMs) / (b.at - a.at);

/** The parts and aggregator phases of a shutdown that took at least `minMs`: what a SIGTERM waited for. */
export function slowStopParts(times: Record<string, number>, minMs = 100): Record<string, number> {
  return Object.fromEntries(Object.entries(times).filter(([, ms]) => ms >= minMs));
}
