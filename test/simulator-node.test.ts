// The simulator as a local chain node: `spot ingest` with SPOT_SIM_NODE=1 serves the market
// over JSON-RPC and reads it back through the block sources (the code a real node is read with).
// What reaches the log must be exactly what the in-process decoders make of the same market.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startIngest } from '../cli/ingest-role.ts';
import { createRuntime, type Runtime } from '../cli/runtime.ts';
import { CHAINS } from '../core/chains.ts';
import { loadConfig } from '../core/config.ts';
import { createContext } from '../core/context.ts';
import { createEmbeddedLog } from '../core/eventlog/embedded.ts';
import { embeddedLogPath } from '../core/eventlog/index.ts';
import { createLogger } from '../core/logger.ts';
import { TOPICS, isChainMark, type RawSwap, type TokenEvent } from '../core/topics.ts';
import { createAddressSource } from '../ingest/simulator/addresses.ts';
import { createMarket } from '../ingest/simulator/model.ts';
import { startSimulatorNode } from '../ingest/simulator/node.ts';
import { notificationBytes } from '../ingest/simulator/json-bytes.ts';
import { createSolanaNodeChain, NodeFault } from '../ingest/simulator/node-chains.ts';
import { createSimulatorPipeline } from '../ingest/simulator/pipeline.ts';
import { SIMULATOR_LABELS_FILE } from '../ingest/simulator/labels-file.ts';
import { readSimulatorState } from '../ingest/simulator/runner.ts';

const START = Date.UTC(2026, 10, 20, 12, 0, 0);
const WARM_MS = 10 * 60_000;
const SEED = 7;

function context(dataDir: string, extra: Record<string, string> = {}) {
  const config = loadConfig({
    SPOT_DATA_DIR: dataDir,
    SPOT_LOG_LEVEL: 'warn',
    SPOT_SIM_NODE: '1',
    SPOT_SIM_SEED: String(SEED),
    SPOT_SIM_NOW: String(START),
    SPOT_SIM_WARM_HOURS: String(WARM_MS / 3_600_000),
    SPOT_SIM_HISTORY_RATE: '12',
    SPOT_SIM_RATE: '0',
    ...extra,
  });
  return createContext(config, createLogger((process.env.TEST_LOG_LEVEL as 'silent') || 'silent'));
}

/** What the in-process path makes of the same market, batch by batch as node mode advances it. */
function inProcess() {
  const seed = String(SEED);
  const market = createMarket({
    seed,
    chains: [...CHAINS],
    startTime: START - WARM_MS,
    addresses: createAddressSource(seed),
  });
  const pipeline = createSimulatorPipeline({ seed });
  const swaps: RawSwap[] = [];
  const events: TokenEvent[] = [];
  /** Transactions that are chain data (blocks the node serves), by hash or signature. */
  const onChain = new Set<string>();
  for (let at = START - WARM_MS; at < START; ) {
    at = Math.min(START, at + 300_000);
    for (const event of market.advance(at, 12)) {
      for (const record of pipeline.writer.write(event)) {
        if (record.kind === 'solana') onChain.add(record.transaction.transaction.signatures[0]!);
        if (record.kind === 'evm') onChain.add(record.receipt.transactionHash);
        const decoded = pipeline.decoders.decode(record);
        swaps.push(...decoded.swaps);
        events.push(...decoded.events);
      }
    }
  }
  return { swaps, events, onChain };
}

/** Source files (not tests, not benchmarks) under the project root. */
function sourceFiles(root: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(root, { withFileTypes: true })) {
    if (['node_modules', 'test', 'bench', '.git'].includes(entry.name)) continue;
    const full = path.join(root, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (entry.name.endsWith('.ts')) out.push(full);
  }
  return out;
}

const eventKey = (event: TokenEvent) =>
  event.kind === 'walletLabel'
    ? `label:${event.chain}:${event.wallet}:${[...event.labels].sort().join('|')}`
    : event.id;

