// The Solana block source against a recorded node: getSlot / getBlocks / batched getBlock,
// skipped slots, a restart before a batch was acknowledged, a fork, bad answers, a node behind.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../core/config.ts';
import { createContext, type Context } from '../core/context.ts';
import { createEmbeddedLog } from '../core/eventlog/embedded.ts';
import type { EventLog } from '../core/eventlog/types.ts';
import { createLogger } from '../core/logger.ts';
import { ALL_TOPICS, TOPICS, type RawSwap, type TokenEvent } from '../core/topics.ts';
import { createCursorStore, type CursorStore } from '../ingest/cursor-store.ts';
import { seedHash } from '../ingest/evm/encode.ts';
import { createIngestPublisher, type IngestPublisher } from '../ingest/publisher.ts';
import { solanaAddress, solanaSignature } from '../ingest/solana/address.ts';
import { base58Encode } from '../ingest/solana/base58.ts';
import { buildTransaction } from '../ingest/solana/build.ts';
import { createSolanaDecoder } from '../ingest/solana/decoder.ts';
import { encodePumpTrade } from '../ingest/solana/encode.ts';
import type { SolanaTransaction } from '../ingest/solana/transaction.ts';
import { createSolanaBlockSource, type SolanaBlockCursor } from '../ingest/sources/solana-blocks.ts';
import type { ChainSource } from '../ingest/sources/solana-rpc.ts';
import { systemTransferCall } from '../ingest/transfers/solana-transfers.ts';
import { markTimesByPartition } from './helpers/chain-marks.ts';
import { RpcFault, startRecordedRpcServer, type RecordedRpcServer } from './helpers/recorded-rpc-server.ts';

const ctx: Context = createContext(loadConfig({}), createLogger((process.env.TEST_LOG_LEVEL as 'silent') || 'silent'));

