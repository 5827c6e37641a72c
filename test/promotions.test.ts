// Paid promotions: DEX Screener's answers read field by field, the poller against a hostile API
// (bad JSON, wrong types, other chains, huge bodies, 429/5xx then recovery, duplicates), the list
// import, the simulator's feed, and the aggregator rule that makes the token's `platforms`.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { promotionsCommand } from '../cli/promotions.ts';
import { loadConfig } from '../core/config.ts';
import { createEmbeddedLog } from '../core/eventlog/embedded.ts';
import { embeddedLogPath } from '../core/eventlog/index.ts';
import { createContext } from '../core/context.ts';
import { createLogger } from '../core/logger.ts';
import { isTopicValue, TOPICS, type TokenEvent } from '../core/topics.ts';
import { newBatchOutput } from '../aggregators/contracts.ts';
import { createProcessor } from '../aggregators/process.ts';
import { newState } from '../aggregators/state.ts';
import { MAX_PROMOTIONS } from '../aggregators/token-events.ts';
import { buildToken } from '../aggregators/view.ts';
import { createMetadataFetcher } from '../ingest/enrichment/fetcher.ts';
import { createUrlGuard } from '../ingest/enrichment/url-guard.ts';
import type { IngestRecords } from '../ingest/publisher.ts';
import { parseBoosts, parseOrders } from '../ingest/promotions/dexscreener.ts';
import { promotionEvent } from '../ingest/promotions/entry.ts';
import { importPromotions, parsePromotions } from '../ingest/promotions/import.ts';
import { createPromotionPoller } from '../ingest/promotions/poller.ts';
import { SIM_PROMOTIONS_HOST, simPromotionOf, startSimPromotionServer } from '../ingest/promotions/sim-server.ts';
import { captureLog } from './helpers/log-lines.ts';

const ctx = createContext(loadConfig({ SPOT_LOG_LEVEL: 'silent' }), createLogger('silent'));
const NOW = Date.UTC(2025, 5, 1, 12);
const MINT = 'J9BcrQfX4p9D1bvLzRNCbMDv8f44a9LFdeqNE4Yk2WMD';
const MINT2 = '2zMMhcVQEXDtdE6vsFS7S7D5oUodfJHE8vd1gnBouauv';
const BASE_TOKEN = '0x4ed4e862860bed51a9570b96d89af5e1b0efefed';

// Shaped as DEX Screener documents its answers (docs.dexscreener.com/api/reference), fields as it writes them.
const LATEST_BOOSTS = [
  {
    url: `https://dexscreener.com/solana/${MINT.toLowerCase()}`,
    chainId: 'solana',
    tokenAddress: MINT,
    amount: 10,
    totalAmount: 30,
    icon: 'https://dd.dexscreener.com/ds-data/tokens/solana/x.png',
    header: null,
    description: 'community token',
    links: [{ type: 'twitter', url: 'https://x.com/x' }],
  },
  {
    url: 'https://dexscreener.com/ethereum/0x69',
    chainId: 'ethereum',
    tokenAddress: '0x6982508145454ce325ddbe47a25d4ec3d2311933',
    amount: 50,
    totalAmount: 50,
  },
  {
    url: 'https://dexscreener.com/base/x',
    chainId: 'base',
    tokenAddress: '0x4ED4E862860beD51a9570b96d89aF5E1B0Efefed',
    amount: 10,
    totalAmount: 10,
  },
];
const ORDERS = [
  { type: 'tokenProfile', status: 'approved', paymentTimestamp: NOW - 3_600_000 },
  { type: 'tokenAd', status: 'processing', paymentTimestamp: NOW - 600_000 },
  { type: 'communityTakeover', status: 'cancelled', paymentTimestamp: NOW - 1_800_000 },
];

