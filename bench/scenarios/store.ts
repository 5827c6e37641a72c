// The store at the store's speed: the same trade and candle rows (made by a replay of the bench
// inputs through the real aggregator, writes captured instead of stored) inserted into chDB in
// every form chDB takes them, each timed twice over: the JS-side encode on the main thread (what
// the live process pays per flush) and the whole insert (what bounds a replay).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { createAggregator } from '../../aggregators/aggregator.ts';
import type { Context } from '../../core/context.ts';
import type { EventLog } from '../../core/eventlog/types.ts';
import { createIngestPublisher } from '../../ingest/publisher.ts';
import { insertRowText, type ClickHouseClient } from '../../clickhouse/client.ts';
import { STORE_INSERT_SETTINGS } from '../../clickhouse/store.ts';
import {
  balanceFormat,
  candleFormat,
  encodeRows,
  identityTradeFormat,
  tokenEventFormat,
  tokenFormat,
  tradeFormat,
  walletLabelFormat,
  type RowFormat,
} from '../../clickhouse/rows.ts';
import type {
  BalanceRow,
  CandleRow,
  SpotStore,
  TokenEventRow,
  TradeRow,
  WalletLabelRow,
} from '../../clickhouse/types.ts';
import type { Token } from '../../core/schemas.ts';
import { countSwaps, readDecoded } from '../lib/inputs.ts';
import { openLog, openStore } from '../lib/pipeline-parts.ts';
import { runScenarioMain, type Measurement } from '../lib/scenario.ts';
import { perSecond, round } from '../lib/stats.ts';

interface Params {
  inputFile: string;
  /** The captured rows are inserted this many times over (ids made unique), for a steadier figure. */
  copies: number;
  rowsPerInsert: number;
  /** Each variant runs this many times; the fastest run is reported (the machine is shared). */
  rounds: number;
  /** Event-time seconds the inputs span (20,000 swaps at 1,000/s): sets the live cadence's flush size. */
  inputSeconds: number;
}

/** How a column travels in the binary forms (the text forms take the JS values as they are). */
type Kind = 'str' | 'u32' | 'u64' | 'time' | 'dec' | 'strs';

interface Table<Row> {
  name: string;
  format: RowFormat<Row>;
  kinds: readonly Kind[];
  rows: Row[];
}

const TRADE_KINDS: Kind[] = [
  'str', // id
  'str', // chain
  'str', // token
  'u64', // seq
  'str', // name
  'str', // symbol
  'str', // trader
  'str', // side
  'str', // transaction_hash
  'u32', // event_index
  'u64', // block_number
  'time', // timestamp
  'str', // quote_asset
  'str', // pool
  'str', // dex
  'strs', // identities
  'strs', // flags
  'strs', // platforms
  ...Array<Kind>(8).fill('dec'),
];
const CANDLE_KINDS: Kind[] = ['str', 'str', 'str', 'time', 'u64', ...Array<Kind>(18).fill('dec'), 'u32'];

// ---- TabSeparated: escapes for backslash, tab and line breaks; arrays as quoted literals; a
// DateTime64(3) as "seconds.mmm" (a bare millisecond integer would be read by its digit count).

const TSV_SPECIAL = /[\\\t\n\r\0]/;
const TSV_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0' };
const tsvString = (s: string) => (TSV_SPECIAL.test(s) ? s.replace(/[\\\t\n\r\0]/g, (c) => TSV_ESCAPES[c]!) : s);
const tsvArrayItem = (s: string) => `'${/[\\']/.test(s) ? s.replace(/[\\']/g, (c) => `\\${c}`) : s}'`;

function tsvTime(ms: number): string {
  const frac = ms % 1000;
  return `${(ms - frac) / 1000}.${frac < 10 ? '00' : frac < 100 ? '0' : ''}${frac}`;
}

