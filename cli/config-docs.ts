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

/** The Variable | Default | Meaning table, one row per setting. */
export function settingsTable(): string {
  return markdownTable(
    ['Variable', 'Default', 'Meaning'],
    settings.map((s) => [s.variables.map((v) => `\`${v}\``).join(', '), s.default, s.meaning]),
  );
}

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

/** One line per variable with its default, for `spot --help` (meanings are in docs/configuration.md). */
export function settingsHelp(): string {
  const variables = settings.flatMap((s) => s.variables.map((v) => [v, plain(s.default)] as const));
  const width = Math.max(...variables.map(([v]) => v.length));
  return variables.map(([v, fallback]) => `  ${v.padEnd(width)}  ${fallback}`).join('\n');
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
