// The settings as users read them, generated from core/config.ts's SETTINGS: the table of
// docs/configuration.md and the short list of `spot --help`.
// `node --import tsx cli/config-docs.ts` rewrites the table in docs/configuration.md (the rest of the page stays).
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SETTINGS } from '../core/config.ts';

export const CONFIGURATION_DOC = 'docs/configuration.md';

const settings = Object.values(SETTINGS);

/** A markdown table padded the way the formatter pads it, so a regenerated page has no noise diff. */
function markdownTable(header: string[], rows: string[][]): string {
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The Variable | Flag | Default | Meaning table, one row per setting. */
export function settingsTable(): string {
  return markdownTable(
    ['Variable', 'Flag', 'Default', 'Meaning'],
    settings.map((s) => [
      s.variables.map((v) => `\`${v}\``).join(', '),
      s.flag ? `\`${s.flag}\`` : '',
      s.default,
      s.meaning,
    ]),
  );
}

/** `spot` flags onto the variables they set, so flags and variables share one validator. */
export const FLAG_TO_ENV: Readonly<Record<string, string>> = Object.fromEntries(
  settings.flatMap((s) => (s.flag ? [[s.flag, s.variables[0]!]] : [])),
);

/** `page` with its (first) table replaced by the generated one; text before and after it is kept. */
export function renderConfigurationPage(page: string): string {
  const lines = page.replace(/\n*$/, '').split('\n');
  const start = lines.findIndex((l) => l.startsWith('|'));
  if (start < 0) return `${lines.join('\n')}\n\n${settingsTable()}\n`;
  let end = start;
  while (end < lines.length && lines[end]!.startsWith('|')) end++;
  return [...lines.slice(0, start), settingsTable(), ...lines.slice(end)].join('\n') + '\n';
}

/** Markdown to terminal text: no code ticks, links as their text. */
const plain = (markdown: string) => markdown.replace(/`/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');

/** One line per variable with its flag and default, for `spot --help` (meanings are in docs/configuration.md). */
export function settingsHelp(): string {
  const rows = settings.flatMap((s) => s.variables.map((v) => [v, s.flag ?? '', plain(s.default)]));
  const widths = [0, 1].map((i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows
    .map(([v, flag, fallback]) => `  ${v!.padEnd(widths[0]!)}  ${flag!.padEnd(widths[1]!)}  ${fallback}`)
    .join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const current = fs.readFileSync(CONFIGURATION_DOC, 'utf8');
  const generated = renderConfigurationPage(current);
  if (generated === current) process.stdout.write(`${CONFIGURATION_DOC} is up to date\n`);
  else {
    fs.writeFileSync(CONFIGURATION_DOC, generated);
    process.stdout.write(`${CONFIGURATION_DOC} rewritten from core/config.ts\n`);
  }
}