function tsvValue(value: unknown, kind: Kind): string {
  if (typeof value === 'string') return tsvString(value);
  if (typeof value === 'number') return kind === 'time' ? tsvTime(value) : String(value);
  return tsvString(`[${(value as string[]).map(tsvArrayItem).join(',')}]`);
}

function encodeTsvRows<Row>(table: Table<Row>, rows: readonly Row[], start: number, end: number): string {
  const values: unknown[][] = [];
  for (let i = start; i < end; i++) table.format.append(rows[i]!, values);
  let text = '';
  for (const row of values) {
    for (let c = 0; c < row.length; c++) text += (c === 0 ? '' : '\t') + tsvValue(row[c], table.kinds[c]!);
    text += '\n';
  }
  return text;
}

// ---- RowBinary (file() insert): strings length-prefixed, integers little-endian, decimals as
// their exact text (the INSERT … SELECT casts String → Decimal, an exact parse).

class BinaryWriter {
  buf = Buffer.allocUnsafe(1 << 20);
  at = 0;
  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }
  varint(n: number): void {
    this.room(10);
    while (n >= 0x80) {
      this.buf[this.at++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 128);
    }
    this.buf[this.at++] = n;
  }
  str(s: string): void {
    const bytes = Buffer.byteLength(s);
    this.varint(bytes);
    this.room(bytes);
    this.at += this.buf.write(s, this.at);
  }
  u32(n: number): void {
    this.room(4);
    this.buf.writeUInt32LE(n, this.at);
    this.at += 4;
  }
  u64(n: number): void {
    this.room(8);
    this.buf.writeUInt32LE(n % 0x1_0000_0000, this.at);
    this.buf.writeUInt32LE(Math.floor(n / 0x1_0000_0000), this.at + 4);
    this.at += 8;
  }
}

function encodeRowBinary<Row>(table: Table<Row>, rows: readonly Row[], start: number, end: number): Buffer {
  const values: unknown[][] = [];
  for (let i = start; i < end; i++) table.format.append(rows[i]!, values);
  const w = new BinaryWriter();
  for (const row of values) {
    for (let c = 0; c < row.length; c++) {
      const v = row[c];
      switch (table.kinds[c]) {
        case 'u32':
          w.u32(v as number);
          break;
        case 'u64':
        case 'time':
          w.u64(v as number);
          break;
        case 'strs':
          w.varint((v as string[]).length);
          for (const s of v as string[]) w.str(s);
          break;
        default:
          w.str(v as string);
      }
    }
  }
  return w.buf.subarray(0, w.at);
}

const binaryType = (kind: Kind) =>
  ({ str: 'String', dec: 'String', u32: 'UInt32', u64: 'UInt64', time: "DateTime64(3, 'UTC')", strs: 'Array(String)' })[
    kind
  ];

function fileStructure<Row>(table: Table<Row>): string {
  return table.format.columns.map((column, i) => `${column} ${binaryType(table.kinds[i]!)}`).join(', ');
}

// ---- Arrow (chDB's registerArrowTable: Int32/Int64/Float64/Bool/String columns): integers as
// Float64 (exact below 2^53), arrays as JSON text, decimals as text; the SELECT converts.

interface ArrowRuntime {
  registerArrowTable(
    name: string,
    columns: { name: string; type: 'String' | 'Float64'; data: unknown }[],
    opts: { session: { _handle: unknown } },
  ): { close(): void };
  Session: new (dir: string) => { connection: unknown; queryAsync(sql: string): Promise<unknown>; close(): void };
}

function arrowColumns<Row>(table: Table<Row>, rows: readonly Row[], start: number, end: number) {
  const values: unknown[][] = [];
  for (let i = start; i < end; i++) table.format.append(rows[i]!, values);
  return table.format.columns.map((name, c) => {
    const kind = table.kinds[c]!;
    if (kind === 'u32' || kind === 'u64' || kind === 'time') {
      const data = new Float64Array(values.length);
      for (let r = 0; r < values.length; r++) data[r] = values[r]![c] as number;
      return { name, type: 'Float64' as const, data };
    }
    const data = new Array<string>(values.length);
    for (let r = 0; r < values.length; r++) {
      const v = values[r]![c];
      data[r] = kind === 'strs' ? JSON.stringify(v) : (v as string);
    }
    return { name, type: 'String' as const, data };
  });
}

