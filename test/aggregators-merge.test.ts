// The merge of the input partitions (aggregators/merge.ts) and the positions it leaves
// (aggregators/positions.ts): the order per chain is a function of each partition's messages of
// that chain, whatever the cross-chain interleaving and the delivery, and a restart from the
// recorded positions neither skips nor repeats a message.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { setImmediate as turn } from 'node:timers/promises';
import v8 from 'node:v8';
import vm from 'node:vm';
import { createMerger, type MergeItem, type Merger } from '../aggregators/merge.ts';
import { processedBelow, recordProcessed } from '../aggregators/positions.ts';
import { newState, type AggregatorState } from '../aggregators/state.ts';

const TOPICS = ['spot.swaps.v1', 'spot.token-events.v1'];
const PARTITIONS = 3;
const CHAINS = ['solana', 'base', 'bsc'];

/** A message before it has an offset: its identity is `id`. */
interface Message {
  id: string;
  topic: string;
  partition: number;
  chain: string;
  time: number;
}

type Log = Map<string, MergeItem<string>[]>;

/** Messages of every chain, each chain's in event time per partition (as one source publishes them). */
function messages(seed: number, perChain: number): Message[] {
  let x = seed;
  const random = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
  const out: Message[] = [];
  for (const chain of CHAINS) {
    let time = 1_000;
    for (let i = 0; i < perChain; i++) {
      time += Math.floor(random() * 3); // equal times too
      out.push({
        id: `${chain}-${i}`,
        topic: TOPICS[Math.floor(random() * 2)]!,
        partition: Math.floor(random() * PARTITIONS),
        chain,
        time,
      });
    }
  }
  return out;
}

/**
 * The log the messages make when the chains' sources publish in the given interleaving: `picks`
 * names the chain whose next message is appended (each chain's own order is kept).
 */
function logOf(all: Message[], picks: number[]): Log {
  const pending = CHAINS.map((chain) => all.filter((m) => m.chain === chain));
  const log: Log = new Map();
  let i = 0;
  while (pending.some((p) => p.length > 0)) {
    const nonEmpty = pending.filter((p) => p.length > 0);
    const m = nonEmpty[(picks[i++ % Math.max(1, picks.length)] ?? 0) % nonEmpty.length]!.shift()!;
    const key = `${m.topic}:${m.partition}`;
    const list = log.get(key) ?? [];
    log.set(key, list);
    list.push({
      topic: m.topic,
      partition: m.partition,
      offset: list.length,
      chain: m.chain,
      time: m.time,
      rank: m.topic === TOPICS[0] ? 1 : 0,
      value: m.id,
      raw: '',
    });
  }
  return log;
}

interface Run {
  taken: MergeItem<string>[];
  state: AggregatorState;
}

/**
 * Delivers the log to a merger as a consumer does (batches of `batch` messages, partitions in the
 * order `turns` names them), taking what the merge allows after each batch, until `stopAfter`
 * messages were taken. Positions are recorded as the aggregator records them.
 */
function run(
  log: Log,
  turns: number[],
  batch: number,
  stopAfter = Number.POSITIVE_INFINITY,
  from?: AggregatorState,
): Run {
  const merger: Merger<string> = createMerger();
  const state = from ?? newState();
  const positions = new Map<string, number>();
  for (let p = 0; p < PARTITIONS; p++) {
    for (const topic of TOPICS) {
      const key = `${topic}:${p}`;
      const start = state.offsets[key] ?? 0;
      merger.init(topic, p, start, processedBelow(state, topic, p));
      merger.setEnd(topic, p, log.get(key)?.length ?? 0);
      positions.set(key, start);
    }
  }
  const keys = [...positions.keys()];
  const taken: MergeItem<string>[] = [];
  let turn = 0;
  for (;;) {
    for (let item = merger.next(); item; item = merger.next()) {
      taken.push(item);
      recordProcessed(
        state,
        item.topic,
        item.partition,
        item.chain,
        item.offset,
        merger.low(item.topic, item.partition),
      );
      if (taken.length >= stopAfter) return { taken, state };
    }
    const open = keys.filter((key) => positions.get(key)! < (log.get(key)?.length ?? 0));
    if (open.length === 0) break;
    const key = open[(turns[turn++ % Math.max(1, turns.length)] ?? 0) % open.length]!;
    const at = positions.get(key)!;
    merger.push(log.get(key)!.slice(at, at + batch));
    positions.set(key, Math.min(at + batch, log.get(key)!.length));
  }
  assert.equal(merger.buffered(), 0);
  assert.ok(merger.caughtUp());
  assert.equal(merger.forced(), 0);
  return { taken, state };
}

