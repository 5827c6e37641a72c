// Cold reads from the store: what REST's reads past the hot views cost. Trade pages (a token's page
// past its ring, an identity feed's, every cursor page): one busy token's trades written in
// live-sized inserts (many parts, merges running), a share written twice as a replay's rewrite
// would, every 20th in the kol feed; each page read by the store's query and by the former one
// (LIMIT 1 BY id in SQL). Candles with no `from` (countBack, the newest 500): a week of a busy
// token's 1s rows and a quiet token's few, read by the store's query from the newest rows and by one
// unbounded read. Each pair alternately, and both forms must return the same answer.
import type { Chain } from '../../core/chains.ts';
import { queryCandleWindow } from '../../clickhouse/candles.ts';
import { CURSOR_CLAUSE, TRADE_SELECT, tradeFromResult } from '../../clickhouse/trades.ts';
import type { CandleQuery, CandleRow, TradeCursor, TradeRow } from '../../clickhouse/types.ts';
import { openStore } from '../lib/pipeline-parts.ts';
import { runScenarioMain, type Measurement } from '../lib/scenario.ts';
import { perSecond, round, summarize } from '../lib/stats.ts';

interface Params {
  /** Trades of the busy token: about 12 h of a top token at 2,000 swaps/s (REALWORLD.md). */
  trades: number;
  /** Rows per insert: the live store's one-second flush of a busy token and its neighbours. */
  rowsPerInsert: number;
  /** Share of the trades written a second time (a replay's rewrite before merges). */
  rewrittenShare: number;
  /** Pages timed per kind and form. */
  pages: number;
  /** Days of the busy token's 1s candles (a few tokens run for weeks, REALWORLD.md). */
  candleDays: number;
  /** Candle reads timed per kind and form. */
  candleReads: number;
}

const CHAIN: Chain = 'solana';
const TOKEN = 'BusyTokenPagesBench1111111111111111111111111';
const PAGE = 101; // REST asks for limit + 1 to know whether a next page exists
const SPAN_MS = 12 * 3_600_000;

function tradeAt(i: number, count: number, start: number): TradeRow {
  const kol = i % 20 === 0;
  return {
    id: `${CHAIN}:sig${i.toString(36).padStart(8, '0')}:${i % 4}`,
    chain: CHAIN,
    token: TOKEN,
    seq: i + 1,
    name: 'Busy',
    symbol: 'BUSY',
    trader: `trader${(i * 7919) % 50_000}`,
    side: i % 2 ? 'sell' : 'buy',
    transactionHash: `sig${i.toString(36).padStart(8, '0')}`,
    eventIndex: i % 4,
    blockNumber: 300_000_000 + Math.floor(i / 8),
    // Whole seconds, several trades in one: the (timestamp, id) order is what pages follow.
    timestamp: start + Math.floor((i * SPAN_MS) / count / 1000) * 1000,
    // Amounts of a pump.fun-sized trade; the page cost does not depend on their values.
    amount: `${1000 + (i % 977)}.123456`,
    quoteAsset: 'WSOL',
    quoteAmount: `0.${(i % 97) + 1}`,
    volumeNative: `0.${(i % 97) + 1}`,
    volumeUsd: `${(i % 97) + 18}.25`,
    priceNative: `0.0000000${72_134 + (i % 1000)}`,
    priceUsd: `0.0000${129_841 + (i % 1000)}`,
    marketCapNative: `${72 + (i % 50)}.134`,
    marketCapUsd: `${12_984 + (i % 5000)}.12`,
    pool: 'BusyPool1111111111111111111111111111111111111',
    dex: 'pumpswap',
    identities: kol ? ['kol'] : [],
    flags: kol ? ['kol'] : [],
    platforms: [],
  };
}

