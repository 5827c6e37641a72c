// Top self-time functions of a V8 .cpuprofile (from `spot bench --cpu-prof DIR` or node --cpu-prof):
//   node --import tsx bench/profile-top.ts FILE.cpuprofile [count]
import fs from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  fn: string;
  where: string;
  ms: number;
  pct: number;
}

export function topSelfTime(profile: Profile, count = 10): SelfTime[] {
  const byNode = new Map<number, ProfileNode>(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  let total = 0;
  // Each sample's time delta belongs to the node sampled.
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    const id = profile.samples[i]!;
    // Idle time is no function's cost: percentages are of busy time.
    if (byNode.get(id)?.callFrame.functionName === '(idle)') continue;
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
    total += delta;
  }
  const grouped = new Map<string, SelfTime>();
  for (const [id, us] of selfUs) {
    const frame = byNode.get(id)!.callFrame;
    const fn = frame.functionName || '(anonymous)';
    const file = frame.url
      ? `${frame.url.replace(/^file:\/\//, '').replace(/^.*?\/(node_modules\/|work\/main\/)/, '$1')}:${frame.lineNumber + 1}`
      : '';
    const key = `${fn} ${file}`;
    const entry = grouped.get(key) ?? { fn, where: file, ms: 0, pct: 0 };
    entry.ms += us / 1000;
    grouped.set(key, entry);
  }
  return [...grouped.values()]
    .map((e) => ({ ...e, ms: Math.round(e.ms), pct: Math.round((1000 * e.ms * 1000) / total) / 10 }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, count);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: node --import tsx bench/profile-top.ts FILE.cpuprofile [count]\n');
    process.exit(2);
  }
  const top = topSelfTime(JSON.parse(fs.readFileSync(file, 'utf8')) as Profile, Number(process.argv[3] ?? 10));
  process.stdout.write('| # | self ms | self % | function | where |\n| -: | -: | -: | - | - |\n');
  top.forEach((t, i) => process.stdout.write(`| ${i + 1} | ${t.ms} | ${t.pct} | ${t.fn} | ${t.where} |\n`));
}
