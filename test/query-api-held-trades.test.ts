// The serving thread's token trade rings share one budget (SPOT_HELD_TRADES): past it the least
// recently traded token's ring goes, and that token's first pages come from the store again.
import assert from 'node:assert/strict';
import path from 'node:path';
import { createStore } from '../clickhouse/store.ts';
import { createEmbeddedLog } from '../core/eventlog/embedded.ts';
import type { Token } from '../core/schemas.ts';
import { createHotViews, type HotViews } from '../query-api/hot-views.ts';
import { sharedChdb } from './helpers/chdb.ts';
import { makeToken, makeTrade, solanaAddress } from './query-api-env.ts';

describe('query API: the trades rings under one budget', () => {
  const clock = Date.now();
  let views: HotViews;
  let evicted: () => number;
  let closeLog = async () => {};

  before(async () => {
    const chdb = await sharedChdb();
    const log = createEmbeddedLog(chdb.ctx, { path: path.join(chdb.dataDir, 'held-trades-log', 'events.sqlite') });
    closeLog = () => log.close();
    const before = chdb.ctx.metrics.get('views.trade_rings_evicted');
    evicted = () => chdb.ctx.metrics.get('views.trade_rings_evicted') - before;
    views = createHotViews(chdb.ctx, {
      log,
      store: createStore(chdb.ctx, chdb.client),
      now: () => clock,
      maxHeldTrades: 250,
    });
  });

  after(async () => {
    await closeLog();
  });

  const trade = (token: Token, seq: number) =>
    views.applyTrade({ trade: makeTrade(token, clock - 1000, seq), identities: [], pool: 'pool', dex: 'pumpfun', seq });
  const tokenOf = (name: string) => makeToken({ chain: 'solana', address: solanaAddress(), name, updatedAt: clock });
  const page = (token: Token) => views.tokenTrades(token.chain, token.address, 50)?.length ?? null;

  it('drops the least recently traded rings past the budget, whatever their size', () => {
    const [a, b, c, d] = ['A', 'B', 'C', 'D'].map(tokenOf) as [Token, Token, Token, Token];
    for (const token of [a, b]) for (let seq = 1; seq <= 100; seq++) trade(token, seq);
    assert.equal(page(a), 50);
    assert.equal(evicted(), 0);
    for (let seq = 1; seq <= 100; seq++) trade(c, seq);
    // 300 held: A, the least recently traded, goes; B and C stay whole.
    assert.equal(page(a), null);
    assert.deepEqual([page(b), page(c)], [50, 50]);
    assert.equal(evicted(), 1);
    // A trade of B makes C the least recently traded.
    trade(b, 101);
    for (let seq = 1; seq <= 60; seq++) trade(d, seq);
    assert.equal(page(c), null);
    assert.deepEqual([page(b), page(d)], [50, 50]);
    assert.equal(evicted(), 2);
    // A's next trade starts a ring that lacks its older trades: its pages stay the store's.
    trade(a, 101);
    assert.equal(page(a), null);
  });
});