function arrowSelect<Row>(table: Table<Row>): string {
  return table.format.columns
    .map((column, i) => {
      const kind = table.kinds[i]!;
      // Arrow columns arrive Nullable; none of these holds a null.
      const value = `assumeNotNull(${column})`;
      if (kind === 'time') return `fromUnixTimestamp64Milli(toInt64(${value}), 'UTC')`;
      if (kind === 'strs') return `JSONExtract(${value}, 'Array(String)')`;
      return value;
    })
    .join(', ');
}

interface VariantResult {
  ms: number;
  encodeMs: number;
  bytes: number;
}

type Variant = <Row>(table: Table<Row>, target: string, rows: readonly Row[]) => Promise<VariantResult>;

/**
 * Trade-table column types tried against the current schema (clickhouse/migrations.ts): the
 * low-cardinality candidates (a handful of quote assets, a fixed label vocabulary).
 */
const TRADE_SCHEMAS = {
  current: [],
  lowCardinality: [
    'quote_asset LowCardinality(String)',
    'flags Array(LowCardinality(String))',
    'platforms Array(LowCardinality(String))',
  ],
} as const;
type Schema = keyof typeof TRADE_SCHEMAS;

function uniqueTrades(rows: readonly TradeRow[], copies: number): TradeRow[] {
  const out: TradeRow[] = [];
  for (let copy = 0; copy < copies; copy++) for (const row of rows) out.push({ ...row, id: `${row.id}#${copy}` });
  return out;
}

function uniqueCandles(rows: readonly CandleRow[], copies: number): CandleRow[] {
  const out: CandleRow[] = [];
  for (let copy = 0; copy < copies; copy++) for (const row of rows) out.push({ ...row, token: `${row.token}#${copy}` });
  return out;
}

async function fingerprint(client: ClickHouseClient, table: string, columns: readonly string[]): Promise<string> {
  const result = await client.query({
    query: `SELECT count() AS n, sum(cityHash64(${columns.join(', ')})) AS h FROM ${table} FINAL`,
    format: 'JSONEachRow',
  });
  const row = (await result.json<{ n: string; h: string }>())[0];
  return `${row?.n}:${row?.h}`;
}

interface Captured {
  trades: TradeRow[];
  candles: CandleRow[];
  tokens: Token[];
  balances: BalanceRow[];
  labels: WalletLabelRow[];
  tokenEvents: TokenEventRow[];
}

interface TableWrites {
  rows: number;
  keys: number;
  bytes: number;
  encodeMs: number;
  insertMs: number;
}

/**
 * Per table: rows written, distinct keys among them, their JSONCompactEachRow bytes, the encode
 * time and the insert time into a fresh copy of the table (10,000 rows per INSERT, one table at a
 * time, so each table's chDB time is its own).
 */
