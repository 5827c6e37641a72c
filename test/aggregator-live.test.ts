// The live aggregator's scheduling: token and candle views never hold back a trade batch. Order
// of produce calls on the log is asserted, never timing.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { tokenKey, type Chain } from '../core/chains.ts';
import { loadConfig } from '../core/config.ts';
import { createContext } from '../core/context.ts';
import { createLogger } from '../core/logger.ts';
import { createEmbeddedLog } from '../core/eventlog/embedded.ts';
import type { EventLog, ProduceMessage } from '../core/eventlog/types.ts';
import { TOPICS, type PricedTradeMessage, type RawSwap } from '../core/topics.ts';
import { createStore } from '../clickhouse/store.ts';
import { createAggregator, type AggregatorOptions } from '../aggregators/aggregator.ts';
import { sharedChdb } from './helpers/chdb.ts';
import { waitFor } from './helpers/ports.ts';
import { makeScenario, produceScenario, swapMessage, type Scenario } from './fixtures/aggregator-scenario.ts';
import { latestPerKey } from './fixtures/aggregator-dump.ts';

interface Produced {
  topic: string;
  keys: string[];
  tradeIds: string[];
}

/** A temp dir for the suite (removed after it); open() gives a context on it, the migrated store and an embedded log. */
function liveEnv(prefix: string) {
  let dir = '';
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return {
    async open() {
      const shared = await sharedChdb();
      const ctx = createContext(loadConfig({ SPOT_DATA_DIR: dir, SPOT_LOG_LEVEL: 'silent' }), createLogger('silent'));
      const store = createStore(ctx, shared.client);
      await store.migrate();
      const base = createEmbeddedLog(ctx, { path: path.join(dir, 'log.sqlite'), retentionIntervalMs: 0 });
      return { ctx, store, base };
    },
  };
}

/** The last swap to hold back (priced: not a reference mark, a unique id, of a token created in the log). */
function lastPricedSwap(scenario: Scenario, chain?: Chain): RawSwap | undefined {
  const created = new Set(scenario.events.filter((e) => e.kind === 'created').map((e) => tokenKey(e.chain, e.token!)));
  const idCount = new Map<string, number>();
  for (const s of scenario.swaps) idCount.set(s.id, (idCount.get(s.id) ?? 0) + 1);
  return [...scenario.swaps]
    .reverse()
    .find(
      (s) =>
        (chain === undefined || s.chain === chain) &&
        s.dex !== 'ref-pool' &&
        created.has(tokenKey(s.chain, s.token)) &&
        idCount.get(s.id) === 1,
    );
}

/** The log, with every produce call shown to `record` first. */
function recordingLog(base: EventLog, record: (topic: string, messages: ProduceMessage[]) => void): EventLog {
  return {
    ...base,
    async produce(topic, messages) {
      record(topic, messages);
      await base.produce(topic, messages);
    },
  };
}

/** The latest token message of each token is its current view. */
async function assertViewsCurrent(aggregator: ReturnType<typeof createAggregator>, log: EventLog): Promise<void> {
  const expected = Object.fromEntries(
    aggregator.tokens().map((t) => [tokenKey(t.chain, t.address), JSON.stringify(t)]),
  );
  assert.deepEqual(
    await latestPerKey(log, TOPICS.tokens.name),
    Object.fromEntries(Object.entries(expected).sort(([a], [b]) => (a < b ? -1 : 1))),
  );
}

