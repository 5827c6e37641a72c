// Parent side of load-child.ts: one load run against one URL, in its own process.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LatencySummary } from './stats.ts';

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  durationSeconds: number;
}

export interface LoadResult {
  requests: number;
  requestsPerSecond: number;
  non2xx: number;
  errors: number;
  latency: LatencySummary;
  statuses: Record<string, number>;
}

const SCRIPT = fileURLToPath(new URL('./load-child.mjs', import.meta.url));

export function runLoad(options: LoadOptions): Promise<LoadResult> {
  const params = { method: 'GET', headers: {}, ...options };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SCRIPT, JSON.stringify(params)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (out += chunk));
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !line) return reject(new Error(`load generator exited ${code}: ${out.slice(0, 500)}`));
      resolve(JSON.parse(line) as LoadResult);
    });
  });
}
