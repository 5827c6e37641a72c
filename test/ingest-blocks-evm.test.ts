// The EVM source by block against a recorded node: funding from the full transactions of every
// block, Transfers of traded tokens between wallets, bounded calls per block, bad answers.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Hex } from 'viem';
import { CHAIN_INFO } from '../core/chains.ts';
import { loadConfig } from '../core/config.ts';
import { createContext, type Context } from '../core/context.ts';
import { createEmbeddedLog } from '../core/eventlog/embedded.ts';
import type { EventLog } from '../core/eventlog/types.ts';
import { createLogger } from '../core/logger.ts';
import { ALL_TOPICS, TOPICS, type RawSwap, type TokenEvent } from '../core/topics.ts';
import { createCursorStore, type CursorStore, type EvmCursor } from '../ingest/cursor-store.ts';
import { createEvmDecoder } from '../ingest/evm/decoder.ts';
import {
  encodePairCreated,
  encodeTransfer,
  encodeV2Swap,
  seedAddress,
  seedHash,
  sortTokens,
  type EncodedLog,
} from '../ingest/evm/encode.ts';
import { createPoolRegistry, createTokenRegistry } from '../ingest/evm/registry.ts';
import { createIngestPublisher } from '../ingest/publisher.ts';
import { createEvmRpcSource } from '../ingest/sources/evm-rpc.ts';
import type { ChainSource } from '../ingest/sources/solana-rpc.ts';
import { markTimesByPartition } from './helpers/chain-marks.ts';
import { startRecordedRpcServer, type RecordedRpcServer } from './helpers/recorded-rpc-server.ts';

const ctx: Context = createContext(loadConfig({}), createLogger((process.env.TEST_LOG_LEVEL as 'silent') || 'silent'));
const chain = 'base' as const;
const WETH = CHAIN_INFO.base.native.wrapped.toLowerCase();
const TOKEN = seedAddress('evm-blocks/token');
const PAIR = seedAddress('evm-blocks/pair');
const TRADER = seedAddress('evm-blocks/trader');
const ROUTER = seedAddress('evm-blocks/router');
const FUNDER = seedAddress('evm-blocks/funder');
const OTHER = seedAddress('evm-blocks/other');
const [token0, token1] = sortTokens(TOKEN, WETH);
const hex = (n: number | bigint) => `0x${n.toString(16)}`;

