// The label import: the file format (CSV, JSON, JSON Lines), bad lines reported by line number
// and skipped, labels merged across lists, nothing republished for an unchanged list, the bundled
// exchange list, and `spot labels import`.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { labelsCommand } from '../cli/labels.ts';
import { CHAINS } from '../core/chains.ts';
import { loadConfig } from '../core/config.ts';
import { createContext, type Context } from '../core/context.ts';
import { createEmbeddedLog } from '../core/eventlog/embedded.ts';
import { embeddedLogPath } from '../core/eventlog/index.ts';
import type { EventLog } from '../core/eventlog/types.ts';
import { createLogger } from '../core/logger.ts';
import { ALL_TOPICS, TOPICS, type TokenEvent, type WalletLabelEntry } from '../core/topics.ts';
import { readCexHotWallets } from '../ingest/labels/bundled.ts';
import { labelCsvLine, LABEL_CSV_HEADER, parseLabels } from '../ingest/labels/format.ts';
import { createLabelImporter, type LabelImporter } from '../ingest/labels/import.ts';
import { createIngestPublisher } from '../ingest/publisher.ts';

const ctx: Context = createContext(loadConfig({}), createLogger((process.env.TEST_LOG_LEVEL as 'silent') || 'silent'));
const SOL = '5tzFkiKscXHK5ZXCGbXZxdw7gTjjD1mBwuoFbhUvuAi9';
const EVM = '0x8894E0a0c962CB723c1976a4421c95949bE2D4E3';

async function read(log: EventLog) {
  const events: TokenEvent[] = [];
  const entries = new Map<string, WalletLabelEntry>();
  await log.readToEnd(TOPICS.tokenEvents.name, (message) => events.push(JSON.parse(message.value)));
  await log.readToEnd(TOPICS.labels.name, (message) => entries.set(message.key, JSON.parse(message.value)));
  return { events, entries };
}

