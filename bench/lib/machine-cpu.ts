// The whole machine's CPU from /proc/stat, beside a scenario's own figures: the same code's soak
// ranged 148–754 ms (swap → frame p99) between runs, and a window is only comparable when one
// knows whether the cores were busy with other work or taken by the host (steal, on a VM).
import fs from 'node:fs';
import { round } from './stats.ts';

/** Cumulative ticks of every core since boot (the `cpu` line). */
export interface MachineTicks {
  total: number;
  busy: number;
  steal: number;
  iowait: number;
}

/** Shares of all cores' time between two readings (0–1). */
export interface MachineShare {
  busy: number;
  steal: number;
  iowait: number;
}

/** The `cpu` line of /proc/stat; null where there is none (not Linux). */
export function machineTicks(): MachineTicks | null {
  let line: string;
  try {
    line = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  } catch {
    return null;
  }
  // cpu user nice system idle iowait irq softirq steal (guest time is counted in user already).
  const [name, ...rest] = line.trim().split(/\s+/);
  const ticks = rest.slice(0, 8).map(Number);
  if (name !== 'cpu' || ticks.length < 8 || !ticks.every(Number.isFinite)) return null;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = ticks as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const busy = user + nice + system + irq + softirq;
  return { total: busy + idle + iowait + steal, busy, steal, iowait };
}

export function machineShare(from: MachineTicks | null, to: MachineTicks | null): MachineShare | null {
  if (!from || !to || to.total <= from.total) return null;
  const total = to.total - from.total;
  return {
    busy: round((to.busy - from.busy) / total, 3),
    steal: round((to.steal - from.steal) / total, 3),
    iowait: round((to.iowait - from.iowait) / total, 3),
  };
}
