// The ring order of held trades (compareItemsNewestFirst, ids compared inside the JSON) is the
// cursor order (compareNewestFirst on the ids): over shared timestamps, ids of different lengths,
// ids that are prefixes of others, and equal ones.
import assert from 'node:assert/strict';
import { compareNewestFirst } from '../query-api/cursor.ts';
import { compareItemsNewestFirst, tradeItem, type TradeItem } from '../query-api/trade-json.ts';
import { makeToken, makeTrade, solanaAddress } from './query-api-env.ts';

describe('query API: held trades in cursor order', () => {
  it('orders every pair as compareNewestFirst does', () => {
    const token = makeToken({ chain: 'solana', address: solanaAddress() });
    const ids = [
      'solana:5abc:1',
      'solana:5abc:10',
      'solana:5abc:2',
      'solana:5abd:0',
      'solana:5ab:0',
      'base:0xff:3',
      'base:0xff:30',
      'base:0xFF:3',
      'solana:5abc:1',
    ];
    const items: TradeItem[] = [];
    for (const [i, id] of ids.entries())
      for (const timestamp of [1_000, 2_000]) items.push(tradeItem({ ...makeTrade(token, timestamp, i), id }));
    const sign = (n: number) => Math.sign(n);
    for (const a of items)
      for (const b of items)
        assert.equal(
          sign(compareItemsNewestFirst(a, b)),
          sign(compareNewestFirst(a, b)),
          `${a.timestamp}/${a.id} against ${b.timestamp}/${b.id}`,
        );
  });
});
