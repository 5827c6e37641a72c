// A token that goes 24 h without a trade leaves the hot views at the first sweep after a grace, and
// until then it is answered from them (the store would answer the same version through the ingest thread). The
// version the aggregator publishes as the token leaves (its 24 h window emptied) replaces the held
// one without moving it in the sweep's updatedAt order. A quiet token's first trades page is read
// through the store once, with the trades its ring holds, and kept until it trades.
import assert from 'node:assert/strict';
import path from 'node:path';
import { createStore } from '../clickhouse/store.ts';
import { createEmbeddedLog } from '../core/eventlog/embedded.ts';
import type { Token } from '../core/schemas.ts';
import { IDLE_GRACE_MS, RING_IDLE_MS, createHotViews, type HotViews } from '../query-api/hot-views.ts';
import { tradeItem, type TradeItem } from '../query-api/trade-json.ts';
import { sharedChdb } from './helpers/chdb.ts';
import { makeToken, makeTrade, solanaAddress } from './query-api-env.ts';

const DAY = 24 * 3600_000;
const SWEEP_MS = 20;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('query API: hot views of a token going idle', () => {
  let clock = Date.now();
  let views: HotViews;
  let closeLog = async () => {};

  const held = (token: Token) => {
    const entry = views.token(token.chain, token.address);
    return entry ? (JSON.parse(views.tokenBody(entry).toString()) as Token) : undefined;
  };

  before(async () => {
    const chdb = await sharedChdb();
    const log = createEmbeddedLog(chdb.ctx, { path: path.join(chdb.dataDir, 'idle-tokens-log', 'events.sqlite') });
    closeLog = () => log.close();
    views = createHotViews(chdb.ctx, {
      log,
      store: createStore(chdb.ctx, chdb.client),
      now: () => clock,
      sweepIntervalMs: SWEEP_MS,
    });
    await views.start();
  });

  after(async () => {
    await views.stop();
    await closeLog();
  });

  it('answers an idle token through the grace, with the version published as it left, and drops it then', async () => {
    const leaving = makeToken({
      chain: 'solana',
      address: solanaAddress(),
      name: 'Leaving',
      updatedAt: clock - DAY + 5000,
    });
    const active = makeToken({ chain: 'solana', address: solanaAddress(), name: 'Active', updatedAt: clock });
    views.applyToken(leaving);
    views.applyToken(active);
    clock += 10_000; // `leaving` is now past the cutoff; no sweep ran since
    assert.equal(held(leaving)?.name, 'Leaving');
    // Published as it left, after `active`: it replaces the held version in place.
    views.applyToken({ ...leaving, name: 'Left' });
    assert.equal(held(leaving)?.name, 'Left');
    // An idle token not held stays the store's.
    const gone = makeToken({ chain: 'solana', address: solanaAddress(), updatedAt: clock - DAY - 1 });
    views.applyToken(gone);
    assert.equal(held(gone), undefined);
    await sleep(SWEEP_MS * 5);
    assert.equal(held(leaving)?.name, 'Left', 'swept within the grace');
    // Past the grace the sweep takes it out in updatedAt order; moved behind `active`, it would stay.
    clock += IDLE_GRACE_MS;
    await sleep(SWEEP_MS * 5);
    assert.equal(held(leaving), undefined);
    assert.equal(held(active)?.name, 'Active');
  });

  it("drops a token's trades ring an hour after its newest trade; the token stays", async () => {
    const quiet = makeToken({ chain: 'solana', address: solanaAddress(), name: 'Quiet', updatedAt: clock });
    const busy = makeToken({ chain: 'solana', address: solanaAddress(), name: 'Busy', updatedAt: clock });
    views.applyToken(quiet);
    views.applyToken(busy);
    const trade = (token: Token, at: number, i: number) =>
      views.applyTrade({ trade: makeTrade(token, at, i), identities: [], pool: 'pool', dex: 'pumpfun' });
    trade(quiet, clock - 1000, 0);
    trade(busy, clock - 1000, 0);
    clock += RING_IDLE_MS - 60_000;
    trade(busy, clock, 1);
    await sleep(SWEEP_MS * 5);
    assert.equal(views.tokenTrades('solana', quiet.address, 1)?.length, 1, 'kept within the hour');
    clock += 120_000;
    await sleep(SWEEP_MS * 5);
    assert.equal(views.tokenTrades('solana', quiet.address, 1), null, "its pages are the store's");
    assert.equal(views.tokenTrades('solana', busy.address, 2)?.length, 2);
    assert.equal(held(quiet)?.name, 'Quiet', 'the token itself stays for 24 h');
    // A trade already an hour old starts no ring (history, a backfill): the sweep would drop it.
    const history = makeToken({ chain: 'solana', address: solanaAddress(), name: 'History', updatedAt: clock });
    views.applyToken(history);
    trade(history, clock - RING_IDLE_MS - 1000, 0);
    assert.equal(views.tokenTrades('solana', history.address, 1), null);
  });

  it("reads a quiet token's first page through the store once, with the trades its ring holds, until it trades", async () => {
    const quiet = makeToken({ chain: 'base', address: `0x${'ab'.repeat(20)}`, name: 'Quiet', updatedAt: clock });
    views.applyToken(quiet);
    const stored = Array.from({ length: 30 }, (_, i) => tradeItem(makeTrade(quiet, clock - 7200_000 + i * 1000, i)));
    let queries = 0;
    const load = async (count: number): Promise<TradeItem[]> => {
      queries++;
      return stored.slice(-count).reverse();
    };
    const first = await views.storedTokenTrades('base', quiet.address, 21, load);
    assert.deepEqual(
      first.map((t) => t.id),
      stored
        .slice(-21)
        .reverse()
        .map((t) => t.id),
    );
    assert.equal((await views.storedTokenTrades('base', quiet.address, 21, load)).length, 21);
    assert.equal(queries, 1, 'the second read is answered from the page');
    // It trades: the views hold the trade before the store has written it.
    const fresh = makeTrade(quiet, clock, 99);
    views.applyTrade({ trade: fresh, identities: [], pool: 'pool', dex: 'uniswap-v2' });
    const after = await views.storedTokenTrades('base', quiet.address, 21, load);
    assert.equal(queries, 2, 'its page went with the trade');
    assert.equal(after[0]!.id, fresh.id, 'the trade the store lacks comes from the ring');
    assert.deepEqual(
      after.slice(1).map((t) => t.id),
      stored
        .slice(-20)
        .reverse()
        .map((t) => t.id),
    );
    // Once the store has written it too, the trade is on the page once.
    stored.push(tradeItem(fresh));
    views.applyTrade({ trade: makeTrade(quiet, clock, 100), identities: [], pool: 'pool', dex: 'uniswap-v2' });
    const both = await views.storedTokenTrades('base', quiet.address, 21, load);
    assert.equal(new Set(both.map((t) => t.id)).size, 21);
    assert.equal(both.filter((t) => t.id === fresh.id).length, 1);
  });
});
