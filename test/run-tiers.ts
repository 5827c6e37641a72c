// Runs the mocha suites by tier (unit, integration, system; see tiers.json) and prints each tier's
// time. Every test file must belong to exactly one tier, so a new suite cannot be skipped silently.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

type Tier = 'unit' | 'integration' | 'system';
const TIERS: Tier[] = ['unit', 'integration', 'system'];
// Files of a parallel tier run in worker processes (chDB binds one data dir per process, and every
// suite opens its own); system suites start processes and clusters of their own, so they run serially.
const PARALLEL: Record<Tier, boolean> = { unit: true, integration: true, system: false };

const testDir = path.dirname(new URL(import.meta.url).pathname);
const tiers = JSON.parse(fs.readFileSync(path.join(testDir, 'tiers.json'), 'utf8')) as Record<Tier, string[]>;

function checkAssignment(): void {
  const files = fs
    .readdirSync(testDir)
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => f.slice(0, -'.test.ts'.length));
  const seen = new Map<string, Tier>();
  for (const tier of TIERS)
    for (const name of tiers[tier]) {
      const other = seen.get(name);
      if (other) throw new Error(`test/tiers.json: ${name} is in both ${other} and ${tier}`);
      seen.set(name, tier);
    }
  const missing = files.filter((f) => !seen.has(f));
  const stale = [...seen.keys()].filter((name) => !files.includes(name));
  if (missing.length || stale.length)
    throw new Error(
      `test/tiers.json is out of date: ${missing.length ? `unassigned ${missing.join(', ')}` : ''}${missing.length && stale.length ? '; ' : ''}${stale.length ? `no such suite ${stale.join(', ')}` : ''}`,
    );
}

function runTier(tier: Tier): { status: number; seconds: number } {
  const specs = tiers[tier].map((name) => path.join('test', `${name}.test.ts`));
  const args = ['mocha', ...(PARALLEL[tier] ? ['--parallel', '--jobs', '2'] : []), ...specs];
  const started = Date.now();
  const result = spawnSync('npx', args, { stdio: 'inherit' });
  return { status: result.status ?? 1, seconds: (Date.now() - started) / 1000 };
}

checkAssignment();
const wanted = process.argv.slice(2);
const selected = wanted.length === 0 || wanted.includes('all') ? TIERS : (wanted as Tier[]);
for (const tier of selected) if (!TIERS.includes(tier)) throw new Error(`unknown tier "${tier}"`);
const times: string[] = [];
let failed = false;
for (const tier of selected) {
  const { status, seconds } = runTier(tier);
  times.push(`${tier}: ${seconds.toFixed(1)} s${status === 0 ? '' : ' (failed)'}`);
  if (status !== 0) failed = true;
}
console.log(`\ntest tiers — ${times.join(', ')}`);
process.exit(failed ? 1 : 0);
