// ClickHouse schema and store on real chDB: migrations, trades, identity feeds, tokens and
// candle rollups checked against a brute-force rollup computed here from the same rows.
import assert from 'node:assert/strict';
import { sharedChdb } from './helpers/chdb.ts';
import {
  DERIVED_TABLES,
  MIGRATIONS,
  migrate,
  SERIAL_PART_REMOVAL,
  SMALL_MERGE_SETTINGS,
} from '../clickhouse/migrations.ts';
import { createStore } from '../clickhouse/store.ts';
import {
  encodeRows,
  encodeRowsInSlices,
  identityTradeFormat,
  tradeFormat,
  type RowFormat,
} from '../clickhouse/rows.ts';
import type { CandleRow, Ohlc, SpotStore, TradeRow } from '../clickhouse/types.ts';
import type { Chain } from '../core/chains.ts';
import { add, cmp, parse, decToString } from '../core/decimal.ts';
import {
  TIMEFRAMES,
  type Candle,
  type Denomination,
  type Metric,
  type Timeframe,
  type Token,
} from '../core/schemas.ts';
import { sampleToken } from './fixtures/spec-samples.ts';

function prng(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const SIZE: Record<Timeframe, number> = {
  '1s': 1e3,
  '5s': 5e3,
  '15s': 15e3,
  '30s': 30e3,
  '1m': 60e3,
  '3m': 180e3,
  '5m': 300e3,
  '15m': 900e3,
  '30m': 1800e3,
  '1h': 3600e3,
  '4h': 4 * 3600e3,
  '6h': 6 * 3600e3,
  '12h': 12 * 3600e3,
  '1d': 86400e3,
  '7d': 7 * 86400e3,
};
const BASE: Record<Timeframe, CandleRow['granularity']> = {
  '1s': '1s',
  '5s': '1s',
  '15s': '1s',
  '30s': '1s',
  '1m': '1m',
  '3m': '1m',
  '5m': '1m',
  '15m': '1m',
  '30m': '1m',
  '1h': '1h',
  '4h': '1h',
  '6h': '1h',
  '12h': '1h',
  '1d': '1d',
  '7d': '1d',
};

/** Independent bucketing: 7d walks back to the Monday of the UTC calendar week. */
function bruteBucket(timeframe: Timeframe, time: number): number {
  if (timeframe !== '7d') return Math.floor(time / SIZE[timeframe]) * SIZE[timeframe];
  const day = new Date(Math.floor(time / 86400e3) * 86400e3);
  const sinceMonday = (day.getUTCDay() + 6) % 7;
  return day.getTime() - sinceMonday * 86400e3;
}

function bruteCandles(
  rows: CandleRow[],
  timeframe: Timeframe,
  metric: Metric,
  denomination: Denomination,
  from?: number,
  to?: number,
): Candle[] {
  const latest = new Map<number, CandleRow>();
  for (const row of rows) {
    if (row.granularity !== BASE[timeframe]) continue;
    const seen = latest.get(row.time);
    if (!seen || seen.seq < row.seq) latest.set(row.time, row);
  }
  const pick = (row: CandleRow): Ohlc =>
    metric === 'price'
      ? denomination === 'usd'
        ? row.priceUsd
        : row.priceNative
      : denomination === 'usd'
        ? row.marketCapUsd
        : row.marketCapNative;
  const buckets = new Map<number, CandleRow[]>();
  for (const row of [...latest.values()].sort((a, b) => a.time - b.time)) {
    const bucket = bruteBucket(timeframe, row.time);
    if (from !== undefined && bucket < from) continue;
    if (to !== undefined && bucket >= to) continue;
    buckets.set(bucket, [...(buckets.get(bucket) ?? []), row]);
  }
  return [...buckets.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([time, members]) => {
      const values = members.map(pick);
      let high = parse(values[0]!.high),
        low = parse(values[0]!.low),
        volume = 0n;
      for (const [i, v] of values.entries()) {
        if (cmp(parse(v.high), high) > 0) high = parse(v.high);
        if (cmp(parse(v.low), low) < 0) low = parse(v.low);
        volume = add(volume, parse(denomination === 'usd' ? members[i]!.volumeUsd : members[i]!.volumeNative));
      }
      return {
        time,
        open: Number(values[0]!.open),
        close: Number(values.at(-1)!.close),
        high: Number(decToString(high)),
        low: Number(decToString(low)),
        volume: Number(decToString(volume)),
      };
    });
}

function randomDecimal(rand: () => number, scale: number): string {
  const whole = Math.floor(rand() * scale);
  const fraction =
    String(Math.floor(rand() * 1e15)).padStart(15, '0') + String(Math.floor(rand() * 1e9)).padStart(9, '0');
  return `${whole}.${fraction}`;
}

function randomOhlc(rand: () => number, scale: number): Ohlc {
  const values = Array.from({ length: 4 }, () => randomDecimal(rand, scale));
  const sorted = [...values].sort((a, b) => cmp(parse(a), parse(b)));
  return { open: values[0]!, close: values[1]!, low: sorted[0]!, high: sorted[3]! };
}

function candleRow(
  rand: () => number,
  chain: Chain,
  token: string,
  granularity: CandleRow['granularity'],
  time: number,
  seq: number,
): CandleRow {
  return {
    chain,
    token,
    granularity,
    time,
    seq,
    priceNative: randomOhlc(rand, 1),
    priceUsd: randomOhlc(rand, 200),
    marketCapNative: randomOhlc(rand, 1e6),
    marketCapUsd: randomOhlc(rand, 1e9),
    volumeNative: randomDecimal(rand, 100),
    volumeUsd: randomDecimal(rand, 20000),
    trades: 1 + Math.floor(rand() * 20),
  };
}

/** Base rows of every granularity with gaps, plus superseded versions of some buckets. */
function candleFixture(chain: Chain, token: string): CandleRow[] {
  const rand = prng(7);
  const rows: CandleRow[] = [];
  const start = Date.UTC(2025, 0, 1, 13, 7, 11); // a Wednesday, not aligned to anything
  const plan: [CandleRow['granularity'], number, number][] = [
    ['1s', 1e3, 900],
    ['1m', 60e3, 900],
    ['1h', 3600e3, 500],
    ['1d', 86400e3, 120],
  ];
  let seq = 1;
  for (const [granularity, step, count] of plan) {
    const first = Math.floor(start / step) * step;
    for (let i = 0; i < count; i++) {
      if (rand() < 0.3) continue; // a base bucket with no trades
      const time = first + i * step;
      if (rand() < 0.2) rows.push(candleRow(rand, chain, token, granularity, time, seq++)); // superseded below
      rows.push(candleRow(rand, chain, token, granularity, time, seq++));
    }
  }
  return rows;
}

function trade(chain: Chain, token: string, i: number, timestamp: number, identities: string[] = []): TradeRow {
  return {
    id: `${chain}:0xhash${token}${i}:${i % 3}`,
    chain,
    token,
    seq: i + 1,
    name: 'Moon Inu',
    symbol: 'MI',
    trader: `trader${i % 5}`,
    side: i % 2 ? 'sell' : 'buy',
    transactionHash: `0xhash${token}${i}`,
    eventIndex: i % 3,
    blockNumber: 1000 + i,
    timestamp,
    amount: `${1000 + i}.123456789012345678901234567891`,
    quoteAmount: '0.5',
    quoteAsset: 'WSOL',
    priceNative: '0.000000072134000000000000000001',
    priceUsd: '0.0000129841',
    volumeNative: '0.5',
    volumeUsd: '90.25',
    marketCapNative: '72.134',
    marketCapUsd: '12984.12',
    pool: 'pool1',
    dex: 'pumpswap',
    identities,
    flags: identities.length ? ['kol'] : [],
    platforms: i % 4 === 0 ? ['axiom', 'photon'] : [],
  };
}

const FEED_START = 1_000_000_000_000;

describe('clickhouse row text (rows.ts)', () => {
  it('encodes a batch in slices to the same text as in one go, rows of one trade per identity included', async () => {
    const rows = Array.from({ length: 1_000 }, (_, i) =>
      trade(
        'solana',
        `T${i % 7}`,
        i,
        FEED_START + i,
        i % 3 === 0 ? [] : [`kol${i % 5}`, `kol${i % 2}`].slice(0, i % 3),
      ),
    );
    for (const format of [tradeFormat, identityTradeFormat] as RowFormat<TradeRow>[]) {
      const whole = encodeRows(format, rows, 10, 990);
      assert.equal((await encodeRowsInSlices(format, rows, 10, 990)).toString(), whole);
      assert.ok(whole.length > 0);
    }
    assert.equal((await encodeRowsInSlices(tradeFormat, rows, 5, 5)).length, 0);
    // Rows without an identity add no identity row: still no stray comma.
    const plain = rows.filter((r) => r.identities.length === 0);
    assert.equal((await encodeRowsInSlices(identityTradeFormat, plain)).length, 0);
    // Chunks shrink to rows far longer than usual (a long name) and grow back, in UTF-8.
    const long = rows.map((r, i) => (i % 100 < 10 ? { ...r, name: `Ω ${'x'.repeat(30_000)} ${i}` } : r));
    assert.equal((await encodeRowsInSlices(tradeFormat, long)).toString(), encodeRows(tradeFormat, long));
  });
});

describe('clickhouse store (chDB)', () => {
  let store: SpotStore;

  before(async () => {
    const { ctx, client } = await sharedChdb();
    store = createStore(ctx, client);
    // Suites run before this one in the same process share the store (their tokens, e.g. WSOL).
    await store.migrate();
    await store.truncateDerived();
  });

  it('runs the migrations idempotently', async () => {
    const { client } = await sharedChdb();
    await store.migrate();
    assert.deepEqual(await migrate(client), []);
    const result = await client.query({
      query: "SELECT name FROM system.tables WHERE database = 'spot' ORDER BY name",
      format: 'JSONEachRow',
    });
    const names = (await result.json<{ name: string }>()).map((r) => r.name);
    for (const table of [
      'aggregator_partitions',
      'aggregator_tokens',
      'balances',
      'candles',
      'identity_trades',
      'schema_migrations',
      'token_events',
      'tokens',
      'trades',
      'wallet_labels',
    ]) {
      assert.ok(names.includes(table), `missing ${table}`);
    }
    const versions = await client.query({
      query: 'SELECT count() AS n FROM spot.schema_migrations FINAL',
      format: 'JSONEachRow',
    });
    assert.equal(Number((await versions.json<{ n: string }>())[0]!.n), MIGRATIONS.length);
    assert.equal(await store.ping(), true);
  });

  it('merges every derived table a column at a time in small blocks, and removes merged-away parts on one thread', async () => {
    const { client } = await sharedChdb();
    const result = await client.query({
      query: "SELECT name, engine_full FROM system.tables WHERE database = 'spot'",
      format: 'JSONEachRow',
    });
    const engines = new Map(
      (await result.json<{ name: string; engine_full: string }>()).map((t) => [t.name, t.engine_full]),
    );
    for (const table of DERIVED_TABLES)
      for (const setting of [...SMALL_MERGE_SETTINGS.split(', '), SERIAL_PART_REMOVAL])
        assert.ok(engines.get(table)?.includes(setting), `${table} lacks ${setting}: ${engines.get(table)}`);
  });

  it('adds trade platforms to tables made before them, reading [] for old rows, idempotently', async () => {
    const { client } = await sharedChdb();
    // Migration 1's tables in a scratch database, an old row in them, then the platforms migration twice.
    const scratch = (sql: string) => sql.replaceAll('spot.', 'spot_upgrade.');
    await client.command({ query: 'CREATE DATABASE IF NOT EXISTS spot_upgrade' });
    try {
      for (const sql of MIGRATIONS[0]!.statements.slice(0, 2)) await client.command({ query: scratch(sql) });
      await client.command({
        query: "INSERT INTO spot_upgrade.trades (id, chain, token, flags) VALUES ('old', 'solana', 'T', ['kol'])",
      });
      const platforms = MIGRATIONS.find((m) => m.name === 'trade platforms')!;
      for (let run = 0; run < 2; run++)
        for (const sql of platforms.statements) await client.command({ query: scratch(sql) });
      for (const table of ['trades', 'identity_trades']) {
        const columns = await client.query({
          query: `SELECT type FROM system.columns WHERE database = 'spot_upgrade' AND table = '${table}' AND name = 'platforms'`,
          format: 'JSONEachRow',
        });
        assert.deepEqual(await columns.json(), [{ type: 'Array(String)' }], table);
      }
      const old = await client.query({
        query: 'SELECT flags, platforms FROM spot_upgrade.trades',
        format: 'JSONEachRow',
      });
      assert.deepEqual(await old.json(), [{ flags: ['kol'], platforms: [] }]);
    } finally {
      await client.command({ query: 'DROP DATABASE IF EXISTS spot_upgrade' });
    }
  });

  it('keeps one copy of a trade inserted twice, exact decimals intact', async () => {
    const rows = Array.from({ length: 30 }, (_, i) =>
      trade('solana', 'TokA', i, 1_760_000_000_000 + Math.floor(i / 2) * 1000),
    );
    await store.insertTrades(rows);
    await store.insertTrades(rows.slice(0, 10));
    const stored = await store.allTrades('solana', 'TokA');
    assert.equal(stored.length, 30);
    assert.deepEqual(stored[0], rows[0]);
    assert.deepEqual(
      stored.map((t) => t.id),
      rows.map((t) => t.id),
    );
  });

  it('reads one copy of rows repeated inside one write (inserts leave in-block duplicates to the reads)', async () => {
    // STORE_INSERT_SETTINGS turns off the insert-time collapse of equal keys: every read must
    // deduplicate within a part as it does across parts.
    const repeated = trade('solana', 'TokDup', 0, 1_760_000_500_000, ['kol']);
    const rows = [repeated, trade('solana', 'TokDup', 1, 1_760_000_501_000, ['kol']), { ...repeated }];
    await store.insertTrades(rows);
    assert.deepEqual(
      (await store.allTrades('solana', 'TokDup')).map((t) => t.id),
      rows.slice(0, 2).map((t) => t.id),
    );
    assert.deepEqual(await store.queryTokenTrades('solana', 'TokDup', 10), [rows[1], repeated]);
    const feed = await store.queryIdentityTrades('kol', ['solana'], 1000);
    assert.equal(feed.filter((t) => t.token === 'TokDup').length, 2);

    const base = sampleToken() as unknown as Token;
    const address = '0x00000000000000000000000000000000000000d8';
    const older = { ...base, chain: 'base' as const, address, name: 'older', updatedAt: base.updatedAt };
    const newer = { ...older, name: 'newer', updatedAt: base.updatedAt + 1000 };
    await store.upsertTokens([newer, older]);
    assert.equal((await store.getToken('base', address))?.name, 'newer');
  });

  it('pages token trades newest first with cursors', async () => {
    const seen: TradeRow[] = [];
    let before: { timestamp: number; id: string } | undefined;
    for (;;) {
      const page = await store.queryTokenTrades('solana', 'TokA', 7, before);
      seen.push(...page);
      if (page.length < 7) break;
      before = { timestamp: page.at(-1)!.timestamp, id: page.at(-1)!.id };
    }
    assert.equal(seen.length, 30);
    assert.equal(new Set(seen.map((t) => t.id)).size, 30);
    for (let i = 1; i < seen.length; i++) {
      const a = seen[i - 1]!,
        b = seen[i]!;
      assert.ok(a.timestamp > b.timestamp || (a.timestamp === b.timestamp && a.id > b.id), 'newest first');
    }
  });

  it('tops up a page that repeated trades shortened: every trade written three times', async () => {
    const rows = Array.from({ length: 23 }, (_, i) =>
      trade('solana', 'TokTriple', i, 1_760_000_900_000 + Math.floor(i / 3) * 1000),
    );
    for (let copy = 0; copy < 3; copy++) await store.insertTrades(rows);
    const expected = [...rows].sort((a, b) => b.timestamp - a.timestamp || (a.id < b.id ? 1 : -1)).map((t) => t.id);
    const seen: string[] = [];
    let before: { timestamp: number; id: string } | undefined;
    for (;;) {
      const page = await store.queryTokenTrades('solana', 'TokTriple', 5, before);
      seen.push(...page.map((t) => t.id));
      if (page.length < 5) break;
      before = { timestamp: page.at(-1)!.timestamp, id: page.at(-1)!.id };
    }
    assert.deepEqual(seen, expected);
  });

  it('pages an identity feed across tokens filtered by chains', async () => {
    const rows: TradeRow[] = [];
    const chains: Chain[] = ['solana', 'base', 'bsc'];
    for (let i = 0; i < 45; i++) {
      const identities = i % 3 === 0 ? ['kol', 'fomoscan'] : i % 3 === 1 ? ['kol'] : [];
      rows.push(trade(chains[i % 3]!, `Feed${i % 4}`, i, FEED_START + (i % 9) * 1000, identities));
    }
    await store.insertTrades(rows);
    await store.insertTrades(rows.slice(20));
    const expected = rows
      .filter((t) => t.identities.includes('kol') && (t.chain === 'solana' || t.chain === 'base'))
      .sort((a, b) => b.timestamp - a.timestamp || (a.id < b.id ? 1 : -1));
    const seen: TradeRow[] = [];
    // Other suites share the engine: page from just after this fixture's newest trade and stop
    // past its oldest (2001, a time no other fixture uses).
    let before: { timestamp: number; id: string } | undefined = { timestamp: FEED_START + 9000, id: '' };
    for (;;) {
      const page = await store.queryIdentityTrades('kol', ['solana', 'base'], 4, before);
      const mine = page.filter((t) => t.timestamp >= FEED_START);
      seen.push(...mine);
      if (page.length < 4 || mine.length < page.length) break;
      before = { timestamp: page.at(-1)!.timestamp, id: page.at(-1)!.id };
    }
    assert.deepEqual(
      seen.map((t) => t.id),
      expected.map((t) => t.id),
    );
    const window = { timestamp: FEED_START + 9000, id: '' };
    const fomo = await store.queryIdentityTrades('fomoscan', ['bsc'], 100, window);
    assert.deepEqual(
      fomo.filter((t) => t.timestamp >= FEED_START),
      [],
    );
    const fomoSolana = (await store.queryIdentityTrades('fomoscan', ['solana'], 100, window)).filter(
      (t) => t.timestamp >= FEED_START,
    );
    assert.equal(
      fomoSolana.length,
      rows.filter((t) => t.chain === 'solana' && t.identities.includes('fomoscan')).length,
    );
  });

  it('serves the last written token object among versions with the same updatedAt (decay rewrites stats, not updatedAt)', async () => {
    const base = sampleToken() as unknown as Token;
    const address = '0x00000000000000000000000000000000000000d7';
    // The aggregator rewrites a token whose windows decay with the same updatedAt: each write is a
    // part of its own until a merge, and the last one written is the current object.
    const versions = Array.from({ length: 6 }, (_, i) => ({
      ...base,
      chain: 'base' as const,
      address,
      name: `decay ${i}`,
      updatedAt: base.updatedAt,
    }));
    for (const version of versions) await store.upsertTokens([version]);
    for (let read = 0; read < 5; read++) assert.equal((await store.getToken('base', address))?.name, 'decay 5');
  });

  it('keeps the latest token object per chain and address', async () => {
    const older = sampleToken() as unknown as Token;
    const newer = { ...(sampleToken() as unknown as Token), name: 'Moon Inu v2', updatedAt: older.updatedAt + 5000 };
    await store.upsertTokens([newer]);
    await store.upsertTokens([older]);
    assert.deepEqual(await store.getToken(older.chain, older.address), newer);
    assert.equal(await store.getToken('base', '0x0000000000000000000000000000000000000001'), null);
    const { client } = await sharedChdb();
    const typed = await client.query({
      query:
        'SELECT name, toString(market_cap_usd) AS mc, holders_count, toString(bonding_curve_pct) AS curve FROM spot.tokens FINAL WHERE address = {a:String}',
      query_params: { a: older.address },
      format: 'JSONEachRow',
    });
    assert.deepEqual(await typed.json(), [{ name: 'Moon Inu v2', mc: '12984.12', holders_count: 120, curve: '42.5' }]);
  });

  it('stores token events, wallet labels and balances', async () => {
    await store.insertTokenEvents([
      {
        id: 'e1',
        chain: 'base',
        token: '0xabc',
        kind: 'created',
        blockTime: 1_760_000_000_000,
        body: '{"kind":"created"}',
      },
    ]);
    await store.upsertWalletLabels([
      { chain: 'base', wallet: '0xw', labels: ['kol'], name: 'Alice', updatedAt: 2 },
      { chain: 'base', wallet: '0xw', labels: ['cex'], name: null, updatedAt: 1 },
    ]);
    await store.upsertBalances([
      {
        chain: 'base',
        token: '0xabc',
        wallet: '0xw',
        amount: '115792089237316195423570985008687907853269984665640564039457584007913129639935',
        updatedAt: 5,
      },
    ]);
    const { client } = await sharedChdb();
    const read = async (query: string) => (await client.query({ query, format: 'JSONEachRow' })).json();
    assert.deepEqual(await read("SELECT kind, body FROM spot.token_events WHERE id = 'e1'"), [
      { kind: 'created', body: '{"kind":"created"}' },
    ]);
    assert.deepEqual(await read("SELECT labels, name FROM spot.wallet_labels FINAL WHERE wallet = '0xw'"), [
      { labels: ['kol'], name: 'Alice' },
    ]);
    assert.deepEqual(await read("SELECT amount FROM spot.balances FINAL WHERE wallet = '0xw'"), [
      { amount: '115792089237316195423570985008687907853269984665640564039457584007913129639935' },
    ]);
  });

  describe('candles', () => {
    const rows = candleFixture('solana', 'CandleTok');

    before(async () => {
      await store.upsertCandles(rows);
    });

    it('rolls up every timeframe and denomination like the brute-force rollup', async () => {
      for (const timeframe of TIMEFRAMES) {
        for (const metric of ['price', 'marketCap'] as const) {
          for (const denomination of ['usd', 'native'] as const) {
            const got = await store.queryCandles({
              chain: 'solana',
              token: 'CandleTok',
              timeframe,
              metric,
              denomination,
              limit: 5000,
            });
            const want = bruteCandles(rows, timeframe, metric, denomination);
            assert.ok(want.length > 0);
            assert.deepEqual(got, want, `${timeframe} ${metric} ${denomination}`);
          }
        }
      }
    });

    it('applies from (inclusive), to (exclusive) and limit (newest buckets)', async () => {
      const rand = prng(99);
      for (const timeframe of ['5s', '1m', '15m', '4h', '1d', '7d'] as const) {
        const all = bruteCandles(rows, timeframe, 'price', 'usd');
        for (let round = 0; round < 4; round++) {
          const a = all[Math.floor(rand() * all.length)]!.time;
          const b = all[Math.floor(rand() * all.length)]!.time;
          const from = Math.min(a, b) + (round === 1 ? 1 : 0); // 1 ms past a bucket start excludes it
          const to = Math.max(a, b) + (round === 2 ? 1 : 0); // 1 ms past a bucket start includes it
          const limit = 1 + Math.floor(rand() * 10);
          const want = bruteCandles(rows, timeframe, 'price', 'usd', from, to).slice(-limit);
          const got = await store.queryCandles({
            chain: 'solana',
            token: 'CandleTok',
            timeframe,
            metric: 'price',
            denomination: 'usd',
            from,
            to,
            limit,
          });
          assert.deepEqual(got, want, `${timeframe} [${from}, ${to}) limit ${limit}`);
          const toOnly = await store.queryCandles({
            chain: 'solana',
            token: 'CandleTok',
            timeframe,
            metric: 'price',
            denomination: 'usd',
            to,
            limit,
          });
          assert.deepEqual(
            toOnly,
            bruteCandles(rows, timeframe, 'price', 'usd', undefined, to).slice(-limit),
            `${timeframe} to ${to}`,
          );
        }
      }
    });

    it('aligns 7d buckets to Monday 00:00 UTC and leaves out buckets with no trades', async () => {
      const weekly = await store.queryCandles({
        chain: 'solana',
        token: 'CandleTok',
        timeframe: '7d',
        metric: 'price',
        denomination: 'usd',
        limit: 5000,
      });
      for (const candle of weekly) {
        const date = new Date(candle.time);
        assert.equal(date.getUTCDay(), 1);
        assert.equal(candle.time % 86400e3, 0);
      }
      const minutes = await store.queryCandles({
        chain: 'solana',
        token: 'CandleTok',
        timeframe: '1m',
        metric: 'price',
        denomination: 'usd',
        limit: 5000,
      });
      const traded = new Set(rows.filter((r) => r.granularity === '1m').map((r) => r.time));
      assert.equal(minutes.length, traded.size);
      assert.ok(minutes.length < 900, 'the fixture has minutes without trades');
      const gap = Date.UTC(2025, 0, 2);
      const oneBucket = await store.queryCandles({
        chain: 'solana',
        token: 'EmptyTok',
        timeframe: '1m',
        metric: 'price',
        denomination: 'usd',
        from: gap,
        to: gap + 60e3,
        limit: 10,
      });
      assert.deepEqual(oneBucket, []);
    });

    it('reads the newest buckets from the newest base rows, and unbounded when versions crowd them', async () => {
      const rand = prng(11);
      const to = Date.UTC(2025, 4, 20, 12);
      const rows: CandleRow[] = [];
      let seq = 0;
      for (const days of [12, 9, 6]) rows.push(candleRow(rand, 'bsc', 'WideTok', '1m', to - days * 86_400_000, ++seq));
      for (const minutes of [400, 200, 100, 7, 6])
        rows.push(candleRow(rand, 'bsc', 'WideTok', '1m', to - minutes * 60e3, ++seq));
      // The newest minutes rewritten six times each (an open bucket's versions before a merge).
      for (const minutes of [5, 4, 3, 2, 1])
        for (let version = 0; version < 6; version++)
          rows.push(candleRow(rand, 'bsc', 'WideTok', '1m', to - minutes * 60e3, ++seq));
      await store.upsertCandles(rows);
      for (const timeframe of ['1m', '5m', '1h', '1d'] as const) {
        for (const limit of [1, 2, 3, 5, 7, 8, 11, 20]) {
          // No `from`; a wide one takes the same read; one inside the newest rows bounds it itself.
          for (const from of [undefined, 0, to - 10 * 86_400_000, to - 150 * 60e3, to - 3 * 60e3]) {
            const query = { chain: 'bsc', token: 'WideTok', timeframe, metric: 'price', denomination: 'usd' } as const;
            assert.deepEqual(
              await store.queryCandles({ ...query, from, to, limit }),
              bruteCandles(rows, timeframe, 'price', 'usd', from, to).slice(-limit),
              `${timeframe} limit ${limit} from ${from}`,
            );
          }
        }
      }
    });

    it('reads 5,000 candles (timing logged, not asserted)', async () => {
      const rand = prng(3);
      const start = Date.UTC(2025, 2, 1);
      const base: CandleRow[] = [];
      for (let i = 0; i < 25_000; i++) base.push(candleRow(rand, 'base', 'BigTok', '1m', start + i * 60e3, i + 1));
      await store.upsertCandles(base);
      for (const timeframe of ['1m', '5m'] as const) {
        const began = performance.now();
        const candles = await store.queryCandles({
          chain: 'base',
          token: 'BigTok',
          timeframe,
          metric: 'marketCap',
          denomination: 'usd',
          limit: 5000,
        });
        const elapsed = performance.now() - began;
        assert.equal(candles.length, 5000);
        console.log(`      5,000 ${timeframe} candles rolled up from 25,000 1m base rows: ${elapsed.toFixed(1)} ms`);
      }
    });
  });

  it('empties every derived table and keeps the migration record', async () => {
    const { client } = await sharedChdb();
    await store.truncateDerived();
    assert.deepEqual(await store.allTrades('solana', 'TokA'), []);
    const count = await client.query({
      query: 'SELECT count() AS n FROM spot.schema_migrations',
      format: 'JSONEachRow',
    });
    assert.ok(Number((await count.json<{ n: string }>())[0]!.n) >= 1);
  });
});
