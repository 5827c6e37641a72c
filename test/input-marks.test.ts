// Progress marks on the input topics (ingest/publisher.ts, core/topics.ts ChainMark): every few
// seconds of a chain's event time each partition gets a mark, so the aggregator's merge does not
// read a partition ahead (buffering everything it reads) while the chain is quiet there. The marks
// change no table: the same records with and without them aggregate to the same rows.
import assert from 'node:assert/strict';
import { createAggregator } from '../aggregators/aggregator.ts';
import { partitionFor } from '../core/eventlog/partitioner.ts';
import type { EventLog, LogMessage } from '../core/eventlog/types.ts';
import { ALL_TOPICS, TOPICS, isChainMark, type RawSwap, type TokenEvent } from '../core/topics.ts';
import { createIngestPublisher, swapKey, type IngestRecords } from '../ingest/publisher.ts';
import { createAggregatorEnv, type AggregatorEnv } from './helpers/aggregator-env.ts';
import { T0 } from './fixtures/aggregator-scenario.ts';
import { dumpTables } from './fixtures/aggregator-dump.ts';
import { markTimesByPartition } from './helpers/chain-marks.ts';

const SOL_USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const BASE_USDC = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';
const MARK_AFTER_MS = 2_000;
/** The aggregator's batch, and so its fetch: what the merge may hold of a partition before fetching it again. */
const FETCH = 50;

const solToken = (i: number) => `So1Token${String(i).padStart(3, '0')}${'x'.repeat(32)}`;
const baseToken = '0x' + 'b'.repeat(40);

function swap(chain: 'solana' | 'base', token: string, n: number, time: number): RawSwap {
  const hash = chain === 'solana' ? `sig${n}` : '0x' + n.toString(16).padStart(64, '0');
  return {
    id: `${chain}:${hash}:0`,
    chain,
    transactionHash: hash,
    eventIndex: 0,
    blockNumber: Math.floor((time - T0) / 400),
    blockTime: time,
    token,
    quoteAsset: chain === 'solana' ? SOL_USDC : BASE_USDC,
    tokenAmount: String(1_000_000 + (n % 97) * 1_000),
    tokenDecimals: 6,
    quoteAmount: String(500_000 + (n % 89) * 700),
    quoteDecimals: 6,
    side: n % 3 === 0 ? 'sell' : 'buy',
    trader: chain === 'solana' ? `Trader${n % 7}${'w'.repeat(36)}` : '0x' + (n % 7).toString(16).padStart(40, 'c'),
    pool: chain === 'solana' ? `Pool${token.slice(0, 11)}${'p'.repeat(28)}` : '0x' + 'd'.repeat(40),
    dex: chain === 'solana' ? 'raydium-amm-v4' : 'uniswap-v2',
    launchpad: null,
  };
}

const partitionOf = (chain: 'solana' | 'base', token: string) =>
  partitionFor(swapKey(swap(chain, token, 0, T0)), TOPICS.swaps.partitions);
const solTokens = Array.from({ length: 32 }, (_, i) => solToken(i));
/** Solana tokens on the partition of Base's token: they trade four times as often. */
const busyTokens = solTokens.filter((token) => partitionOf('solana', token) === partitionOf('base', baseToken));

/**
 * A chain source's publish calls, a block's records each: a busy Solana (32 tokens over every
 * partition, 4 swaps every 100 ms of event time, 3 of them on the partition of Base's token) and
 * a quiet Base (one token, a swap every 10 s), with a funding event now and then. The other
 * partitions, lacking Base, are sparser in event time than the one the merge gates on.
 */
