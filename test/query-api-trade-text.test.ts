// The serving thread cuts a trade's REST JSON out of the spot.trades.v1 value instead of parsing
// and serialising it (trade-json.ts tradeText). The cut must be tradeJson's text exactly, whatever
// the names and symbols hold, and a value of any other shape must be refused (then parsed). A
// token's ring answers every trade of the token only while it holds trades 1 to n by seq.
import assert from 'node:assert/strict';
import path from 'node:path';
import { createStore } from '../clickhouse/store.ts';
import { createEmbeddedLog } from '../core/eventlog/embedded.ts';
import type { EventLog } from '../core/eventlog/types.ts';
import type { Trade } from '../core/schemas.ts';
import type { PricedTradeMessage } from '../core/topics.ts';
import { compareNewestFirst } from '../query-api/cursor.ts';
import { createHotViews, type HotViews } from '../query-api/hot-views.ts';
import { tradeJson, tradeText } from '../query-api/trade-json.ts';
import { sharedChdb } from './helpers/chdb.ts';
import { makeToken, makeTrade, produceTradeMessages, solanaAddress, tradeRow } from './query-api-env.ts';

const TRADES_PER_TOKEN = 101;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Names a launchpad lets anyone pick: quotes, backslashes, the markers the cut looks for, and
// characters outside ASCII.
const HOSTILE_NAMES = [
  'Plain',
  'Say "hi"',
  'back\\slash\\',
  'ends with \\',
  ',"identities":["kol"],',
  '"timestamp":1,"flags":[',
  '},"identities":[],"pool":"x"}',
  ',"seq":3}',
  'ünïcödé 🚀 名前',
  'line\nbreak\ttab\u0000nul',
];

function messages(): PricedTradeMessage[] {
  const out: PricedTradeMessage[] = [];
  const identitySets = [[], ['kol'], ['fomoscan'], ['kol', 'fomoscan']];
  for (const [i, name] of HOSTILE_NAMES.entries()) {
    const token = makeToken({
      chain: i % 2 ? 'base' : 'solana',
      address: solanaAddress(),
      name,
      symbol: name.slice(0, 8),
    });
    const identities = identitySets[i % identitySets.length]!;
    const trade = makeTrade(token, 1_700_000_000_000 + i * 1000, i, {
      flags: [...identities, ...(i % 3 === 0 ? ['dev', 'sniper'] : [])],
      platforms: i % 2 ? [{ platform: name, isPaid: false, paidAt: null }] : [],
    });
    // Every other value carries its seq (values written before it have none).
    out.push({ trade, identities, pool: `pool "${name}"`, dex: 'pumpfun', ...(i % 2 ? { seq: i + 1 } : {}) });
  }
  return out;
}

describe('query API: a trade cut from its log text', () => {
  it('is tradeJson of the parsed trade, with its timestamp, id and identities', () => {
    for (const message of messages()) {
      const cut = tradeText(JSON.stringify(message));
      assert.ok(cut, message.trade.name);
      assert.equal(cut.item.json, tradeJson(message.trade));
      assert.equal(cut.item.timestamp, message.trade.timestamp);
      assert.equal(cut.item.id, message.trade.id);
      assert.deepEqual(cut.identities, message.identities);
      assert.equal(cut.seq, message.seq, message.trade.name);
    }
  });

  it('refuses a value of another shape', () => {
    const [message] = messages();
    const { trade, identities, pool, dex } = message!;
    const { flags: _flags, ...withoutFlags } = trade;
    const { platforms: _platforms, ...withoutPlatforms } = trade;
    const refused = [
      '',
      'not json',
      JSON.stringify({ identities, trade, pool, dex }),
      JSON.stringify({ trade: withoutFlags, identities, pool, dex }),
      JSON.stringify({ trade: withoutPlatforms, identities, pool, dex }),
      JSON.stringify({ trade: { ...trade, timestamp: 'soon' }, identities, pool, dex }),
      JSON.stringify({ trade, identities: [1], pool, dex }),
      JSON.stringify({ trade, identities, pool, dex }).slice(0, -1),
    ];
    for (const text of refused) assert.equal(tradeText(text), null, text);
  });
});

