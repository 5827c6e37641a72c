// The Yellowstone gRPC (Geyser) source: the protobuf → getTransaction mapping against Solana's own
// encoder (shipped by the package) on recorded mainnet messages, and the source against a real
// gRPC server on loopback (test/helpers/geyser-server.ts) read by the package's native client:
// skipped slots, a restart mid-stream, a dropped stream, malformed messages, a stall, a fork, a
// refused fromSlot.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  SubscribeUpdate,
  SubscribeUpdateTransactionInfo,
  txEncode,
  type SubscribeUpdateBlock,
} from '@triton-one/yellowstone-grpc';
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
import type { SolanaBlockCursor } from '../ingest/sources/solana-blocks.ts';
import { createSolanaGeyserSource } from '../ingest/sources/solana-geyser.ts';
import { geyserBlock, geyserTransaction } from '../ingest/sources/solana-geyser-block.ts';
import type { ChainSource } from '../ingest/sources/solana-rpc.ts';
import { systemTransferCall } from '../ingest/transfers/solana-transfers.ts';
import { markTimesByPartition } from './helpers/chain-marks.ts';
import { startGeyserServer, toGeyserTransaction, type GeyserServer } from './helpers/geyser-server.ts';

const ctx: Context = createContext(loadConfig({}), createLogger((process.env.TEST_LOG_LEVEL as 'silent') || 'silent'));
const MAINNET = path.join(import.meta.dirname, 'fixtures/mainnet/solana');

