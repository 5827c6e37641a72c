// A worker thread's own health, logged every 30 s: its event-loop delay and utilisation (what its
// work may wait behind), its V8 heap (process RSS covers every thread) and its GC pauses.
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import type { Logger } from '../core/logger.ts';

const REPORT_MS = 30_000;

/** Starts the reports; `component` and `message` name the thread in the log line. */
export function reportThreadLoop(logger: Logger, component: string, message: string): void {
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  let lastUtilization = performance.eventLoopUtilization();
  const gcPauses = { count: 0, totalMs: 0, maxMs: 0 };
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gcPauses.count++;
      gcPauses.totalMs += entry.duration;
      if (entry.duration > gcPauses.maxMs) gcPauses.maxMs = entry.duration;
    }
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  const timer = setInterval(() => {
    const utilization = performance.eventLoopUtilization(lastUtilization);
    lastUtilization = performance.eventLoopUtilization();
    const ms = (ns: number) => Math.round(ns / 1e4) / 100;
    const heap = getHeapStatistics();
    logger.info(
      {
        component,
        delayMs: { p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) },
        utilization: Math.round(utilization.utilization * 1000) / 1000,
        heapMB: Math.round(heap.used_heap_size / 1e6),
        heapCommittedMB: Math.round(heap.total_heap_size / 1e6),
        // Both semi-spaces as they stand: the young generation a scavenge walks.
        newSpaceMB: Math.round(
          (getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0) / 1e6,
        ),
        gc: { count: gcPauses.count, totalMs: Math.round(gcPauses.totalMs), maxMs: Math.round(gcPauses.maxMs) },
      },
      message,
    );
    loopDelay.reset();
    gcPauses.count = gcPauses.totalMs = gcPauses.maxMs = 0;
  }, REPORT_MS);
  timer.unref();
}
