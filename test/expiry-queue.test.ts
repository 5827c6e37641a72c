import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createExpiryQueue } from '../aggregators/expiry-queue.ts';

type Op = { kind: 'set' | 'lower' | 'delete'; key: string; bound: number } | { kind: 'due'; time: number };

describe('expiry queue', () => {
  it('gives the keys due, by bound then key, as a scan of every bound would', () => {
    const key = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f');
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constantFrom('set' as const, 'lower' as const, 'delete' as const), key, bound: fc.nat(60) }),
      fc.record({ kind: fc.constant('due' as const), time: fc.nat(60) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const queue = createExpiryQueue();
        const model = new Map<string, number>();
        for (const o of ops) {
          if (o.kind === 'due') {
            const expected = [...model]
              .filter(([, bound]) => bound <= o.time)
              .sort(([ka, a], [kb, b]) => a - b || (ka < kb ? -1 : 1))
              .map(([k]) => k);
            assert.deepEqual(queue.takeDue(o.time), expected);
            for (const k of expected) model.delete(k);
          } else if (o.kind === 'delete') {
            model.delete(o.key);
            queue.delete(o.key);
          } else if (o.kind === 'set' || !model.has(o.key) || o.bound < model.get(o.key)!) {
            model.set(o.key, o.bound);
            queue[o.kind](o.key, o.bound);
          } else queue.lower(o.key, o.bound);
          for (const k of ['a', 'b', 'c', 'd', 'e', 'f']) assert.equal(queue.get(k), model.get(k));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('visits only the due keys of a large queue', () => {
    const queue = createExpiryQueue();
    for (let i = 0; i < 100_000; i++) queue.set(`token-${i}`, 1_000_000 + i);
    queue.set('soon', 5);
    assert.deepEqual(queue.takeDue(10), ['soon']);
    assert.deepEqual(queue.takeDue(10), []);
    assert.equal(queue.get('soon'), undefined);
    queue.set('soon', 5);
    assert.deepEqual(queue.takeDue(1_000_001), ['soon', 'token-0', 'token-1']);
  });
});
