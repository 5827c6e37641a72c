// The bench report: JSON with every scenario's parameters, figures, ratios and target checks,
// the machine and the git commit; and the same as a markdown table.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import type { ScenarioResult, TargetCheck } from './lib/scenario.ts';

export interface Machine {
  os: string;
  arch: string;
  cpus: number;
  cpuModel: string;
  memoryBytes: number;
  node: string;
  loadAverage: number[];
}

export interface ScenarioFailure {
  scenario: string;
  error: string;
}

export interface BenchReport {
  generatedAt: string;
  command: string;
  machine: Machine;
  git: { commit: string | null; dirty: boolean | null };
  input: Record<string, unknown>;
  scenarios: ScenarioResult[];
  failures: ScenarioFailure[];
  targets: Array<TargetCheck & { scenario: string }>;
}

export function machineInfo(): Machine {
  const cpus = os.cpus();
  return {
    os: `${os.type()} ${os.release()}`,
    arch: os.arch(),
    cpus: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    memoryBytes: os.totalmem(),
    node: process.version,
    loadAverage: os.loadavg().map((v) => Math.round(v * 100) / 100),
  };
}

export function gitInfo(cwd: string): BenchReport['git'] {
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    const status = execFileSync('git', ['status', '--porcelain'], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return { commit, dirty: status.trim().length > 0 };
  } catch {
    return { commit: null, dirty: null };
  }
}

const fmt = (value: number) =>
  Number.isFinite(value)
    ? Math.abs(value) >= 1000
      ? Math.round(value).toLocaleString('en-US')
      : String(Math.round(value * 100) / 100)
    : String(value);
const cell = (text: string) => text.replace(/\|/g, '\\|');

function extras(extra: Record<string, number> | undefined): string {
  if (!extra) return '';
  return Object.entries(extra)
    .map(([k, v]) => `${k} ${fmt(v)}`)
    .join(', ');
}

function paramsText(params: Record<string, unknown>): string {
  return Object.entries(params)
    .filter(([key]) => key !== 'inputFile')
    .map(
      ([key, value]) =>
        `${key}=${Array.isArray(value) ? value.join(',') : typeof value === 'number' ? fmt(value) : String(value)}`,
    )
    .join(', ');
}

export function renderMarkdown(report: BenchReport): string {
  const m = report.machine;
  const lines: string[] = [];
  lines.push(
    `Produced by \`${report.command}\` on ${report.generatedAt}, commit ${report.git.commit?.slice(0, 12) ?? 'unknown'}${report.git.dirty ? ' (uncommitted changes)' : ''}.`,
  );
  lines.push(
    `Machine: ${m.os} ${m.arch}, ${m.cpus} × ${m.cpuModel}, ${(m.memoryBytes / 2 ** 30).toFixed(1)} GiB, Node ${m.node}, load average at start ${m.loadAverage.join(' / ')}.`,
  );
  const input = report.input as { profile?: string; swaps?: number; events?: number };
  if (input.profile)
    lines.push(
      `Shared inputs (pipeline, latency, fanout, rest, replay, resume, memory, store, …): the ${input.profile} profile's market, ${input.swaps ?? '?'} swaps and ${input.events ?? '?'} token events.`,
    );
  lines.push('');
  lines.push('| Scenario | Subject | Result | Details |');
  lines.push('| - | - | -: | - |');
  for (const s of report.scenarios) {
    for (const x of s.measurements)
      lines.push(`| ${s.scenario} | ${cell(x.subject)} | ${fmt(x.value)} ${x.unit} | ${cell(extras(x.extra))} |`);
    for (const [name, value] of Object.entries(s.ratios))
      lines.push(`| ${s.scenario} | ratio ${cell(name)} | ${fmt(value)}× | |`);
  }
  for (const f of report.failures) lines.push(`| ${f.scenario} | FAILED | | ${cell(f.error.split('\n')[0] ?? '')} |`);
  lines.push('');
  lines.push('| Target | Actual | Pass |');
  lines.push('| - | -: | - |');
  for (const t of report.targets)
    lines.push(`| ${cell(t.label)} | ${fmt(t.actual)} ${t.unit} | ${t.pass ? 'yes' : '**no**'} |`);
  lines.push('');
  lines.push('Parameters:');
  lines.push('');
  for (const s of report.scenarios)
    lines.push(`- ${s.scenario}: ${cell(paramsText(s.params))} (ran ${fmt(s.durationMs / 1000)} s)`);
  const notes = report.scenarios.flatMap((s) => [
    ...s.notes.map((n) => `- ${s.scenario}: ${n}`),
    ...(s.evidence ? [`- ${s.scenario} evidence: \`${JSON.stringify(s.evidence)}\``] : []),
  ]);
  if (notes.length) {
    lines.push('');
    lines.push('Notes:');
    lines.push('');
    lines.push(...notes);
  }
  return `${lines.join('\n')}\n`;
}
