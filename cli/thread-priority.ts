// Serving first under contention: on Linux each thread has its own nice value, so `spot up` lowers
// the priority of every thread but the serving thread (REST, stream edge): the main thread
// (aggregator, store writes), the ingest thread started after it (RPC or simulator intake,
// decoders, enrichment), chDB's threads, and V8's shared
// GC helpers, whose work is mostly the main thread's heap (about 1 GB against the serving thread's
// 0.3 GB; the serving thread does its own scavenges). When both want a core the kernel gives it to
// serving; on an idle machine nothing changes.
import fs from 'node:fs';
import os from 'node:os';
import type { Logger } from '../core/logger.ts';

const TASKS = '/proc/self/task';

/** This thread's kernel id, or null where /proc/thread-self does not exist (not Linux). */
export function currentThreadId(): number | null {
  try {
    return Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
  } catch {
    return null;
  }
}

/** Sets `nice` on every thread listed in `tasks` (a /proc/<pid>/task directory) but the skipped ones; returns how many. */
function lowerThreads(tasks: string, nice: number, skip: (tid: number) => boolean): number {
  let lowered = 0;
  for (const tid of fs.readdirSync(tasks)) {
    const id = Number(tid);
    if (skip(id)) continue;
    try {
      os.setPriority(id, nice);
      lowered++;
    } catch {
      // The thread ended between listing and setting.
    }
  }
  return lowered;
}

/**
 * Lowers the calling (main) thread, so threads it starts later inherit the value, and every thread
 * already running but the serving thread (chDB's pools, V8's platform workers, libuv's pool).
 * Lowering needs no privilege.
 */
export function lowerIngestPriority(nice: number, servingThreadId: number | null, logger: Logger): void {
  if (nice === 0 || servingThreadId === null || !fs.existsSync(TASKS)) return;
  let lowered: number;
  try {
    os.setPriority(0, nice);
    lowered = 1 + lowerThreads(TASKS, nice, (tid) => tid === process.pid || tid === servingThreadId);
  } catch (error) {
    logger.warn(
      { err: error, nice },
      'could not lower the priority of the ingest threads; serving shares the cores equally',
    );
    return;
  }
  logger.info({ nice, threads: lowered, servingThreadId }, 'ingest threads lowered below the serving thread');
}

/**
 * Sets every thread of another process of ours to `nice` (the simulator's chain node: its threads,
 * V8's helpers included, started before it could lower itself).
 */
export function lowerProcessPriority(pid: number, nice: number, logger: Logger): void {
  const tasks = `/proc/${pid}/task`;
  if (nice === 0 || !fs.existsSync(tasks)) return;
  const lowered = lowerThreads(tasks, nice, () => false);
  logger.info({ pid, nice, threads: lowered }, 'process lowered below the ingest threads');
}