describe('label import', () => {
  let dir: string;
  let log: EventLog;
  let importer: LabelImporter;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-labels-'));
    log = createEmbeddedLog(ctx, { path: path.join(dir, 'log.sqlite') });
    await log.ensureTopics(ALL_TOPICS);
    importer = createLabelImporter(ctx, { log, publisher: createIngestPublisher(ctx, { log }) });
  });

  afterEach(async () => {
    await log.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reports every bad CSV line with its number, skips it and applies the good ones', async () => {
    const text = [
      '# exchange wallets',
      'chain,address,label,name,source',
      `solana,${SOL},cex:binance,"Binance, hot 2",https://solscan.io`,
      `bsc,${EVM},cex:binance,Binance 6,`,
      `ethereum,${EVM},cex:binance,,`,
      `base,not-an-address,kol,,`,
      `bsc,${EVM},Not A Label,,`,
      `solana,${SOL},kol`,
      `solana,${SOL},kol,"open,`,
      '',
    ].join('\n');
    const result = await importer.importText(text, { format: 'csv', origin: 'exchanges.csv', at: 1_700_000_000_000 });
    assert.deepEqual(
      result.errors.map((error) => error.line),
      [5, 6, 7, 8, 9],
    );
    assert.match(result.errors[0]!.message, /unknown chain "ethereum"/);
    assert.equal(result.lines, 2);
    const { events, entries } = await read(log);
    assert.deepEqual(
      events
        .map((event) => event.kind === 'walletLabel' && [event.chain, event.wallet, event.labels, event.name])
        .sort(),
      [
        ['bsc', EVM.toLowerCase(), ['cex:binance'], 'Binance 6'],
        ['solana', SOL, ['cex:binance'], 'Binance, hot 2'],
      ],
    );
    assert.deepEqual(entries.get(`bsc:${EVM.toLowerCase()}`)?.sources, { 'exchanges.csv': ['cex:binance'] });
    assert.deepEqual(entries.get(`solana:${SOL}`)?.sources, { 'https://solscan.io': ['cex:binance'] });
  });

  it('merges the lists that name a wallet and republishes nothing for a list imported again', async () => {
    const exchanges = `${LABEL_CSV_HEADER}\n${labelCsvLine({ chain: 'solana', address: SOL, label: 'cex:binance', name: 'Binance', source: null })}\n`;
    const kols = JSON.stringify([
      { chain: 'solana', address: SOL, label: 'kol', name: 'Binance', source: 'kol-list' },
      { chain: 'solana', address: SOL, label: 'fomoscan', source: 'fomoscan' },
      { chain: 'base', address: '0x12' },
    ]);
    await importer.importText(exchanges, { format: 'csv', origin: 'exchanges.csv' });
    const second = await importer.importText(kols, { format: 'json', origin: 'kols.json' });
    assert.deepEqual(
      second.errors.map((error) => error.line),
      [3],
    );
    const again = await importer.importText(exchanges, { format: 'csv', origin: 'exchanges.csv' });
    assert.equal(again.wallets, 0, 'an unchanged list republishes nothing');
    const { events, entries } = await read(log);
    assert.equal(events.length, 2);
    const last = events[1]!;
    assert.ok(last.kind === 'walletLabel');
    assert.deepEqual(last.labels, ['cex:binance', 'fomoscan', 'kol']);
    assert.deepEqual(entries.get(`solana:${SOL}`)?.sources, {
      'exchanges.csv': ['cex:binance'],
      'kol-list': ['kol'],
      fomoscan: ['fomoscan'],
    });
    // A second importer (a restart) reads what was applied from the compacted topic.
    const restarted = createLabelImporter(ctx, { log, publisher: createIngestPublisher(ctx, { log }) });
    assert.equal((await restarted.importText(kols, { format: 'json', origin: 'kols.json' })).wallets, 0);
  });

  it('reads JSON Lines with line numbers and applies nothing when every line is bad', async () => {
    const text = `{"chain":"bsc","address":"${EVM}","label":"kol"}\nnot json\n{"chain":"bsc","label":"kol"}\n`;
    const parsed = parseLabels(text, 'json');
    assert.deepEqual(
      parsed.errors.map((error) => error.line),
      [2, 3],
    );
    assert.equal(parsed.lines.length, 1);
    const none = await importer.importText('not json\n[1,2\n', { format: 'json', origin: 'x.json' });
    assert.equal(none.wallets, 0);
    assert.equal((await read(log)).events.length, 0);
  });

  it('bundles public exchange hot wallets, each with the page that shows its label', () => {
    const parsed = parseLabels(readCexHotWallets(), 'csv');
    assert.deepEqual(parsed.errors, []);
    for (const chain of ['solana', 'base', 'bsc'] as const)
      assert.ok(
        parsed.lines.some((line) => line.chain === chain && line.label.startsWith('cex:')),
        chain,
      );
    for (const line of parsed.lines) {
      assert.ok(CHAINS.includes(line.chain));
      assert.match(line.source ?? '', /^https:\/\/(solscan\.io|bscscan\.com|basescan\.org)\/(account|address)\//);
      assert.ok(line.source!.endsWith(line.address), `${line.address}: its source page names it`);
    }
  });

  it('spot labels import FILE reports skipped lines on stderr and applies the rest', async () => {
    const dataDir = path.join(dir, 'data');
    const file = path.join(dir, 'labels.csv');
    fs.writeFileSync(file, `${LABEL_CSV_HEADER}\nsolana,${SOL},kol,Someone,list\nsolana,nope,kol,,\n`);
    const written: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    const out = process.stdout.write.bind(process.stdout);
    process.stderr.write = ((chunk: string) => written.push(String(chunk)) > 0) as typeof process.stderr.write;
    process.stdout.write = ((chunk: string) => written.push(String(chunk)) > 0) as typeof process.stdout.write;
    let code: number;
    try {
      const cliCtx = createContext(loadConfig({ SPOT_DATA_DIR: dataDir }), ctx.logger);
      code = await labelsCommand(cliCtx, ['import', file]);
    } finally {
      process.stderr.write = write;
      process.stdout.write = out;
    }
    assert.equal(code, 1, 'skipped lines make the exit status 1');
    assert.ok(
      written.some((line) => line.startsWith(`${file}:3: address "nope"`)),
      written.join(''),
    );
    assert.ok(written.some((line) => line.startsWith('1 label lines applied, 1 wallets updated, 1 lines skipped')));
    const cliLog = createEmbeddedLog(ctx, { path: embeddedLogPath(dataDir) });
    try {
      const { events } = await read(cliLog);
      assert.deepEqual(
        events.map((event) => event.kind === 'walletLabel' && event.labels),
        [['kol']],
      );
    } finally {
      await cliLog.close();
    }
  });
});
