// A worker thread's own health, logged every 30 s: its event-loop delay and utilisation (what its
// work may wait behind), its V8 heap (process RSS covers every thread) and its GC pauses.
import {
  constants,
  monitorEventLoopDelay,
  performance,
  PerformanceObserver,
  type PerformanceEntry,
} from 'node:perf_hooks';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import type { Logger } from '../core/logger.ts';
import { currentThreadId } from './thread-priority.ts';

const REPORT_MS = 30_000;

interface Pauses {
  count: number;
  totalMs: number;
  maxMs: number;
}

const noPauses = (): Pauses => ({ count: 0, totalMs: 0, maxMs: 0 });

const rounded = (pauses: Pauses): Pauses => ({
  count: pauses.count,
  totalMs: Math.round(pauses.totalMs),
  maxMs: Math.round(pauses.maxMs),
});

/** Each V8 heap space's committed size, MB. */
function spaceSizesMB(): Record<string, number> {
  return Object.fromEntries(
    getHeapSpaceStatistics().map((space) => [space.space_name, Math.round(space.space_size / 1e6)]),
  );
}

/** Starts the reports; `component` and `message` name the thread in the log line. Returns a stop. */
export function reportThreadLoop(logger: Logger, component: string, message: string, everyMs = REPORT_MS): () => void {
  // The kernel's id, so a reader of /proc can tell this thread's CPU from its siblings'.
  const tid = currentThreadId();
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  let lastUtilization = performance.eventLoopUtilization();
  // Scavenges and mark-compacts apart: a scavenge costs what survives it, a mark-compact the old space.
  let gcPauses = { all: noPauses(), minor: noPauses(), major: noPauses() };
  const add = (pauses: Pauses, ms: number) => {
    pauses.count++;
    pauses.totalMs += ms;
    if (ms > pauses.maxMs) pauses.maxMs = ms;
  };
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      add(gcPauses.all, entry.duration);
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) add(gcPauses.minor, entry.duration);
      else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) add(gcPauses.major, entry.duration);
    }
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  const timer = setInterval(() => {
    const utilization = performance.eventLoopUtilization(lastUtilization);
    lastUtilization = performance.eventLoopUtilization();
    const ms = (ns: number) => Math.round(ns / 1e4) / 100;
    const heap = getHeapStatistics();
    const spaceMB = spaceSizesMB();
    logger.info(
      {
        component,
        tid,
        delayMs: { p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) },
        utilization: Math.round(utilization.utilization * 1000) / 1000,
        heapMB: Math.round(heap.used_heap_size / 1e6),
        heapCommittedMB: Math.round(heap.total_heap_size / 1e6),
        // Both semi-spaces as they stand: the young generation a scavenge walks.
        newSpaceMB: spaceMB.new_space ?? 0,
        // Where the committed size sits: objects promoted, and those too large for a page.
        oldSpaceMB: spaceMB.old_space ?? 0,
        largeObjectSpaceMB: spaceMB.large_object_space ?? 0,
        gc: {
          ...rounded(gcPauses.all),
          scavenges: rounded(gcPauses.minor),
          markCompacts: rounded(gcPauses.major),
        },
      },
      message,
    );
    loopDelay.reset();
    gcPauses = { all: noPauses(), minor: noPauses(), major: noPauses() };
  }, everyMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    gcObserver.disconnect();
    loopDelay.disable();
  };
}