async function writeProfile(
  client: ClickHouseClient,
  cadence: string,
  captured: Captured,
): Promise<Record<string, TableWrites>> {
  const profile = async <Row>(
    table: string,
    format: RowFormat<Row>,
    rows: readonly Row[],
    key: (row: Row) => string,
  ): Promise<TableWrites> => {
    const target = `bench_store.${cadence}_${table}`;
    await client.command({ query: `DROP TABLE IF EXISTS ${target}` });
    await client.command({ query: `CREATE TABLE ${target} AS spot.${table}` });
    let bytes = 0;
    let encodeMs = 0;
    const started = performance.now();
    for (let start = 0; start < rows.length; start += 10_000) {
      const t = performance.now();
      const text = encodeRows(format, rows, start, Math.min(rows.length, start + 10_000));
      encodeMs += performance.now() - t;
      bytes += text.length;
      await insertRowText(client, target, format.columns, text, 'JSONCompactEachRow', STORE_INSERT_SETTINGS);
    }
    const insertMs = performance.now() - started;
    return { rows: rows.length, keys: new Set(rows.map(key)).size, bytes, encodeMs, insertMs };
  };
  return {
    trades: await profile('trades', tradeFormat, captured.trades, (r) => r.id),
    identity_trades: await profile(
      'identity_trades',
      identityTradeFormat,
      captured.trades.filter((r) => r.identities.length > 0),
      (r) => r.id,
    ),
    candles: await profile('candles', candleFormat, captured.candles, (r) => `${r.token}:${r.granularity}:${r.time}`),
    tokens: await profile('tokens', tokenFormat, captured.tokens, (t) => `${t.chain}:${t.address}`),
    balances: await profile('balances', balanceFormat, captured.balances, (r) => `${r.chain}:${r.token}:${r.wallet}`),
    wallet_labels: await profile('wallet_labels', walletLabelFormat, captured.labels, (r) => `${r.chain}:${r.wallet}`),
    token_events: await profile('token_events', tokenEventFormat, captured.tokenEvents, (r) => r.id),
  };
}

/** One cadence's writes as table rows: bytes, main-thread encode and whole insert per swap, per table. */
function writeMeasurements(cadence: string, writes: Record<string, TableWrites>, swaps: number): Measurement[] {
  const total = { rows: 0, bytes: 0, encodeMs: 0, insertMs: 0 };
  for (const w of Object.values(writes)) {
    total.rows += w.rows;
    total.bytes += w.bytes;
    total.encodeMs += w.encodeMs;
    total.insertMs += w.insertMs;
  }
  const perSwap = (ms: number) => round((1000 * ms) / swaps, 2);
  const perTable = Object.entries(writes).map(([table, w]) => ({
    subject: `  ${cadence}: ${table} (${w.rows.toLocaleString('en-US')} rows, ${w.keys.toLocaleString('en-US')} keys)`,
    metric: 'bytes/swap',
    value: round(w.bytes / swaps, 0),
    unit: 'B/swap',
    extra: {
      rowsPerSwap: round(w.rows / swaps, 3),
      rowsPerKey: round(w.rows / Math.max(1, w.keys), 2),
      encodeUsPerSwap: perSwap(w.encodeMs),
      insertUsPerSwap: perSwap(w.insertMs),
      insertSharePct: round((100 * w.insertMs) / total.insertMs, 1),
    },
  }));
  return [
    {
      subject: `${cadence}: every table the store writes, per swap (JSONCompactEachRow)`,
      metric: 'bytes/swap',
      value: round(total.bytes / swaps, 0),
      unit: 'B/swap',
      extra: {
        rowsPerSwap: round(total.rows / swaps, 2),
        encodeUsPerSwap: perSwap(total.encodeMs),
        insertUsPerSwap: perSwap(total.insertMs),
      },
    },
    ...perTable,
  ];
}

/** STORE_INSERT_SETTINGS as a SETTINGS clause, for the INSERT … SELECT forms. */
const insertSettings = `SETTINGS ${Object.entries(STORE_INSERT_SETTINGS)
  .map(([key, value]) => `${key} = ${value}`)
  .join(', ')}`;

/** Compressed bytes of the table's active parts. */
async function partBytes(client: ClickHouseClient, table: string): Promise<number> {
  const [database, name] = table.split('.');
  const result = await client.query({
    query:
      'SELECT sum(bytes_on_disk) AS b FROM system.parts WHERE database = {d:String} AND table = {t:String} AND active',
    query_params: { d: database, t: name },
    format: 'JSONEachRow',
  });
  return Number((await result.json<{ b: string }>())[0]?.b ?? 0);
}

