// Cooperative slicing for long synchronous loops on a thread that also answers requests: the loop
// asks due() as it goes and, when its slice is spent, awaits pause(), which lets the event loop
// run I/O and timers before it goes on. A request then waits one slice, not the whole loop.
import { performance } from 'node:perf_hooks';

/**
 * Time a slice may hold the event loop, ms. A turn is a fetch, a slice and whatever scavenge lands
 * in it; with 4 ms, such turns passed 10 ms often enough to set token details p99 in a catch-up.
 */
export const SLICE_MS = 2;

/**
 * What one fetch of a log partition may read on a thread that answers requests, in characters
 * (bytes for the topics' ASCII JSON): a fetch is one synchronous read. About 0.3 ms for trades;
 * 250 candle messages were 2.5 MB, and fetches took up to 18 ms.
 */
export const SERVING_FETCH_BYTES = 256 * 1024;

export interface Slicer {
  /** True once the current slice has run for its budget. */
  due(): boolean;
  /** Yields to the event loop (I/O included) and starts a new slice once it is this slicer's turn. */
  pause(): Promise<void>;
}

// The slicers of this thread waiting for their next slice, first come first served. One is resumed
// per event-loop turn: several sliced loops (the hot views' consumers, the stream feed) each
// resumed in the same turn would hold the loop for a slice each before it polls for requests again.
const waiting: Array<() => void> = [];
let turnScheduled = false;

function resumeNext(): void {
  turnScheduled = false;
  const next = waiting.shift();
  if (waiting.length > 0) scheduleTurn();
  next?.();
}

function scheduleTurn(): void {
  if (turnScheduled) return;
  turnScheduled = true;
  setImmediate(resumeNext);
}

/** True while sliced loops wait for a turn: a loop that wakes then queues behind them. */
export function slicersWaiting(): boolean {
  return waiting.length > 0;
}

/**
 * Resolves at this caller's turn: after the loops already waiting, one per event-loop turn, or
 * ahead of them with `first` (writes to sockets of what was routed: the output of those loops).
 */
export function waitForTurn(first = false): Promise<void> {
  return new Promise<void>((resolve) => {
    if (first) waiting.unshift(resolve);
    else waiting.push(resolve);
    scheduleTurn();
  });
}

export function createSlicer(budgetMs = SLICE_MS): Slicer {
  let sliceStart = performance.now();
  return {
    due: () => performance.now() - sliceStart >= budgetMs,
    async pause() {
      await waitForTurn();
      sliceStart = performance.now();
    },
  };
}
