// Resume on spot.trades: a client (client/index.ts) whose socket is destroyed mid-stream, or
// whose edge goes away, reconnects with resumeFrom and receives exactly the trades it missed —
// each once, in log order per partition — compared with the event log itself; on another edge
// instance reading the same log too. Refused cursors get an error frame and subscribe nothing.
import assert from 'node:assert/strict';
import path from 'node:path';
import { createStreamClient, type StreamClient as ResumingClient, type StreamEvent } from '../client/index.ts';
import { createEmbeddedLog } from '../core/eventlog/embedded.ts';
import type { EventLog } from '../core/eventlog/types.ts';
import type { Trade } from '../core/schemas.ts';
import { TOPICS, type PricedTradeMessage } from '../core/topics.ts';
import { RESUME_WINDOW_MS } from '../stream-edge/cursor.ts';
import { MAX_CONCURRENT_RESUMES, createStreamEdge, type StreamEdge } from '../stream-edge/server.ts';
import { connect, createEnv, createRelay, evmAddress, sleep, tradeMessage, type Env } from './helpers/stream-edge.ts';

describe('stream resume: spot.trades from a cursor, exactly once', function () {
  this.timeout(60_000);
  let env: Env;
  let log: EventLog;
  const edges: StreamEdge[] = [];
  const clients: ResumingClient[] = [];
  // Tokens spread over every partition (the key picks the partition).
  const tokens = Array.from({ length: 8 }, (_, i) => evmAddress(0xa000 + i));
  let n = 0;

  /**
   * The same log, with the edge's live feed lagging: each of its batches waits 20 ms, so a resume
   * reader runs ahead of the feed and the hand-over must stop at the feed's position.
   */
  const laggingFeed = (inner: EventLog): EventLog =>
    Object.assign(Object.create(inner) as EventLog, {
      consumer: (options: Parameters<EventLog['consumer']>[0]) => {
        const consumer = inner.consumer(options);
        if (!options.group.startsWith('stream-edge-')) return consumer;
        return Object.assign(Object.create(consumer), {
          run: (each: Parameters<typeof consumer.run>[0]) =>
            consumer.run(async (batch) => {
              await sleep(20);
              await each(batch);
            }),
        });
      },
    });

  const startEdge = async (lagging = false) => {
    const edge = createStreamEdge(env.ctx, { log: lagging ? laggingFeed(log) : log, keys: env.keys });
    edges.push(edge);
    return { edge, port: (await edge.start()).port };
  };

  /** Produces `count` trades, one in three by a KOL wallet, over every token; returns them. */
  const produce = async (count: number): Promise<PricedTradeMessage[]> => {
    const out: PricedTradeMessage[] = [];
    for (let i = 0; i < count; i++) {
      const token = tokens[n % tokens.length]!;
      const kol = n % 3 === 0;
      n++;
      const message = tradeMessage({ token, trader: evmAddress(kol ? 0xbeef : 0xcafe) }, kol ? ['kol'] : []);
      await log.produce(TOPICS.trades.name, [{ key: `base:${token}`, value: JSON.stringify(message) }]);
      out.push(message);
    }
    return out;
  };

  /** The log's own spot.trades.v1 content: the reference the received trades are checked against. */
  const kolTradesInLog = async (ids: Set<string>) => {
    const byPartition = new Map<number, string[]>();
    await log.readToEnd(TOPICS.trades.name, (m) => {
      const message = JSON.parse(m.value) as PricedTradeMessage;
      if (!message.identities.includes('kol') || !ids.has(message.trade.id)) return;
      const list = byPartition.get(m.partition) ?? [];
      list.push(message.trade.id);
      byPartition.set(m.partition, list);
    });
    return byPartition;
  };

  const partitionOf = new Map<string, number>();
  const readPartitions = async () =>
    log.readToEnd(TOPICS.trades.name, (m) =>
      partitionOf.set((JSON.parse(m.value) as PricedTradeMessage).trade.id, m.partition),
    );

  /** Received ids grouped per partition, in arrival order (the order the log promises). */
  const perPartition = async (received: string[]) => {
    await readPartitions();
    const out = new Map<number, string[]>();
    for (const id of received) {
      const p = partitionOf.get(id)!;
      out.set(p, [...(out.get(p) ?? []), id]);
    }
    return out;
  };

  const waitFor = async (predicate: () => boolean, what: string, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(10);
    }
  };

  before(async () => {
    env = createEnv();
    log = createEmbeddedLog(env.ctx, { path: path.join(env.dir, 'log', 'events.sqlite'), pollMs: 5 });
    await log.ensureTopics([TOPICS.trades, TOPICS.candles, TOPICS.tokens]);
  });
  after(async () => {
    for (const c of clients) c.close();
    for (const e of edges) await e.stop();
    await log.close();
    env.cleanup();
  });

  const follow = (port: number, onEvent?: (e: StreamEvent) => void) => {
    const client = createStreamClient({
      url: `ws://127.0.0.1:${port}/v1/stream`,
      apiKey: env.key,
      minBackoffMs: 50,
      maxBackoffMs: 200,
      onEvent,
    });
    clients.push(client);
    const received: Trade[] = [];
    const seqs: number[] = [];
    const sub = client.subscribe(
      'spot.trades',
      { identity: 'kol' },
      {
        onUpdate(trade, info) {
          received.push(trade);
          seqs.push(info.seq);
        },
      },
    );
    return { client, sub, received, seqs };
  };

  it('a socket destroyed mid-stream: the client reconnects with resumeFrom and gets exactly the trades it missed', async () => {
    const { port } = await startEdge(true);
    let target = port;
    const relay = createRelay(() => target);
    const relayPort = await relay.listen();
    const events: StreamEvent[] = [];
    const { sub, received, seqs } = follow(relayPort, (e) => events.push(e));
    await sub.ready;
    const before = await produce(30);
    await waitFor(() => received.length >= 10, 'the first live trades');
    relay.cut();
    // Trades produced while the client is away and on while it catches up (the hand-over to the
    // live feed happens under production), then more once it is back.
    const producing = produce(600);
    await waitFor(() => events.filter((e) => e.type === 'open').length >= 2, 'the reconnect');
    const during = await producing;
    const after = await produce(30);
    const ids = new Set([...before, ...during, ...after].map((m) => m.trade.id));
    const expected = await kolTradesInLog(ids);
    const total = [...expected.values()].reduce((sum, list) => sum + list.length, 0);
    assert.equal(total, 220, 'one trade in three is a KOL trade');
    await waitFor(() => received.length >= total, `${total} trades`);
    await sleep(200); // nothing more may come
    const got = received.map((t) => t.id);
    assert.equal(new Set(got).size, got.length, 'no trade twice');
    assert.deepEqual(await perPartition(got), expected, 'every KOL trade, in log order per partition');
    assert.ok(seqs.includes(1) && seqs.indexOf(1, 1) > 0, 'a new subscription (seq from 1) after the reconnect');
    target = 0;
    await relay.close();
  });

  it('the edge goes away: the client resumes on another edge instance reading the same log', async () => {
    const a = await startEdge();
    const b = await startEdge();
    let target = a.port;
    const relay = createRelay(() => target);
    const relayPort = await relay.listen();
    const events: StreamEvent[] = [];
    const { sub, received } = follow(relayPort, (e) => events.push(e));
    await sub.ready;
    const before = await produce(30);
    await waitFor(() => received.length >= 10, 'the first live trades');
    target = b.port;
    edges.splice(edges.indexOf(a.edge), 1);
    await a.edge.stop(); // every socket of edge A closes (1001)
    const during = await produce(45);
    await waitFor(() => events.filter((e) => e.type === 'open').length >= 2, 'the reconnect to edge B');
    const after = await produce(15);
    const ids = new Set([...before, ...during, ...after].map((m) => m.trade.id));
    const expected = await kolTradesInLog(ids);
    const total = [...expected.values()].reduce((sum, list) => sum + list.length, 0);
    await waitFor(() => received.length >= total, `${total} trades`);
    await sleep(200);
    const got = received.map((t) => t.id);
    assert.equal(new Set(got).size, got.length, 'no trade twice');
    assert.deepEqual(await perPartition(got), expected);
    assert.equal(b.edge.stats().connections, 1, 'the client now reads edge B');
    await relay.close();
  });

  it('a new connection subscribing with resumeFrom = the last cursor gets the trades produced in between', async () => {
    const { port } = await startEdge();
    const first = await connect(port, env.key);
    const ack = await first.subscribe('spot.trades', { identity: 'kol' });
    await produce(9);
    await first.until((f) => f.filter((x) => x.type === 'update').length >= 3, '3 updates');
    const last = first.updates(ack.subscriptionId).at(-1)!;
    assert.equal(typeof last.cursor, 'string');
    first.close();
    const missed = (await produce(12)).filter((m) => m.identities.includes('kol')).map((m) => m.trade.id);
    const second = await connect(port, env.key);
    const reply = await second.request({
      action: 'subscribe',
      channel: 'spot.trades',
      filters: { identity: 'kol' },
      resumeFrom: last.cursor,
    });
    assert.equal(reply.type, 'ack');
    await second.until((f) => f.filter((x) => x.type === 'update').length >= missed.length, 'the missed trades');
    await sleep(100);
    const got = second.updates(reply.subscriptionId).map((u) => u.data.id as string);
    // Each partition in log order; partitions interleave as the reader and the feed deliver them.
    assert.deepEqual(await perPartition(got), await perPartition(missed));
    second.close();
  });

  it('more resumes at once than reader slots: each waits its turn and gets every missed trade', async () => {
    const { port } = await startEdge();
    const c = await connect(port, env.key);
    const ack = await c.subscribe('spot.trades', { identity: 'kol' });
    await produce(3);
    await c.until(() => c.updates(ack.subscriptionId).length >= 1, 'an update');
    const cursor = c.updates(ack.subscriptionId)[0]!.cursor;
    const missed = (await produce(60)).filter((m) => m.identities.includes('kol')).length;
    await c.until(() => c.updates(ack.subscriptionId).length >= 1 + missed, 'the live ones');
    const expected = c
      .updates(ack.subscriptionId)
      .slice(1)
      .map((u) => u.data.id as string)
      .sort();
    const ids: string[] = [];
    for (let i = 0; i < MAX_CONCURRENT_RESUMES + 4; i++) {
      c.ws.send(
        JSON.stringify({
          action: 'subscribe',
          channel: 'spot.trades',
          filters: { identity: 'kol' },
          resumeFrom: cursor,
          id: `r${i}`,
        }),
      );
      ids.push(`r${i}`);
    }
    await c.until((f) => ids.every((id) => f.some((x) => x.type === 'ack' && x.id === id)), 'the acks');
    const subs = c.frames.filter((f) => f.type === 'ack' && ids.includes(f.id)).map((f) => f.subscriptionId as string);
    await c.until(() => subs.every((s) => c.updates(s).length >= expected.length), 'every resume');
    await sleep(100);
    for (const s of subs)
      assert.deepEqual(
        c
          .updates(s)
          .map((u) => u.data.id)
          .sort(),
        expected,
      );
    c.close();
  });

  it('refuses a cursor of other filters, a malformed one and one past the resume window: nothing is subscribed', async () => {
    const { edge, port } = await startEdge();
    const c = await connect(port, env.key);
    const ack = await c.subscribe('spot.trades', { chain: 'base', token: tokens[0] });
    await produce(8);
    await c.until((f) => f.some((x) => x.type === 'update'), 'an update');
    const cursor = c.updates(ack.subscriptionId)[0]!.cursor as string;
    const subscriptions = edge.stats().subscriptions;
    const refused = async (filters: unknown, resumeFrom: unknown, channel = 'spot.trades') => {
      const reply = await c.request({ action: 'subscribe', channel, filters, resumeFrom, id: 'r' });
      assert.equal(reply.type, 'error', JSON.stringify(reply));
      assert.equal(reply.code, 'VALIDATION_ERROR');
      assert.equal(reply.details[0].field, 'resumeFrom');
      assert.equal(reply.id, 'r');
      return `${reply.message} ${reply.details[0].message}`;
    };
    assert.match(await refused({ chain: 'base', token: tokens[1] }, cursor), /same channel and filters/);
    assert.match(await refused({ chain: 'base', token: tokens[0] }, `${cursor}!`), /not a cursor this service wrote/);
    assert.match(await refused({ chain: 'base', token: tokens[0] }, 42), /cursor string/);
    // The same cursor written an hour and a minute ago (its time is its first field).
    const head = cursor.slice(0, cursor.indexOf('.') + 1);
    const rest = cursor.slice(head.length).split('.');
    const old = `${head}${(Date.now() - RESUME_WINDOW_MS - 60_000).toString(36)}.${rest[1]}`;
    assert.match(await refused({ chain: 'base', token: tokens[0] }, old), /past the resume window/);
    assert.equal(edge.stats().subscriptions, subscriptions, 'nothing subscribed');
    // The by-token form resumes too (other tokens' messages are skipped by their log key).
    const live = c.updates(ack.subscriptionId).length;
    const produced = (await produce(16)).filter((m) => m.trade.token === tokens[0]).length;
    await c.until(() => c.updates(ack.subscriptionId).length >= live + produced, 'the live ones');
    const resumed = await c.request({
      action: 'subscribe',
      channel: 'spot.trades',
      filters: { chain: 'base', token: tokens[0] },
      resumeFrom: cursor,
    });
    assert.equal(resumed.type, 'ack');
    const expected = c
      .updates(ack.subscriptionId)
      .slice(1)
      .map((u) => u.data.id as string);
    assert.ok(expected.length >= 2);
    await c.until(() => c.updates(resumed.subscriptionId).length >= expected.length, 'the resumed ones');
    await sleep(100);
    assert.deepEqual(
      c.updates(resumed.subscriptionId).map((u) => u.data.id),
      expected,
      'the same trades after the first one, in order (one token is one partition)',
    );
    c.close();
  });
});