/**
 * Runs the inputs through the real aggregator with every store write captured, none stored. The
 * store writes and views follow every `flushEvery` processed messages: 20,000 is a replay's
 * cadence, a few thousand is about one second of this input (the live cadence).
 */
async function captureRows(
  ctx: Context,
  store: SpotStore,
  log: EventLog,
  name: string,
  flushEvery: number,
): Promise<Captured> {
  const captured: Captured = { trades: [], candles: [], tokens: [], balances: [], labels: [], tokenEvents: [] };
  const aggregator = createAggregator(ctx, {
    log,
    name,
    publish: false,
    flushEvery,
    maxBatch: Math.min(5000, flushEvery),
    snapshotEveryMessages: 10_000_000,
    snapshotEveryMs: 3_600_000,
    store: {
      ...store,
      insertTrades: async (rows) => void captured.trades.push(...rows),
      upsertCandles: async (rows) => void captured.candles.push(...rows),
      upsertTokens: async (rows) => void captured.tokens.push(...rows),
      insertTokenEvents: async (rows) => void captured.tokenEvents.push(...rows),
      upsertWalletLabels: async (rows) => void captured.labels.push(...rows),
      upsertBalances: async (rows) => void captured.balances.push(...rows),
    },
  });
  await aggregator.start();
  await aggregator.drain();
  await aggregator.stop();
  return captured;
}

/** The decoded bench inputs on a fresh embedded log. */
async function filledLog(
  ctx: Context,
  inputFile: string,
): Promise<{ log: EventLog; close(): Promise<void>; messages: number; swaps: number }> {
  const decoded = readDecoded(inputFile);
  const { swaps, events } = countSwaps(decoded);
  const handle = await openLog(ctx, 'embedded', 'events');
  const publisher = createIngestPublisher(ctx, {
    log: handle.log,
    maxBatch: 20_000,
    markAfterMs: ctx.config.inputMarkMs,
  });
  for (const item of decoded) if (item.swaps.length + item.events.length > 0) void publisher.publish(item);
  await publisher.flush();
  return { ...handle, messages: swaps + events, swaps };
}

