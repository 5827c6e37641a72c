// The top-balances list (aggregators/top-balances.ts) gives the same top-10 sum as sorting every
// balance, through random additions, removals and moves on a multiset far larger than the list,
// with many equal balances, and down to an empty set.
import assert from 'node:assert/strict';
import { createTopBalances } from '../aggregators/top-balances.ts';

function rng(seed: number) {
  let x = seed;
  return () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
}

const bruteTop = (balances: bigint[], need: number) =>
  [...balances]
    .sort((a, b) => (a < b ? 1 : a > b ? -1 : 0))
    .slice(0, need)
    .reduce((sum, b) => sum + b, 0n);

describe('top balances', () => {
  for (const seed of [1, 2, 3]) {
    it(`sums the 10 largest as a full sort does after every change (seed ${seed})`, () => {
      const rand = rng(seed);
      const members: bigint[] = [];
      let refills = 0;
      const top = createTopBalances(10, () => (refills++, members));
      // Few distinct values in one phase (ties), a wide range in the others.
      const value = (step: number) =>
        BigInt(step % 3000 < 1000 ? 1 + Math.floor(rand() * 5) : 1 + Math.floor(rand() * 1_000_000));
      for (let step = 0; step < 6000; step++) {
        const r = rand();
        const growing = step < 4000;
        if (members.length === 0 || r < (growing ? 0.5 : 0.2)) {
          const bal = value(step);
          members.push(bal);
          top.add(bal);
        } else if (r < 0.7) {
          // The largest leave more often than chance, as whales sell out.
          const at =
            rand() < 0.3
              ? members.indexOf(members.reduce((a, b) => (b > a ? b : a)))
              : Math.floor(rand() * members.length);
          const [bal] = members.splice(at, 1);
          top.remove(bal!);
        } else {
          const at = Math.floor(rand() * members.length);
          const bal = value(step);
          top.remove(members[at]!);
          members[at] = bal;
          top.add(bal);
        }
        if (step % 7 === 0 || members.length < 12)
          assert.equal(top.sum(), bruteTop(members, 10), `step ${step}, ${members.length} members`);
      }
      assert.equal(top.sum(), bruteTop(members, 10));
      // Refills happen (the list is far shorter than the set) but not at every read.
      assert.ok(refills > 0 && refills < 50, `refills ${refills}`);
    });
  }

  it('empties to zero and refills from nothing', () => {
    const members: bigint[] = [];
    const top = createTopBalances(10, () => members);
    for (let i = 1; i <= 50; i++) {
      members.push(BigInt(i));
      top.add(BigInt(i));
    }
    assert.equal(top.sum(), 455n);
    for (const bal of members.splice(0)) top.remove(bal);
    assert.equal(top.sum(), 0n);
    members.push(7n);
    top.add(7n);
    assert.equal(top.sum(), 7n);
  });
});
