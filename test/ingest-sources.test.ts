import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodeFunctionResult, parseAbi, toFunctionSelector, type Hex } from 'viem';
import { CHAIN_INFO } from '../core/chains.ts';
import { loadConfig } from '../core/config.ts';
import { createContext, type Context } from '../core/context.ts';
import { createEmbeddedLog } from '../core/eventlog/embedded.ts';
import type { EventLog } from '../core/eventlog/types.ts';
import { createLogger } from '../core/logger.ts';
import { ALL_TOPICS, TOPICS, type RawSwap, type TokenEvent } from '../core/topics.ts';
import { createCursorStore, type CursorStore } from '../ingest/cursor-store.ts';
import { createEvmDecoder } from '../ingest/evm/decoder.ts';
import { encodeV2Swap, seedAddress, seedHash, sortTokens, type EncodedLog } from '../ingest/evm/encode.ts';
import { createTokenRegistry } from '../ingest/evm/registry.ts';
import { createIngestPublisher } from '../ingest/publisher.ts';
import { base58Encode } from '../ingest/solana/base58.ts';
import { encodeFields } from '../ingest/solana/borsh.ts';
import { buildTransaction, emitEvent } from '../ingest/solana/build.ts';
import { PROGRAMS } from '../ingest/solana/constants.ts';
import { createSolanaDecoder } from '../ingest/solana/decoder.ts';
import { PUMP_TRADE } from '../ingest/solana/layouts.ts';
import type { SolanaTransaction } from '../ingest/solana/transaction.ts';
import { createEvmRpcSource } from '../ingest/sources/evm-rpc.ts';
import { createSolanaRpcSource } from '../ingest/sources/solana-rpc.ts';
import { RpcFault, startRecordedRpcServer, type RecordedRpcServer } from './helpers/recorded-rpc-server.ts';

const ctx: Context = createContext(loadConfig({}), createLogger((process.env.TEST_LOG_LEVEL as 'silent') || 'silent'));

async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function readAll<T>(log: EventLog, topic: string): Promise<Array<{ key: string; value: T; timestamp: number }>> {
  const out: Array<{ key: string; value: T; timestamp: number }> = [];
  await log.readToEnd(topic, (message) =>
    out.push({ key: message.key, value: JSON.parse(message.value) as T, timestamp: message.timestamp }),
  );
  return out;
}

const count = (ids: string[]) =>
  ids.reduce((map, id) => map.set(id, (map.get(id) ?? 0) + 1), new Map<string, number>());

/** Every id of `expected` exactly once in `actual`. */
function assertExactlyOnce(actual: string[], expected: string[]): void {
  const counts = count(actual);
  for (const id of expected) assert.equal(counts.get(id), 1, `${id} published ${counts.get(id) ?? 0} times`);
}

/** Journals produce calls and acknowledgements of a real log, to check the publish order. */
function journaling(
  log: EventLog,
  journal: Array<{ at: 'start' | 'ack'; topic: string; values: any[] }>,
  failFirst = 0,
): EventLog {
  let failures = failFirst;
  return {
    kind: log.kind,
    ensureTopics: (specs) => log.ensureTopics(specs),
    async produce(topic, messages) {
      if (failures > 0) {
        failures--;
        throw new Error('broker unavailable');
      }
      const values = messages.map((message) => JSON.parse(message.value));
      journal.push({ at: 'start', topic, values });
      await log.produce(topic, messages);
      journal.push({ at: 'ack', topic, values });
    },
    consumer: (options) => log.consumer(options),
    readToEnd: (topic, onMessage) => log.readToEnd(topic, onMessage),
    endOffsets: (topic) => log.endOffsets(topic),
    close: () => log.close(),
  };
}