function blocks(
  seconds: number,
  base: { swapAt: (ms: number) => boolean; progressEveryMs?: number } = { swapAt: (ms) => ms % 10_000 === 5_000 },
): IngestRecords[] {
  const out: IngestRecords[] = [];
  let n = 0;
  for (let ms = 0; ms < seconds * 1000; ms += 100) {
    const time = T0 + ms;
    const records: IngestRecords = { swaps: [swap('solana', solTokens[n % 32]!, n++, time)], events: [] };
    for (let i = 0; i < 3; i++) records.swaps.push(swap('solana', busyTokens[n % busyTokens.length]!, n++, time));
    if (base.swapAt(ms)) records.swaps.push(swap('base', baseToken, n++, time));
    // Base's block source, a call of its own: the blocks it read through this time, records or none.
    if (base.progressEveryMs && ms % base.progressEveryMs === 0)
      out.push({ swaps: [], events: [], progress: { chain: 'base', blockTime: time } });
    if (ms % 7_000 === 0) {
      const funding: TokenEvent = {
        id: `solana:fund${n}:0`,
        chain: 'solana',
        transactionHash: `fund${n}`,
        eventIndex: 0,
        blockNumber: Math.floor(ms / 400),
        blockTime: time,
        kind: 'funding',
        token: null,
        from: `Cex${'f'.repeat(40)}`,
        to: `Trader${n % 7}${'w'.repeat(36)}`,
        amount: '1000000000',
        fromLabel: null,
      };
      records.events.push(funding);
      n++;
    }
    out.push(records);
  }
  return out;
}

async function publishAll(env: AggregatorEnv, markAfterMs: number, records: IngestRecords[]): Promise<void> {
  await env.log.ensureTopics(ALL_TOPICS);
  const publisher = createIngestPublisher(env.ctx, { log: env.log, markAfterMs });
  for (const call of records) void publisher.publish(call);
  await publisher.flush();
}

async function readAll(log: EventLog, topic: string): Promise<LogMessage[]> {
  const out: LogMessage[] = [];
  await log.readToEnd(topic, (message) => out.push(message));
  return out;
}

/** Publishes the records on a new log, aggregates them all, and reports the merge's peak and the tables. */
async function aggregateOnce(envs: AggregatorEnv[], markAfterMs: number, records: IngestRecords[]) {
  const env = await createAggregatorEnv('spot-marks-merge-');
  envs.push(env);
  await publishAll(env, markAfterMs, records);
  const aggregator = createAggregator(env.ctx, { log: env.log, store: env.store, maxBatch: FETCH, name: 'marks' });
  await aggregator.start();
  await aggregator.drain();
  await aggregator.stop();
  return {
    peak: env.ctx.metrics.get('aggregator.merge_buffered_peak'),
    tables: await dumpTables(env.client),
    processed: aggregator.processed(),
    baseMarks: (await markTimesByPartition(env.log, TOPICS.swaps.name, 'base')).flat().length,
  };
}