runScenarioMain<Params>(
  'store',
  { inputFile: '', copies: 5, rowsPerInsert: 10_000, rounds: 2, inputSeconds: 20 },
  async ({ ctx, dir }, params) => {
    const handle = await openStore(ctx);
    const client: ClickHouseClient = handle.client;
    const input = await filledLog(ctx, params.inputFile);
    const captured = await captureRows(ctx, handle.store, input.log, 'capture-replay', 20_000);
    // About one second of this input per flush (the simulator's inputs run 1,000 swaps/s of event time).
    const liveFlush = Math.round(input.messages / (params.inputSeconds || 1));
    const live = await captureRows(ctx, handle.store, input.log, 'capture-live', liveFlush);
    await input.close();
    const trades: Table<TradeRow> = {
      name: 'trades',
      format: tradeFormat,
      kinds: TRADE_KINDS,
      rows: uniqueTrades(captured.trades, params.copies),
    };
    const candles: Table<CandleRow> = {
      name: 'candles',
      format: candleFormat,
      kinds: CANDLE_KINDS,
      rows: uniqueCandles(captured.candles, params.copies),
    };
    const batch = params.rowsPerInsert;
    const arrow = createRequire(import.meta.url)('chdb') as ArrowRuntime;
    const arrowSession = new arrow.Session(path.join(dir, 'clickhouse'));
    const fileDir = fs.mkdtempSync(path.join(dir, 'store-files-'));

    const timed = async <Row>(
      rows: readonly Row[],
      encode: (start: number, end: number) => unknown,
      insert: (encoded: unknown) => Promise<void>,
      size: (encoded: unknown) => number,
    ): Promise<VariantResult> => {
      const started = performance.now();
      let encodeMs = 0;
      let bytes = 0;
      for (let start = 0; start < rows.length; start += batch) {
        const t = performance.now();
        const encoded = encode(start, Math.min(rows.length, start + batch));
        encodeMs += performance.now() - t;
        bytes += size(encoded);
        await insert(encoded);
      }
      return { ms: performance.now() - started, encodeMs, bytes };
    };

    /** Rows encoded as text in `format` and handed to chDB's raw insert with these settings. */
    const textInsert =
      (
        format: 'JSONCompactEachRow' | 'TabSeparated',
        settings: Record<string, number>,
        encode: <Row>(table: Table<Row>, rows: readonly Row[], start: number, end: number) => string,
      ): Variant =>
      <Row>(table: Table<Row>, target: string, rows: readonly Row[]) =>
        timed(
          rows,
          (s, e) => encode(table, rows, s, e),
          (text) => insertRowText(client, target, table.format.columns, text as string, format, settings),
          (text) => (text as string).length,
        );
    const json = <Row>(table: Table<Row>, rows: readonly Row[], s: number, e: number) =>
      encodeRows(table.format, rows, s, e);

    const variants: Record<string, { label: string; run: Variant }> = {
      jsonCompact: {
        label: 'JSONCompactEachRow text, raw insert, optimize_on_insert=0 (the store)',
        run: textInsert('JSONCompactEachRow', STORE_INSERT_SETTINGS, json),
      },
      jsonCompactInsertMerge: {
        label: 'JSONCompactEachRow text, raw insert, optimize_on_insert=1 (the store before)',
        run: textInsert('JSONCompactEachRow', { optimize_on_insert: 1 }, json),
      },
      jsonCompactParallel: {
        label: 'JSONCompactEachRow text, raw insert, parsed in 1 MiB chunks on parallel threads',
        run: textInsert(
          'JSONCompactEachRow',
          { ...STORE_INSERT_SETTINGS, input_format_parallel_parsing: 1, min_chunk_bytes_for_parallel_parsing: 1 << 20 },
          json,
        ),
      },
      tsv: {
        label: 'TabSeparated text, raw insert',
        run: textInsert('TabSeparated', STORE_INSERT_SETTINGS, encodeTsvRows),
      },
      rowBinaryFile: {
        label: 'RowBinary temp file, INSERT … SELECT FROM file()',
        run: (table, target, rows) => {
          const structure = fileStructure(table);
          let n = 0;
          return timed(
            rows,
            (s, e) => encodeRowBinary(table, rows, s, e),
            async (buf) => {
              const file = path.join(fileDir, `${table.name}-${n++}.bin`);
              await fs.promises.writeFile(file, buf as Buffer);
              await client.command({
                query: `INSERT INTO ${target} (${table.format.columns.join(', ')}) SELECT * FROM file('${file}', RowBinary, '${structure.replaceAll("'", "\\'")}') ${insertSettings}`,
              });
              await fs.promises.rm(file);
            },
            (buf) => (buf as Buffer).length,
          );
        },
      },
      arrow: {
        label: 'Arrow columns (registerArrowTable), INSERT … SELECT FROM arrowstream()',
        run: (table, target, rows) => {
          let n = 0;
          const select = arrowSelect(table);
          return timed(
            rows,
            (s, e) => {
              const name = `bench_${table.name}_${n++}`;
              return {
                name,
                handle: arrow.registerArrowTable(name, arrowColumns(table, rows, s, e), {
                  session: { _handle: arrowSession.connection },
                }),
              };
            },
            async (encoded) => {
              const { name, handle: h } = encoded as { name: string; handle: { close(): void } };
              try {
                await arrowSession.queryAsync(
                  `INSERT INTO ${target} (${table.format.columns.join(', ')}) SELECT ${select} FROM arrowstream('${name}') ${insertSettings}`,
                );
              } finally {
                h.close();
              }
            },
            () => 0,
          );
        },
      },
    };

    await client.command({ query: 'CREATE DATABASE IF NOT EXISTS bench_store' });
    const measurements: Measurement[] = [];
    const ratios: Record<string, number> = {};
    const swaps = input.swaps;
    const replayWrites = await writeProfile(client, 'replay', captured);
    const liveWrites = await writeProfile(client, 'live', live);
    measurements.push(
      ...writeMeasurements('replay cadence (flush every 20,000 messages)', replayWrites, swaps),
      ...writeMeasurements(
        `live cadence (flush every ${liveFlush.toLocaleString('en-US')} messages ≈ 1 s)`,
        liveWrites,
        swaps,
      ),
    );
    const runs: { key: string; variant: string; schema: Schema }[] = [
      ...Object.keys(variants).map((variant) => ({ key: variant, variant, schema: 'current' as Schema })),
      { key: 'jsonCompactLowCardinality', variant: 'jsonCompact', schema: 'lowCardinality' },
    ];
    for (const table of [trades, candles] as Table<unknown>[]) {
      const best: Record<string, VariantResult & { diskBytes: number }> = {};
      const fingerprints: Record<string, string> = {};
      for (let roundNo = 0; roundNo < params.rounds; roundNo++) {
        for (const { key, variant, schema } of runs) {
          if (table.name !== 'trades' && schema !== 'current') continue;
          const target = `bench_store.${table.name}_${key}`;
          await client.command({ query: `DROP TABLE IF EXISTS ${target}` });
          await client.command({ query: `CREATE TABLE ${target} AS spot.${table.name}` });
          if (table.name === 'trades' && TRADE_SCHEMAS[schema].length > 0) {
            const modify = TRADE_SCHEMAS[schema].map((column) => `MODIFY COLUMN ${column}`).join(', ');
            await client.command({ query: `ALTER TABLE ${target} ${modify}` });
          }
          const result = await variants[variant]!.run(table, target, table.rows);
          // Every form must store exactly what today's path stores (ReplacingMergeTree may have merged).
          const print = await fingerprint(client, target, table.format.columns);
          fingerprints[key] = print;
          if (print !== fingerprints.jsonCompact) {
            throw new Error(`${target} holds other rows than today's path: ${print} vs ${fingerprints.jsonCompact}`);
          }
          const diskBytes = await partBytes(client, target);
          if (!best[key] || result.ms < best[key].ms) best[key] = { ...result, diskBytes };
        }
      }
      for (const { key, variant, schema } of runs) {
        const r = best[key];
        if (!r) continue;
        const label = variants[variant]!.label;
        measurements.push({
          subject: `${table.name}: ${label}${schema === 'current' ? '' : `, ${schema} columns`}`,
          metric: 'rows/s',
          value: round(perSecond(table.rows.length, r.ms), 0),
          unit: 'rows/s',
          extra: {
            rows: table.rows.length,
            ms: round(r.ms, 0),
            encodeMs: round(r.encodeMs, 0),
            encodeUsPerRow: round((1000 * r.encodeMs) / table.rows.length, 2),
            bytesPerRow: round(r.bytes / table.rows.length, 0),
            diskBytesPerRow: round(r.diskBytes / table.rows.length, 0),
          },
        });
        if (key !== 'jsonCompact') {
          ratios[`${table.name}_${key}_vs_jsonCompact`] = round(best.jsonCompact!.ms / r.ms, 2);
          ratios[`${table.name}_${key}_encode_vs_jsonCompact`] = round(best.jsonCompact!.encodeMs / r.encodeMs, 2);
        }
      }
    }
    arrowSession.close();
    await handle.store.close();
    return {
      params: { trades: trades.rows.length, candles: candles.rows.length },
      measurements,
      ratios,
      targets: [],

      notes: [
        'Each variant inserts the same rows into a fresh copy of the spot table; the fastest of the rounds is reported.',
        'encodeMs is JS time on the main thread (what a live flush costs it); ms is the whole insert, chDB included.',
      ],
    };
  },
);
