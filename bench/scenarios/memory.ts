// Memory: bytes per active token in the query API's hot views. N tokens (real token objects from
// the aggregator, re-addressed) are applied with applyToken, then each gets its open candles
// (applyCandles) and one trade (applyTrade); the heap (used + external) and RSS are read after a
// full GC (node --expose-gc) before and after each stage. "Active token" = all three. Then the
// aggregator's state: heap bytes per active token and per wallet (bench/lib/aggregator-state-size.ts).
import type { Chain } from '../../core/chains.ts';
import type { Context } from '../../core/context.ts';
import { createClient } from '@clickhouse/client';
import { createStore } from '../../clickhouse/store.ts';
import { createHotViews } from '../../query-api/hot-views.ts';
import { solanaAddress } from '../../ingest/solana/index.ts';
import { seedAddress } from '../../ingest/evm/index.ts';
import { derive } from '../lib/derived.ts';
import { readDecoded } from '../lib/inputs.ts';
import { openLog } from '../lib/pipeline-parts.ts';
import { check, runScenarioMain, sleep, type Measurement } from '../lib/scenario.ts';
import { round } from '../lib/stats.ts';
import { measureAggregatorState } from '../lib/aggregator-state-size.ts';

interface Params {
  inputFile: string;
  tokens: number;
  targetBytesPerToken: number;
  /** Aggregator state: tokens trading aggFewTrades and aggManyTrades times in an hour, one-off wallets. */
  aggTokens: number;
  aggFewTrades: number;
  aggManyTrades: number;
  aggWallets: number;
}

interface Reading {
  rss: number;
  heapUsed: number;
  external: number;
}

async function settle(): Promise<Reading> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('memory scenario needs node --expose-gc');
  for (let i = 0; i < 3; i++) {
    gc();
    await sleep(20);
  }
  const m = process.memoryUsage();
  // `external` includes arrayBuffers.
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external };
}

/**
 * The templates the stages copy, from the simulator's records. The records and everything derived
 * from them die when this returns: held by the scenario's frame, they were freed partway through
 * the stages (~37 MB at 20,000 tokens), which read as a negative candles stage.
 */
function templatesOf(ctx: Context, inputFile: string) {
  const derived = derive(ctx, readDecoded(inputFile));
  return {
    templates: derived.tokens,
    candleOf: new Map(derived.candles.map((m) => [`${m.chain}:${m.token}`, m])),
    tradeOf: new Map(derived.trades.map((m) => [`${m.trade.chain}:${m.trade.token}`, m])),
  };
}

const addressFor = (chain: Chain, i: number) =>
  chain === 'solana' ? solanaAddress(`bench-memory/${i}`) : seedAddress(`bench-memory/${chain}/${i}`).toLowerCase();