const perChain = (taken: MergeItem<string>[]) =>
  Object.fromEntries(CHAINS.map((chain) => [chain, taken.filter((i) => i.chain === chain).map((i) => i.value)]));

describe('merge of the input partitions, per chain', () => {
  const all = messages(3, 120);

  it('orders each chain by event time, whatever the cross-chain interleaving and the delivery', () => {
    const reference = perChain(run(logOf(all, [0]), [0], 7).taken);
    // Each chain's order is the merge of its partitions by (time, events first, topic, partition).
    for (const chain of CHAINS) {
      const expected = all
        .filter((m) => m.chain === chain)
        .map((m, i) => ({ m, i }))
        .sort(
          (a, b) =>
            a.m.time - b.m.time ||
            (a.m.topic === TOPICS[0] ? 1 : 0) - (b.m.topic === TOPICS[0] ? 1 : 0) ||
            a.m.topic.localeCompare(b.m.topic) ||
            a.m.partition - b.m.partition ||
            a.i - b.i,
        )
        .map(({ m }) => m.id);
      assert.deepEqual(reference[chain], expected, chain);
    }
    fc.assert(
      fc.property(
        fc.array(fc.nat(5), { minLength: 1, maxLength: 50 }),
        fc.array(fc.nat(5), { minLength: 1, maxLength: 50 }),
        fc.integer({ min: 1, max: 40 }),
        (picks, turns, batch) => {
          const { taken } = run(logOf(all, picks), turns, batch);
          assert.equal(taken.length, all.length);
          assert.deepEqual(perChain(taken), reference);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('takes a partition out of offset order, each chain of it in offset order', () => {
    // All of solana, then base, then bsc: every partition holds the chains one after the other.
    const log = logOf(all, [0, 0, 0]);
    const { taken } = run(log, [1, 2], 5);
    let outOfOrder = 0;
    const last = new Map<string, number>();
    for (const item of taken) {
      const key = `${item.topic}:${item.partition}`;
      if ((last.get(key) ?? -1) > item.offset) outOfOrder++;
      last.set(key, Math.max(last.get(key) ?? -1, item.offset));
      const chainKey = `${key}:${item.chain}`;
      assert.ok((last.get(chainKey) ?? -1) < item.offset, `${chainKey} in offset order`);
      last.set(chainKey, item.offset);
    }
    assert.ok(outOfOrder > 0, 'some partition was taken out of offset order');
  });

  it('resumes from the recorded positions without a message lost or taken twice', () => {
    const log = logOf(all, [0, 1, 1, 2, 0, 0, 0]);
    const whole = run(log, [2, 1], 6);
    for (const stopAt of [1, 37, 150, 200, 333]) {
      const first = run(log, [2, 1], 6, stopAt);
      // Out-of-order processing left messages above some watermark processed.
      const resumed = run(log, [0, 3], 4, Number.POSITIVE_INFINITY, structuredClone(first.state));
      const ids = [...first.taken, ...resumed.taken].map((i) => i.value);
      assert.equal(new Set(ids).size, ids.length, `nothing twice (stopped at ${stopAt})`);
      assert.equal(ids.length, all.length, `nothing lost (stopped at ${stopAt})`);
      assert.deepEqual(perChain([...first.taken, ...resumed.taken]), perChain(whole.taken));
      for (const [key, list] of log) assert.equal(resumed.state.offsets[key], list.length, key);
    }
    // The positions above the watermarks were needed: some stop left a partition's watermark behind a processed message.
    const mid = run(log, [2, 1], 6, 150).state;
    assert.ok(
      Object.entries(mid.chainOffsets).some(([key, chains]) =>
        Object.values(chains).some((next) => next > (mid.offsets[key] ?? 0) + 1),
      ),
    );
  });

  it('a chain waits for a partition that may still hold an earlier message of it; the others go on', () => {
    const merger = createMerger<string>();
    const item = (partition: number, offset: number, chain: string, time: number): MergeItem<string> => ({
      topic: TOPICS[0]!,
      partition,
      offset,
      chain,
      time,
      rank: 1,
      value: `${chain}@${time}`,
      raw: '',
    });
    merger.init(TOPICS[0]!, 0, 0);
    merger.init(TOPICS[0]!, 1, 0);
    merger.setEnd(TOPICS[0]!, 0, 2);
    merger.setEnd(TOPICS[0]!, 1, 2);
    // Partition 0 delivered solana@100 (base@50 is behind it); partition 1 base@60, solana@90.
    merger.push([item(0, 0, 'solana', 100)]);
    merger.push([item(1, 0, 'base', 60), item(1, 1, 'solana', 90)]);
    assert.equal(merger.next()?.value, 'solana@90');
    assert.equal(merger.next()?.value, 'solana@100');
    assert.equal(merger.next(), null, 'base waits: partition 0 may hold an earlier base message');
    assert.equal(merger.low(TOPICS[0]!, 0), 1);
    assert.equal(merger.low(TOPICS[0]!, 1), 0);
    merger.push([item(0, 1, 'base', 50)]);
    assert.equal(merger.next()?.value, 'base@50');
    assert.equal(merger.next()?.value, 'base@60');
    assert.ok(merger.caughtUp());
  });

  it('a full buffer releases a waiting chain (counted), so memory stays bounded', () => {
    const merger = createMerger<string>({ maxBuffered: 3 });
    const item = (partition: number, offset: number, chain: string): MergeItem<string> => ({
      topic: TOPICS[0]!,
      partition,
      offset,
      chain,
      time: offset,
      rank: 1,
      value: `${chain}-${partition}-${offset}`,
      raw: '',
    });
    merger.init(TOPICS[0]!, 0, 0);
    merger.init(TOPICS[0]!, 1, 0);
    merger.setEnd(TOPICS[0]!, 0, 100);
    merger.setEnd(TOPICS[0]!, 1, 100);
    merger.push([item(0, 0, 'arc'), item(1, 0, 'solana')]);
    assert.equal(merger.next(), null);
    merger.push([item(0, 1, 'arc'), item(0, 2, 'arc')]);
    assert.equal(merger.next()?.value, 'arc-0-0');
    assert.equal(merger.forced(), 1);
  });

  it('keeps no message it has handed on alive', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const merger = createMerger<{ id: number }>();
    merger.init(TOPICS[0]!, 0, 0);
    const COUNT = 3_000;
    const TAKEN = 2_000;
    // Built in a function of its own: only the merger holds the items, the test their weak refs.
    const refs = ((): Array<WeakRef<object>> => {
      const items = Array.from({ length: COUNT }, (_, offset) => ({
        topic: TOPICS[0]!,
        partition: 0,
        offset,
        chain: 'solana',
        time: offset,
        rank: 1,
        value: { id: offset },
        raw: `message ${offset}`,
      }));
      merger.push(items);
      return items.map((item) => new WeakRef(item.value));
    })();
    for (let i = 0; i < TAKEN; i++) assert.equal(merger.next()?.value.id, i);
    // A weak ref's target stays alive to the end of the turn it was made in.
    await turn();
    gc();
    gc();
    const alive = refs.map((ref) => ref.deref() !== undefined);
    assert.equal(alive.slice(0, TAKEN).filter(Boolean).length, 0);
    assert.equal(alive.slice(TAKEN).filter(Boolean).length, COUNT - TAKEN);
    assert.equal(merger.buffered(), COUNT - TAKEN);
  });

  it('a message that breaks its schema waits for nothing', () => {
    const merger = createMerger<string>();
    merger.init(TOPICS[0]!, 0, 0);
    merger.init(TOPICS[0]!, 1, 0);
    merger.setEnd(TOPICS[0]!, 1, 10);
    merger.push([{ topic: TOPICS[0]!, partition: 0, offset: 0, chain: '', time: -1, rank: 1, value: 'bad', raw: '' }]);
    assert.equal(merger.next()?.value, 'bad');
  });
});