describe('promotions: DEX Screener answers', () => {
  it('reads boosts of the followed chains, counts other chains and refuses malformed entries by index', () => {
    const parsed = parseBoosts([
      ...LATEST_BOOSTS,
      { chainId: 'solana', tokenAddress: 'nope', totalAmount: 1 },
      7,
      { chainId: 3 },
      { chainId: 'bsc', tokenAddress: '0x55d398326f99059ff775485246999027b3197955', totalAmount: 'x' },
    ]);
    assert.ok(!('error' in parsed));
    assert.deepEqual(parsed.boosts, [
      { chain: 'solana', token: MINT, totalAmount: 30 },
      { chain: 'base', token: BASE_TOKEN, totalAmount: 10 },
    ]);
    assert.equal(parsed.otherChains, 1);
    assert.deepEqual(
      parsed.problems.map((p) => p.index),
      [4, 5, 6, 7],
    );
    assert.match(parsed.problems[0]!.message, /not a solana address/);
    assert.deepEqual(parseBoosts('<html>'), { error: 'boosts answer is not a list' });
  });

  it('turns paid orders into promotions (cancelled and rejected ones are not paid) and refuses bad times', () => {
    const at = { chain: 'solana' as const, token: MINT, now: NOW, source: 'api.test' };
    const parsed = parseOrders(
      [
        ...ORDERS,
        { type: 'tokenAd', status: 'approved', paymentTimestamp: 1_700_000 },
        { type: 'x', status: 'approved' },
        { type: 'tokenAd', status: 'approved', paymentTimestamp: NOW + 86_400_000 },
      ],
      at,
    );
    assert.ok(!('error' in parsed));
    assert.deepEqual(
      parsed.entries.map((e) => [e.platform, e.product, e.paidAt]),
      [
        ['dexscreener', 'tokenProfile', NOW - 3_600_000],
        ['dexscreener', 'tokenAd', NOW - 600_000],
      ],
    );
    assert.deepEqual(
      parsed.problems.map((p) => [p.index, /after 2015|order type|future/.exec(p.message)?.[0]]),
      [
        [4, 'after 2015'],
        [5, 'order type'],
        [6, 'future'],
      ],
    );
    // The object form ({orders, boosts}) is read too; a boost with its payment time is a paid promotion.
    const wrapped = parseOrders({ orders: [ORDERS[0]], boosts: [{ paymentTimestamp: NOW - 5_000 }] }, at);
    assert.ok(!('error' in wrapped));
    assert.deepEqual(
      wrapped.entries.map((e) => e.product),
      ['tokenProfile', 'boost'],
    );
    assert.deepEqual(parseOrders({ pairs: [] }, at), { error: 'orders answer is not a list' });
  });

  it('gives each promotion one schema-checked event whose id is a digest of its content', () => {
    const entry = {
      chain: 'solana' as const,
      token: MINT,
      platform: 'dexscreener',
      paidAt: NOW,
      product: 'tokenAd',
      source: 's',
    };
    const event = promotionEvent(entry);
    assert.ok(isTopicValue(TOPICS.tokenEvents, event));
    assert.equal(event.blockTime, NOW, 'the payment time is the event time');
    assert.equal(promotionEvent({ ...entry }).id, event.id);
    assert.notEqual(promotionEvent({ ...entry, paidAt: NOW - 1 }).id, event.id);
  });
});

