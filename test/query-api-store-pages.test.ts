// First pages of token trades read from the store: reads of one token share a query, a page answers
// for its TTL and no longer once the token trades, and the pages held stay within their bound.
import assert from 'node:assert/strict';
import { createStorePageCache } from '../query-api/store-page-cache.ts';
import type { TradeItem } from '../query-api/trade-json.ts';

/** `n` trades of a token, newest first. */
const trades = (n: number, from = 1000): TradeItem[] =>
  Array.from({ length: n }, (_, i) => ({ timestamp: from - i, id: `t${from - i}`, json: `{"id":"t${from - i}"}` }));

/** A store stand-in holding `held` trades that counts its queries and answers when told to. */
function store(held: number) {
  const waiting: Array<() => void> = [];
  const counted = {
    queries: 0,
    trades: held,
    load: (count: number) => {
      counted.queries++;
      return new Promise<TradeItem[]>((resolve) => waiting.push(() => resolve(trades(counted.trades).slice(0, count))));
    },
    answerAll: async () => {
      for (const answer of waiting.splice(0)) answer();
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
  return counted;
}

describe('query API: store pages of token trades', () => {
  it('shares one query between reads that arrive while it runs, then answers from the page until its TTL', async () => {
    let clock = 0;
    const cache = createStorePageCache({ now: () => clock, ttlMs: 1000 });
    const db = store(200);
    const first = cache.page('solana:a', 51, db.load);
    const second = cache.page('solana:a', 21, db.load);
    const other = cache.page('solana:b', 51, db.load);
    assert.equal(db.queries, 2, 'one query per token');
    await db.answerAll();
    assert.equal((await first).length, 51);
    assert.deepEqual(await second, trades(200).slice(0, 21));
    assert.equal((await other).length, 51);
    assert.equal(cache.items, 102);
    clock = 999;
    assert.equal((await cache.page('solana:a', 51, db.load)).length, 51);
    assert.equal(db.queries, 2, 'answered from the page');
    // A larger page than was read is a query of its own.
    const larger = cache.page('solana:a', 101, db.load);
    assert.equal(db.queries, 3);
    await db.answerAll();
    assert.equal((await larger).length, 101);
    clock = 2000;
    db.trades = 201;
    const later = cache.page('solana:a', 51, db.load);
    assert.equal(db.queries, 4, 'past its TTL the page is read again');
    await db.answerAll();
    assert.equal((await later)[0]!.id, 't1000');
    assert.equal((await later).length, 51);
  });

  it('answers any page size from a page holding every trade of the token', async () => {
    const cache = createStorePageCache({ now: () => 0 });
    const db = store(7);
    const read = cache.page('base:x', 51, db.load);
    await db.answerAll();
    assert.equal((await read).length, 7);
    assert.equal((await cache.page('base:x', 101, db.load)).length, 7);
    assert.equal((await cache.page('base:x', 3, db.load)).length, 3);
    assert.equal(db.queries, 1);
  });

  it('drops the page of a token that traded, and does not keep a query that ran while it traded', async () => {
    const cache = createStorePageCache({ now: () => 0 });
    const db = store(60);
    const read = cache.page('bsc:y', 51, db.load);
    await db.answerAll();
    await read;
    cache.drop('bsc:y');
    assert.equal(cache.items, 0);
    const during = cache.page('bsc:y', 51, db.load);
    assert.equal(db.queries, 2);
    cache.drop('bsc:y'); // the token traded while its page was being read
    const after = cache.page('bsc:y', 51, db.load);
    assert.equal(db.queries, 3, 'a read after the trade does not wait on the older query');
    await db.answerAll();
    assert.equal((await during).length, 51, 'the reads that waited on it are still answered');
    assert.equal((await after).length, 51);
    assert.equal(cache.items, 51, 'only the query that ran after the trade is kept');
    await cache.page('bsc:y', 51, db.load);
    assert.equal(db.queries, 3);
  });

  it('keeps no failed query and holds at most maxItems trades, oldest pages going first', async () => {
    const cache = createStorePageCache({ now: () => 0, maxItems: 120 });
    let failures = 1;
    const flaky = async (count: number) => {
      if (failures-- > 0) throw new Error('store down');
      return trades(100).slice(0, count);
    };
    await assert.rejects(cache.page('arc:f', 51, flaky), /store down/);
    assert.equal((await cache.page('arc:f', 51, flaky)).length, 51, 'a failed query is not shared later');
    for (const key of ['arc:g', 'arc:h']) await cache.page(key, 51, flaky);
    assert.equal(cache.items, 102, 'the oldest page went');
    let reads = 0;
    const counting = async (count: number) => {
      reads++;
      return trades(100).slice(0, count);
    };
    await cache.page('arc:h', 51, counting);
    assert.equal(reads, 0, 'the newest page is held');
    await cache.page('arc:f', 51, counting);
    assert.equal(reads, 1, 'the oldest is read again');
    await cache.page('arc:big', 200, async () => trades(200));
    assert.ok(cache.items <= 120, 'a page larger than the bound is not kept');
  });
});