runScenarioMain<Params>(
  'reads',
  { trades: 1_000_000, rowsPerInsert: 2_000, rewrittenShare: 0.02, pages: 150, candleDays: 7, candleReads: 40 },
  async ({ ctx }, params) => {
    const handle = await openStore(ctx);
    const { client, store } = handle;
    const start = Date.now() - SPAN_MS;
    const insertStarted = performance.now();
    for (let from = 0; from < params.trades; from += params.rowsPerInsert) {
      const batch: TradeRow[] = [];
      for (let i = from; i < Math.min(params.trades, from + params.rowsPerInsert); i++)
        batch.push(tradeAt(i, params.trades, start));
      await store.insertTrades(batch);
    }
    const rewritten = Math.floor(params.trades * params.rewrittenShare);
    for (let from = params.trades - rewritten; from < params.trades; from += params.rowsPerInsert) {
      const batch: TradeRow[] = [];
      for (let i = from; i < Math.min(params.trades, from + params.rowsPerInsert); i++)
        batch.push(tradeAt(i, params.trades, start));
      await store.insertTrades(batch);
    }
    const insertMs = performance.now() - insertStarted;
    const partsResult = await client.query({
      query: `SELECT table, count() AS parts FROM system.parts WHERE database = 'spot' AND active AND table IN ('trades', 'identity_trades') GROUP BY table`,
      format: 'JSONEachRow',
    });
    const parts = Object.fromEntries(
      (await partsResult.json<{ table: string; parts: string }>()).map((r) => [r.table, Number(r.parts)]),
    );

    // The former form: the same rows deduplicated by LIMIT 1 BY id in SQL.
    const formerPage = async (table: 'trades' | 'identity_trades', before: TradeCursor | undefined) => {
      const where =
        table === 'trades'
          ? 'chain = {chain:String} AND token = {token:String}'
          : 'identity = {identity:String} AND has({chains:Array(String)}, chain)';
      const result = await client.query({
        query: `SELECT ${TRADE_SELECT} FROM spot.${table} WHERE ${where} ${before ? CURSOR_CLAUSE : ''}
ORDER BY timestamp DESC, id DESC LIMIT 1 BY id LIMIT {limit:UInt32}`,
        query_params: {
          chain: CHAIN,
          token: TOKEN,
          identity: 'kol',
          chains: [CHAIN],
          limit: PAGE,
          ...(before ? { beforeTs: before.timestamp, beforeId: before.id } : {}),
        },
        format: 'JSONEachRow',
      });
      return (await result.json<Record<string, string | number | string[]>>()).map(tradeFromResult);
    };
    const currentPage = (table: 'trades' | 'identity_trades', before: TradeCursor | undefined) =>
      table === 'trades'
        ? store.queryTokenTrades(CHAIN, TOKEN, PAGE, before)
        : store.queryIdentityTrades('kol', [CHAIN], PAGE, before);

    // Cursors spread over the whole history, the rewritten newest share included.
    let state = 12345;
    const cursorAt = (table: 'trades' | 'identity_trades'): TradeCursor => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      let i = Math.floor((state / 2 ** 31) * params.trades);
      if (table === 'identity_trades') i -= i % 20;
      const row = tradeAt(i, params.trades, start);
      return { timestamp: row.timestamp, id: row.id };
    };
    const kinds = [
      { name: 'token trades, first page', table: 'trades', cursor: false },
      { name: 'token trades, a cursor page', table: 'trades', cursor: true },
      { name: 'kol feed, first page', table: 'identity_trades', cursor: false },
      { name: 'kol feed, a cursor page', table: 'identity_trades', cursor: true },
    ] as const;
    const measurements: Measurement[] = [];
    const ratios: Record<string, number> = {};
    for (const kind of kinds) {
      const current: number[] = [];
      const former: number[] = [];
      for (let n = 0; n < params.pages; n++) {
        const before = kind.cursor ? cursorAt(kind.table) : undefined;
        // Alternate which form goes first, so neither always meets a warm cache.
        const order = n % 2 === 0 ? (['current', 'former'] as const) : (['former', 'current'] as const);
        const ids: Record<string, string> = {};
        for (const form of order) {
          const started = performance.now();
          const rows =
            form === 'current' ? await currentPage(kind.table, before) : await formerPage(kind.table, before);
          (form === 'current' ? current : former).push(performance.now() - started);
          ids[form] = rows.map((row) => row.id).join(',');
        }
        if (ids.current !== ids.former) throw new Error(`${kind.name}: the two forms returned different trades`);
      }
      const now = summarize(current);
      const then = summarize(former);
      measurements.push(
        {
          subject: `${kind.name} (${PAGE} trades): the store's query`,
          metric: 'p50 ms',
          value: round(now.p50, 2),
          unit: 'ms',
          extra: { p99: round(now.p99, 2), max: round(now.max, 2), pages: now.count },
        },
        {
          subject: `  the former query (LIMIT 1 BY id)`,
          metric: 'p50 ms',
          value: round(then.p50, 2),
          unit: 'ms',
          extra: { p99: round(then.p99, 2), max: round(then.max, 2), pages: then.count },
        },
      );
      ratios[`${kind.table}_${kind.cursor ? 'cursor' : 'first'}_page_p50_former_vs_current`] = round(
        then.p50 / now.p50,
        2,
      );
    }
    // Candles: a busy token's 1s rows over `candleDays`, a quiet one's single rows days apart.
    const end = Math.floor(Date.now() / 1000) * 1000;
    const candleStart = end - params.candleDays * 86_400_000;
    const ohlc = (price: number) => ({
      open: String(price),
      high: String(price * 1.01),
      low: String(price * 0.99),
      close: String(price),
    });
    const candleRow = (token: string, time: number, seq: number): CandleRow => {
      const price = 0.0001 + (time % 977) / 1e7;
      return {
        chain: CHAIN,
        token,
        granularity: '1s',
        time,
        seq,
        priceNative: ohlc(price),
        priceUsd: ohlc(price * 180),
        marketCapNative: ohlc(price * 1e9),
        marketCapUsd: ohlc(price * 1.8e11),
        volumeNative: '1.5',
        volumeUsd: '270.5',
        trades: 1 + (seq % 5),
      };
    };
    const QUIET = 'QuietTokenReadsBench111111111111111111111111';
    let seq = 0;
    const candleInsertStarted = performance.now();
    for (let time = candleStart; time < end; ) {
      const batch: CandleRow[] = [];
      for (; batch.length < 10_000 && time < end; time += 1000) batch.push(candleRow(TOKEN, time, ++seq));
      await store.upsertCandles(batch);
    }
    const candleRows = seq;
    await store.upsertCandles(
      Array.from({ length: 20 }, (_, i) =>
        candleRow(QUIET, end - Math.floor(((i + 1) * (end - candleStart)) / 21), ++seq),
      ),
    );
    const candleInsertMs = performance.now() - candleInsertStarted;
    const candleKinds = [
      { name: 'busy token, 1s, the newest 500', token: TOKEN, timeframe: '1s', limit: 500 },
      { name: 'busy token, 5s, countBack 5000', token: TOKEN, timeframe: '5s', limit: 5000 },
      { name: 'quiet token, 1s, the newest 500', token: QUIET, timeframe: '1s', limit: 500 },
    ] as const;
    for (const kind of candleKinds) {
      const query: CandleQuery = {
        chain: CHAIN,
        token: kind.token,
        timeframe: kind.timeframe,
        metric: 'marketCap',
        denomination: 'usd',
        limit: kind.limit,
      };
      const newestRows: number[] = [];
      const unbounded: number[] = [];
      for (let n = 0; n < params.candleReads; n++) {
        const order = n % 2 === 0 ? (['newest', 'unbounded'] as const) : (['unbounded', 'newest'] as const);
        const answers: Record<string, string> = {};
        for (const form of order) {
          const started = performance.now();
          const candles = form === 'newest' ? await store.queryCandles(query) : await queryCandleWindow(client, query);
          (form === 'newest' ? newestRows : unbounded).push(performance.now() - started);
          answers[form] = JSON.stringify(candles);
        }
        if (answers.newest !== answers.unbounded)
          throw new Error(`${kind.name}: the two forms returned different candles`);
      }
      const now = summarize(newestRows);
      const then = summarize(unbounded);
      measurements.push(
        {
          subject: `candles, ${kind.name}: the store's read from the newest rows`,
          metric: 'p50 ms',
          value: round(now.p50, 2),
          unit: 'ms',
          extra: { p99: round(now.p99, 2), max: round(now.max, 2), reads: now.count },
        },
        {
          subject: '  one unbounded read (the former query)',
          metric: 'p50 ms',
          value: round(then.p50, 2),
          unit: 'ms',
          extra: { p99: round(then.p99, 2), max: round(then.max, 2), reads: then.count },
        },
      );
      ratios[
        `candles_${kind.token === TOKEN ? 'busy' : 'quiet'}_${kind.timeframe}_${kind.limit}_p50_unbounded_vs_newest`
      ] = round(then.p50 / now.p50, 2);
    }
    await handle.store.close();
    return {
      params: { trades: params.trades, rewritten, kolTrades: Math.ceil(params.trades / 20), candleRows },
      measurements,
      ratios,
      targets: [],
      notes: [
        `One token's ${params.trades.toLocaleString('en-US')} trades over 12 h in inserts of ${params.rowsPerInsert.toLocaleString('en-US')} rows (${round(perSecond(params.trades + rewritten, insertMs), 0).toLocaleString('en-US')} rows/s), the newest ${(params.rewrittenShare * 100).toFixed(0)} % written twice, every 20th trade in the kol feed. Pages read on chDB in this process, nothing else running: what a cold REST read costs before the main thread's queue.`,
        `Candles: the busy token's ${candleRows.toLocaleString('en-US')} 1s rows (${params.candleDays} days, one a second) and a quiet token's 20 rows over the same days, read with no \`from\` as countBack and the default 500 read.`,
      ],
      evidence: { activeParts: parts, insertMs: round(insertMs, 0), candleInsertMs: round(candleInsertMs, 0) },
    };
  },
);