/** A DEX Screener-shaped API whose answers each test sets. */
function hostileApi() {
  const hits: string[] = [];
  let answer: (path: string, n: number) => { status?: number; body: string } = () => ({ body: '[]' });
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    hits.push(path);
    const { status = 200, body } = answer(path, hits.filter((h) => h === path).length);
    res.statusCode = status;
    res.setHeader('content-type', 'application/json');
    res.end(body);
  });
  return {
    hits,
    set(fn: typeof answer) {
      answer = fn;
      hits.length = 0;
    },
    async start() {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('promotions: the poller against a hostile API', function () {
  this.timeout(20_000);
  const api = hostileApi();
  let base = '';
  let published: IngestRecords[] = [];
  const publisher = {
    async publish(records: IngestRecords) {
      published.push(records);
    },
  };
  const fetcher = createMetadataFetcher({
    guard: createUrlGuard({ allowHosts: ['127.0.0.1'] }),
    ipfsGateway: 'https://ipfs.invalid/',
    timeoutMs: 1000,
    maxBytes: 64 * 1024,
    retries: 2,
    backoffMs: 10,
    hostIntervalMs: 0,
  });
  const poller = () =>
    createPromotionPoller(ctx, { fetcher, baseUrl: `${base}/`, publisher, intervalMs: 1000, now: () => NOW });
  const events = () => published.flatMap((r) => r.events) as Array<Extract<TokenEvent, { kind: 'promotion' }>>;

  before(async () => {
    base = await api.start();
  });
  after(async () => {
    fetcher.close();
    await api.close();
  });
  beforeEach(() => {
    published = [];
  });

  it('publishes the paid orders of boosted tokens in one publish, asks again only when the boost total changes', async () => {
    let total = 30;
    api.set((path) => {
      if (path === '/token-boosts/latest/v1')
        return {
          body: JSON.stringify(LATEST_BOOSTS.map((b) => (b.chainId === 'solana' ? { ...b, totalAmount: total } : b))),
        };
      // the top list names the same token again: asked once
      if (path === '/token-boosts/top/v1') return { body: JSON.stringify([LATEST_BOOSTS[0], LATEST_BOOSTS[0]]) };
      if (path === `/orders/v1/solana/${MINT}`) return { body: JSON.stringify(ORDERS) };
      return { body: '[]' };
    });
    const p = poller();
    const first = await p.pollOnce();
    assert.deepEqual(first, { published: 2, asked: 2, refused: 0, failed: 0 });
    assert.equal(published.length, 1, 'one publish');
    assert.deepEqual(
      events().map((e) => [e.chain, e.token, e.platform, e.product, e.paidAt, e.source]),
      [
        ['solana', MINT, 'dexscreener', 'tokenProfile', NOW - 3_600_000, `127.0.0.1:${new URL(base).port}`],
        ['solana', MINT, 'dexscreener', 'tokenAd', NOW - 600_000, `127.0.0.1:${new URL(base).port}`],
      ],
    );
    assert.equal(api.hits.filter((h) => h.startsWith('/orders/')).length, 2, 'solana and base asked once each');
    // Nothing new: no order asked, nothing published.
    assert.equal((await p.pollOnce()).asked, 0);
    assert.equal(published.length, 1);
    // A new boost purchase: asked again; the orders already published are not published twice.
    total = 40;
    const third = await p.pollOnce();
    assert.equal(third.asked, 1);
    assert.equal(third.published, 0);
  });

  it('refuses bad JSON, wrong types, unknown chains and huge bodies, and keeps the good answers', async () => {
    api.set((path) => {
      if (path === '/token-boosts/latest/v1') return { body: '[{"chainId":"solana",' };
      if (path === '/token-boosts/top/v1')
        return {
          body: JSON.stringify([
            { chainId: 'solana', tokenAddress: MINT, totalAmount: 1 },
            { chainId: 'solana', tokenAddress: MINT2, totalAmount: 1 },
            { chainId: 'bsc', tokenAddress: '0x55d398326f99059ff775485246999027b3197955', totalAmount: 1 },
            { chainId: 'polygon', tokenAddress: '0x0', totalAmount: 1 },
            { chainId: 'solana', tokenAddress: ['x'], totalAmount: 1 },
          ]),
        };
      if (path === `/orders/v1/solana/${MINT}`)
        return {
          body: JSON.stringify([
            { type: 'tokenProfile', status: 'approved', paymentTimestamp: String(NOW) },
            { type: 'tokenAd', status: 42, paymentTimestamp: NOW },
          ]),
        };
      if (path === `/orders/v1/solana/${MINT2}`) return { body: JSON.stringify({ x: 'y'.repeat(200 * 1024) }) };
      return { body: '{"not":"a list"}' };
    });
    const report = await poller().pollOnce();
    assert.deepEqual(
      events().map((e) => [e.token, e.paidAt]),
      [[MINT, NOW]],
    );
    assert.equal(report.asked, 3);
    assert.equal(report.failed, 2, 'the bad JSON and the huge body');
    assert.equal(report.refused, 3, 'the wrong tokenAddress, the wrong status, the bsc answer that is no list');
  });

  it('warns about refused entries once while they stay the same, again when they change, and counts every poll', async () => {
    let boosts: unknown[] = [
      { chainId: 'solana', tokenAddress: 'not-a-mint', totalAmount: 1 },
      { chainId: 'solana', tokenAddress: MINT, totalAmount: 1 },
    ];
    api.set((path) => ({ body: path === '/token-boosts/latest/v1' ? JSON.stringify(boosts) : '[]' }));
    const { logger, lines } = captureLog<{ msg: string; where?: string; refused?: number }>();
    const logged = createContext(loadConfig({}), logger);
    const p = createPromotionPoller(logged, {
      fetcher,
      baseUrl: `${base}/`,
      publisher,
      intervalMs: 1000,
      now: () => NOW,
    });
    const warnings = () => lines.filter((line) => line.msg === 'promotion entries refused');
    for (let i = 0; i < 3; i++) assert.equal((await p.pollOnce()).refused, 1);
    assert.equal(warnings().length, 1, 'the same refusal three polls running: one warning');
    // A new good entry ahead of it moves its index, not what is refused.
    boosts = [{ chainId: 'solana', tokenAddress: MINT2, totalAmount: 1 }, ...boosts];
    await p.pollOnce();
    assert.equal(warnings().length, 1);
    boosts = [...boosts, { chainId: 'solana', tokenAddress: 42, totalAmount: 1 }];
    assert.equal((await p.pollOnce()).refused, 2);
    assert.equal(warnings().length, 2, 'a new refusal: warned');
    assert.equal(warnings()[1]!.refused, 2);
    // Clean for a poll, then the same bad entries again: warned again.
    const bad = boosts;
    boosts = [];
    await p.pollOnce();
    boosts = bad;
    await p.pollOnce();
    assert.equal(warnings().length, 3);
    assert.equal(logged.metrics.get('ingest.promotions.refused'), 3 * 1 + 1 + 2 + 2);
  });

  it('retries 429 and 5xx with backoff, then recovers on a later poll', async () => {
    let down = true;
    api.set((path, n) => {
      if (down) return { status: n % 2 ? 429 : 503, body: '' };
      if (path === '/token-boosts/latest/v1') return { body: JSON.stringify([LATEST_BOOSTS[0]]) };
      if (path.startsWith('/orders/')) return { body: JSON.stringify(ORDERS) };
      return { body: '[]' };
    });
    const p = poller();
    const failed = await p.pollOnce();
    assert.equal(failed.failed, 2);
    assert.equal(api.hits.length, 6, 'each feed asked three times (two retries)');
    assert.equal(published.length, 0);
    down = false;
    const recovered = await p.pollOnce();
    assert.equal(recovered.published, 2);
  });

  it('an orders request that fails is asked again next poll, a failed publish is retried', async () => {
    let ordersUp = false;
    api.set((path) => {
      if (path === '/token-boosts/latest/v1') return { body: JSON.stringify([LATEST_BOOSTS[0]]) };
      if (path.startsWith('/orders/')) return ordersUp ? { body: JSON.stringify(ORDERS) } : { status: 500, body: '' };
      return { body: '[]' };
    });
    let failPublish = true;
    const flaky = {
      async publish(records: IngestRecords) {
        if (failPublish) throw new Error('log down');
        published.push(records);
      },
    };
    const p = createPromotionPoller(ctx, {
      fetcher,
      baseUrl: base,
      publisher: flaky,
      intervalMs: 1000,
      now: () => NOW,
    });
    assert.equal((await p.pollOnce()).failed, 1);
    ordersUp = true;
    await assert.rejects(p.pollOnce(), /log down/);
    failPublish = false;
    assert.equal((await p.pollOnce()).published, 2);
  });
});

describe('promotions: list import', () => {
  it('reads CSV and JSON lists, reports bad lines by number and publishes the good ones together', async () => {
    const csv = [
      'chain,token,platform,paidAt,source',
      `solana,${MINT},dexscreener,${NOW - 1000},my-list`,
      `base,${BASE_TOKEN.toUpperCase().replace('0X', '0x')},pumpfun,2025-05-31T10:00:00Z,`,
      `ethereum,${BASE_TOKEN},dexscreener,${NOW},`,
      `solana,${MINT},Not A Name,${NOW},`,
      `solana,${MINT},dexscreener,1700000000,`,
      `solana,${MINT},dexscreener,${NOW + 86_400_000},`,
    ].join('\n');
    const parsed = parsePromotions(csv, 'csv', { origin: 'file.csv', now: NOW });
    assert.deepEqual(
      parsed.lines.map((l) => [l.chain, l.token, l.platform, l.paidAt, l.source]),
      [
        ['solana', MINT, 'dexscreener', NOW - 1000, 'my-list'],
        ['base', BASE_TOKEN, 'pumpfun', Date.UTC(2025, 4, 31, 10), 'file.csv'],
      ],
    );
    assert.deepEqual(
      parsed.errors.map((e) => e.line),
      [4, 5, 6, 7],
    );
    const json = JSON.stringify({
      promotions: [
        { chain: 'solana', token: MINT, platform: 'dexscreener', paidAt: NOW },
        { chain: 'solana', token: 5 },
      ],
    });
    const published: IngestRecords[] = [];
    const result = await importPromotions(ctx, { publish: async (r) => void published.push(r) }, json, {
      format: 'json',
      origin: 'list.json',
      now: NOW,
    });
    assert.deepEqual(
      result.errors.map((e) => e.line),
      [2],
    );
    assert.equal(published.length, 1);
    assert.equal(published[0]!.events.length, 1);
    assert.deepEqual(parsePromotions('chain,token\nsolana,x', 'csv', { origin: 'f', now: NOW }).errors[0], {
      line: 1,
      message: 'header lacks platform, paidAt (chain,token,platform,paidAt,product,source)',
    });
  });
});

describe('promotions: spot promotions import', function () {
  this.timeout(30_000);

  it('reports skipped lines on stderr, applies the rest and exits 1; exits 2 on usage', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-promotions-'));
    const file = path.join(dir, 'promotions.csv');
    fs.writeFileSync(
      file,
      `chain,token,platform,paidAt\nsolana,${MINT},dexscreener,${NOW}\nsolana,${MINT},dexscreener,soon\n`,
    );
    const written: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    const out = process.stdout.write.bind(process.stdout);
    process.stderr.write = ((chunk: string) => written.push(String(chunk)) > 0) as typeof process.stderr.write;
    process.stdout.write = ((chunk: string) => written.push(String(chunk)) > 0) as typeof process.stdout.write;
    let code: number;
    let usage: number;
    const cliCtx = createContext(loadConfig({ SPOT_DATA_DIR: path.join(dir, 'data') }), ctx.logger);
    try {
      code = await promotionsCommand(cliCtx, ['import', file]);
      usage = await promotionsCommand(cliCtx, ['export', file]);
    } finally {
      process.stderr.write = write;
      process.stdout.write = out;
    }
    try {
      assert.equal(code, 1);
      assert.equal(usage, 2);
      assert.ok(
        written.some((line) => line.startsWith(`${file}:3: paidAt "soon"`)),
        written.join(''),
      );
      assert.ok(written.some((line) => line.startsWith('1 promotions applied, 1 lines skipped')));
      const log = createEmbeddedLog(ctx, { path: embeddedLogPath(path.join(dir, 'data')) });
      const events: TokenEvent[] = [];
      try {
        await log.readToEnd(TOPICS.tokenEvents.name, (message) => events.push(JSON.parse(message.value)));
      } finally {
        await log.close();
      }
      assert.deepEqual(
        events.map((e) => e.kind === 'promotion' && [e.token, e.platform, e.paidAt, e.source]),
        [[MINT, 'dexscreener', NOW, file]],
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('promotions: the aggregator rule', () => {
  const promo = (token: string, platform: string, paidAt: number) =>
    promotionEvent({ chain: 'solana', token, platform, paidAt, product: null, source: 'test' }) as Extract<
      TokenEvent,
      { kind: 'promotion' }
    >;

  function apply(events: TokenEvent[]) {
    const processor = createProcessor(ctx, newState());
    for (const e of events) processor.event(e, JSON.stringify(e), newBatchOutput());
    return processor.state;
  }

  it('adds {platform, isPaid: true, paidAt} newest first, once per platform and time, the newest few kept', () => {
    const events = [
      promo(MINT, 'dexscreener', NOW - 10),
      promo(MINT, 'pumpfun', NOW - 10),
      promo(MINT, 'dexscreener', NOW),
      promo(MINT, 'dexscreener', NOW - 10),
      ...Array.from({ length: 12 }, (_, i) => promo(MINT2, 'dexscreener', NOW - i * 1000)),
    ];
    const state = apply(events);
    const token = buildToken(state.tokens.get(`solana:${MINT}`)!, state.wallets);
    assert.deepEqual(token.platforms, [
      { platform: 'dexscreener', isPaid: true, paidAt: NOW },
      { platform: 'dexscreener', isPaid: true, paidAt: NOW - 10 },
      { platform: 'pumpfun', isPaid: true, paidAt: NOW - 10 },
    ]);
    const many = buildToken(state.tokens.get(`solana:${MINT2}`)!, state.wallets).platforms!;
    assert.equal(many.length, MAX_PROMOTIONS);
    assert.equal(many[0]!.paidAt, NOW);
    assert.equal(many.at(-1)!.paidAt, NOW - (MAX_PROMOTIONS - 1) * 1000);
  });

  it('gives the same platforms whatever order the events are replayed in, and keeps them in a snapshot', () => {
    const events = Array.from({ length: 14 }, (_, i) =>
      promo(MINT, i % 3 ? 'dexscreener' : 'pumpfun', NOW - (i % 7) * 1000),
    );
    const expected = buildToken(apply(events).tokens.get(`solana:${MINT}`)!, new Map()).platforms;
    for (let seed = 1; seed <= 5; seed++) {
      const shuffled = [...events].sort(
        (a, b) => ((a.paidAt * seed + a.platform.length) % 7) - ((b.paidAt * seed + b.platform.length) % 7),
      );
      const state = apply(shuffled);
      assert.deepEqual(buildToken(state.tokens.get(`solana:${MINT}`)!, state.wallets).platforms, expected);
      const restored = v8.deserialize(v8.serialize(state)) as typeof state;
      assert.deepEqual(buildToken(restored.tokens.get(`solana:${MINT}`)!, restored.wallets).platforms, expected);
    }
  });

  it('a token without promotions has none, and trade platforms never reach the token', () => {
    const processor = createProcessor(ctx, newState());
    processor.swap(
      {
        id: `solana:sig1:0`,
        chain: 'solana',
        transactionHash: 'sig1',
        eventIndex: 0,
        blockNumber: 1,
        blockTime: NOW,
        token: MINT,
        quoteAsset: 'So11111111111111111111111111111111111111112',
        tokenAmount: '1000000',
        tokenDecimals: 6,
        quoteAmount: '1000000',
        quoteDecimals: 9,
        side: 'buy',
        trader: MINT2,
        pool: 'Pool1111111111111111111111111111111111111111',
        dex: 'pumpswap',
        launchpad: null,
        platforms: ['axiom'],
      },
      newBatchOutput(),
    );
    const state = processor.state;
    assert.deepEqual(buildToken(state.tokens.get(`solana:${MINT}`)!, state.wallets).platforms, []);
  });
});

describe('promotions: the simulator feed', function () {
  this.timeout(20_000);

  it('promotes a deterministic ~3 % of tokens, and shows them once the market clock passes the payment', async () => {
    const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
    const tokens = Array.from(
      { length: 4000 },
      (_, i) => `${MINT.slice(0, 40)}${B58[Math.floor(i / 58 / 58) % 58]}${B58[Math.floor(i / 58) % 58]}${B58[i % 58]}`,
    );
    const promoted = tokens.filter((t) => simPromotionOf(7, 'solana', t, NOW));
    assert.ok(promoted.length > 80 && promoted.length < 160, `${promoted.length} of 4000`);
    assert.deepEqual(simPromotionOf(7, 'solana', promoted[0]!, NOW), simPromotionOf(7, 'solana', promoted[0]!, NOW));

    const server = await startSimPromotionServer({ seed: 7 });
    const fetcher = createMetadataFetcher({
      guard: createUrlGuard(),
      ipfsGateway: 'https://ipfs.invalid/',
      hostMap: { [SIM_PROMOTIONS_HOST]: server.origin },
      hostIntervalMs: 0,
      backoffMs: 5,
    });
    const published: IngestRecords[] = [];
    const poller = createPromotionPoller(ctx, {
      fetcher,
      baseUrl: `http://${SIM_PROMOTIONS_HOST}`,
      publisher: { publish: async (r) => void published.push(r) },
      intervalMs: 1000,
    });
    try {
      const created = (token: string, time: number): TokenEvent => ({
        id: `solana:c-${token}:0`,
        chain: 'solana',
        transactionHash: `c-${token}`,
        eventIndex: 0,
        blockNumber: 1,
        blockTime: time,
        kind: 'created',
        token,
        name: 'x',
        symbol: 'X',
        uri: '',
        decimals: 6,
        supply: '1',
        creator: MINT2,
        launchpad: 'pumpfun',
        pool: null,
        quoteAsset: null,
      });
      server.observe({ swaps: [], events: promoted.slice(0, 5).map((t) => created(t, NOW)) });
      await poller.pollOnce();
      assert.equal(published.length, 0, 'nothing paid before the clock passes the payment');
      // a later record moves the market clock 30 minutes on
      server.observe({ swaps: [], events: [created(tokens.find((t) => !promoted.includes(t))!, NOW + 1_800_000)] });
      // The feed's own faults (a minute of 429/503) may hit a poll: the next one recovers.
      for (let i = 0; i < 5 && published.length === 0; i++) await poller.pollOnce();
      const events = published.flatMap((r) => r.events) as Array<Extract<TokenEvent, { kind: 'promotion' }>>;
      assert.deepEqual(new Set(events.map((e) => e.token)), new Set(promoted.slice(0, 5)));
      assert.ok(events.every((e) => e.platform === 'dexscreener' && e.paidAt <= NOW + 1_800_000));
      assert.ok(
        events.every((e) => e.product !== 'communityTakeover'),
        'cancelled orders are not paid',
      );
    } finally {
      fetcher.close();
      await server.close();
    }
  });
});