describe('progress marks on the input topics', function () {
  this.timeout(180_000);
  const envs: AggregatorEnv[] = [];
  after(async () => {
    for (const env of envs) await env.close();
  });

  it("mark every partition as a chain's time goes on, each with a key of that partition and a time no later record undercuts", async () => {
    const env = await createAggregatorEnv('spot-marks-publisher-');
    envs.push(env);
    const records = blocks(120);
    const published = { swaps: 0, events: 0 };
    for (const call of records) {
      published.swaps += call.swaps.length;
      published.events += call.events.length;
    }
    await publishAll(env, MARK_AFTER_MS, records);
    // Event-only calls (enrichment, labels, promotions) carry other times: they make no marks.
    const publisher = createIngestPublisher(env.ctx, { log: env.log, markAfterMs: MARK_AFTER_MS });
    const late = records[0]!.events[0]!;
    await publisher.publish({ swaps: [], events: [{ ...late, id: 'solana:enriched:0', transactionHash: 'enriched' }] });
    published.events += 1;

    for (const topic of [TOPICS.swaps.name, TOPICS.tokenEvents.name]) {
      const messages = await readAll(env.log, topic);
      const partitions = (await env.log.endOffsets(topic)).size;
      const marks = messages.filter((m) => isChainMark(JSON.parse(m.value)));
      const records = messages.length - marks.length;
      assert.equal(records, topic === TOPICS.swaps.name ? published.swaps : published.events);
      assert.ok(marks.length > 0, `${topic} has marks`);
      for (const m of marks)
        assert.equal(partitionFor(m.key, partitions), m.partition, 'a mark lands on its partition');
      // Per partition and chain, in offset order: no record is earlier than a mark before it, and
      // Base (a swap every 10 s) never goes longer than that without a record or a mark.
      const floor = new Map<string, number>();
      const previous = new Map<string, number>();
      for (const m of messages.sort((a, b) => a.partition - b.partition || a.offset - b.offset)) {
        const value = JSON.parse(m.value) as { chain: string; blockTime: number };
        const slot = `${topic}:${m.partition}:${value.chain}`;
        if (isChainMark(value)) floor.set(slot, value.blockTime);
        else if ((value as { id?: string }).id !== 'solana:enriched:0')
          assert.ok(value.blockTime >= (floor.get(slot) ?? 0), `${slot}: a record earlier than a mark before it`);
        const before = previous.get(slot);
        if (value.chain === 'base' && before !== undefined)
          assert.ok(value.blockTime - before <= 10_000, `${slot}: ${value.blockTime - before} ms without Base`);
        previous.set(slot, value.blockTime);
      }
      for (let partition = 0; partition < partitions; partition++)
        assert.ok(previous.has(`${topic}:${partition}:base`), `${topic}:${partition} has Base marks`);
    }
    assert.equal(env.ctx.metrics.get('ingest.published.swaps'), published.swaps);
    assert.ok(env.ctx.metrics.get('ingest.published.marks') > 0);
  });

  it('keep the merge from reading ahead for a quiet chain, and change no table', async () => {
    const records = blocks(600);
    const marked = await aggregateOnce(envs, MARK_AFTER_MS, records);
    const unmarked = await aggregateOnce(envs, 0, records);
    const elsewhere = records
      .flatMap((call) => call.swaps)
      .filter((s) => partitionOf(s.chain as 'solana' | 'base', s.token) !== partitionOf('base', baseToken)).length;
    const peaks = `peaks ${marked.peak} marked, ${unmarked.peak} unmarked; ${elsewhere} swaps without Base's partition`;
    // Unmarked, Base waits for the partitions without its token until they are read to the end.
    assert.ok(unmarked.peak > elsewhere * 0.8, peaks);
    // Marked, no partition is fetched past the gate for long: the merge holds what the gate allows,
    // under two fetches of each of the eight input partitions.
    assert.ok(marked.peak < 2 * FETCH * 8, peaks);
    assert.ok(marked.processed > unmarked.processed, 'the marks are processed too');
    assert.deepEqual(marked.tables, unmarked.tables);
  });

  it("mark a chain whose blocks hold none of its records from its source's block progress, so the merge does not read ahead for it", async () => {
    // Base trades at 5.0 and 5.5 s (the second too soon after the first for a mark of its own),
    // then not until 595 s; its source reads a block every 2 s throughout.
    const base = { swapAt: (ms: number) => ms === 5_000 || ms === 5_500 || ms === 595_000, progressEveryMs: 2_000 };
    const withProgress = blocks(600, base);
    const withoutProgress = withProgress.filter((call) => !call.progress);
    const progressed = await aggregateOnce(envs, MARK_AFTER_MS, withProgress);
    const silent = await aggregateOnce(envs, MARK_AFTER_MS, withoutProgress);
    const partitions = TOPICS.swaps.partitions;
    // A mark on every partition per 2 s of Base's blocks; without them, only at its trades.
    assert.ok(progressed.baseMarks >= (600 / 2 - 1) * partitions, `${progressed.baseMarks} Base marks`);
    assert.ok(silent.baseMarks <= 2 * partitions, `${silent.baseMarks} Base marks without progress`);
    const peaks = `peaks ${progressed.peak} with progress, ${silent.peak} without`;
    // Without progress, the trade at 5.5 s waits for the other partitions until 595 s: they are
    // read past the gate. With it, the merge holds what the gate allows.
    assert.ok(silent.peak > 2 * FETCH * 8, peaks);
    assert.ok(progressed.peak < 2 * FETCH * 8, peaks);
    assert.deepEqual(progressed.tables, silent.tables);
  });
});
