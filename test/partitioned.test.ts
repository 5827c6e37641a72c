// Partitioned token state, in process on the real processor: an instance that owned a partition
// from the start and one that takes it over mid-stream (the previous owner's durable state at
// one point, its own journal of everything after) end with the same tokens, trades and candles
// as the embedded aggregator that owns everything.
import assert from 'node:assert/strict';
import { tokenKey } from '../core/chains.ts';
import { loadConfig } from '../core/config.ts';
import { createContext } from '../core/context.ts';
import { createLogger } from '../core/logger.ts';
import { partitionFor } from '../core/eventlog/partitioner.ts';
import { TOPICS, type RawSwap, type TokenEvent } from '../core/topics.ts';
import { swapKey, tokenEventKey } from '../ingest/publisher.ts';
import { isCovered, journaling, partitionOffsets, uncovered } from '../aggregators/partition-journal.ts';
import { adoptPartition, durableRows, releasePartition } from '../aggregators/partitioned.ts';
import { chainReached, recordProcessed } from '../aggregators/positions.ts';
import { decodeToken } from '../aggregators/snapshot.ts';
import { newBatchOutput, type BatchOutput, type Processor } from '../aggregators/contracts.ts';
import { createProcessor } from '../aggregators/process.ts';
import { newState, type AggregatorState, type PartitionOffsets } from '../aggregators/state.ts';
import { buildToken } from '../aggregators/view.ts';
import { makeScenario } from './fixtures/aggregator-scenario.ts';

const ctx = createContext(loadConfig({ SPOT_LOG_LEVEL: 'silent' }), createLogger('silent'));
const PARTITIONS = 4;

interface Message {
  swap?: RawSwap;
  event?: TokenEvent;
  partition: number;
  offset: number;
}

/** The scenario as the input partitions hold it, in one merge order (event time, events first). */
function messages(): Message[] {
  const scenario = makeScenario(11, 1500);
  const next = new Map<string, number>();
  const place = (topic: string, key: string) => {
    const partition = partitionFor(key, PARTITIONS);
    const slot = `${topic}:${partition}`;
    const offset = next.get(slot) ?? 0;
    next.set(slot, offset + 1);
    return { partition, offset };
  };
  const all: Array<Message & { time: number; rank: number }> = [
    ...scenario.events.map((event) => ({
      event,
      time: event.blockTime,
      rank: 0,
      ...place(TOPICS.tokenEvents.name, tokenEventKey(event)),
    })),
    ...scenario.swaps.map((swap) => ({
      swap,
      time: swap.blockTime,
      rank: 1,
      ...place(TOPICS.swaps.name, swapKey(swap)),
    })),
  ];
  return all.sort((a, b) => a.time - b.time || a.rank - b.rank || a.partition - b.partition || a.offset - b.offset);
}

interface Instance {
  state: AggregatorState;
  processor: Processor;
  owned: Set<number>;
  out: BatchOutput;
  offsets(p: number): PartitionOffsets;
  apply(m: Message): void;
}

/** An aggregator's processor with fixed ownership (null: the embedded one, unpartitioned). */
function instance(owned: number[] | null): Instance {
  const state = newState();
  const own = new Set(owned ?? []);
  const offsets = (p: number) => partitionOffsets(state.offsets, p);
  const partitioning = journaling(state, PARTITIONS, (p) => own.has(p));
  const processor = createProcessor(ctx, state, owned ? partitioning : undefined);
  const out = newBatchOutput();
  // Processed offsets above each partition's low watermark (messages may come out of offset order).
  const above = new Map<string, Set<number>>();
  const low = (key: string, offset: number) => {
    const done = above.get(key) ?? new Set<number>();
    above.set(key, done);
    done.add(offset);
    let next = state.offsets[key] ?? 0;
    while (done.delete(next)) next++;
    return next;
  };
  return {
    state,
    processor,
    owned: own,
    out,
    offsets,
    apply(m) {
      const at = owned ? { partition: m.partition, offset: m.offset } : undefined;
      if (m.swap) processor.swap(m.swap, out, at);
      else processor.event(m.event!, JSON.stringify(m.event), out, at);
      const topic = m.swap ? TOPICS.swaps.name : TOPICS.tokenEvents.name;
      const chain = m.swap ? m.swap.chain : m.event!.chain;
      recordProcessed(state, topic, m.partition, chain, m.offset, low(`${topic}:${m.partition}`, m.offset));
    },
  };
}

