// The wallet-label file format: CSV with a header naming the columns chain,address,label and
// optionally name,source (any order), or JSON (an array of such objects, or one object per line).
// A wallet with several labels has one line per label. Every bad line is reported with its line
// number (JSON array: its entry number) and skipped; the good ones are returned.
import { CHAINS, canonicalAddress, type Chain } from '../../core/chains.ts';

export interface LabelLine {
  chain: Chain;
  /** Canonical address (EVM lower-case). */
  address: string;
  label: string;
  name: string | null;
  source: string | null;
  line: number;
}

export interface LabelLineError {
  line: number;
  message: string;
}

export interface ParsedLabels {
  lines: LabelLine[];
  errors: LabelLineError[];
}

/** kol, fomoscan, pro_trader, phishing, cex:<exchange>…: lower-case words, an optional `:qualifier`. */
const LABEL = /^[a-z][a-z0-9_]*(:[a-z0-9][a-z0-9_.-]*)?$/;
const MAX_TEXT = 200;

export type LabelFormat = 'csv' | 'json';

/** The format named by a file name, else guessed from the first character. */
export function labelFormatOf(name: string, text: string): LabelFormat {
  if (/\.csv$/i.test(name)) return 'csv';
  if (/\.jsonl?$/i.test(name)) return 'json';
  const first = text.trimStart()[0];
  return first === '[' || first === '{' ? 'json' : 'csv';
}

function checkEntry(raw: Record<string, unknown>, line: number): LabelLine | string {
  const chain = raw.chain;
  if (typeof chain !== 'string' || !(CHAINS as readonly string[]).includes(chain))
    return `unknown chain ${JSON.stringify(chain)} (one of ${CHAINS.join(', ')})`;
  const address = typeof raw.address === 'string' ? canonicalAddress(chain as Chain, raw.address.trim()) : null;
  if (!address) return `address ${JSON.stringify(raw.address)} is not a ${chain} address`;
  const label = typeof raw.label === 'string' ? raw.label.trim() : '';
  if (!LABEL.test(label) || label.length > 64)
    return `label ${JSON.stringify(raw.label)} is not a label (e.g. kol, cex:binance)`;
  const text = (key: 'name' | 'source'): string | null | Error => {
    const value = raw[key];
    if (value === undefined || value === null || value === '') return null;
    if (typeof value !== 'string' || value.length > MAX_TEXT)
      return new Error(`${key} must be text of at most ${MAX_TEXT} characters`);
    return value.trim() || null;
  };
  const name = text('name');
  const source = text('source');
  if (name instanceof Error) return name.message;
  if (source instanceof Error) return source.message;
  return { chain: chain as Chain, address, label, name, source, line };
}

/** One CSV record's fields ("" escapes a quote inside a quoted field); null when a quote is left open. */
export function splitCsvLine(text: string): string[] | null {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"' && field.trim() === '') {
      quoted = true;
      field = '';
    } else if (char === ',') {
      fields.push(field.trim());
      field = '';
    } else field += char;
  }
  if (quoted) return null;
  fields.push(field.trim());
  return fields;
}

/** A record file's shape: its columns (CSV header, JSON keys), the JSON wrapper key, and the check of one record. */
export interface RecordSpec<T> {
  /** Columns every CSV header must name. */
  required: readonly string[];
  /** Every column, in the order the format names them (the messages show it). */
  columns: readonly string[];
  /** JSON: `{<listKey>: [...]}` holds the array. */
  listKey: string;
  /** The record, or why it is refused. */
  check(raw: Record<string, unknown>, line: number): T | string;
}

export interface ParsedRecords<T> {
  lines: T[];
  errors: LabelLineError[];
}

function parseCsv<T>(text: string, spec: RecordSpec<T>): ParsedRecords<T> {
  const out: ParsedRecords<T> = { lines: [], errors: [] };
  const named = spec.columns.join(',');
  let header: string[] | null = null;
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '' || raw.trimStart().startsWith('#')) return;
    const fields = splitCsvLine(raw);
    if (!fields) return void out.errors.push({ line, message: 'unterminated quoted field' });
    if (!header) {
      header = fields.map((field) => field.toLowerCase());
      const missing = spec.required.filter((column) => !header!.includes(column.toLowerCase()));
      if (missing.length > 0) {
        out.errors.push({ line, message: `header lacks ${missing.join(', ')} (${named})` });
        header = null;
      }
      return;
    }
    if (fields.length !== header.length)
      return void out.errors.push({ line, message: `${fields.length} fields where the header names ${header.length}` });
    const byName = new Map(header.map((column, i) => [column, fields[i]]));
    const record = Object.fromEntries(spec.columns.map((column) => [column, byName.get(column.toLowerCase())]));
    const entry = spec.check(record, line);
    if (typeof entry === 'string') out.errors.push({ line, message: entry });
    else out.lines.push(entry);
  });
  if (!header && out.errors.length === 0) out.errors.push({ line: 1, message: `no header line (${named})` });
  return out;
}

function parseJson<T>(text: string, spec: RecordSpec<T>): ParsedRecords<T> {
  const out: ParsedRecords<T> = { lines: [], errors: [] };
  const add = (value: unknown, line: number) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return void out.errors.push({ line, message: 'not an object' });
    const entry = spec.check(value as Record<string, unknown>, line);
    if (typeof entry === 'string') out.errors.push({ line, message: entry });
    else out.lines.push(entry);
  };
  const trimmed = text.trim();
  let whole: unknown;
  try {
    whole = JSON.parse(trimmed);
  } catch {
    whole = undefined;
  }
  const wrapped = whole && typeof whole === 'object' ? (whole as Record<string, unknown>)[spec.listKey] : undefined;
  if (Array.isArray(whole) || Array.isArray(wrapped)) {
    // An array: its entries are numbered from 1, like lines.
    const entries = Array.isArray(whole) ? whole : (wrapped as unknown[]);
    entries.forEach((value, index) => add(value, index + 1));
    return out;
  }
  // JSON Lines: one object per line.
  text.split(/\r?\n/).forEach((raw, index) => {
    if (raw.trim() === '') return;
    try {
      add(JSON.parse(raw), index + 1);
    } catch {
      out.errors.push({ line: index + 1, message: 'not JSON' });
    }
  });
  return out;
}

/** Every record of a CSV or JSON file (labels, promotions): the good ones, and each bad line with its number. */
export function parseRecords<T>(text: string, format: LabelFormat, spec: RecordSpec<T>): ParsedRecords<T> {
  return format === 'csv' ? parseCsv(text, spec) : parseJson(text, spec);
}

const LABEL_SPEC: RecordSpec<LabelLine> = {
  required: ['chain', 'address', 'label'],
  columns: ['chain', 'address', 'label', 'name', 'source'],
  listKey: 'labels',
  check: checkEntry,
};

export function parseLabels(text: string, format: LabelFormat): ParsedLabels {
  return parseRecords(text, format, LABEL_SPEC);
}

const csvField = (value: string | null) =>
  value === null ? '' : /[",\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;

export const LABEL_CSV_HEADER = 'chain,address,label,name,source';

/** A CSV line of the format (what the simulator writes to its labels file). */
export function labelCsvLine(entry: Omit<LabelLine, 'line'>): string {
  return [entry.chain, entry.address, entry.label, entry.name, entry.source].map(csvField).join(',');
}
