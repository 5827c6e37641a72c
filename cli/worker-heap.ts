// Starts a worker thread with heap limits of its own. V8 takes a process's --max-semi-space-size and
// --max-old-space-size over a worker's resourceLimits, so the flags (npm's scripts set them for the
// main thread) are lifted while the worker's heap is made and put back once it runs.
import v8 from 'node:v8';
import { Worker, type WorkerOptions } from 'node:worker_threads';

export interface WorkerHeap {
  /** Young generation (both semi-spaces and new large objects), MB. */
  youngGenerationMb?: number;
  /** Old generation limit, MB: a limit of 2 GB or more lets V8 grow the heap to 4x its live size. */
  oldGenerationMb: number;
}

const SEMI_SPACE_FLAG = /^--max[-_]semi[-_]space[-_]size(?:=(\d+))?$/;
const OLD_SPACE_FLAG = /^--max[-_]old[-_]space[-_]size(?:=(\d+))?$/;

/** The value the process's command line or NODE_OPTIONS gave a size flag, if any (the last one wins). */
function processFlagMb(flag: RegExp): number | undefined {
  const args = [...process.execArgv, ...(process.env.NODE_OPTIONS?.split(/\s+/) ?? [])];
  let found: number | undefined;
  for (let i = 0; i < args.length; i++) {
    const match = flag.exec(args[i]!);
    if (!match) continue;
    const value = Number(match[1] ?? args[i + 1]);
    if (Number.isInteger(value) && value > 0) found = value;
  }
  return found;
}

/** The process's own --max-semi-space-size, if it set one. */
export const processSemiSpaceMb = (): number | undefined => processFlagMb(SEMI_SPACE_FLAG);

/** The process's own --max-old-space-size, if it set one. */
export const processOldSpaceMb = (): number | undefined => processFlagMb(OLD_SPACE_FLAG);

export function startWorkerWithHeap(url: URL, options: WorkerOptions, heap: WorkerHeap): Worker {
  const sized: WorkerOptions = {
    ...options,
    resourceLimits: {
      ...options.resourceLimits,
      maxOldGenerationSizeMb: heap.oldGenerationMb,
      ...(heap.youngGenerationMb === undefined ? {} : { maxYoungGenerationSizeMb: heap.youngGenerationMb }),
    },
  };
  // Each process flag the worker's own limit must win over, with the value to put back.
  const lifted: Array<[flag: string, mb: number]> = [];
  const semiSpace = processSemiSpaceMb();
  if (semiSpace !== undefined && heap.youngGenerationMb !== undefined)
    lifted.push(['--max-semi-space-size', semiSpace]);
  const oldSpace = processOldSpaceMb();
  if (oldSpace !== undefined) lifted.push(['--max-old-space-size', oldSpace]);
  if (lifted.length === 0) return new Worker(url, sized);
  for (const [flag] of lifted) v8.setFlagsFromString(`${flag}=0`);
  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    for (const [flag, mb] of lifted) v8.setFlagsFromString(`${flag}=${mb}`);
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