runScenarioMain<Params>(
  'memory',
  {
    inputFile: '',
    tokens: 20_000,
    targetBytesPerToken: 2048,
    aggTokens: 500,
    aggFewTrades: 60,
    aggManyTrades: 600,
    aggWallets: 50_000,
  },
  async ({ ctx }, params) => {
    const { templates, candleOf, tradeOf } = templatesOf(ctx, params.inputFile);
    const logHandle = await openLog(ctx, 'embedded', 'memory');
    // The views read the store only in start(), which this scenario does not call: a client that never connects.
    const store = createStore(ctx, createClient({ url: 'http://127.0.0.1:9' }));
    const views = createHotViews(ctx, { log: logHandle.log, store });
    const now = Date.now();
    const addresses = Array.from({ length: params.tokens }, (_, i) =>
      addressFor(templates[i % templates.length]!.chain, i),
    );

    const before = await settle();
    for (let i = 0; i < params.tokens; i++) {
      const template = templates[i % templates.length]!;
      views.applyToken({
        ...structuredClone(template),
        address: addresses[i]!,
        name: `${template.name} ${i}`,
        updatedAt: now,
      });
    }
    // As the running service holds them 2 s after their last update (hot-views.ts packIdle).
    views.packIdle(Infinity);
    const afterTokens = await settle();
    for (let i = 0; i < params.tokens; i++) {
      const template = templates[i % templates.length]!;
      const message = candleOf.get(`${template.chain}:${template.address}`);
      if (message) views.applyCandles({ ...structuredClone(message), token: addresses[i]!, updatedAt: now });
    }
    views.packIdle(Infinity);
    const afterCandles = await settle();
    for (let i = 0; i < params.tokens; i++) {
      const template = templates[i % templates.length]!;
      const message = tradeOf.get(`${template.chain}:${template.address}`);
      if (message) {
        const copy = structuredClone(message);
        copy.trade.token = addresses[i]!;
        copy.trade.id = `${copy.trade.id}:m${i}`;
        // A live trade: the views start no ring for one already past the ring's hour.
        copy.trade.timestamp = now;
        views.applyTrade(copy);
      }
    }
    const afterTrade = await settle();
    if (!views.token(templates[0]!.chain, addresses[0]!)) throw new Error('hot views dropped the synthetic tokens');
    if (
      tradeOf.has(`${templates[0]!.chain}:${templates[0]!.address}`) &&
      !views.tokenTrades(templates[0]!.chain, addresses[0]!, 1)
    )
      throw new Error('hot views kept no ring for the synthetic trades');
    await logHandle.close();
    await store.close();

    const per = (a: Reading, b: Reading, field: keyof Reading) => (b[field] - a[field]) / params.tokens;
    const heapPer = (a: Reading, b: Reading) => per(a, b, 'heapUsed') + per(a, b, 'external');
    // RSS is a detail, not the figure: its delta also counts the young generation's pages first
    // touched here (up to both 32 MB semi-spaces under npm's bench flags, whatever the token count).
    const stage = (subject: string, a: Reading, b: Reading): Measurement => ({
      subject,
      metric: 'bytes/token (heap)',
      value: round(heapPer(a, b), 0),
      unit: 'B',
      extra: {
        heapUsedPerToken: round(per(a, b, 'heapUsed'), 0),
        externalPerToken: round(per(a, b, 'external'), 0),
        rssPerToken: round(per(a, b, 'rss'), 0),
      },
    });
    const total = heapPer(before, afterTrade);
    const aggregator = measureAggregatorState(ctx, {
      tokens: params.aggTokens,
      fewTrades: params.aggFewTrades,
      manyTrades: params.aggManyTrades,
      // Tokens trading every second for 24 h: 86,400 swaps each, so a fiftieth of aggTokens.
      dayTokens: Math.max(1, Math.round(params.aggTokens / 50)),
      wallets: params.aggWallets,
    });
    const heapRow = (subject: string, metric: string, value: number): Measurement => ({
      subject,
      metric,
      value: round(value, 0),
      unit: 'B',
    });
    const tokenJsonBytes = JSON.stringify(templates[0]).length;
    return {
      params: { tokens: params.tokens, templates: templates.length, tokenJsonBytes },
      measurements: [
        stage('active token in hot views: token + open candles + latest trade', before, afterTrade),
        stage('  token object (applyToken: object, JSON text, discovery entry)', before, afterTokens),
        stage('  open candles message (applyCandles)', afterTokens, afterCandles),
        stage('  one trade in the token ring (applyTrade)', afterCandles, afterTrade),
        heapRow(
          `aggregator state: token trading ${params.aggFewTrades}× in an hour`,
          'bytes/token (heap)',
          aggregator.perTokenFew,
        ),
        heapRow(
          `aggregator state: token trading ${params.aggManyTrades}× in an hour`,
          'bytes/token (heap)',
          aggregator.perTokenMany,
        ),
        heapRow('aggregator state: token trading every second for 24 h', 'bytes/token (heap)', aggregator.perTokenDay),
        heapRow(
          'aggregator state: one-off wallet (facts + holder record)',
          'bytes/wallet (heap)',
          aggregator.perWallet,
        ),
        heapRow(
          'aggregator state: holder record of a token with its holder-index entry (of the wallet above)',
          'bytes/holder (heap)',
          aggregator.perHolder,
        ),
      ],
      ratios: {},
      targets: [
        check(
          `<= ${params.targetBytesPerToken} B of heap per active token in the hot views`,
          'bytes/token',
          '<=',
          params.targetBytesPerToken,
          round(total, 0),
          'B',
        ),
      ],
      evidence: { rssPerActiveToken: round(per(before, afterTrade, 'rss'), 0), tokenJsonBytes },
      notes: [
        'Deltas after a forced full GC. The figure is the heap (used + external); RSS also counts allocator slack and the young generation paged in.',
      ],
    };
  },
);
