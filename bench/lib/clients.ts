// Parent side of ws-clients.mjs: spawns the subscriber process and asks it for stats over IPC.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LatencySummary } from './stats.ts';

export interface ClientOptions {
  url: string;
  authorization?: string;
  connections: number;
  subscribe: string[];
  recordIds: boolean;
  expectAck: boolean;
}

export interface ClientStats {
  frames: number;
  firstAt: number;
  lastAt: number;
  open: number;
}

export interface Clients {
  stats(): Promise<ClientStats>;
  reset(): Promise<void>;
  latency(sent: Array<[string, number]>): Promise<{ frames: number; matched: number; summary: LatencySummary }>;
  /**
   * As latency(), with every matched frame's ms (a bounded window's worth) and the subscriber
   * process's own event-loop delay since the last reset (2 ms timer; includes the 2 ms).
   */
  latencySamples(
    sent: Array<[string, number]>,
  ): Promise<{ frames: number; matched: number; samples: number[]; loopDelayMs: { p99: number; max: number } }>;
  /** Polls until `frames` arrived or nothing new came for `quietMs`; returns the last stats. */
  waitFrames(frames: number, quietMs: number, timeoutMs: number): Promise<ClientStats>;
  close(): Promise<void>;
}

const SCRIPT = fileURLToPath(new URL('./ws-clients.mjs', import.meta.url));

export async function startClients(options: ClientOptions): Promise<Clients> {
  const child: ChildProcess = spawn(process.execPath, [SCRIPT, JSON.stringify(options)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting = new Map<string, Array<(value: any) => void>>();
  let failure: Error | null = null;
  child.on('message', (raw) => {
    const message = raw as { type: string; message?: string };
    if (message.type === 'error') failure = new Error(`ws clients: ${message.message}`);
    const queue = waiting.get(message.type);
    const resolve = queue?.shift();
    resolve?.(message);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const next = (type: string, timeoutMs = 120_000) =>
    new Promise<any>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(failure ?? new Error(`ws clients: no ${type} reply within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const list = waiting.get(type) ?? [];
      list.push((value) => {
        clearTimeout(timer);
        resolve(value);
      });
      waiting.set(type, list);
      void exited.then(() => {
        clearTimeout(timer);
        reject(failure ?? new Error('ws clients exited'));
      });
    });
  const ready = next('ready');
  const firstError = next('error').catch(() => undefined);
  const start = await Promise.race([ready, firstError]);
  if (start?.type !== 'ready') throw failure ?? new Error('ws clients failed to start');

  const request = (type: string, payload: Record<string, unknown> = {}) => {
    const reply = next(type);
    child.send({ type, ...payload });
    return reply;
  };
  return {
    stats: () => request('stats'),
    reset: async () => {
      await request('reset');
    },
    latency: (sent) => request('latency', { sent }),
    latencySamples: (sent) => request('latency', { sent, samples: true }),
    async waitFrames(frames, quietMs, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      let last = (await request('stats')) as ClientStats;
      let lastChange = Date.now();
      while (last.frames < frames && Date.now() < deadline && Date.now() - lastChange < quietMs) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        const now = (await request('stats')) as ClientStats;
        if (now.frames !== last.frames) lastChange = Date.now();
        last = now;
      }
      return last;
    },
    async close() {
      if (child.exitCode !== null) return;
      child.send({ type: 'close' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
