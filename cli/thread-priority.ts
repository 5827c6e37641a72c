// Serving first under contention: on Linux each thread has its own nice value, so `spot up` lowers
// the priority of the main thread (simulator or RPC intake, decoders, aggregator, store writes) and
// of chDB's threads, and leaves the serving thread (REST, stream edge) and V8's shared GC helpers at
// the default. When both want a core the kernel gives it to serving; on an idle machine nothing changes.
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

function threadName(tid: string): string {
  try {
    return fs.readFileSync(`${TASKS}/${tid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/**
 * Lowers the calling (main) thread, so threads it starts later inherit the value, and the native
 * threads already running (chDB's pools: any thread not named `node`). Node's own threads (the
 * serving thread, V8's platform workers, libuv's pool) keep theirs. Lowering needs no privilege.
 */
export function lowerIngestPriority(nice: number, servingThreadId: number | null, logger: Logger): void {
  if (nice === 0 || servingThreadId === null || !fs.existsSync(TASKS)) return;
  const lowered: number[] = [];
  try {
    os.setPriority(0, nice);
    lowered.push(process.pid);
    for (const tid of fs.readdirSync(TASKS)) {
      const id = Number(tid);
      if (id === process.pid || id === servingThreadId || threadName(tid) === 'node') continue;
      try {
        os.setPriority(id, nice);
        lowered.push(id);
      } catch {
        // The thread ended between listing and setting.
      }
    }
  } catch (error) {
    logger.warn(
      { err: error, nice },
      'could not lower the priority of the ingest threads; serving shares the cores equally',
    );
    return;
  }
  logger.info({ nice, threads: lowered.length, servingThreadId }, 'ingest threads lowered below the serving thread');
}
