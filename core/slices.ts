// Cooperative slicing for long synchronous loops on a thread that also answers requests: the loop
// asks due() as it goes and, when its slice is spent, awaits pause(), which lets the event loop
// run I/O and timers before it goes on. A request then waits one slice, not the whole loop.
import { performance } from 'node:perf_hooks';

/** Time a slice may hold the event loop, ms: well under the serving p99 target. */
export const SLICE_MS = 4;

export interface Slicer {
  /** True once the current slice has run for its budget. */
  due(): boolean;
  /** Yields to the event loop (I/O included) and starts a new slice. */
  pause(): Promise<void>;
}

export function createSlicer(budgetMs = SLICE_MS): Slicer {
  let sliceStart = performance.now();
  return {
    due: () => performance.now() - sliceStart >= budgetMs,
    async pause() {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    },
  };
}