async function waitFor(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const MINT = solanaAddress('blocks/mint');
const USER = solanaAddress('blocks/user');
const FUNDER = solanaAddress('blocks/funder');
const WALLET = solanaAddress('blocks/wallet');

interface Block {
  blockhash: string;
  previousBlockhash: string;
  parentSlot: number;
  blockTime: number;
  transactions: Array<Omit<SolanaTransaction, 'slot' | 'blockTime'>>;
}

/** A pump.fun buy, or (every third slot) a plain SOL transfer that funds a wallet. */
function txAt(slot: number, branch: string): SolanaTransaction {
  const blockTime = 1_700_000_000 + slot;
  if (slot % 3 === 0) {
    return buildTransaction({
      signature: solanaSignature(`blocks/${branch}/fund/${slot}`),
      slot,
      blockTime,
      instructions: [systemTransferCall(FUNDER, WALLET, 50_000_000n + BigInt(slot))],
    });
  }
  return encodePumpTrade({
    signature: solanaSignature(`blocks/${branch}/trade/${slot}`),
    slot,
    blockTime,
    layout: 'feb2026',
    mint: MINT,
    user: USER,
    isBuy: true,
    timestamp: BigInt(blockTime),
    solAmount: 1_000_000n * BigInt(slot),
    tokenAmount: 35_000_000_000n * BigInt(slot),
    virtualSolReserves: 30_000_000_000n,
    virtualTokenReserves: 1_000_000_000_000_000n,
    realSolReserves: 1_000_000n * BigInt(slot),
    realTokenReserves: 793_000_000_000_000n,
  });
}

/** A chain of slots on the recorded node: produced ones hold a block, skipped ones none. */
function createLedger(server: RecordedRpcServer) {
  const blocks = new Map<number, Block>();
  let tip = 0;
  const hashOf = (slot: number, branch: string) =>
    base58Encode(Buffer.from(seedHash(`blocks/${branch}/${slot}`).slice(2), 'hex'));
  const ledger = {
    blocks,
    /** getSlot answers this (a node falling behind answers less). */
    reportedTip: null as number | null,
    get tip() {
      return tip;
    },
    /** Produces `slots` (skipping those in `skip`) after `parent` on `branch`. */
    extend(parent: number, until: number, branch = 'main', skip: number[] = []) {
      let previous = blocks.get(parent)?.blockhash ?? hashOf(parent, 'genesis');
      let parentSlot = parent;
      for (let slot = parent + 1; slot <= until; slot++) {
        blocks.delete(slot);
        if (skip.includes(slot)) continue;
        const { slot: _s, blockTime: _t, ...tx } = txAt(slot, branch);
        const block: Block = {
          blockhash: hashOf(slot, branch),
          previousBlockhash: previous,
          parentSlot,
          blockTime: 1_700_000_000 + slot,
          transactions: [tx],
        };
        blocks.set(slot, block);
        previous = block.blockhash;
        parentSlot = slot;
      }
      for (const slot of [...blocks.keys()]) if (slot > until) blocks.delete(slot);
      tip = until;
    },
    /** The transactions of the canonical chain between two slots, as the decoder gives them. */
    expected(from: number, to: number) {
      const decoder = createSolanaDecoder();
      const ids: string[] = [];
      for (let slot = from; slot <= to; slot++) {
        const block = blocks.get(slot);
        if (!block) continue;
        const tx = { slot, blockTime: block.blockTime, ...block.transactions[0]! } as SolanaTransaction;
        const decoded = decoder.decodeTransaction(tx);
        ids.push(...decoded.swaps.map((swap) => swap.id));
        if (decoded.swaps.length === 0) ids.push(`solana:${tx.transaction.signatures[0]}:0`);
      }
      return ids;
    },
  };
  server.handle('getSlot', () => ledger.reportedTip ?? tip);
  server.handle('getBlocks', ([from, to]: [number, number]) =>
    [...blocks.keys()].filter((slot) => slot >= from && slot <= Math.min(to, tip)).sort((a, b) => a - b),
  );
  server.handle('getBlock', ([slot, options]: [number, { transactionDetails: string }]) => {
    const block = slot <= tip ? blocks.get(slot) : undefined;
    if (!block)
      throw new RpcFault(-32007, `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot`);
    return options.transactionDetails === 'none' ? { ...block, transactions: undefined } : block;
  });
  return ledger;
}

describe('solana block source', () => {
  let dir: string;
  let log: EventLog;
  let cursors: CursorStore;
  let server: RecordedRpcServer;
  let publisher: IngestPublisher;
  let sources: ChainSource[];

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-blocks-'));
    log = createEmbeddedLog(ctx, { path: path.join(dir, 'log.sqlite') });
    await log.ensureTopics(ALL_TOPICS);
    cursors = createCursorStore(ctx, { path: path.join(dir, 'cursors.sqlite') });
    server = await startRecordedRpcServer();
    publisher = createIngestPublisher(ctx, { log });
    sources = [];
  });

  afterEach(async () => {
    for (const source of sources) await source.stop();
    await server.close();
    cursors.close();
    await log.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function start(options: Partial<Parameters<typeof createSolanaBlockSource>[1]> = {}): ChainSource {
    const source = createSolanaBlockSource(ctx, {
      url: server.url,
      decoder: createSolanaDecoder(),
      publisher,
      cursors,
      fromSlot: 101,
      batchSize: 4,
      pollIntervalMs: 20,
      ...options,
    });
    sources.push(source);
    void source.start();
    return source;
  }

  async function publishedIds(): Promise<string[]> {
    const ids: string[] = [];
    await log.readToEnd(TOPICS.swaps.name, (message) => ids.push((JSON.parse(message.value) as RawSwap).id));
    await log.readToEnd(TOPICS.tokenEvents.name, (message) => {
      const event = JSON.parse(message.value) as TokenEvent;
      if (event.kind === 'funding') ids.push(event.id);
    });
    return ids;
  }

  const slotOf = () => cursors.get<SolanaBlockCursor>('solana-blocks')?.slot ?? 0;

  async function assertPublishedOnce(expected: string[]): Promise<void> {
    const ids = await publishedIds();
    assert.deepEqual([...ids].sort(), [...expected].sort());
    assert.equal(new Set(ids).size, ids.length, 'no record published twice');
  }

  it('reads every produced slot once, one getBlock per block in batched requests, and passes skipped slots', async () => {
    const ledger = createLedger(server);
    ledger.extend(100, 130, 'main', [104, 111, 112, 125, 126]);
    // 126 is listed by getBlocks but answers "skipped" (pruned from long-term storage).
    server.handle('getBlocks', ([from, to]: [number, number]) =>
      [...ledger.blocks.keys(), 126].filter((slot) => slot >= from && slot <= to).sort((a, b) => a - b),
    );
    start();
    await waitFor('slot 130', () => slotOf() === 130);
    await assertPublishedOnce(ledger.expected(101, 130));
    const events: TokenEvent[] = [];
    await log.readToEnd(TOPICS.tokenEvents.name, (message) => events.push(JSON.parse(message.value)));
    const funding = events.find((event) => event.kind === 'funding');
    assert.deepEqual(
      funding && { from: funding.from, to: funding.to, amount: funding.amount, blockNumber: funding.blockNumber },
      { from: FUNDER, to: WALLET, amount: String(50_000_000 + 102), blockNumber: 102 },
    );
    const getBlocks = server.calls.filter((call) => call.method === 'getBlock');
    assert.equal(getBlocks.length, ledger.blocks.size + 1, 'one getBlock per listed slot');
    assert.ok(ctx.metrics.get('ingest.solana.skipped_slots') >= 1);
  });

  it("marks the chain's progress through blocks without records: the input partitions get the newest block's time", async () => {
    const ledger = createLedger(server);
    ledger.extend(100, 140);
    // Slots 109–140 hold no transaction the decoders take.
    for (let slot = 109; slot <= 140; slot++) ledger.blocks.get(slot)!.transactions = [];
    start({ publisher: createIngestPublisher(ctx, { log, markAfterMs: 2_000 }) });
    await waitFor('slot 140', () => slotOf() === 140);
    const marks = await markTimesByPartition(log, TOPICS.tokenEvents.name);
    const blockTime = (slot: number) => (1_700_000_000 + slot) * 1000;
    for (const [partition, times] of marks.entries()) {
      // Batches of 4 slots (4 s): a mark each, the last at slot 140 although slot 108 traded last.
      assert.equal(Math.max(...times), blockTime(140), `partition ${partition}: ${times.join(', ')}`);
      assert.ok(
        times.filter((time) => time > blockTime(108)).length >= 8,
        `partition ${partition}: ${times.join(', ')}`,
      );
    }
  });

  it('restarts from the first unacknowledged batch after a crash: nothing lost, nothing doubled', async () => {
    const ledger = createLedger(server);
    ledger.extend(100, 120);
    // The first instance "crashes" on its third batch: the publish never returns, nothing of it is on the log.
    let calls = 0;
    const crashing: Pick<IngestPublisher, 'publish'> = {
      publish: (records) => (++calls === 3 ? new Promise<void>(() => {}) : publisher.publish(records)),
    };
    const first = createSolanaBlockSource(ctx, {
      url: server.url,
      decoder: createSolanaDecoder(),
      publisher: crashing,
      cursors,
      fromSlot: 101,
      batchSize: 3,
      pollIntervalMs: 20,
    });
    void first.start();
    await waitFor('the hung batch', () => calls === 3);
    assert.equal(slotOf(), 106, 'the cursor stops before the unacknowledged batch');
    start({ batchSize: 3 });
    await waitFor('slot 120', () => slotOf() === 120);
    await assertPublishedOnce(ledger.expected(101, 120));
  });

  it('traces a fork back to the last canonical block and re-processes the new branch', async () => {
    const ledger = createLedger(server);
    ledger.extend(100, 110);
    start();
    await waitFor('slot 110', () => slotOf() === 110);
    const before = ctx.metrics.get('ingest.solana.forks');
    // 108..110 are orphaned; the canonical chain forks after 107 and skips 109.
    ledger.extend(107, 113, 'fork', [109]);
    await waitFor('slot 113', () => slotOf() === 113);
    assert.equal(ctx.metrics.get('ingest.solana.forks'), before + 1);
    const ids = await publishedIds();
    for (const id of ledger.expected(101, 113)) assert.equal(ids.filter((x) => x === id).length, 1, id);
  });

  it('retries 429, 5xx, malformed JSON, dropped sockets and wrong shapes without losing or doubling a block', async () => {
    const ledger = createLedger(server);
    ledger.extend(100, 112, 'main', [105]);
    server.httpFaults.push(429, 503, 'garbage', 'drop', 500);
    let badSlot = 2;
    let badBlock = 2;
    server.handle('getSlot', () => (badSlot-- > 0 ? 'soon' : ledger.tip));
    server.handle('getBlock', ([slot]: [number]) => {
      const block = ledger.blocks.get(slot);
      if (!block) throw new RpcFault(-32007, `Slot ${slot} was skipped`);
      if (slot === 108 && badBlock-- > 0) return badBlock === 1 ? { ...block, transactions: 'x' } : { blockhash: 1 };
      return block;
    });
    const failures = ctx.metrics.get('ingest.solana.step_failures');
    start();
    await waitFor('slot 112', () => slotOf() === 112);
    await assertPublishedOnce(ledger.expected(101, 112));
    assert.ok(ctx.metrics.get('ingest.solana.step_failures') - failures >= 3);
  });

  it('waits for a node that falls behind or jumps back, never moving the cursor backwards', async () => {
    const ledger = createLedger(server);
    ledger.extend(100, 110);
    start();
    await waitFor('slot 110', () => slotOf() === 110);
    ledger.reportedTip = 95;
    const behind = ctx.metrics.get('ingest.solana.node_behind');
    await waitFor('a poll of the behind node', () => ctx.metrics.get('ingest.solana.node_behind') > behind);
    assert.equal(slotOf(), 110);
    ledger.extend(110, 115);
    ledger.reportedTip = null;
    await waitFor('slot 115', () => slotOf() === 115);
    await assertPublishedOnce(ledger.expected(101, 115));
  });

  it('takes blocks pushed by blockSubscribe instead of fetching them, in slot order, once', async () => {
    const ledger = createLedger(server);
    ledger.extend(100, 103);
    start({ url: server.wsUrl, pollIntervalMs: 60_000 });
    await waitFor('slot 103', () => slotOf() === 103);
    await waitFor('the block subscription', () => server.subscriptions('blockSubscribe').length === 1);
    ledger.extend(103, 108, 'main', [105]);
    const fetchedBefore = server.calls.filter((call) => call.method === 'getBlock').length;
    // 104, 106 and 108 are pushed (108 first: out of order), 107 is not: it is fetched.
    for (const slot of [108, 104, 106])
      server.notify('blockSubscribe', {
        context: { slot },
        value: { slot, err: null, block: ledger.blocks.get(slot) },
      });
    await waitFor('slot 108', () => slotOf() === 108, 3_000);
    const fetched = server.calls.filter((call) => call.method === 'getBlock').slice(fetchedBefore);
    assert.deepEqual(
      fetched.map((call) => call.params[0]),
      [107],
    );
    await assertPublishedOnce(ledger.expected(101, 108));
  });

  it('wakes on slotSubscribe notifications where the endpoint has no blockSubscribe', async () => {
    server.refusedSubscriptions.add('blockSubscribe');
    const ledger = createLedger(server);
    ledger.extend(100, 103);
    start({ url: server.wsUrl, pollIntervalMs: 60_000 });
    await waitFor('slot 103', () => slotOf() === 103);
    await waitFor('the slot subscription', () => server.subscriptions('slotSubscribe').length === 1);
    ledger.extend(103, 106);
    server.notify('slotSubscribe', { slot: 106, parent: 105, root: 100 });
    await waitFor('slot 106', () => slotOf() === 106, 3_000);
  });
});
