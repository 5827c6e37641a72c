// Roles started as child processes whose pino lines the tests wait on (the distributed suites).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';

export type LogLine = Record<string, unknown> & { msg?: string };

export interface Proc {
  name: string;
  child: ChildProcess;
  lines: LogLine[];
  /** Resolves with the first log line (past or future) the predicate accepts. */
  line(accept: (line: LogLine) => boolean, timeoutMs: number): Promise<LogLine>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  tail(): string;
}

/** Every process started, for the suites' clean-up. */
export const procs: Proc[] = [];

export function start(
  name: string,
  args: string[],
  env: Record<string, string>,
  stdout?: (text: string) => void,
): Proc {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, SPOT_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  const raw: string[] = [];
  const waiters = new Set<() => void>();
  readline.createInterface({ input: child.stderr! }).on('line', (text) => {
    raw.push(text);
    if (raw.length > 400) raw.shift();
    try {
      lines.push(JSON.parse(text) as LogLine);
    } catch {
      return;
    }
    for (const wake of waiters) wake();
  });
  readline.createInterface({ input: child.stdout! }).on('line', (text) => stdout?.(text));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const proc: Proc = {
    name,
    child,
    lines,
    exited,
    tail: () => raw.slice(-40).join('\n'),
    line(accept, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = lines.find(accept);
          if (!found) return;
          done();
          resolve(found);
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`${name}: no expected log line within ${timeoutMs} ms; last output:\n${proc.tail()}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        void exited.then(() => {
          if (!waiters.has(check)) return;
          done();
          reject(new Error(`${name} exited before the expected log line; last output:\n${proc.tail()}`));
        });
        check();
      });
    },
  };
  procs.push(proc);
  return proc;
}

export async function terminate(proc: Proc): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill('SIGTERM');
  const { code } = await proc.exited;
  assert.equal(code, 0, `${proc.name} stopped cleanly; last output:\n${proc.tail()}`);
}

/** SIGKILLs whatever still runs and waits for every exit. */
export async function killAll(): Promise<void> {
  for (const proc of procs)
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
}
