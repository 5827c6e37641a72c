// The stream beside the REST API on the same hot views (embedded log, chDB store): the
// spot.discovery channel (first update = POST /v1/discovery; deltas replayed onto it equal
// POST /v1/discovery again), its errors (the REST ones), snapshot and state resumes of
// spot.tokens / spot.candles, and the identity feed resumed on a new connection against GET /v1/trades.
import assert from 'node:assert/strict';
import { createRestClient, createStreamClient, type RestClient, type StreamClient } from '../client/index.ts';
import type { DiscoveryItem, DiscoveryResponse, Token, Trade } from '../core/schemas.ts';
import { DISCOVERY_INTERVAL_MS } from '../stream-edge/discovery.ts';
import { SNAPSHOT_TRADES, createStreamEdge, type StreamEdge } from '../stream-edge/server.ts';
import { connect, createEnv, sleep, type Env } from './helpers/stream-edge.ts';
import {
  call,
  makeToken,
  makeTrade,
  produceCandles,
  produceTokens,
  produceTrades,
  solanaAddress,
  startEnv,
  tradeRow,
  waitFor,
  type ApiEnv,
} from './query-api-env.ts';

const MINUTE = 60_000;

/** Applies delta items onto a board: an item with rank null leaves, any other takes its rank. */
function replay(board: DiscoveryResponse, update: DiscoveryResponse): DiscoveryResponse {
  return {
    columns: board.columns.map((column) => {
      const items = new Map(column.deltas.map((item) => [`${item.chain}:${item.address}`, item]));
      const delta = update.columns.find((c) => c.column === column.column);
      for (const item of delta?.deltas ?? []) {
        const key = `${item.chain}:${item.address}`;
        if (item.rank === null) items.delete(key);
        else items.set(key, item);
      }
      const deltas: DiscoveryItem[] = [...items.values()].sort((a, b) => a.rank! - b.rank!);
      return { column: column.column, deltas };
    }),
  };
}