async function waitFor(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Tx {
  hash: Hex;
  from: string;
  to: string;
  value: bigint;
  input: string;
  logs: EncodedLog[];
}

/** Block n: a buy through the pair; every third a value transfer; every fourth a wallet-to-wallet Transfer of TOKEN. */
function txsOf(n: number): Tx[] {
  const buy = encodeV2Swap({
    pair: PAIR,
    sender: ROUTER,
    to: TRADER,
    amount0In: token0 === TOKEN ? 0n : 10n ** 15n,
    amount1In: token0 === TOKEN ? 10n ** 15n : 0n,
    amount0Out: token0 === TOKEN ? BigInt(n) * 10n ** 18n : 0n,
    amount1Out: token0 === TOKEN ? 0n : BigInt(n) * 10n ** 18n,
  });
  const txs: Tx[] = [
    { hash: seedHash(`evm-blocks/swap/${n}`), from: TRADER, to: ROUTER, value: 0n, input: '0x38ed1739', logs: [buy] },
  ];
  if (n % 3 === 0)
    txs.push({
      hash: seedHash(`evm-blocks/fund/${n}`),
      from: FUNDER,
      to: OTHER,
      value: 10n ** 16n * BigInt(n),
      input: '0x',
      logs: [],
    });
  if (n % 4 === 0)
    txs.push({
      hash: seedHash(`evm-blocks/move/${n}`),
      from: TRADER,
      to: TOKEN,
      value: 0n,
      input: '0xa9059cbb',
      logs: [encodeTransfer({ token: TOKEN, from: TRADER, to: OTHER, value: 5n * 10n ** 17n })],
    });
  return txs;
}

const LAUNCHED = seedAddress('evm-blocks/launched');
const V2_FACTORY = '0x8909dc15e40173ff4699343b6eb8132c65e18ec6';

/** txsOf, and every fifth block a pair creation whose transaction also mints LAUNCHED (a log no eth_getLogs filter names). */
function txsWithCreations(n: number): Tx[] {
  if (n % 5 !== 0) return txsOf(n);
  const [a, b] = sortTokens(LAUNCHED, WETH);
  const created = encodePairCreated({
    factory: V2_FACTORY,
    token0: a,
    token1: b,
    pair: seedAddress(`evm-blocks/new/${n}`),
  });
  const mint = encodeTransfer({ token: LAUNCHED, from: `0x${'0'.repeat(40)}`, to: OTHER, value: BigInt(n) });
  const launch = {
    hash: seedHash(`evm-blocks/launch/${n}`),
    from: TRADER,
    to: V2_FACTORY,
    value: 0n,
    input: '0xc9c65396',
  };
  return [...txsOf(n), { ...launch, logs: [created, mint] }];
}

function serve(server: RecordedRpcServer, head: () => number, txsAt: (n: number) => Tx[] = txsOf) {
  const hashOf = (n: number) => seedHash(`evm-blocks/block/${n}`);
  server.handle('eth_blockNumber', () => hex(head()));
  const getBlock = ([n, full]: [string, boolean]) => {
    const number = Number(n);
    if (number > head()) return null;
    return {
      number: hex(number),
      hash: hashOf(number),
      parentHash: hashOf(number - 1),
      timestamp: hex(1_700_000_000 + number * 2),
      transactions: txsAt(number).map((tx, i) =>
        full
          ? { hash: tx.hash, from: tx.from, to: tx.to, value: hex(tx.value), input: tx.input, transactionIndex: hex(i) }
          : tx.hash,
      ),
    };
  };
  const getLogs = ([filter]: [{ fromBlock: string; toBlock: string; address?: string[]; topics?: string[][] }]) => {
    const out = [];
    for (let n = Number(filter.fromBlock); n <= Math.min(Number(filter.toBlock), head()); n++) {
      let logIndex = 0;
      for (const [t, tx] of txsAt(n).entries()) {
        for (const log of tx.logs) {
          const index = logIndex++;
          if (filter.address && !filter.address.includes(log.address)) continue;
          if (filter.topics && !filter.topics[0]!.includes(log.topics[0]!)) continue;
          out.push({
            ...log,
            blockHash: hashOf(n),
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
  };
  /** Receipts as eth_getTransactionReceipt gives them: every log of the transaction. */
  const receiptsOf = (n: number) => {
    let logIndex = 0;
    return txsAt(n).map((tx, t) => ({
      transactionHash: tx.hash,
      transactionIndex: hex(t),
      blockHash: hashOf(n),
      blockNumber: hex(n),
      from: tx.from,
      to: tx.to,
      status: '0x1',
      logs: tx.logs.map((log) => ({
        ...log,
        blockHash: hashOf(n),
        blockNumber: hex(n),
        transactionHash: tx.hash,
        transactionIndex: hex(t),
        logIndex: hex(logIndex++),
        removed: false,
      })),
    }));
  };
  const getBlockReceipts = ([n]: [string]) => (Number(n) > head() ? null : receiptsOf(Number(n)));
  const getReceipt = ([hash]: [string]) => {
    for (let n = 1; n <= head(); n++) {
      const found = receiptsOf(n).find((receipt) => receipt.transactionHash === hash);
      if (found) return found;
    }
    return null;
  };
  server.handle('eth_getBlockByNumber', getBlock);
  server.handle('eth_getLogs', getLogs);
  return { getBlock, getLogs, getBlockReceipts, getReceipt };
}

describe('evm source by block', () => {
  let dir: string;
  let log: EventLog;
  let cursors: CursorStore;
  let server: RecordedRpcServer;
  let source: ChainSource | null;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-evm-blocks-'));
    log = createEmbeddedLog(ctx, { path: path.join(dir, 'log.sqlite') });
    await log.ensureTopics(ALL_TOPICS);
    cursors = createCursorStore(ctx, { path: path.join(dir, 'cursors.sqlite') });
    server = await startRecordedRpcServer();
    source = null;
  });

  afterEach(async () => {
    await source?.stop();
    await server.close();
    cursors.close();
    await log.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function start(publisher = createIngestPublisher(ctx, { log })): void {
    const tokens = createTokenRegistry();
    tokens.registerToken(chain, TOKEN, { decimals: 18, name: 'Blocks', symbol: 'BLK' });
    tokens.registerToken(chain, LAUNCHED, { decimals: 18, name: 'Launched', symbol: 'LNC' });
    const pools = createPoolRegistry();
    pools.registerPool(chain, { pool: PAIR, token0, token1, dex: 'uniswap-v2', fee: 3000 });
    source = createEvmRpcSource(ctx, {
      chain,
      url: server.url,
      decoder: createEvmDecoder({ chain, tokens, pools }),
      publisher,
      cursors,
      confirmations: 0,
      fromBlock: 1,
      maxRange: 4,
      topics: [
        encodePairCreated({ factory: V2_FACTORY, token0: WETH, token1: TOKEN, pair: PAIR }).topics[0]!,
        encodeV2Swap({
          pair: PAIR,
          sender: ROUTER,
          to: TRADER,
          amount0In: 0n,
          amount1In: 0n,
          amount0Out: 0n,
          amount1Out: 0n,
        }).topics[0]!,
      ],
      pollIntervalMs: 20,
    });
    void source.start();
  }

  const blockOf = () => cursors.get<EvmCursor>(`evm:${chain}`)?.block ?? 0;

  async function published(): Promise<{ swaps: RawSwap[]; events: TokenEvent[] }> {
    const swaps: RawSwap[] = [];
    const events: TokenEvent[] = [];
    await log.readToEnd(TOPICS.swaps.name, (message) => swaps.push(JSON.parse(message.value)));
    await log.readToEnd(TOPICS.tokenEvents.name, (message) => events.push(JSON.parse(message.value)));
    return { swaps, events };
  }

  async function assertAllOnce(last: number): Promise<void> {
    const { swaps, events } = await published();
    assert.deepEqual(
      swaps.map((swap) => swap.blockNumber),
      Array.from({ length: last }, (_, i) => i + 1),
      'one swap per block, in order, none twice',
    );
    const funding = events.filter((event) => event.kind === 'funding');
    assert.deepEqual(
      funding.map((event) => [event.blockNumber, event.from, event.to, event.amount]),
      Array.from({ length: Math.floor(last / 3) }, (_, i) => [
        3 * (i + 1),
        FUNDER,
        OTHER,
        String(10n ** 16n * BigInt(3 * (i + 1))),
      ]),
    );
    // Transfers of TOKEN between wallets reach the log once the token was seen traded (block 1 on).
    const moves = events.filter((event) => event.kind === 'transfer' && event.from === TRADER && event.to === OTHER);
    assert.deepEqual(
      moves.map((event) => event.blockNumber),
      Array.from({ length: Math.floor(last / 4) }, (_, i) => 4 * (i + 1)).filter((n) => n > 4),
    );
  }

  it('funds wallets from value transfers, follows Transfers of traded tokens, one block call per block', async () => {
    let head = 24;
    serve(server, () => head);
    start();
    await waitFor('block 24', () => blockOf() === 24);
    await assertAllOnce(24);
    const blockCalls = server.calls.filter((call) => call.method === 'eth_getBlockByNumber').length;
    assert.ok(blockCalls <= 24, `${blockCalls} eth_getBlockByNumber calls for 24 blocks`);
    head = 30;
    await waitFor('block 30', () => blockOf() === 30);
    await assertAllOnce(30);
  });

  it("marks the chain's progress through blocks without records: the input partitions get the newest block's time", async () => {
    // Blocks 1–8 trade; 9–24 hold nothing the source follows.
    serve(
      server,
      () => 24,
      (n) => (n <= 8 ? txsOf(n) : []),
    );
    start(createIngestPublisher(ctx, { log, markAfterMs: 2_000 }));
    await waitFor('block 24', () => blockOf() === 24);
    const marks = await markTimesByPartition(log, TOPICS.swaps.name, chain);
    const blockTime = (n: number) => (1_700_000_000 + n * 2) * 1000;
    for (const [partition, times] of marks.entries()) {
      // Ranges of 4 blocks (8 s): one mark each, the last at block 24 although block 8 traded last.
      assert.equal(Math.max(...times), blockTime(24), `partition ${partition}: ${times.join(', ')}`);
      assert.ok(times.filter((time) => time > blockTime(8)).length >= 4, `partition ${partition}: ${times.join(', ')}`);
    }
  });

  it('retries 429, 5xx, malformed JSON, dropped sockets and wrong shapes without losing or doubling a record', async () => {
    const honest = serve(server, () => 16);
    server.httpFaults.push(429, 502, 'garbage', 'drop');
    // Wrong shapes: a log list that is an object, then a block whose number is a JS number.
    let badLogs = 2;
    let badBlocks = 2;
    server.handle('eth_getLogs', (params) => (badLogs-- > 0 ? { logs: [] } : honest.getLogs(params)));
    server.handle('eth_getBlockByNumber', (params) =>
      badBlocks-- > 0 ? { number: 5, hash: 'x' } : honest.getBlock(params),
    );
    start();
    await waitFor('block 16', () => blockOf() === 16);
    await assertAllOnce(16);
    assert.equal(server.httpFaults.length, 0, 'every fault was served');
    assert.ok(badLogs < 0 && badBlocks < 0, 'the wrong shapes were served and retried');
  });

  /** The mints of LAUNCHED: only the creation transactions' full receipts carry them. */
  async function mints(): Promise<number[]> {
    const { events } = await published();
    return events
      .filter((event) => event.kind === 'transfer' && event.token === LAUNCHED.toLowerCase())
      .map((event) => event.blockNumber);
  }
  const count = (method: string) => server.calls.filter((call) => call.method === method).length;

  it('reads creation transactions whole with one eth_getBlockReceipts per block that has creations', async () => {
    const node = serve(server, () => 20, txsWithCreations);
    server.handle('eth_getBlockReceipts', node.getBlockReceipts);
    server.handle('eth_getTransactionReceipt', node.getReceipt);
    start();
    await waitFor('block 20', () => blockOf() === 20);
    await assertAllOnce(20);
    assert.deepEqual(await mints(), [5, 10, 15, 20]);
    assert.equal(count('eth_getBlockReceipts'), 4, 'blocks 5, 10, 15, 20');
    assert.equal(count('eth_getTransactionReceipt'), 0);
  });

  it('falls back to eth_getTransactionReceipt on a node without eth_getBlockReceipts, and remembers it', async () => {
    const node = serve(server, () => 20, txsWithCreations);
    server.handle('eth_getTransactionReceipt', node.getReceipt);
    start();
    await waitFor('block 20', () => blockOf() === 20);
    await assertAllOnce(20);
    assert.deepEqual(await mints(), [5, 10, 15, 20]);
    assert.equal(count('eth_getBlockReceipts'), 1, 'answered "method not found" once');
    assert.equal(count('eth_getTransactionReceipt'), 4);
  });
});