describe('simulator node', function () {
  this.timeout(120_000);
  let dir: string;
  let runtime: Runtime | null;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-sim-node-'));
    runtime = null;
  });

  afterEach(async () => {
    await runtime?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function runIngest(extra: Record<string, string> = {}, until = START) {
    const ctx = context(dir, extra);
    runtime = await createRuntime(ctx);
    await startIngest(runtime);
    const deadline = Date.now() + 90_000;
    while (readSimulatorState(dir)?.lastEventTime !== until) {
      if (Date.now() > deadline) throw new Error('the history was not processed through the node');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await runtime.stop();
    runtime = null;
    return ctx;
  }

  async function published() {
    const log = createEmbeddedLog(context(dir), { path: embeddedLogPath(dir) });
    const swaps: RawSwap[] = [];
    const events: TokenEvent[] = [];
    try {
      // Progress marks (ingest/publisher.ts) are no records.
      await log.readToEnd(TOPICS.swaps.name, (message) => {
        const value = JSON.parse(message.value);
        if (!isChainMark(value)) swaps.push(value);
      });
      await log.readToEnd(TOPICS.tokenEvents.name, (message) => {
        const value = JSON.parse(message.value);
        if (!isChainMark(value)) events.push(value);
      });
    } finally {
      await log.close();
    }
    return { swaps, events };
  }

  it('serves the warm-start history as blocks the sources read back into exactly the in-process records', async () => {
    const ctx = await runIngest();
    const expected = inProcess();
    const all = await published();
    // Metadata and security events are the enrichment stage's, resolved from the created token's
    // chain data and URI (test/enrichment-*.test.ts), promotions the poller's (test/promotions.test.ts);
    // the in-process reference runs neither.
    const actual = {
      swaps: all.swaps,
      events: all.events.filter(
        (event) => event.kind !== 'metadata' && event.kind !== 'security' && event.kind !== 'promotion',
      ),
    };
    const ids = actual.swaps.map((swap) => swap.id);
    assert.equal(new Set(ids).size, ids.length, 'no swap published twice');
    assert.deepEqual([...ids].sort(), expected.swaps.map((swap) => swap.id).sort());
    for (const chain of CHAINS)
      assert.ok(
        ids.some((id) => id.startsWith(`${chain}:`)),
        `swaps on ${chain}`,
      );
    // Every token event is chain data (a transaction of a served block), or came through the label import.
    const offChain = actual.events.filter(
      (event) => !expected.onChain.has(event.transactionHash) && !event.transactionHash.startsWith('labels-'),
    );
    assert.deepEqual(offChain, [], 'every token event is chain data or a label import');
    assert.ok(
      actual.events.some((event) => event.kind === 'graduated' && expected.onChain.has(event.transactionHash)),
      'graduations are served as chain data',
    );
    assert.ok(
      ['launchlab', 'meteora-dbc'].every((launchpad) =>
        actual.events.some(
          (event) =>
            event.kind === 'created' && event.launchpad === launchpad && expected.onChain.has(event.transactionHash),
        ),
      ),
      'LaunchLab and DBC launches are served as chain data',
    );
    const keys = actual.events.map(eventKey);
    assert.deepEqual([...new Set(keys)].sort(), [...new Set(expected.events.map(eventKey))].sort());
    assert.ok(actual.events.some((event) => event.kind === 'funding' && event.chain === 'solana'));
    // Labels went through the label import, from the simulator's labels file.
    const labels = actual.events.filter((event) => event.kind === 'walletLabel');
    assert.ok(labels.length > 0 && labels.every((event) => event.transactionHash.startsWith('labels-')));
    assert.match(fs.readFileSync(path.join(dir, SIMULATOR_LABELS_FILE), 'utf8'), /^chain,address,label,name,source\n/);
    assert.ok(ctx.metrics.get('simulator.node.calls.solana') > 0 && ctx.metrics.get('simulator.node.calls.base') > 0);
  });

  it('restarts on its data dir without a fork, a gap in the readers or a record published twice', async () => {
    await runIngest();
    const later = START + 5 * 60_000;
    const ctx = await runIngest({ SPOT_SIM_NOW: String(later) }, later);
    const { swaps, events } = await published();
    const ids = swaps.map((swap) => swap.id);
    assert.equal(new Set(ids).size, ids.length, 'no swap published twice');
    const resumed = swaps.filter((swap) => swap.blockTime >= START);
    for (const chain of CHAINS)
      assert.ok(
        resumed.some((swap) => swap.chain === chain),
        `${chain} trades after the restart`,
      );
    assert.equal(ctx.metrics.get('ingest.solana.forks'), 0);
    for (const chain of CHAINS) assert.equal(ctx.metrics.get(`ingest.evm.${chain}.reorgs`), 0);
    assert.equal(new Set(events.map((event) => event.id)).size, events.length, 'no token event published twice');
    assert.equal(readSimulatorState(dir)?.runSeed, `${SEED}/resume@${START}`);
  });

  it('constructs and publishes token events only in decoders, the transfer extractor and the label import', () => {
    const root = path.resolve(import.meta.dirname, '..');
    const builds = /kind: '(created|graduated|funding|walletLabel|transfer|balance|curve|metadata|security|promotion)'/;
    // ingest/enrichment resolves metadata and security facts from the chain (and the URI it names);
    // ingest/promotions reads a promotion API or list (its simulated feed, sim-*, only answers it).
    const allowed =
      /^ingest\/(solana|evm|transfers|labels|enrichment)\/|^ingest\/promotions\/(?!sim-)|^ingest\/sources\/evm-resolver\.ts$/;
    const offenders: string[] = [];
    for (const file of sourceFiles(root)) {
      const relative = path.relative(root, file);
      const text = fs.readFileSync(file, 'utf8');
      if (builds.test(text) && !allowed.test(relative)) offenders.push(`${relative} builds token events`);
      if (/produce\w*\(\s*TOPICS\.tokenEvents/.test(text) && relative !== 'ingest/publisher.ts')
        offenders.push(`${relative} produces to the token-events topic`);
      if (
        /\.publish\(/.test(text) &&
        !/^ingest\/(sources|labels|enrichment)\/|^ingest\/promotions\/(?!sim-)|^ingest\/simulator\/runner\.ts$/.test(
          relative,
        )
      )
        offenders.push(`${relative} publishes records`);
    }
    assert.deepEqual(offenders, []);
  });

  it('answers bad requests with JSON-RPC errors and skipped slots as a real node does', async () => {
    const ctx = context(dir);
    const node = await startSimulatorNode(ctx, {
      seed: 'x',
      chains: ['solana', 'base'],
      start: START,
      processed: () => -1,
    });
    try {
      const post = async (chain: string, body: string) =>
        (
          await fetch(`${node.url('solana').replace(/solana$/, chain)}`, { method: 'POST', body })
        ).json() as Promise<any>;
      assert.equal((await post('solana', '{nope')).error.code, -32700);
      assert.equal((await post('solana', '{"jsonrpc":"2.0","id":1,"method":"getNothing"}')).error.code, -32601);
      node.seal(START + 10_000);
      const tip = (await post('solana', '{"jsonrpc":"2.0","id":1,"method":"getSlot"}')).result as number;
      const skipped = await post('solana', `{"jsonrpc":"2.0","id":2,"method":"getBlock","params":[${tip}]}`);
      assert.equal(skipped.error.code, -32007);
      const ahead = await post('solana', `{"jsonrpc":"2.0","id":3,"method":"getBlock","params":[${tip + 5}]}`);
      assert.equal(ahead.error.code, -32004);
      const batch = await post(
        'base',
        '[{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"},{"jsonrpc":"2.0","id":2,"method":"eth_getBlockByNumber","params":["latest",true]},{"jsonrpc":"2.0","id":3,"method":"eth_call","params":[{"to":"0x0000000000000000000000000000000000000001","data":"0x313ce567"},"latest"]}]',
      );
      assert.equal(batch[1].result.number, batch[0].result);
      assert.deepEqual(batch[1].result.transactions, []);
      assert.equal(batch[2].error.message, 'execution reverted');
      assert.equal((await post('arc', '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}')).error.code, -32601);
    } finally {
      await node.close();
    }
  });
});

describe('simulator node: what a Solana chain keeps', () => {
  it('drops the transactions of slots its reader acknowledged and answers them as cleaned up; headers stay', () => {
    const start = Date.UTC(2026, 0, 5, 12);
    const chain = createSolanaNodeChain({ seed: 'prune-test', start });
    const first = chain.first;
    const record = (slot: number) =>
      ({
        kind: 'solana',
        chain: 'solana',
        transaction: {
          slot,
          blockTime: Math.floor(start / 1000),
          meta: null,
          transaction: { signatures: [`sig${slot}`] },
        },
      }) as unknown as Parameters<typeof chain.append>[0];
    for (let slot = first; slot < first + 10; slot++) chain.append(record(slot));
    chain.seal(start + 60_000);
    const full = (slot: number) =>
      chain.call('getBlock', [slot, { transactionDetails: 'full', maxSupportedTransactionVersion: 0 }]) as {
        transactions: unknown[];
      };
    assert.equal(full(first + 4).transactions.length, 1);

    chain.acknowledge(first + 4);
    assert.throws(
      () => full(first + 4),
      (error: NodeFault) => error.code === -32001,
    );
    const header = chain.call('getBlock', [first + 4, { transactionDetails: 'none' }]) as { blockhash: string };
    assert.equal(typeof header.blockhash, 'string');
    assert.equal(full(first + 5).transactions.length, 1, 'a slot not processed yet keeps its transactions');
  });
});

describe('simulator node: notification bytes', () => {
  it('writes exactly the bytes of JSON.stringify, a block of many transactions included', () => {
    const message = (result: unknown) => ({
      jsonrpc: '2.0',
      method: 'blockNotification',
      params: { subscription: 7, result },
    });
    const tx = (i: number) => ({
      transaction: {
        signatures: [`sig${i}`],
        note: i % 50 === 0 ? '"transactions":[] in a string, and ünïcode 🙂' : 'plain',
      },
      meta: i % 3 === 0 ? null : { err: null, fee: 5000 + i, skipped: undefined },
    });
    const cases = [
      message({ slot: 1, parent: 0, root: 0 }),
      message(null),
      message({ context: { slot: 5 }, value: { slot: 5, err: null, block: { blockhash: 'h', transactions: [] } } }),
      message({
        context: { slot: 9 },
        value: {
          slot: 9,
          err: null,
          block: {
            blockhash: 'say "transactions":[] here',
            parentSlot: 8,
            transactions: [...Array.from({ length: 3_000 }, (_, i) => tx(i)), undefined],
            blockTime: 1_700_000_000,
          },
        },
      }),
    ];
    for (const value of cases) assert.ok(notificationBytes(value).equals(Buffer.from(JSON.stringify(value))));
  });
});