describe('stream with the REST views: spot.discovery, snapshot, state resume, identity resume', function () {
  this.timeout(60_000);
  let api: ApiEnv;
  let edgeEnv: Env;
  let edge: StreamEdge;
  let port: number;
  let rest: RestClient;
  const clients: StreamClient[] = [];
  const now = Date.now();
  const tokens: Record<string, Token> = {};
  const add = (name: string, over: Partial<Token>) =>
    (tokens[name] = makeToken({ chain: 'solana', address: solanaAddress(), name, bondingCurvePct: '10', ...over }));

  before(async () => {
    api = await startEnv();
    edgeEnv = createEnv(); // the edge's own context: port 0
    edge = createStreamEdge(edgeEnv.ctx, { log: api.log, keys: api.keys, views: api.api.views });
    ({ port } = await edge.start());
    rest = createRestClient({ baseUrl: api.base, apiKey: api.key });
    for (let i = 0; i < 6; i++) add(`new${i}`, { createdAt: now - (10 + i) * MINUTE });
    add('grad', { bondingCurvePct: '70', updatedAt: now - 2 * MINUTE });
    await produceTokens(api.log, Object.values(tokens));
    await waitFor(() => Object.values(tokens).every((t) => api.api.views.token(t.chain, t.address)), 'tokens in views');
  });
  after(async () => {
    for (const c of clients) c.close();
    await edge.stop();
    edgeEnv.cleanup();
    await api.close();
  });

  const streamClient = () => {
    const client = createStreamClient({ url: `ws://127.0.0.1:${port}/v1/stream`, apiKey: api.key });
    clients.push(client);
    return client;
  };

  it('answers {"chains":["solana"],"newPairs":{}} with the ranked column, equal to POST /v1/discovery', async () => {
    const c = await connect(port, api.key);
    const body = { chains: ['solana'], newPairs: {} };
    const ack = await c.subscribe('spot.discovery', body);
    await c.until((f) => f.some((x) => x.type === 'update'), 'the first update');
    const first = c.updates(ack.subscriptionId)[0]!;
    assert.equal(first.seq, 1);
    assert.equal(typeof first.cursor, 'string');
    assert.deepEqual(first.data, await rest.discovery(body as never));
    assert.deepEqual(
      first.data.columns[0]!.deltas.map((d: DiscoveryItem) => d.data!.name),
      ['new0', 'new1', 'new2', 'new3', 'new4', 'new5'],
    );
    c.close();
  });

  it('deltas (entering, moving, changed, leaving with rank null) replayed onto the first update equal POST /v1/discovery', async () => {
    const body = { chains: ['solana'], newPairs: { limit: 4 }, graduating: {} } as const;
    const updates: DiscoveryResponse[] = [];
    const client = streamClient();
    const sub = client.subscribe('spot.discovery', body as never, { onUpdate: (data) => updates.push(data) });
    // A second subscription with the same filters shares each beat's ranking: its board must agree.
    const twin: DiscoveryResponse[] = [];
    const twinSub = client.subscribe('spot.discovery', body as never, { onUpdate: (data) => twin.push(data) });
    await sub.ready;
    await twinSub.ready;
    await waitFor(() => updates.length === 1, 'the first update');
    assert.deepEqual(updates[0], await rest.discovery(body as never));
    // A newer pair enters at rank 1 (the others move down, new3 leaves the top 4), new1 changes
    // without moving, new0 starts graduating (leaves newPairs, enters graduating).
    const entering = makeToken({ chain: 'solana', address: solanaAddress(), name: 'fresh', bondingCurvePct: '5' });
    const changed = { ...tokens.new1!, marketCap: { native: '99', usd: '12345' }, updatedAt: Date.now() };
    const graduating = { ...tokens.new0!, bondingCurvePct: '55', updatedAt: Date.now() };
    await produceTokens(api.log, [entering, changed, graduating]);
    await waitFor(
      () =>
        api.api.views.token('solana', entering.address) !== undefined &&
        api.api.views.token('solana', tokens.new0!.address)?.fields.bondingCurvePct === '55',
      'the changes in the views',
    );
    // Conflated: the deltas arrive on the next beat; after two more beats nothing is pending.
    await sleep(2 * DISCOVERY_INTERVAL_MS + 300);
    assert.ok(updates.length >= 2, 'a delta came');
    const deltas = updates.slice(1).flatMap((u) => u.columns.flatMap((c) => c.deltas));
    assert.ok(
      deltas.some((d) => d.rank === null && d.data === null),
      'a token left with rank null',
    );
    assert.ok(
      deltas.some((d) => d.address === entering.address && d.rank === 1),
      'the new pair entered at rank 1',
    );
    assert.ok(deltas.length < 4 + 2 + 2, 'deltas carry only what changed');
    const board = updates.slice(1).reduce(replay, updates[0]!);
    const expected = await rest.discovery(body as never);
    assert.deepEqual(board, expected);
    assert.deepEqual(twin.slice(1).reduce(replay, twin[0]!), expected);
  });

  it('refuses bad discovery filters with the REST error, and nothing is subscribed', async () => {
    const c = await connect(port, api.key);
    const subscriptions = edge.stats().subscriptions;
    for (const body of [
      {},
      { chains: ['solana'] },
      { chains: ['dogechain'], newPairs: {} },
      { chains: ['solana'], newPairs: { limit: 'x' } },
    ]) {
      const reply = await c.request({ action: 'subscribe', channel: 'spot.discovery', filters: body, id: 'd' });
      const restReply = await call(api.base, '/v1/discovery', { method: 'POST', key: api.key, body });
      assert.equal(reply.type, 'error');
      assert.deepEqual(
        { code: reply.code, message: reply.message, details: reply.details ?? undefined },
        { ...restReply.body.error, details: restReply.body.error.details ?? undefined },
        JSON.stringify(body),
      );
    }
    // Clamping as REST: limit 1000 ranks at most 100.
    const ack = await c.subscribe('spot.discovery', { chains: ['solana'], newPairs: { limit: 1000 } });
    await c.until((f) => f.some((x) => x.type === 'update' && x.subscriptionId === ack.subscriptionId), 'update');
    assert.equal(edge.stats().subscriptions, subscriptions + 1);
    c.close();
  });

  it('snapshot: true sends the token objects and the open candle first, then live; resumeFrom on spot.tokens sends the current state', async () => {
    const token = tokens.new2!;
    const candleTime = Math.floor(Date.now() / MINUTE) * MINUTE;
    const candle = { time: candleTime, open: 1, high: 2, low: 0.5, close: 1.5, volume: 10 };
    await produceCandles(api.log, {
      chain: 'solana',
      token: token.address,
      updatedAt: Date.now(),
      open: { '1m': { price: { usd: candle, native: candle }, marketCap: { usd: candle, native: candle } } },
    });
    await waitFor(
      () => api.api.views.openCandle('solana', token.address, '1m', 'price', 'usd') !== undefined,
      'candle',
    );
    const c = await connect(port, api.key);
    const reply = await c.request({
      action: 'subscribe',
      channel: 'spot.tokens',
      filters: { chain: 'solana', addresses: [token.address, tokens.new3!.address] },
      snapshot: true,
    });
    await c.until(() => c.updates(reply.subscriptionId).length >= 2, 'the token objects');
    const objects = c.updates(reply.subscriptionId).map((u) => u.data);
    assert.deepEqual(
      objects.map((t) => t.address),
      [token.address, tokens.new3!.address],
    );
    assert.deepEqual(objects[0], await rest.token('solana', token.address));
    const candles = await c.request({
      action: 'subscribe',
      channel: 'spot.candles',
      filters: { chain: 'solana', token: token.address, metric: 'price' },
      snapshot: true,
    });
    await c.until(() => c.updates(candles.subscriptionId).length >= 1, 'the open candle');
    assert.deepEqual(c.updates(candles.subscriptionId)[0]!.data, candle);
    // Live after the state: a change of the token arrives.
    const changed = { ...token, holders: { ...token.holders, count: 4242 }, updatedAt: Date.now() };
    await produceTokens(api.log, [changed]);
    await c.until(() => c.updates(reply.subscriptionId).some((u) => u.data.holders.count === 4242), 'the live change');
    // Resume of a state channel: the current state of each key, then live.
    const cursor = c.updates(reply.subscriptionId).at(-1)!.cursor;
    const resumed = await c.request({
      action: 'subscribe',
      channel: 'spot.tokens',
      filters: { chain: 'solana', addresses: [token.address, tokens.new3!.address] },
      resumeFrom: cursor,
    });
    assert.equal(resumed.type, 'ack');
    await c.until(() => c.updates(resumed.subscriptionId).length >= 2, 'the current state');
    assert.equal(c.updates(resumed.subscriptionId)[0]!.data.holders.count, 4242);
    c.close();
  });

  it('checked from outside: identity kol, socket closed, resumed a few seconds later on a new connection = GET /v1/trades?identity=kol', async () => {
    const kolToken = makeToken({ chain: 'solana', address: solanaAddress(), name: 'kolcoin' });
    let seq = 1000;
    const publish = async (count: number) => {
      const out: Trade[] = [];
      for (let i = 0; i < count; i++) {
        const trade = makeTrade(kolToken, Date.now() + i, seq, { flags: ['kol'] });
        // As the aggregator does: the row in the store, the message on the log.
        await api.store.insertTrades([tradeRow(trade, seq++, ['kol'])]);
        await produceTrades(api.log, [trade], ['kol']);
        out.push(trade);
      }
      return out;
    };
    const first = await connect(port, api.key);
    const ack = await first.subscribe('spot.trades', { identity: 'kol' });
    await publish(5);
    await first.until(() => first.updates(ack.subscriptionId).length >= 5, '5 updates');
    const seen = first.updates(ack.subscriptionId).map((u) => u.data.id as string);
    const cursor = first.updates(ack.subscriptionId).at(-1)!.cursor;
    first.ws.close();
    await first.waitClosed();
    await publish(7);
    await sleep(2000);
    const second = await connect(port, api.key);
    const resumed = await second.request({
      action: 'subscribe',
      channel: 'spot.trades',
      filters: { identity: 'kol' },
      resumeFrom: cursor,
    });
    assert.equal(resumed.type, 'ack');
    await publish(3);
    await second.until(() => second.updates(resumed.subscriptionId).length >= 10, 'the missed and new trades');
    await sleep(200);
    const after = second.updates(resumed.subscriptionId).map((u) => u.data.id as string);
    const all = [...seen, ...after];
    assert.equal(new Set(all).size, all.length, 'none twice');
    const page = await rest.trades({ identity: 'kol', limit: 100 });
    // Other suites of a parallel tier's worker process share the store: compare this token's trades.
    const stored = page.trades.filter((t) => t.token === kolToken.address).map((t) => t.id);
    assert.deepEqual(new Set(all), new Set(stored), 'none missing: equal to GET /v1/trades');
    second.close();
  });

  it('snapshot: true on spot.trades sends the newest trades first (oldest first, at most SNAPSHOT_TRADES)', async () => {
    const c = await connect(port, api.key);
    const reply = await c.request({
      action: 'subscribe',
      channel: 'spot.trades',
      filters: { identity: 'kol' },
      snapshot: true,
    });
    assert.equal(reply.type, 'ack');
    await c.until(() => c.updates(reply.subscriptionId).length >= 15, 'the snapshot');
    const ids = c.updates(reply.subscriptionId).map((u) => u.data.id);
    const page = await rest.trades({ identity: 'kol', limit: 100 });
    // The store may also hold other suites' kol trades (a parallel tier's worker shares it).
    const tokens = new Set(c.updates(reply.subscriptionId).map((u) => u.data.token));
    const stored = page.trades.filter((t) => tokens.has(t.token)).slice(0, SNAPSHOT_TRADES);
    assert.deepEqual(ids, stored.map((t) => t.id).reverse());
    c.close();
  });
});