describe('query API: hot views fed trades from the log', () => {
  let log: EventLog;
  let views: HotViews;

  before(async () => {
    const chdb = await sharedChdb();
    log = createEmbeddedLog(chdb.ctx, { path: path.join(chdb.dataDir, 'trade-text-log', 'events.sqlite') });
    views = createHotViews(chdb.ctx, { log, store: createStore(chdb.ctx, chdb.client) });
    await views.start();
  });

  after(async () => {
    await views.stop();
    await log.close();
  });

  it("answer each token's and identity's newest trades as tradeJson gives them", async () => {
    const now = Date.now();
    const token = makeToken({ chain: 'solana', address: solanaAddress(), name: 'Quote "and" \\ slash' });
    const sent: PricedTradeMessage[] = [];
    for (let i = 0; i < 30; i++) {
      const identities = i % 4 === 0 ? ['kol'] : [];
      // Shared seconds and one late trade: the ring (whole, by seq) orders them as the store does.
      const at = i === 29 ? now - 60_000 : now - 10_000 + Math.floor(i / 3) * 1000;
      const trade = makeTrade(token, at, i, { flags: identities });
      sent.push({ trade, identities, pool: 'p', dex: 'pumpfun', seq: i + 1 });
    }
    await produceTradeMessages(log, sent);
    const newestFirst = (trades: Trade[]) =>
      [...trades].sort((a, b) => b.timestamp - a.timestamp || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    const expected = newestFirst(sent.map((m) => m.trade)).map(tradeJson);
    let page = views.tokenTrades('solana', token.address, 30);
    for (let waited = 0; page === null && waited < 5000; waited += 20) {
      await sleep(20);
      page = views.tokenTrades('solana', token.address, 30);
    }
    assert.deepEqual(
      page?.map((item) => item.json),
      expected,
    );
    const kol = views.identityTrades('kol', ['solana'], 500)?.filter((item) => item.json.includes(token.address));
    assert.deepEqual(
      kol?.map((item) => item.json),
      newestFirst(sent.filter((m) => m.identities.includes('kol')).map((m) => m.trade)).map(tradeJson),
    );
  });

  it("answer a token's every trade from a ring that began with its first, and only then", async () => {
    const now = Date.now();
    const whole = makeToken({ chain: 'base', address: `0x${'11'.repeat(20)}` });
    const joinedLate = makeToken({ chain: 'base', address: `0x${'22'.repeat(20)}` });
    const gap = makeToken({ chain: 'base', address: `0x${'33'.repeat(20)}` });
    const busy = makeToken({ chain: 'base', address: `0x${'44'.repeat(20)}` });
    const apply = (token: typeof whole, seq: number, trade = makeTrade(token, now - 5000 + seq, seq)) => {
      views.applyTrade({ trade, identities: [], pool: 'p', dex: 'uniswap-v2', seq });
      return trade;
    };
    const first = apply(whole, 1);
    apply(whole, 2);
    apply(whole, 2, first); // a redelivery: nothing added
    const text = JSON.stringify({
      trade: makeTrade(whole, now - 1000, 3),
      identities: [],
      pool: 'p',
      dex: 'd',
      seq: 3,
    });
    assert.ok(views.applyTradeText(`base:${whole.address}`, text));
    assert.equal(views.tokenTrades('base', whole.address, 51)?.length, 3, 'its every trade');
    assert.equal(views.tokenTrades('base', whole.address, 2)?.length, 2);

    for (const seq of [2, 3]) apply(joinedLate, seq);
    assert.equal(views.tokenTrades('base', joinedLate.address, 51), null, 'trade 1 went before the views started');
    assert.equal(views.tokenTrades('base', joinedLate.address, 2)?.length, 2);

    for (const seq of [1, 2, 4]) apply(gap, seq);
    assert.equal(views.tokenTrades('base', gap.address, 51), null, 'trade 3 is missing');

    for (let seq = 1; seq <= 2 * TRADES_PER_TOKEN + 1; seq++) apply(busy, seq);
    assert.equal(views.tokenTrades('base', busy.address, 100)?.length, 100);
    assert.equal(views.tokenTrades('base', busy.address, TRADES_PER_TOKEN + 1), null, 'its oldest trades were let go');
  });

  it('answer cursor pages from a ring holding what the page needs, as the store orders them', async () => {
    const now = Date.now();
    const whole = makeToken({ chain: 'bsc', address: `0x${'55'.repeat(20)}` });
    const late = makeToken({ chain: 'bsc', address: `0x${'66'.repeat(20)}` });
    // Three trades a second: ties in time are ordered by id.
    const trades = (token: typeof whole, from: number, to: number) =>
      Array.from({ length: to - from + 1 }, (_, i) => {
        const seq = from + i;
        const trade = makeTrade(token, now - 60_000 + Math.floor(seq / 3) * 1000, seq);
        views.applyTrade({ trade, identities: [], pool: 'p', dex: 'pancakeswap-v2', seq });
        return trade;
      });
    const sent = trades(whole, 1, 40);
    const expected = [...sent].sort((a, b) => compareNewestFirst(a, b)).map(tradeJson);
    const paged: string[] = [];
    let cursor: { timestamp: number; id: string } | undefined;
    for (;;) {
      const page = views.tokenTrades('bsc', whole.address, 7, cursor);
      assert.ok(page, 'a whole ring answers every page');
      paged.push(...page.slice(0, 6).map((item) => item.json));
      if (page.length < 7) break;
      const last = page[5]!;
      cursor = { timestamp: last.timestamp, id: last.id };
    }
    assert.deepEqual(paged, expected);

    const held = trades(late, 5, 30); // trades 1 to 4 went before the views started
    const oldest = [...held].sort((a, b) => compareNewestFirst(a, b))[25]!;
    const middle = [...held].sort((a, b) => compareNewestFirst(a, b))[9]!;
    assert.equal(views.tokenTrades('bsc', late.address, 11, middle)?.length, 11, 'enough older trades held');
    assert.equal(views.tokenTrades('bsc', late.address, 17, middle), null, 'older ones may be missing');
    assert.equal(views.tokenTrades('bsc', late.address, 1, oldest), null);
    // A late trade older than all a partial ring holds is not held: trades beside it may be missing.
    const older = makeTrade(late, oldest.timestamp - 5000, 99);
    views.applyTrade({ trade: older, identities: [], pool: 'p', dex: 'pancakeswap-v2', seq: 31 });
    assert.equal(views.tokenTrades('bsc', late.address, 26, { timestamp: now + 60_000, id: '' })?.length, 26);
    assert.equal(views.tokenTrades('bsc', late.address, 27, { timestamp: now + 60_000, id: '' }), null);
  });

  it('keep an identity feed seeded from the store without a gap: an older late trade is left out', async () => {
    const chdb = await sharedChdb();
    const store = createStore(chdb.ctx, chdb.client);
    const token = makeToken({ chain: 'robinhood', address: `0x${'77'.repeat(20)}` });
    // Newer than any other feed trade of the process, so they are the feed's newest three.
    const future = Date.now() + 86_400_000;
    const stored = [0, 1, 2].map((i) => makeTrade(token, future + i * 1000, i, { flags: ['fomoscan'] }));
    await store.insertTrades(stored.map((t, i) => tradeRow(t, i + 1, ['fomoscan'])));
    const feedLog = createEmbeddedLog(chdb.ctx, {
      path: path.join(chdb.dataDir, 'trade-text-feed-log', 'events.sqlite'),
    });
    const seeded = createHotViews(chdb.ctx, { log: feedLog, store, tradesPerFeed: 2 });
    await seeded.start();
    try {
      const ids = (items: { id: string }[] | null) => items?.map((item) => item.id);
      assert.deepEqual(ids(seeded.identityTrades('fomoscan', ['robinhood'], 2)), [stored[2]!.id, stored[1]!.id]);
      // Older than the two the feed holds: the store's trade between them is not in the feed.
      const late = makeTrade(token, future - 1000, 9, { flags: ['fomoscan'] });
      seeded.applyTrade({ trade: late, identities: ['fomoscan'], pool: 'p', dex: 'd', seq: 4 });
      assert.equal(seeded.identityTrades('fomoscan', ['robinhood'], 3), null);
      const newer = makeTrade(token, future + 5000, 10, { flags: ['fomoscan'] });
      seeded.applyTrade({ trade: newer, identities: ['fomoscan'], pool: 'p', dex: 'd', seq: 5 });
      assert.deepEqual(ids(seeded.identityTrades('fomoscan', ['robinhood'], 3)), [
        newer.id,
        stored[2]!.id,
        stored[1]!.id,
      ]);
    } finally {
      await seeded.stop();
      await feedLog.close();
    }
  });
});