describe('aggregator live scheduling', function () {
  this.timeout(60_000);
  const env = liveEnv('spot-agg-live-');

  it('publishes a swap that arrives while a views pass is pending before that pass, and every view in the end', async () => {
    const { ctx, store, base } = await env.open();
    const scenario = makeScenario(11, 600);

    const late = lastPricedSwap(scenario)!;
    assert.ok(late, 'the scenario has a priced swap to hold back');
    const upFront = scenario.swaps.filter((s) => s !== late);
    await produceScenario(base, { ...scenario, swaps: upFront });
    const total = upFront.length + scenario.events.length;

    const journal: Array<Produced | { topic: 'injected' }> = [];
    const log = recordingLog(base, (topic, messages) => {
      const tradeIds =
        topic === TOPICS.trades.name ? messages.map((m) => (JSON.parse(m.value) as PricedTradeMessage).trade.id) : [];
      journal.push({ topic, keys: messages.map((m) => m.key), tradeIds });
    });
    let injected = false;
    const aggregator = createAggregator(ctx, {
      log,
      store,
      name: 'live-views',
      viewsEveryMs: 0,
      viewsSliceMs: 0,
      onFlush: (info) => {
        // Caught up on everything produced up front: the views of all its tokens are due now.
        if (injected || info.processed < total) return;
        injected = true;
        journal.push({ topic: 'injected' });
        void base.produce(TOPICS.swaps.name, [swapMessage(late)]);
      },
    });
    await aggregator.start();
    try {
      for (let i = 0; i < 2000 && !journal.some((e) => 'tradeIds' in e && e.tradeIds.includes(late.id)); i++)
        await new Promise((r) => setTimeout(r, 10));
      await aggregator.drain();

      const at = journal.findIndex((e) => e.topic === 'injected');
      assert.ok(at >= 0, 'the held-back swap was produced once the rest was processed');
      const lateTrade = journal.findIndex((e) => 'tradeIds' in e && e.tradeIds.includes(late.id));
      assert.ok(lateTrade > at, 'the held-back swap was priced and published');
      const firstViews = journal.findIndex((e, i) => i > at && e.topic === TOPICS.tokens.name);
      assert.ok(firstViews > lateTrade, 'the pending views pass is published after the trade that arrived meanwhile');
      const pass = journal[firstViews] as Produced;
      assert.ok(pass.keys.length >= 3, `that pass holds the views of the earlier batch (${pass.keys.length} tokens)`);

      // Nothing was lost to slicing.
      await assertViewsCurrent(aggregator, base);
    } finally {
      await aggregator.stop();
      await base.close();
    }
  });
});

/**
 * Lands a whole scenario of `steps` on an idle aggregator at once and records, for every produce
 * of trades, how many messages it had processed by then.
 */
async function backlogAtOnce(
  env: ReturnType<typeof liveEnv>,
  steps: number,
  options: Pick<AggregatorOptions, 'tradesEveryMs' | 'catchUpTradesEveryMs'>,
): Promise<{ total: number; processed: number; tradeProduces: number[] }> {
  const { ctx, store, base } = await env.open();
  await base.ensureTopics([]);
  const scenario = makeScenario(5, steps);
  let aggregator: ReturnType<typeof createAggregator> | null = null;
  const tradeProduces: number[] = [];
  const log: EventLog = {
    ...base,
    async produce(topic, messages) {
      if (topic === TOPICS.trades.name) tradeProduces.push(aggregator!.processed());
      await base.produce(topic, messages);
    },
  };
  aggregator = createAggregator(ctx, { log, store, name: 'backlog', ...options });
  await aggregator.start();
  try {
    await produceScenario(base, scenario);
    await aggregator.drain();
    return { total: scenario.swaps.length + scenario.events.length, processed: aggregator.processed(), tradeProduces };
  } finally {
    await aggregator.stop();
    await base.close();
  }
}

describe('aggregator live backlog', function () {
  this.timeout(60_000);
  const env = liveEnv('spot-agg-backlog-');

  it('publishes the first trades of a short backlog before all of it is processed', async () => {
    const { total, processed, tradeProduces } = await backlogAtOnce(env, 500, { tradesEveryMs: 0 });
    assert.ok(total <= 2000, `a short backlog (${total} messages)`);
    assert.equal(processed, total);
    assert.ok(tradeProduces.length >= 2, `trades went out in pieces (${tradeProduces.length} produce calls)`);
    assert.ok(tradeProduces[0]! < total, 'the first trades were published before the backlog was processed');
  });
});

describe('aggregator catch-up', function () {
  this.timeout(60_000);
  const env = liveEnv('spot-agg-catch-up-');

  it('publishes the trades of a long backlog in pieces too, not one per maxBatch', async () => {
    // Every 32 messages is overdue: a flush per 32 messages once a trade is pending.
    const { total, processed, tradeProduces } = await backlogAtOnce(env, 1500, { catchUpTradesEveryMs: 0 });
    assert.ok(total > 2000 && total < 5000, `a long backlog within one maxBatch (${total} messages)`);
    assert.equal(processed, total);
    assert.ok(tradeProduces.length >= 20, `trades went out in pieces (${tradeProduces.length} produce calls)`);
    assert.ok(
      tradeProduces[0]! <= total / 10,
      `the first trades went out after ${tradeProduces[0]} of ${total} messages`,
    );
  });
});

