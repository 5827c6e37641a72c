// Trade pages from the store: what REST's cold trade reads cost (a token's page past its ring, an
// identity feed's page past its ring, every cursor page). One busy token's trades are written in
// live-sized inserts (many parts, merges running), a share of them written twice as a replay's
// rewrite would, and every 20th trade carries the kol identity. Each page is read by the store's
// query and by the former one (LIMIT 1 BY id in SQL), alternately, and both must return the same
// trades.
import type { Chain } from '../../core/chains.ts';
import { CURSOR_CLAUSE, TRADE_SELECT, tradeFromResult } from '../../clickhouse/trades.ts';
import type { TradeCursor, TradeRow } from '../../clickhouse/types.ts';
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
  'pages',
  { trades: 1_000_000, rowsPerInsert: 2_000, rewrittenShare: 0.02, pages: 150 },
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
    await handle.store.close();
    return {
      params: { trades: params.trades, rewritten, kolTrades: Math.ceil(params.trades / 20) },
      measurements,
      ratios,
      targets: [],
      notes: [
        `One token's ${params.trades.toLocaleString('en-US')} trades over 12 h in inserts of ${params.rowsPerInsert.toLocaleString('en-US')} rows (${round(perSecond(params.trades + rewritten, insertMs), 0).toLocaleString('en-US')} rows/s), the newest ${(params.rewrittenShare * 100).toFixed(0)} % written twice, every 20th trade in the kol feed. Pages read on chDB in this process, nothing else running: what a cold REST read costs before the main thread's queue.`,
      ],
      evidence: { activeParts: parts, insertMs: round(insertMs, 0) },
    };
  },
);
