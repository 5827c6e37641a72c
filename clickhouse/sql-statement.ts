// A small SQL tokenizer for the SQL endpoint: enough to find the statement kind, count
// statements, and spot FORMAT and INTO OUTFILE clauses outside strings, quoted names and comments.

export interface StatementInfo {
  /** Upper-cased first keyword of the first statement ('' when the text holds none). */
  kind: string;
  /** Non-empty statements separated by top-level semicolons. */
  statements: number;
  /** The top-level FORMAT clause's format name, if any. */
  format: string | null;
  /** True when the text writes a file on the server (SELECT … INTO OUTFILE). */
  intoOutfile: boolean;
}

/** Words and single-character symbols outside strings, quoted identifiers and comments. */
function* words(sql: string): Generator<string> {
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i]!;
    if (c === '-' && sql[i + 1] === '-') {
      while (i < n && sql[i] !== '\n') i++;
    } else if (c === '#' && (sql[i + 1] === ' ' || sql[i + 1] === '!')) {
      while (i < n && sql[i] !== '\n') i++;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end === -1 ? n : end + 2;
    } else if (c === "'" || c === '"' || c === '`') {
      i++;
      while (i < n && sql[i] !== c) i += sql[i] === '\\' ? 2 : 1;
      i++;
      yield c === "'" ? "'" : 'IDENT';
    } else if (/[A-Za-z_]/.test(c)) {
      const start = i;
      while (i < n && /[A-Za-z0-9_$]/.test(sql[i]!)) i++;
      yield sql.slice(start, i);
    } else if (/\s/.test(c)) {
      i++;
    } else {
      i++;
      yield c;
    }
  }
}

export function inspectStatement(sql: string): StatementInfo {
  let kind = '';
  let statements = 0;
  let inStatement = false;
  let format: string | null = null;
  let intoOutfile = false;
  let previous = '';
  let depth = 0;
  for (const original of words(sql)) {
    const word = original.toUpperCase();
    if (word === ';') {
      inStatement = false;
      previous = word;
      continue;
    }
    if (!inStatement) {
      inStatement = true;
      statements += 1;
      if (statements === 1) kind = word;
    }
    if (word === '(') depth++;
    else if (word === ')') depth = Math.max(0, depth - 1);
    else if (previous === 'FORMAT' && depth === 0 && /^[A-Z_]/.test(word)) format = original;
    if (previous === 'INTO' && word === 'OUTFILE') intoOutfile = true;
    previous = word;
  }
  return { kind, statements, format, intoOutfile };
}

/** Statement kinds an analyst may run. */
const READ_KINDS = new Set(['SELECT', 'WITH', 'SHOW', 'DESCRIBE', 'DESC', 'EXPLAIN', 'EXISTS', '(']);

/** Every other statement ClickHouse knows: each writes, changes state or administers. */
const WRITE_KINDS = new Set([
  'INSERT',
  'CREATE',
  'DROP',
  'ALTER',
  'TRUNCATE',
  'RENAME',
  'DELETE',
  'UPDATE',
  'OPTIMIZE',
  'ATTACH',
  'DETACH',
  'SYSTEM',
  'KILL',
  'GRANT',
  'REVOKE',
  'SET',
  'USE',
  'BACKUP',
  'RESTORE',
  'EXCHANGE',
  'UNDROP',
  'MOVE',
  'REPLACE',
  'CHECK',
  'BEGIN',
  'COMMIT',
  'ROLLBACK',
  'WATCH',
  'UPSERT',
]);

/**
 * Whether an analyst's statement is refused before it reaches the engine: known writing kinds
 * and INTO OUTFILE. A word that is no statement at all goes on to the engine, which runs it
 * read-only (readonly=1) and answers with its own syntax error.
 */
export function isRefusedForAnalyst(info: StatementInfo): boolean {
  return (
    info.intoOutfile ||
    WRITE_KINDS.has(info.kind) ||
    (!READ_KINDS.has(info.kind) && !/^[A-Z_][A-Z0-9_]*$/.test(info.kind))
  );
}

/** Declared type of a {name:Type} query parameter in the text, if any. */
export function parameterType(sql: string, name: string): string | null {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(`\\{\\s*${escaped}\\s*:\\s*([^}]+)\\}`).exec(sql);
  return match ? match[1]!.trim() : null;
}

const ESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', '0': '\0', a: '\x07', v: '\v' };

/** Decodes ClickHouse's escaped text format (param_<name> values of string type arrive in it). */
export function unescapeText(value: string): string {
  return value.replace(/\\(x[0-9A-Fa-f]{2}|[\s\S])/g, (_all, sequence: string) => {
    if (sequence.length === 3) return String.fromCharCode(parseInt(sequence.slice(1), 16));
    return ESCAPES[sequence] ?? sequence;
  });
}