describe('aggregator merge buffer', function () {
  this.timeout(60_000);
  const env = liveEnv('spot-agg-gate-');

  it('holds at most about two batches per partition while one input is denser in event time than the other', async () => {
    const { ctx, store, base } = await env.open();
    await base.ensureTopics([]);
    // One chain: the merge orders each chain on its own, and a partition holding none of a chain is
    // read on until it shows one (docs/numbers.md, "Order"), which is not what this bounds.
    const full = makeScenario(3, 3000);
    const scenario = {
      ...full,
      swaps: full.swaps.filter((s) => s.chain === 'solana'),
      events: full.events.filter((e) => e.chain === 'solana'),
    };
    // Balance events three times as dense in event time as the swaps, over the same span: a batch of
    // events covers a third of a batch of swaps, so without the fetch gate the swaps pile up in the merge.
    const times = scenario.swaps.map((s) => s.blockTime);
    const [from, to] = [Math.min(...times), Math.max(...times)];
    const token = scenario.swaps[0]!;
    const dense = Array.from({ length: scenario.swaps.length * 3 }, (_, i) => ({
      id: `${token.chain}:dense-${i}:0`,
      chain: token.chain,
      transactionHash: `dense-${i}`,
      eventIndex: 0,
      blockNumber: token.blockNumber,
      blockTime: from + Math.floor(((to - from) * i) / (scenario.swaps.length * 3)),
      kind: 'balance' as const,
      token: token.token,
      owner: token.trader,
      amount: '1',
    }));
    await produceScenario(base, {
      ...scenario,
      events: [...scenario.events, ...dense].sort((a, b) => a.blockTime - b.blockTime),
    });
    const total = scenario.swaps.length + scenario.events.length + dense.length;
    const maxBatch = 100;
    const aggregator = createAggregator(ctx, { log: base, store, name: 'gate', maxBatch, publish: false });
    await aggregator.start();
    try {
      await aggregator.drain();
      assert.equal(aggregator.processed(), total);
      const queues = TOPICS.swaps.partitions + TOPICS.tokenEvents.partitions;
      const peak = ctx.metrics.get('aggregator.merge_buffered_peak');
      assert.ok(peak <= queues * 2 * maxBatch, `merge buffer peak ${peak} of ${total} messages`);
    } finally {
      await aggregator.stop();
      await base.close();
    }
  });
});

describe('aggregator views while a chain catches up', function () {
  this.timeout(60_000);
  const env = liveEnv('spot-agg-catching-up-');

  it("holds a chain's views until its turn while its event time is far behind the clock, not a live chain's", async () => {
    const { ctx, store, base } = await env.open();
    // The scenario's event time is January 2026: every chain in it is far behind the clock.
    const scenario = makeScenario(13, 600);
    // Held back: one priced swap on solana (it stays behind the clock) and one on base, sent at the
    // clock's time (base turns live).
    const behind = lastPricedSwap(scenario, 'solana')!;
    const live = lastPricedSwap(scenario, 'base')!;
    assert.ok(behind && live, 'the scenario has a priced swap on each chain to hold back');
    await produceScenario(base, { ...scenario, swaps: scenario.swaps.filter((s) => s !== behind && s !== live) });
    const total = scenario.swaps.length - 2 + scenario.events.length;

    const published: Array<{ topic: string; keys: string[] }> = [];
    const log = recordingLog(base, (topic, messages) => published.push({ topic, keys: messages.map((m) => m.key) }));
    let caughtUp = false;
    const aggregator = createAggregator(ctx, {
      log,
      store,
      name: 'catching-up',
      viewsEveryMs: 0,
      viewsSliceMs: 0,
      catchUpViewsEveryMs: 600_000,
      onFlush: (info) => {
        caughtUp ||= info.processed >= total;
      },
    });
    const tokenViews = (key: string) =>
      published.filter((p) => p.topic === TOPICS.tokens.name && p.keys.includes(key)).length;
    const until = (what: string, done: () => boolean) => waitFor(async () => done() || undefined, 10_000, what);
    await aggregator.start();
    try {
      const behindKey = tokenKey(behind.chain, behind.token);
      const liveKey = tokenKey(live.chain, live.token);
      // A chain's first live pass is its first turn: the views of its tokens go out.
      await until('the scenario was processed', () => caughtUp);
      await until('the first views pass was published', () => tokenViews(behindKey) > 0 && tokenViews(liveKey) > 0);
      const [behindBefore, liveBefore] = [tokenViews(behindKey), tokenViews(liveKey)];

      await base.produce(TOPICS.swaps.name, [swapMessage(behind)]);
      await base.produce(TOPICS.swaps.name, [swapMessage({ ...live, blockTime: Date.now() })]);
      await until('both swaps were processed', () => aggregator.processed() >= total + 2);
      await until('the live chain had its token view published at once', () => tokenViews(liveKey) > liveBefore);
      assert.equal(tokenViews(behindKey), behindBefore, 'the chain behind the clock waits for its turn');

      // A whole flush (drain, a snapshot) publishes what waits.
      await aggregator.drain();
      assert.equal(tokenViews(behindKey), behindBefore + 1, 'its view went out with the flush');
      await assertViewsCurrent(aggregator, base);
    } finally {
      await aggregator.stop();
      await base.close();
    }
  });
});
