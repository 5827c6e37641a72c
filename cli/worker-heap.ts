// Starts a worker thread with a young generation of its own size. V8 takes a process's
// --max-semi-space-size over a worker's resourceLimits, so the flag (npm's scripts set it for the
// main thread's throughput) is lifted while the worker's heap is made and put back once it runs.
import v8 from 'node:v8';
import { Worker, type WorkerOptions } from 'node:worker_threads';

const SEMI_SPACE_FLAG = /^--max[-_]semi[-_]space[-_]size(?:=(\d+))?$/;

/** The process's own --max-semi-space-size (command line or NODE_OPTIONS), if it set one. */
export function processSemiSpaceMb(): number | undefined {
  const args = [...process.execArgv, ...(process.env.NODE_OPTIONS?.split(/\s+/) ?? [])];
  let found: number | undefined;
  for (let i = 0; i < args.length; i++) {
    const match = SEMI_SPACE_FLAG.exec(args[i]!);
    if (!match) continue;
    const value = Number(match[1] ?? args[i + 1]);
    if (Number.isInteger(value) && value > 0) found = value;
  }
  return found;
}

export function startWorkerWithYoungGeneration(url: URL, options: WorkerOptions, youngGenerationMb: number): Worker {
  const sized: WorkerOptions = {
    ...options,
    resourceLimits: { ...options.resourceLimits, maxYoungGenerationSizeMb: youngGenerationMb },
  };
  const processSemiSpace = processSemiSpaceMb();
  if (processSemiSpace === undefined) return new Worker(url, sized);
  v8.setFlagsFromString('--max-semi-space-size=0');
  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    v8.setFlagsFromString(`--max-semi-space-size=${processSemiSpace}`);
  };
  try {
    const worker = new Worker(url, sized);
    // 'online' is after the worker's isolate exists; 'exit' covers a worker that never got there.
    worker.once('online', restore).once('exit', restore);
    return worker;
  } catch (error) {
    restore();
    throw error;
  }
}