const tokensOf = (i: Instance, p: number) =>
  [...i.state.tokens.keys()].filter((key) => partitionFor(key, PARTITIONS) === p).sort();
const views = (i: Instance, p: number) =>
  tokensOf(i, p).map((key) => JSON.stringify(buildToken(i.state.tokens.get(key)!, i.state.wallets)));
const openCandles = (i: Instance, p: number) =>
  tokensOf(i, p).map((key) =>
    JSON.stringify(i.state.tokens.get(key)!.candles, (_, v) => (typeof v === 'bigint' ? v.toString() : v)),
  );

/** The owner's durable state of partition p as ownership.ts writes and reads it. */
function durable(owner: Instance, p: number) {
  return {
    mark: owner.offsets(p),
    tokens: durableRows(owner.state, p, tokensOf(owner, p)).map((row) => ({
      key: row.key,
      covered: row.covered,
      token: decodeToken(row.state),
    })),
  };
}

describe('partitioned token state (hand-over on the real processor)', function () {
  this.timeout(60_000);
  const log = messages();
  const reference = instance(null);
  for (const m of log) reference.apply(m);
  const tradesAfter = (i: Instance, p: number) =>
    i.out.trades.filter((t) => partitionFor(tokenKey(t.chain, t.token), PARTITIONS) === p);

  it('has tokens in every partition, trades quoted in another token and decay ticks to replay', () => {
    for (let p = 0; p < PARTITIONS; p++) assert.ok(tokensOf(reference, p).length > 0, `partition ${p} has tokens`);
    const ticks = instance([]);
    for (const m of log) ticks.apply(m);
    assert.ok([...ticks.state.journals!.values()].every((j) => j.some((e) => e.k === 'tick')));
    assert.ok(
      [...ticks.state.journals!.values()].some((j) => j.some((e) => e.k === 'swap' && e.context.quoteN !== null)),
      'a swap priced through another token',
    );
  });

  it('an owner from the start keeps exactly the embedded state of its partition, and nothing of the others', () => {
    for (let p = 0; p < PARTITIONS; p++) {
      const owner = instance([p]);
      for (const m of log) owner.apply(m);
      assert.deepEqual(views(owner, p), views(reference, p), `partition ${p}`);
      assert.deepEqual(
        [...owner.state.tokens.keys()].filter((key) => partitionFor(key, PARTITIONS) !== p),
        [],
      );
      assert.deepEqual(tradesAfter(owner, p), tradesAfter(reference, p));
    }
  });

  for (const [durableAt, takeoverAt] of [
    [0.2, 0.6],
    [0.5, 0.5],
    [0.05, 0.95],
    [0, 0.4],
  ] as const) {
    it(`takes a partition over at ${takeoverAt * 100}% of the log from durable state at ${durableAt * 100}% plus its journal`, () => {
      const j = Math.floor(log.length * durableAt);
      const k = Math.floor(log.length * takeoverAt);
      const atTakeover = instance(null);
      for (const m of log.slice(0, k)) atTakeover.apply(m);
      for (let p = 0; p < PARTITIONS; p++) {
        const owner = instance([p]);
        for (const m of log.slice(0, j)) owner.apply(m);
        const next = instance([]);
        for (const m of log.slice(0, k)) next.apply(m);
        const state = durable(owner, p);
        // Trimming by the owner's mark (as the poller does) keeps what the hand-over needs.
        next.state.journals!.set(p, uncovered(next.state.journals!.get(p) ?? [], state.mark));
        assert.ok(next.state.journals!.get(p)!.every((e) => e.k === 'tick' || !isCovered(e, state.mark)));
        const out = newBatchOutput();
        adoptPartition(next.state, next.processor, p, PARTITIONS, state, out);
        next.owned.add(p);
        // Right after the hand-over (decay ticks replayed too) and at the end.
        assert.deepEqual(views(next, p), views(atTakeover, p), `partition ${p}: token objects at the hand-over`);
        for (const m of log.slice(k)) next.apply(m);
        assert.deepEqual(views(next, p), views(reference, p), `partition ${p}: token objects`);
        assert.deepEqual(openCandles(next, p), openCandles(reference, p), `partition ${p}: open candles`);
        // Every trade of the partition after the durable point is emitted again, as the embedded run emitted it.
        const emitted = [...tradesAfter(owner, p), ...out.trades, ...tradesAfter(next, p)];
        const byId = new Map(emitted.map((t) => [t.id, t]));
        assert.deepEqual(
          [...byId.values()].sort((a, b) => a.id.localeCompare(b.id)),
          tradesAfter(reference, p).sort((a, b) => a.id.localeCompare(b.id)),
          `partition ${p}: trades`,
        );
        for (const t of [...out.trades, ...tradesAfter(next, p)])
          assert.deepEqual(
            t,
            tradesAfter(reference, p).find((r) => r.id === t.id),
          );
        assert.equal(next.state.journals?.has(p), false);
      }
    });
  }

  it('takes a partition over from an owner that merged the chains in another order', () => {
    // Same log, each chain in its own order, the chains interleaved otherwise: every partition is
    // processed out of offset order (what two instances' merges do when deliveries differ).
    const chainMajor = [...log].sort(
      (a, b) => (a.swap ?? a.event)!.chain.localeCompare((b.swap ?? b.event)!.chain) || 0,
    );
    assert.notDeepEqual(chainMajor, log);
    for (const [ownerOrder, nextOrder] of [
      [chainMajor, log],
      [log, chainMajor],
    ] as const)
      for (let p = 0; p < PARTITIONS; p++) {
        const owner = instance([p]);
        for (const m of ownerOrder.slice(0, Math.floor(log.length * 0.6))) owner.apply(m);
        const state = durable(owner, p);
        const next = instance([]);
        // The hand-over waits until this instance reached what the durable state covers (ownership.ts).
        const reached = () =>
          next.offsets(p).swaps >= state.mark.swaps &&
          next.offsets(p).events >= state.mark.events &&
          state.tokens.every((row) => {
            const at = chainReached(next.state, p, row.token.chain);
            return at.swaps >= row.covered.swaps && at.events >= row.covered.events;
          });
        let k = Math.floor(log.length * 0.2);
        for (const m of nextOrder.slice(0, k)) next.apply(m);
        while (!reached()) next.apply(nextOrder[k++]!);
        assert.ok(k < log.length, 'reached before the end of the log');
        next.state.journals!.set(p, uncovered(next.state.journals!.get(p) ?? [], state.mark));
        const out = newBatchOutput();
        adoptPartition(next.state, next.processor, p, PARTITIONS, state, out);
        next.owned.add(p);
        for (const m of nextOrder.slice(k)) next.apply(m);
        assert.deepEqual(views(next, p), views(reference, p), `partition ${p}: token objects`);
        assert.deepEqual(openCandles(next, p), openCandles(reference, p), `partition ${p}: open candles`);
        for (const t of [...out.trades, ...tradesAfter(next, p)])
          assert.deepEqual(
            t,
            tradesAfter(reference, p).find((r) => r.id === t.id),
          );
      }
  });

  it('gives a partition up and takes it back from its own durable state', () => {
    const half = Math.floor(log.length / 2);
    const a = instance([0, 1, 2, 3]);
    for (const m of log.slice(0, half)) a.apply(m);
    const saved = durable(a, 1);
    releasePartition(a.state, a.processor, 1, PARTITIONS);
    a.owned.delete(1);
    assert.deepEqual(tokensOf(a, 1), []);
    assert.ok(a.state.shadows!.size > 0);
    for (const m of log.slice(half, half + 200)) a.apply(m);
    adoptPartition(a.state, a.processor, 1, PARTITIONS, saved, newBatchOutput());
    a.owned.add(1);
    for (const m of log.slice(half + 200)) a.apply(m);
    for (let p = 0; p < PARTITIONS; p++) assert.deepEqual(views(a, p), views(reference, p), `partition ${p}`);
  });
});