async function waitFor(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A recorded message through protobuf bytes, as the wire carries it. */
const wire = (info: SubscribeUpdateTransactionInfo) =>
  SubscribeUpdateTransactionInfo.decode(SubscribeUpdateTransactionInfo.encode(info).finish());

describe('geyser block mapping', () => {
  const fixtures = fs.readdirSync(MAINNET).filter((name) => name.endsWith('.json'));

  it('turns recorded mainnet Geyser transactions into exactly what Solana’s json encoder gives', () => {
    assert.ok(fixtures.length >= 10);
    for (const name of fixtures) {
      const recorded = JSON.parse(fs.readFileSync(path.join(MAINNET, name), 'utf8')).result as SolanaTransaction;
      const info = wire(toGeyserTransaction(recorded, 0));
      const native = txEncode.encode(info, txEncode.encoding.Json, 0, false) as unknown as {
        meta: Record<string, unknown>;
      };
      // Solana's encoder also writes the deprecated `status` and the rewards, which no decoder reads.
      const { status: _status, rewards: _rewards, ...nativeMeta } = native.meta;
      assert.deepEqual(geyserTransaction(info), { ...native, meta: nativeMeta }, name);
    }
  });

  it('decodes a mapped block to the records the recorded getTransaction answers decode to', () => {
    const decoder = createSolanaDecoder();
    const transactions = fixtures.map(
      (name) => JSON.parse(fs.readFileSync(path.join(MAINNET, name), 'utf8')).result as SolanaTransaction,
    );
    const failed = wire(toGeyserTransaction(transactions[0]!, transactions.length));
    failed.meta!.err = { err: Uint8Array.from([1, 0, 0, 0]) };
    const vote = { ...wire(toGeyserTransaction(transactions[1]!, transactions.length + 1)), isVote: true };
    const update = SubscribeUpdate.decode(
      SubscribeUpdate.encode(
        SubscribeUpdate.fromPartial({
          filters: ['spot'],
          block: {
            slot: '371820726',
            blockhash: base58Encode(Buffer.alloc(32, 1)),
            parentSlot: '371820725',
            parentBlockhash: base58Encode(Buffer.alloc(32, 2)),
            blockTime: { timestamp: '1760000000' },
            blockHeight: undefined,
            rewards: undefined,
            executedTransactionCount: String(transactions.length + 2),
            // Sent out of order: the block's order is the transactions' index.
            transactions: [failed, vote, ...transactions.map((tx, i) => toGeyserTransaction(tx, i)).reverse()],
            updatedAccountCount: '0',
            accounts: [],
            entriesCount: '0',
            entries: [],
          },
        }),
      ).finish(),
    );
    const { slot, block } = geyserBlock(update.block!);
    assert.equal(slot, 371820726);
    assert.equal(block.parentSlot, 371820725);
    assert.equal(block.blockTime, 1760000000);
    assert.equal(block.transactions.length, transactions.length + 1, 'the vote transaction is left out');
    assert.deepEqual(block.transactions[transactions.length]!.meta!.err, 'AccountLoadedTwice');
    const mapped = block.transactions.map((tx) =>
      decoder.decodeTransaction({ slot, blockTime: block.blockTime, ...tx } as SolanaTransaction),
    );
    const direct = transactions.map((tx) => decoder.decodeTransaction({ ...tx, slot, blockTime: block.blockTime }));
    assert.deepEqual(mapped.slice(0, transactions.length), direct);
    assert.ok(direct.flatMap((records) => records.swaps).length >= 8);
    assert.deepEqual(mapped[transactions.length], { swaps: [], events: [] }, 'a failed transaction yields nothing');
  });

  it('rejects a block message that lacks what the decoders need', () => {
    const tx = JSON.parse(fs.readFileSync(path.join(MAINNET, fixtures[0]!), 'utf8')).result as SolanaTransaction;
    const base: SubscribeUpdateBlock = SubscribeUpdate.fromPartial({
      block: { slot: '5', blockhash: 'x', parentSlot: '4', parentBlockhash: 'y', transactions: [] },
    }).block!;
    assert.throws(() => geyserBlock({ ...base, transactions: [{ ...toGeyserTransaction(tx, 0), meta: undefined }] }));
    assert.throws(() => geyserBlock({ ...base, parentSlot: 'x' }));
    assert.throws(() => geyserBlock({ ...base, blockhash: '' }));
    assert.equal(geyserBlock(base).slot, 5);
  });
});

const MINT = solanaAddress('geyser/mint');
const USER = solanaAddress('geyser/user');
const FUNDER = solanaAddress('geyser/funder');
const WALLET = solanaAddress('geyser/wallet');

/** A pump.fun buy, or (every third slot) a plain SOL transfer that funds a wallet. */
function txAt(slot: number, branch: string): SolanaTransaction {
  const blockTime = 1_700_000_000 + slot;
  if (slot % 3 === 0) {
    return buildTransaction({
      signature: solanaSignature(`geyser/${branch}/fund/${slot}`),
      slot,
      blockTime,
      instructions: [systemTransferCall(FUNDER, WALLET, 50_000_000n + BigInt(slot))],
    });
  }
  return encodePumpTrade({
    signature: solanaSignature(`geyser/${branch}/trade/${slot}`),
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

/** The chain the Geyser node streams: produced slots hold a block, skipped ones none. */
function createChain(server: GeyserServer) {
  const canonical = new Map<number, SolanaTransaction>();
  const hashOf = (slot: number, branch: string) =>
    base58Encode(Buffer.from(seedHash(`geyser/${branch}/${slot}`).slice(2), 'hex'));
  let last: { slot: number; hash: string } | null = null;
  const blockOf = (
    slot: number,
    branch: string,
    parent: { slot: number; hash: string },
    empty: boolean,
  ): SubscribeUpdateBlock => {
    const tx = txAt(slot, branch);
    const { slot: _s, blockTime: _t, ...body } = tx;
    return SubscribeUpdate.fromPartial({
      block: {
        slot: String(slot),
        blockhash: hashOf(slot, branch),
        parentSlot: String(parent.slot),
        parentBlockhash: parent.hash,
        blockTime: { timestamp: String(tx.blockTime) },
        executedTransactionCount: empty ? '0' : '1',
        transactions: empty ? [] : [toGeyserTransaction(body, 0)],
      },
    }).block!;
  };
  return {
    canonical,
    /** Produces the slots after `parent` up to `until` on `branch`, skipping `skip`; those from `emptyFrom` hold no transaction. */
    extend(parent: number, until: number, branch = 'main', skip: number[] = [], emptyFrom = Infinity) {
      let link =
        parent === last?.slot || !last
          ? (last ?? { slot: parent, hash: hashOf(parent, 'genesis') })
          : { slot: parent, hash: hashOf(parent, 'main') };
      for (const slot of [...canonical.keys()]) if (slot > parent) canonical.delete(slot);
      for (let slot = parent + 1; slot <= until; slot++) {
        if (skip.includes(slot)) continue;
        const block = blockOf(slot, branch, link, slot >= emptyFrom);
        if (slot < emptyFrom) canonical.set(slot, txAt(slot, branch));
        server.add(block);
        link = { slot, hash: block.blockhash };
      }
      last = link;
    },
    /** The record ids of the canonical chain between two slots. */
    expected(from: number, to: number): string[] {
      const decoder = createSolanaDecoder();
      const ids: string[] = [];
      for (let slot = from; slot <= to; slot++) {
        const tx = canonical.get(slot);
        if (!tx) continue;
        const decoded = decoder.decodeTransaction(tx);
        ids.push(...decoded.swaps.map((swap) => swap.id));
        if (decoded.swaps.length === 0) ids.push(`solana:${tx.transaction.signatures[0]}:0`);
      }
      return ids;
    },
  };
}

describe('solana geyser source', () => {
  let dir: string;
  let log: EventLog;
  let cursors: CursorStore;
  let server: GeyserServer;
  let publisher: IngestPublisher;
  let sources: ChainSource[];

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-geyser-'));
    log = createEmbeddedLog(ctx, { path: path.join(dir, 'log.sqlite') });
    await log.ensureTopics(ALL_TOPICS);
    cursors = createCursorStore(ctx, { path: path.join(dir, 'cursors.sqlite') });
    server = await startGeyserServer();
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

  function start(options: Partial<Parameters<typeof createSolanaGeyserSource>[1]> = {}): ChainSource {
    const source = createSolanaGeyserSource(ctx, {
      url: server.url,
      token: 'test-x-token',
      decoder: createSolanaDecoder(),
      publisher,
      cursors,
      fromSlot: 101,
      batchSize: 4,
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

  it('streams confirmed blocks from fromSlot through the decoders, passing skipped slots, with the x-token', async () => {
    const chain = createChain(server);
    chain.extend(90, 130, 'main', [104, 111, 112, 125, 126]);
    start();
    await waitFor('slot 130', () => slotOf() === 130);
    await assertPublishedOnce(chain.expected(101, 130));
    const request = server.requests[0]!;
    assert.equal(request.fromSlot, '101');
    assert.equal(request.commitment, 1, 'confirmed');
    assert.deepEqual(request.blocks.spot?.includeTransactions, true);
    assert.deepEqual(server.tokens, ['test-x-token']);
    const events: TokenEvent[] = [];
    await log.readToEnd(TOPICS.tokenEvents.name, (message) => events.push(JSON.parse(message.value)));
    const funding = events.find((event) => event.kind === 'funding');
    assert.deepEqual(
      funding && { from: funding.from, to: funding.to, amount: funding.amount, blockNumber: funding.blockNumber },
      { from: FUNDER, to: WALLET, amount: String(50_000_000 + 102), blockNumber: 102 },
    );
    // New blocks are pushed on the open stream; a server ping is answered.
    server.sendPing();
    chain.extend(130, 134);
    await waitFor('slot 134', () => slotOf() === 134);
    await waitFor('the ping answer', () => server.pings === 1);
    assert.equal(server.requests.length, 1, 'one stream');
    await assertPublishedOnce(chain.expected(101, 134));
  });

  it("marks the chain's progress through blocks without records: the input partitions get the newest block's time", async () => {
    const chain = createChain(server);
    chain.extend(100, 140, 'main', [], 109);
    start({ publisher: createIngestPublisher(ctx, { log, markAfterMs: 2_000 }) });
    await waitFor('slot 140', () => slotOf() === 140);
    const marks = await markTimesByPartition(log, TOPICS.swaps.name);
    const blockTime = (slot: number) => (1_700_000_000 + slot) * 1000;
    for (const [partition, times] of marks.entries()) {
      // Blocks come as streamed, a mark every 2 s of them: the last within 2 s of slot 140, although
      // slot 108 traded last.
      assert.ok(Math.max(...times) > blockTime(140) - 2_000, `partition ${partition}: ${times.join(', ')}`);
    }
  });

  it('resumes after a restart mid-stream from the cursor + 1: nothing lost, nothing doubled', async () => {
    const chain = createChain(server);
    chain.extend(100, 120);
    // The first instance "crashes" on its third batch: the publish never returns.
    let calls = 0;
    const first = createSolanaGeyserSource(ctx, {
      url: server.url,
      decoder: createSolanaDecoder(),
      publisher: { publish: (records) => (++calls === 3 ? new Promise<void>(() => {}) : publisher.publish(records)) },
      cursors,
      fromSlot: 101,
      batchSize: 3,
    });
    void first.start();
    await waitFor('the hung batch', () => calls === 3);
    const acknowledged = slotOf();
    assert.ok(acknowledged >= 102 && acknowledged < 120, 'the cursor stops before the unacknowledged batch');
    start({ batchSize: 3 });
    await waitFor('slot 120', () => slotOf() === 120);
    assert.equal(server.requests[1]!.fromSlot, String(acknowledged + 1));
    await assertPublishedOnce(chain.expected(101, 120));
  });

  it('reopens a dropped stream and a stream carrying a malformed message from the cursor', async () => {
    const chain = createChain(server);
    chain.extend(100, 130, 'main', [110]);
    // The first stream is dropped after seven messages; the second sends bytes that are not a
    // SubscribeUpdate after three.
    server.faults.push(
      { dropAfter: 7 },
      { garbage: { at: 3, bytes: Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0xff]) } },
    );
    const reconnects = ctx.metrics.get('ingest.solana.geyser_reconnects');
    start({ batchSize: 2 });
    await waitFor('slot 130', () => slotOf() === 130);
    await assertPublishedOnce(chain.expected(101, 130));
    assert.ok(server.requests.length >= 3);
    for (const request of server.requests)
      assert.ok(request.fromSlot !== undefined, 'every stream resumes at the cursor');
    assert.ok(ctx.metrics.get('ingest.solana.geyser_reconnects') - reconnects >= 2);
  });

  it('reopens on a block message without what the decoders need, then takes the good one', async () => {
    const chain = createChain(server);
    chain.extend(100, 112);
    const good = server.blocks.get(108)!;
    server.faults.push({
      replace: { slot: 108, block: { ...good, transactions: [{ ...good.transactions[0]!, meta: undefined }] } },
    });
    const malformed = ctx.metrics.get('ingest.solana.geyser_malformed');
    start();
    await waitFor('slot 112', () => slotOf() === 112);
    await assertPublishedOnce(chain.expected(101, 112));
    assert.equal(ctx.metrics.get('ingest.solana.geyser_malformed'), malformed + 1);
  });

  it('reopens a stream that falls silent (stall watchdog)', async () => {
    const chain = createChain(server);
    chain.extend(100, 105);
    server.faults.push({ silent: true });
    const stalls = ctx.metrics.get('ingest.solana.geyser_stalls');
    start({ stallTimeoutMs: 300 });
    await waitFor('slot 105', () => slotOf() === 105);
    assert.equal(ctx.metrics.get('ingest.solana.geyser_stalls'), stalls + 1);
    await assertPublishedOnce(chain.expected(101, 105));
  });

  it('follows a fork to its new branch and counts it', async () => {
    const chain = createChain(server);
    chain.extend(100, 110);
    start();
    await waitFor('slot 110', () => slotOf() === 110);
    const forks = ctx.metrics.get('ingest.solana.forks');
    // 109 and 110 are orphaned: the canonical chain forks after 108.
    chain.extend(108, 113, 'fork');
    await waitFor('slot 113', () => slotOf() === 113);
    assert.equal(ctx.metrics.get('ingest.solana.forks'), forks + 1);
    const ids = await publishedIds();
    for (const id of chain.expected(101, 113)) assert.equal(ids.filter((x) => x === id).length, 1, id);
    // The cursor's remembered chain is the new branch: a later block links to it.
    chain.extend(113, 115, 'fork');
    await waitFor('slot 115', () => slotOf() === 115);
    assert.equal(ctx.metrics.get('ingest.solana.forks'), forks + 1);
  });

  it('follows the tip when the node no longer holds the slots after the cursor, logging the loss', async () => {
    const chain = createChain(server);
    chain.extend(100, 110);
    server.oldestReplay = 105;
    const refused = ctx.metrics.get('ingest.solana.geyser_resume_refused');
    start();
    await waitFor('the refusal', () => ctx.metrics.get('ingest.solana.geyser_resume_refused') === refused + 1);
    await waitFor('a stream from the tip', () => server.requests.some((request) => request.fromSlot === undefined));
    chain.extend(110, 114);
    await waitFor('slot 114', () => slotOf() === 114);
    await assertPublishedOnce(chain.expected(111, 114));
  });
});