describe('ingest sources', () => {
  let dir: string;
  let log: EventLog;
  let cursors: CursorStore;
  let server: RecordedRpcServer;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-ingest-'));
    log = createEmbeddedLog(ctx, { path: path.join(dir, 'log.sqlite') });
    await log.ensureTopics(ALL_TOPICS);
    cursors = createCursorStore(ctx, { path: path.join(dir, 'cursors.sqlite') });
    server = await startRecordedRpcServer();
  });

  afterEach(async () => {
    await server.close();
    cursors.close();
    await log.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('publisher', () => {
    const position = (i: number) => ({
      id: `base:0x${i.toString(16).padStart(64, '0')}:0`,
      chain: 'base' as const,
      transactionHash: `0x${i.toString(16).padStart(64, '0')}`,
      eventIndex: 0,
      blockNumber: 10 + i,
      blockTime: 1_700_000_000_000 + i,
    });
    const token = '0x' + 'ab'.repeat(20);
    const swap = (i: number): RawSwap => ({
      ...position(i),
      token,
      quoteAsset: CHAIN_INFO.base.native.wrapped,
      tokenAmount: '1000',
      tokenDecimals: 18,
      quoteAmount: '5',
      quoteDecimals: 18,
      side: 'buy',
      trader: '0x' + '11'.repeat(20),
      pool: '0x' + '22'.repeat(20),
      dex: 'uniswap-v2',
      launchpad: null,
    });
    const created: TokenEvent = {
      ...position(0),
      kind: 'created',
      token,
      name: 'Token',
      symbol: 'TKN',
      uri: '',
      decimals: 18,
      supply: '1000000',
      creator: '0x' + '33'.repeat(20),
      launchpad: null,
      pool: null,
      quoteAsset: null,
    };
    const funding: TokenEvent = {
      ...position(1),
      kind: 'funding',
      token: null,
      from: '0x' + '44'.repeat(20),
      to: '0x' + '55'.repeat(20),
      amount: '7',
      fromLabel: null,
    };

    it('acknowledges token events before producing swaps, keys and stamps every record, and retries failed produces', async () => {
      const journal: Array<{ at: 'start' | 'ack'; topic: string; values: any[] }> = [];
      const publisher = createIngestPublisher(ctx, { log: journaling(log, journal, 2), retryMinDelayMs: 5 });
      const first = publisher.publish({ swaps: [swap(1), swap(2)], events: [created, funding] });
      const second = publisher.publish({ swaps: [swap(3)], events: [] });
      await Promise.all([first, second]);
      await publisher.flush();

      const eventsAck = journal.findIndex((entry) => entry.at === 'ack' && entry.topic === TOPICS.tokenEvents.name);
      const swapsStart = journal.findIndex((entry) => entry.at === 'start' && entry.topic === TOPICS.swaps.name);
      assert.ok(
        eventsAck >= 0 && swapsStart > eventsAck,
        'token events acknowledged before the first swap is produced',
      );

      const events = await readAll<TokenEvent>(log, TOPICS.tokenEvents.name);
      assert.deepEqual(
        events.map((event) => [event.key, event.value.kind, event.timestamp]),
        [
          [`base:${token}`, 'created', created.blockTime],
          [`base:${'0x' + '55'.repeat(20)}`, 'funding', funding.blockTime],
        ],
      );
      const swaps = await readAll<RawSwap>(log, TOPICS.swaps.name);
      assert.deepEqual(
        swaps.map((entry) => entry.value.id),
        [swap(1).id, swap(2).id, swap(3).id],
      );
      assert.ok(swaps.every((entry) => entry.key === `base:${token}` && entry.timestamp === entry.value.blockTime));
      assert.equal(ctx.metrics.get('ingest.produce_retries') >= 2, true);
    });

    it('sends an idle burst at the end of its turn, without a linger, and batches only while a send is in flight', async () => {
      const journal: Array<{ at: 'start' | 'ack'; topic: string; values: any[] }> = [];
      const real = journaling(log, journal);
      // Holds the swaps produce of the first send until released: that send is "in flight".
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let holdNext = true;
      const gated: EventLog = {
        ...real,
        async produce(topic, messages) {
          if (holdNext && topic === TOPICS.swaps.name) {
            holdNext = false;
            journal.push({ at: 'start', topic, values: messages.map((m) => JSON.parse(m.value)) });
            await held;
            await log.produce(topic, messages);
            journal.push({ at: 'ack', topic, values: [] });
            return;
          }
          return real.produce(topic, messages);
        },
      };
      const publisher = createIngestPublisher(ctx, { log: gated });
      const swapStarts = () =>
        journal
          .filter((e) => e.at === 'start' && e.topic === TOPICS.swaps.name)
          .map((e) => e.values.map((v: RawSwap) => v.id));
      // One burst (two calls in one turn) goes out as one produce, before any timer could fire.
      const burst = [
        publisher.publish({ swaps: [swap(1)], events: [] }),
        publisher.publish({ swaps: [swap(2)], events: [] }),
      ];
      assert.deepEqual(swapStarts(), [], 'nothing is sent inside the caller’s turn');
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(swapStarts(), [[swap(1).id, swap(2).id]], 'the burst is sent by the next macrotask, no linger');
      // While that send is in flight, later calls wait and then go out together.
      const later = [publisher.publish({ swaps: [swap(3)], events: [] })];
      await new Promise((resolve) => setImmediate(resolve));
      later.push(publisher.publish({ swaps: [swap(4)], events: [] }));
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(swapStarts().length, 1, 'no second send while the first is in flight');
      release();
      await Promise.all([...burst, ...later]);
      assert.deepEqual(swapStarts(), [
        [swap(1).id, swap(2).id],
        [swap(3).id, swap(4).id],
      ]);
      // Idle again: a lone record is sent by the next macrotask.
      const lone = publisher.publish({ swaps: [swap(5)], events: [] });
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(swapStarts()[2], [swap(5).id]);
      await lone;
      assert.deepEqual(
        (await readAll<RawSwap>(log, TOPICS.swaps.name)).map((e) => e.value.id),
        [1, 2, 3, 4, 5].map((i) => swap(i).id),
      );
    });

    it('refuses a call holding an invalid record and publishes none of it', async () => {
      const publisher = createIngestPublisher(ctx, { log });
      const broken = { ...swap(4), tokenAmount: '-1' };
      assert.throws(() => publisher.publish({ swaps: [swap(5), broken], events: [] }), /spot\.swaps\.v1/);
      await publisher.flush();
      assert.equal((await readAll(log, TOPICS.swaps.name)).length, 0);
    });
  });

  describe('EVM JSON-RPC source', () => {
    const chain = 'base' as const;
    const WETH = CHAIN_INFO.base.native.wrapped.toLowerCase();
    const TOKEN = seedAddress('ingest-test-token');
    const PAIR = seedAddress('ingest-test-pair');
    const FACTORY = '0x8909dc15e40173ff4699343b6eb8132c65e18ec6';
    const TRADER = seedAddress('ingest-test-trader');
    const ROUTER = seedAddress('ingest-test-router');
    const [token0] = sortTokens(TOKEN, WETH);
    const tokenIs0 = token0 === TOKEN.toLowerCase();
    const VIEWS = parseAbi([
      'function token0() view returns (address)',
      'function token1() view returns (address)',
      'function factory() view returns (address)',
      'function decimals() view returns (uint8)',
      'function symbol() view returns (string)',
      'function name() view returns (string)',
      'function totalSupply() view returns (uint256)',
    ]);

    interface Block {
      number: number;
      hash: Hex;
      parentHash: Hex;
      timestamp: number;
      txs: Array<{ hash: Hex; logs: EncodedLog[] }>;
    }
    let blocks: Block[];
    let head: number;

    /** A buy (WETH in, TOKEN out) or a sell through the pair. */
    function swapLog(buy: boolean, n: bigint): EncodedLog {
      const tokenAmount = n * 10n ** 18n;
      const wethAmount = n * 10n ** 15n;
      const [in0, in1, out0, out1] = buy
        ? tokenIs0
          ? [0n, wethAmount, tokenAmount, 0n]
          : [wethAmount, 0n, 0n, tokenAmount]
        : tokenIs0
          ? [tokenAmount, 0n, 0n, wethAmount]
          : [0n, tokenAmount, wethAmount, 0n];
      return encodeV2Swap({
        pair: PAIR,
        sender: ROUTER,
        to: TRADER,
        amount0In: in0,
        amount1In: in1,
        amount0Out: out0,
        amount1Out: out1,
      });
    }

    /** Appends a block of `swapsPerTx` transactions on `branch`; returns the ids its swaps get. */
    function addBlock(branch: string, swapsPerTx: number[]): string[] {
      const number = blocks.length;
      const ids: string[] = [];
      let logIndex = 0;
      const txs = swapsPerTx.map((swaps, t) => {
        const hash = seedHash(`${branch}:tx:${number}:${t}`);
        const logs = Array.from({ length: swaps }, (_, s) =>
          swapLog((number + s) % 3 !== 0, BigInt(number * 10 + s + 1)),
        );
        for (let s = 0; s < swaps; s++) ids.push(`${chain}:${hash}:${logIndex++}`);
        return { hash, logs };
      });
      blocks.push({
        number,
        hash: seedHash(`${branch}:block:${number}`),
        parentHash: blocks[number - 1]?.hash ?? `0x${'0'.repeat(64)}`,
        timestamp: 1_700_000_000 + number * 2,
        txs,
      });
      return ids;
    }

    const hex = (n: number) => `0x${n.toString(16)}`;

    /** eth_getLogs answers "too many results" for wider ranges, like hosted nodes do. */
    let maxLogRange = Infinity;

    function serveChain(): void {
      const rpcBlock = (block: Block, full: boolean) => ({
        number: hex(block.number),
        hash: block.hash,
        parentHash: block.parentHash,
        timestamp: hex(block.timestamp),
        transactions: block.txs.map((tx) => (full ? { hash: tx.hash, from: TRADER, to: ROUTER } : tx.hash)),
      });
      server.handle('eth_blockNumber', () => hex(head));
      server.handle('eth_getBlockByNumber', ([n, full]: [string, boolean]) => {
        const block = blocks[Number(n)];
        return block && block.number <= head ? rpcBlock(block, full) : null;
      });
      server.handle(
        'eth_getLogs',
        ([filter]: [{ fromBlock: string; toBlock: string; address?: string[]; topics?: string[][] }]) => {
          if (Number(filter.toBlock) - Number(filter.fromBlock) + 1 > maxLogRange)
            throw new RpcFault(-32005, 'query returned more than 10000 results');
          const out = [];
          for (let n = Number(filter.fromBlock); n <= Math.min(Number(filter.toBlock), head); n++) {
            const block = blocks[n]!;
            let logIndex = 0;
            for (const [t, tx] of block.txs.entries()) {
              for (const entry of tx.logs) {
                const index = logIndex++;
                if (filter.address && !filter.address.includes(entry.address)) continue;
                if (filter.topics && !filter.topics[0]!.includes(entry.topics[0]!)) continue;
                out.push({
                  ...entry,
                  blockHash: block.hash,
                  blockNumber: hex(n),
                  transactionHash: tx.hash,
                  transactionIndex: hex(t),
                  logIndex: hex(index),
                  removed: false,
                });
              }
            }
          }
          return out;
        },
      );
      const views: Record<string, { fn: (typeof VIEWS)[number]['name']; value: unknown }> = {};
      const view = (to: string, fn: (typeof VIEWS)[number]['name'], value: unknown) =>
        (views[`${to.toLowerCase()}:${fn}`] = { fn, value });
      view(PAIR, 'token0', sortTokens(TOKEN, WETH)[0]);
      view(PAIR, 'token1', sortTokens(TOKEN, WETH)[1]);
      view(PAIR, 'factory', FACTORY);
      view(TOKEN, 'decimals', 18);
      view(TOKEN, 'symbol', 'TKN');
      view(TOKEN, 'name', 'Test Token');
      view(TOKEN, 'totalSupply', 10n ** 27n);
      server.handle('eth_call', ([call]: [{ to: string; data: string }]) => {
        for (const item of VIEWS) {
          const entry = views[`${call.to.toLowerCase()}:${item.name}`];
          if (entry && call.data === toFunctionSelector(item)) {
            return encodeFunctionResult({ abi: VIEWS, functionName: entry.fn, result: entry.value } as Parameters<
              typeof encodeFunctionResult
            >[0]);
          }
        }
        throw new Error('execution reverted');
      });
    }

    beforeEach(() => {
      maxLogRange = Infinity;
      blocks = [];
      head = 0;
      addBlock('main', []);
    });

    async function published(): Promise<string[]> {
      return (await readAll<RawSwap>(log, TOPICS.swaps.name)).map((entry) => entry.value.id);
    }

    it('decodes a range of blocks, resolves the unknown pool and token, and publishes created before the swaps, in order', async () => {
      const expected: string[] = [];
      for (let n = 1; n <= 30; n++) expected.push(...addBlock('main', n % 4 === 0 ? [] : n % 5 === 0 ? [2, 1] : [1]));
      head = 32; // blocks 31..32 are not confirmed yet (confirmations 2)
      maxLogRange = 5; // the source's 8-block ranges are refused and halved
      addBlock('main', [1]);
      addBlock('main', [1]);
      serveChain();
      const journal: Array<{ at: 'start' | 'ack'; topic: string; values: any[] }> = [];
      const publisher = createIngestPublisher(ctx, { log: journaling(log, journal) });
      const decoder = createEvmDecoder({ chain, tokens: createTokenRegistry() });
      const source = createEvmRpcSource(ctx, {
        chain,
        url: server.url,
        decoder,
        publisher,
        confirmations: 2,
        fromBlock: 1,
        pollIntervalMs: 20,
        maxRange: 8,
        cursors,
      });
      await source.start();
      try {
        await waitFor('30 blocks of swaps', async () => (await published()).length >= expected.length);
      } finally {
        await source.stop();
      }
      assert.deepEqual(await published(), expected);
      const swaps = await readAll<RawSwap>(log, TOPICS.swaps.name);
      assert.equal(swaps[0]!.value.token, TOKEN.toLowerCase());
      assert.equal(swaps[0]!.value.quoteAsset, WETH);
      assert.equal(swaps[0]!.value.dex, 'uniswap-v2');
      assert.equal(swaps[0]!.value.trader, TRADER.toLowerCase());
      assert.equal(swaps[0]!.value.blockTime, (1_700_000_000 + 2) * 1000);

      const events = await readAll<TokenEvent>(log, TOPICS.tokenEvents.name);
      const created = events.filter((entry) => entry.value.kind === 'created');
      assert.equal(created.length, 1, 'one created event for the token first seen');
      assert.deepEqual(
        (({ name, symbol, decimals, supply, launchpad, pool, quoteAsset }) => ({
          name,
          symbol,
          decimals,
          supply,
          launchpad,
          pool,
          quoteAsset,
        }))(created[0]!.value as any),
        {
          name: 'Test Token',
          symbol: 'TKN',
          decimals: 18,
          supply: (10n ** 27n).toString(),
          launchpad: null,
          pool: PAIR.toLowerCase(),
          quoteAsset: WETH,
        },
      );
      const createdAck = journal.findIndex(
        (entry) => entry.at === 'ack' && entry.values.some((value) => value.kind === 'created'),
      );
      const firstSwap = journal.findIndex((entry) => entry.at === 'start' && entry.topic === TOPICS.swaps.name);
      assert.ok(createdAck >= 0 && createdAck < firstSwap, 'created acknowledged before the first swap is produced');
      assert.equal(cursors.get<{ block: number }>('evm:base')?.block, 30);
      assert.ok(
        server.calls.some(
          (call) =>
            call.method === 'eth_getLogs' && Number(call.params[0].toBlock) - Number(call.params[0].fromBlock) === 7,
        ),
        'tried 8-block ranges',
      );
    });

    it('rolls back a reorg to the fork point and publishes the new branch without re-emitting orphaned records', async () => {
      const kept: string[] = [];
      for (let n = 1; n <= 8; n++) kept.push(...addBlock('main', [1]));
      const orphaned = [...addBlock('main', [1, 1]), ...addBlock('main', [2])];
      head = 12;
      addBlock('main', [1]);
      addBlock('main', [1]);
      serveChain();
      const publisher = createIngestPublisher(ctx, { log });
      const decoder = createEvmDecoder({ chain, tokens: createTokenRegistry() });
      const source = createEvmRpcSource(ctx, {
        chain,
        url: server.url,
        decoder,
        publisher,
        confirmations: 2,
        fromBlock: 1,
        pollIntervalMs: 20,
        cursors,
      });
      await source.start();
      try {
        await waitFor('blocks 1..10', async () => (await published()).length >= kept.length + orphaned.length);
        // Blocks 9.. are replaced by another branch (a reorg deeper than the confirmation depth).
        blocks.length = 9;
        const fresh: string[] = [];
        for (let n = 9; n <= 14; n++) fresh.push(...(n <= 12 ? addBlock('fork', [1]) : (addBlock('fork', [1]), [])));
        head = 14;
        await waitFor('the new branch', async () => {
          const ids = await published();
          return fresh.every((id) => ids.includes(id));
        });
        const ids = await published();
        assertExactlyOnce(ids, [...kept, ...orphaned, ...fresh]);
        assert.equal(ids.length, kept.length + orphaned.length + fresh.length, 'nothing else published');
        assert.deepEqual(
          ids.slice(kept.length + orphaned.length),
          fresh,
          'new branch in order after the orphaned records',
        );
        assert.equal(ctx.metrics.get('ingest.evm.base.reorgs') >= 1, true);
        const cursor = cursors.get<{ block: number; hashes: Array<[number, string]> }>('evm:base')!;
        assert.equal(cursor.block, 12);
        assert.deepEqual(
          cursor.hashes.find(([n]) => n === 9),
          [9, blocks[9]!.hash],
        );
      } finally {
        await source.stop();
      }
    });

    it('follows newHeads over WebSocket, survives a dropped socket and resumes without gaps or duplicates', async () => {
      const expected: string[] = [];
      for (let n = 1; n <= 5; n++) expected.push(...addBlock('main', [1]));
      head = 5;
      serveChain();
      const publisher = createIngestPublisher(ctx, { log });
      const decoder = createEvmDecoder({ chain, tokens: createTokenRegistry() });
      // A poll interval far beyond the test: progress after start comes from newHeads and reconnects.
      const source = createEvmRpcSource(ctx, {
        chain,
        url: server.wsUrl,
        decoder,
        publisher,
        confirmations: 0,
        fromBlock: 1,
        pollIntervalMs: 600_000,
        cursors,
      });
      const newHead = () =>
        server.notify('eth_subscribe', {
          number: hex(head),
          hash: blocks[head]!.hash,
          parentHash: blocks[head]!.parentHash,
        });
      await source.start();
      try {
        await waitFor('the newHeads subscription', () => server.subscriptions('eth_subscribe').length === 1);
        await waitFor('blocks 1..5', async () => (await published()).length >= expected.length);
        for (let n = 6; n <= 8; n++) {
          expected.push(...addBlock('main', [1]));
          head = n;
          newHead();
          await waitFor(`block ${n}`, async () => (await published()).length >= expected.length);
        }
        server.acceptWebSockets = false;
        server.dropSockets();
        for (let n = 9; n <= 12; n++) expected.push(...addBlock('main', n === 10 ? [2] : [1]));
        head = 12;
        server.acceptWebSockets = true;
        await waitFor('the resubscription', () => server.subscriptions('eth_subscribe').length === 1);
        await waitFor('blocks 9..12 after the reconnect', async () => (await published()).length >= expected.length);
        expected.push(...addBlock('main', [1]));
        head = 13;
        newHead();
        await waitFor('block 13', async () => (await published()).length >= expected.length);
      } finally {
        await source.stop();
      }
      const ids = await published();
      assertExactlyOnce(ids, expected);
      assert.deepEqual(ids, expected);
      assert.equal(
        server.calls.filter((call) => call.method === 'eth_subscribe').length,
        2,
        'subscribed again after the drop',
      );
      assert.ok(
        server.calls.some((call) => call.transport === 'ws' && call.method === 'eth_getLogs'),
        'calls go over the socket',
      );
    });
  });

  describe('Solana RPC source', () => {
    const key = (seed: number) => base58Encode(Buffer.alloc(32, seed));
    const MINT = key(7);
    const USER = key(9);
    const PUMP = PROGRAMS.pumpfun;
    const PUMPSWAP = PROGRAMS.pumpswap;
    const decoder = createSolanaDecoder();

    interface Tx {
      signature: string;
      slot: number;
      programs: string[];
      tx: SolanaTransaction;
      err: unknown;
    }
    let txs: Tx[];
    let nullOnce: Set<string>;
    const served = new Map<string, number>();

    function makeTx(i: number, programs: string[] = [PUMP], err: unknown = null): Tx {
      const signature = base58Encode(
        Buffer.concat([Buffer.from(seedHash(`sol:${i}`).slice(2), 'hex'), Buffer.alloc(32, i)]),
      );
      const slot = 1000 + i * 3;
      const event = encodeFields(
        PUMP_TRADE,
        {
          mint: MINT,
          solAmount: BigInt(i) * 1_000_000n,
          tokenAmount: BigInt(i) * 35_000_000_000n,
          isBuy: i % 3 !== 0,
          user: USER,
          timestamp: BigInt(1_700_000_000 + i),
          virtualSolReserves: 30_000_000_000n + BigInt(i),
          virtualTokenReserves: 1_000_000_000_000_000n,
          realSolReserves: BigInt(i) * 1_000_000n,
          realTokenReserves: 793_000_000_000_000n,
        },
        10,
      );
      const tx = buildTransaction({
        signature,
        slot,
        blockTime: 1_700_000_000 + i,
        err: err ?? undefined,
        instructions: [
          {
            programId: PUMP,
            accounts: [USER, MINT],
            data: Buffer.from('66063d1201daebea', 'hex'),
            body: emitEvent(PUMP, event, 'cpi'),
          },
        ],
      });
      return { signature, slot, programs, tx, err };
    }

    function serve(): void {
      server.handle('getTransaction', ([signature]: [string]) => {
        const entry = txs.find((tx) => tx.signature === signature);
        if (!entry) return null;
        if (nullOnce.delete(signature)) return null;
        served.set(signature, (served.get(signature) ?? 0) + 1);
        return entry.tx;
      });
      server.handle(
        'getSignaturesForAddress',
        ([address, options]: [string, { until?: string; before?: string; limit?: number }]) => {
          const newestFirst = txs.filter((tx) => tx.programs.includes(address)).reverse();
          let start = 0;
          if (options.before) start = newestFirst.findIndex((tx) => tx.signature === options.before) + 1;
          const out = [];
          for (const tx of newestFirst.slice(start)) {
            if (tx.signature === options.until || out.length >= (options.limit ?? 1000)) break;
            out.push({
              signature: tx.signature,
              slot: tx.slot,
              err: tx.err,
              blockTime: 1_700_000_000,
              memo: null,
              confirmationStatus: 'confirmed',
            });
          }
          return out;
        },
      );
    }

    /** Records the server holds; `notify` also pushes the logs notification to live subscriptions. */
    function arrive(tx: Tx, notify: boolean): void {
      txs.push(tx);
      if (!notify) return;
      for (const program of tx.programs) notifyOf(tx, program);
    }

    function notifyOf(tx: Tx, program: string): void {
      server.notify(
        'logsSubscribe',
        { context: { slot: tx.slot }, value: { signature: tx.signature, err: tx.err, logs: [] } },
        (params) => params[0].mentions[0] === program,
      );
    }

    const idsOf = (list: Tx[]) => list.flatMap((tx) => decoder.decodeTransaction(tx.tx).swaps.map((swap) => swap.id));

    async function published(): Promise<string[]> {
      return (await readAll<RawSwap>(log, TOPICS.swaps.name)).map((entry) => entry.value.id);
    }

    beforeEach(() => {
      txs = [];
      nullOnce = new Set();
      served.clear();
    });

    it('fetches notified transactions, retries one not served yet, fills a dropped connection’s gap and processes every signature once', async () => {
      serve();
      const publisher = createIngestPublisher(ctx, { log });
      const source = createSolanaRpcSource(ctx, {
        url: server.url,
        wsUrl: server.wsUrl,
        decoder,
        publisher,
        programs: [PUMP, PUMPSWAP],
        cursors,
        gapPageSize: 2,
        fetchRetryDelayMs: 10,
      });
      await source.start();
      try {
        await waitFor('two logs subscriptions', () => server.subscriptions('logsSubscribe').length === 2);
        const live = [1, 2, 3, 4, 5].map((i) => makeTx(i, i === 4 ? [PUMP, PUMPSWAP] : [PUMP]));
        nullOnce.add(live[2]!.signature);
        for (const tx of live) arrive(tx, true);
        const failed = makeTx(6, [PUMP], { InstructionError: [0, 'Custom'] });
        arrive(failed, true);
        assert.equal(idsOf(live).length, 5, 'one swap per fixture transaction');
        await waitFor('the live transactions', async () => (await published()).length >= 5);
        await waitFor(
          'the failed transaction to move the cursor',
          () => cursors.get<{ signatures: Record<string, string> }>('solana')?.signatures[PUMP] === failed.signature,
        );

        // The socket drops while transactions keep landing; reconnects are refused for a while.
        server.acceptWebSockets = false;
        server.dropSockets();
        const gap = [7, 8, 9, 10, 11].map((i) => makeTx(i));
        for (const tx of gap) arrive(tx, false);
        server.acceptWebSockets = true;
        await waitFor('the resubscription', () => server.subscriptions('logsSubscribe').length === 2);
        const after = [12, 13].map((i) => makeTx(i));
        for (const tx of after) arrive(tx, true);
        notifyOf(gap[1]!, PUMP); // a late duplicate of a gap transaction
        notifyOf(live[0]!, PUMP); // and of one processed long ago: must not move the cursor back
        // Transactions are published in arrival order: once the last one is out, every repeat before it was handled.
        const sentinel = makeTx(14);
        arrive(sentinel, true);
        const all = [...live, ...gap, ...after, sentinel];
        await waitFor('the gap and the later transactions', async () =>
          (await published()).includes(idsOf([sentinel])[0]!),
        );
        const ids = await published();
        assertExactlyOnce(ids, idsOf(all));
        assert.equal(ids.length, idsOf(all).length);
        assert.deepEqual(ids, idsOf(all), 'published in chain order');
        for (const tx of all)
          assert.equal(served.get(tx.signature), 1, `getTransaction answered once for ${tx.signature}`);
        assert.equal(served.has(failed.signature), false, 'failed transactions are not fetched');
        const gapCalls = server.calls.filter(
          (call) => call.method === 'getSignaturesForAddress' && call.params[0] === PUMP,
        );
        assert.equal(gapCalls[0]!.params[1].until, failed.signature, 'gap filled from the last signature seen');
        assert.ok(gapCalls.length >= 3, 'paged backwards with the page size');
      } finally {
        await source.stop();
      }
      const cursor = cursors.get<{ slot: number; signatures: Record<string, string> }>('solana')!;
      assert.equal(cursor.signatures[PUMP], txs[txs.length - 1]!.signature);
      assert.equal(cursor.slot, txs[txs.length - 1]!.slot);
    });

    it('resumes after a restart from the stored cursor', async () => {
      serve();
      const first = [1, 2].map((i) => makeTx(i));
      const options = {
        url: server.url,
        wsUrl: server.wsUrl,
        decoder,
        programs: [PUMP],
        cursors,
        fetchRetryDelayMs: 10,
      };
      let source = createSolanaRpcSource(ctx, { ...options, publisher: createIngestPublisher(ctx, { log }) });
      await source.start();
      await waitFor('the subscription', () => server.subscriptions('logsSubscribe').length === 1);
      for (const tx of first) arrive(tx, true);
      await waitFor('the first transactions', async () => (await published()).length >= 2);
      await source.stop();
      const missed = [3, 4, 5].map((i) => makeTx(i));
      for (const tx of missed) arrive(tx, false);
      source = createSolanaRpcSource(ctx, { ...options, publisher: createIngestPublisher(ctx, { log }) });
      await source.start();
      try {
        await waitFor('the missed transactions', async () => (await published()).length >= 5);
      } finally {
        await source.stop();
      }
      assert.deepEqual(await published(), idsOf([...first, ...missed]));
    });
  });
});
