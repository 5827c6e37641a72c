// The serving thread's shared reads (core/eventlog/read-share.ts): kept for their time and no
// longer, bounded by size, empty reads never kept.
import assert from 'node:assert/strict';
import { createReadShare } from '../core/eventlog/read-share.ts';
import type { LogMessage } from '../core/eventlog/types.ts';

const message = (offset: number): LogMessage => ({
  topic: 't',
  partition: 0,
  offset,
  key: 'k',
  value: String(offset),
  timestamp: offset,
});

describe('event log shared reads', () => {
  it('reads a key once within its time, again after it, and never keeps an empty read', () => {
    let clock = 0;
    const share = createReadShare({ ttlMs: 100, now: () => clock });
    let reads = 0;
    const read = () => {
      reads++;
      return [message(reads)];
    };
    const first = share.get('a', read);
    clock = 99;
    assert.equal(share.get('a', read), first);
    assert.equal(reads, 1);
    clock = 100;
    assert.notEqual(share.get('a', read), first);
    assert.equal(reads, 2);
    let empty = 0;
    const none = () => {
      empty++;
      return [];
    };
    share.get('b', none);
    share.get('b', none);
    assert.equal(empty, 2);
    // Entries past their time leave with the next read of any key.
    clock = 500;
    share.get('c', read);
    assert.equal(share.size, 1);
  });

  it('keeps at most maxChars of keys and values, the oldest leaving first', () => {
    // Each read is one message of 1 + 1 units.
    const share = createReadShare({ ttlMs: 1_000, maxChars: 6, now: () => 0 });
    for (let i = 0; i < 5; i++) share.get(`k${i}`, () => [message(i)]);
    assert.equal(share.size, 3);
    assert.equal(share.chars, 6);
    let reread = 0;
    share.get('k0', () => {
      reread++;
      return [message(0)];
    });
    share.get('k4', () => {
      reread++;
      return [message(4)];
    });
    assert.equal(reread, 1);
  });

  it('lets entries go when their time is up, with no read after them', async () => {
    const share = createReadShare({ ttlMs: 20 });
    share.get('a', () => [message(1)]);
    share.get('b', () => [message(2)]);
    assert.equal(share.size, 2);
    // The sweep's timer is due at 20 ms, before this one at 150 ms (timers run in order of expiry).
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(share.size, 0);
    assert.equal(share.chars, 0);
  });
});
