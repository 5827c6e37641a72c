// Stream edge protocol over a real uWS server and real `ws` clients: frames, filters, errors,
// per-connection limits and routing (driven through route(), the same path the log feed uses).
import assert from 'node:assert/strict';
import { createStreamEdge, MAX_SUBSCRIPTIONS_PER_CONNECTION } from '../stream-edge/server.ts';
import {
  BASE_TOKEN,
  BASE_TOKEN_2,
  BASE_WALLET,
  SOL_TOKEN,
  SOL_WALLET,
  candleMessage,
  connect,
  edgeForSuite,
  evmAddress,
  tokenObject,
  tradeMessage,
  type Frame,
} from './helpers/stream-edge.ts';

describe('stream edge: frames and channels', () => {
  const suite = edgeForSuite();
  const { open } = suite;

  const expectError = (frame: Frame, code: string, fields?: string[]) => {
    assert.equal(frame.type, 'error', JSON.stringify(frame));
    assert.equal(frame.code, code);
    assert.equal(typeof frame.message, 'string');
    assert.ok(frame.message.length > 0);
    assert.ok('details' in frame);
    if (fields) {
      assert.ok(Array.isArray(frame.details), JSON.stringify(frame));
      assert.deepEqual(frame.details.map((d: { field: string }) => d.field).sort(), [...fields].sort());
      for (const d of frame.details) assert.equal(typeof d.message, 'string');
    }
  };

  it('acks a subscribe with channel, subscriptionId, the echoed id, status and message', async () => {
    const c = await open();
    const ack = await c.subscribe('spot.trades', { chain: 'base', token: BASE_TOKEN }, 'req-1');
    assert.deepEqual(Object.keys(ack).sort(), ['channel', 'id', 'message', 'status', 'subscriptionId', 'type']);
    assert.equal(ack.channel, 'spot.trades');
    assert.equal(ack.id, 'req-1');
    assert.equal(ack.status, 'success');
    assert.equal(typeof ack.subscriptionId, 'string');
    assert.ok(ack.message.length > 0);
    const second = await c.subscribe('spot.trades', { chain: 'base', token: BASE_TOKEN });
    assert.equal(second.id, null);
    assert.notEqual(second.subscriptionId, ack.subscriptionId);
  });

  it('refuses malformed JSON, non-objects, unknown actions and unknown channels with error frames', async () => {
    const c = await open();
    expectError(await c.request('{"action": "subscribe"'), 'VALIDATION_ERROR', ['body']);
    expectError(await c.request('[1,2]'), 'VALIDATION_ERROR', ['body']);
    const unknownAction = await c.request({ action: 'publish', channel: 'spot.trades', id: 'x1' });
    expectError(unknownAction, 'VALIDATION_ERROR', ['action']);
    assert.equal(unknownAction.id, 'x1');
    expectError(await c.request({ channel: 'spot.trades' }), 'VALIDATION_ERROR', ['action']);
    const unknownChannel = await c.request({ action: 'subscribe', channel: 'spot.orders', filters: {}, id: 'x2' });
    expectError(unknownChannel, 'VALIDATION_ERROR', ['channel']);
    assert.equal(unknownChannel.id, 'x2');
    expectError(await c.request({ action: 'subscribe', channel: 'spot.trades', filters: [1] }), 'VALIDATION_ERROR', [
      'filters',
    ]);
    expectError(
      await c.request({
        action: 'subscribe',
        channel: 'spot.trades',
        filters: { chain: 'base', token: BASE_TOKEN },
        id: 7,
      }),
      'VALIDATION_ERROR',
      ['id'],
    );
    // the connection stays usable after refusals
    await c.subscribe('spot.tokens', { chain: 'base', addresses: [BASE_TOKEN] });
  });

  it('sends trades by token without flags and platforms, seq counting from 1', async () => {
    const c = await open();
    const other = await c.subscribe('spot.trades', { chain: 'base', token: BASE_TOKEN_2 });
    const ack = await c.subscribe('spot.trades', {
      chain: 'base',
      token: BASE_TOKEN.toUpperCase().replace('0X', '0x'),
    });
    const first = tradeMessage();
    suite.edge.route('spot.trades.v1', first);
    suite.edge.route('spot.trades.v1', tradeMessage({ token: BASE_TOKEN_2 }));
    suite.edge.route('spot.trades.v1', tradeMessage());
    await c.until(
      () => c.updates(ack.subscriptionId).length === 2 && c.updates(other.subscriptionId).length === 1,
      'trade updates',
    );
    const updates = c.updates(ack.subscriptionId);
    assert.deepEqual(
      updates.map((u) => u.seq),
      [1, 2],
    );
    assert.deepEqual(
      c.updates(other.subscriptionId).map((u) => u.seq),
      [1],
    );
    const frame = updates[0]!;
    assert.deepEqual(Object.keys(frame).sort(), ['channel', 'cursor', 'data', 'seq', 'subscriptionId', 'type']);
    assert.equal(frame.channel, 'spot.trades');
    const { flags: _f, platforms: _p, ...expected } = first.trade;
    assert.deepEqual(frame.data, expected);
    assert.ok(!('flags' in frame.data) && !('platforms' in frame.data));
  });

  it('sends full trades by wallet, and by identity feed narrowed by chains', async () => {
    const c = await open();
    const byWallet = await c.subscribe('spot.trades', { chain: 'base', wallet: BASE_WALLET });
    const kolAll = await c.subscribe('spot.trades', { identity: 'kol' });
    const kolSolana = await c.subscribe('spot.trades', { identity: 'kol', chains: ['solana'] });
    const fomoBase = await c.subscribe('spot.trades', { identity: 'fomoscan', chains: 'base,bsc' });
    const baseKol = tradeMessage({}, ['kol']);
    const otherWalletFomo = tradeMessage({ trader: evmAddress(99) }, ['fomoscan']);
    const solKol = tradeMessage(
      { chain: 'solana', token: SOL_TOKEN, trader: SOL_WALLET, id: 'solana:sig:1', transactionHash: 'sig' },
      ['kol'],
    );
    for (const m of [baseKol, otherWalletFomo, solKol]) suite.edge.route('spot.trades.v1', m);
    await c.until(() => c.updates(kolAll.subscriptionId).length === 2, 'identity updates');
    assert.deepEqual(
      c.updates(byWallet.subscriptionId).map((u) => u.data),
      [baseKol.trade],
    );
    assert.deepEqual(
      c.updates(kolAll.subscriptionId).map((u) => u.data),
      [baseKol.trade, solKol.trade],
    );
    assert.deepEqual(
      c.updates(kolSolana.subscriptionId).map((u) => u.data),
      [solKol.trade],
    );
    assert.deepEqual(
      c.updates(fomoBase.subscriptionId).map((u) => u.data),
      [otherWalletFomo.trade],
    );
    assert.deepEqual(
      c.updates(kolAll.subscriptionId).map((u) => u.seq),
      [1, 2],
    );
    assert.deepEqual(c.updates(byWallet.subscriptionId)[0]!.data.flags, ['kol']);
  });

  it('refuses bad spot.trades filters', async () => {
    const c = await open();
    const sub = (filters: unknown) => c.request({ action: 'subscribe', channel: 'spot.trades', filters });
    expectError(await sub({ chain: 'base' }), 'VALIDATION_ERROR', ['token']);
    expectError(await sub({ token: BASE_TOKEN }), 'VALIDATION_ERROR', ['chain']);
    expectError(await sub({ chain: 'base', token: SOL_TOKEN }), 'VALIDATION_ERROR', ['token']);
    expectError(await sub({ chain: 'solana', wallet: BASE_WALLET }), 'VALIDATION_ERROR', ['wallet']);
    expectError(await sub({ chain: 'base', token: BASE_TOKEN, wallet: BASE_WALLET }), 'VALIDATION_ERROR', ['wallet']);
    expectError(await sub({ chain: 'base', token: BASE_TOKEN, side: 'buy' }), 'VALIDATION_ERROR', ['side']);
    expectError(await sub({ identity: 'whales' }), 'VALIDATION_ERROR', ['identity']);
    expectError(await sub({ identity: 'kol', chains: [] }), 'VALIDATION_ERROR', ['chains']);
    expectError(await sub({ identity: 'kol', chain: 'base' }), 'VALIDATION_ERROR', ['chain']);
    const unsupported = await sub({ chain: 'ethereum', token: BASE_TOKEN });
    expectError(unsupported, 'UNSUPPORTED_CHAIN');
    assert.deepEqual(unsupported.details, { chain: 'ethereum' });
    const unsupportedInList = await sub({ identity: 'kol', chains: ['base', 'tron'] });
    expectError(unsupportedInList, 'UNSUPPORTED_CHAIN');
    assert.deepEqual(unsupportedInList.details, { chain: 'tron' });
  });

  it('streams candles of the default view (1m, marketCap, usd) only when the candle changed', async () => {
    const c = await open();
    const def = await c.subscribe('spot.candles', { chain: 'base', token: BASE_TOKEN });
    const price5mNative = await c.subscribe('spot.candles', {
      chain: 'base',
      token: BASE_TOKEN,
      timeframe: '5m',
      metric: 'price',
      denomination: 'native',
    });
    const sameAsDefault = await c.subscribe('spot.candles', {
      chain: 'base',
      token: BASE_TOKEN,
      timeframe: '1m',
      metric: 'marketCap',
      denomination: 'usd',
    });
    const m1 = candleMessage('base', BASE_TOKEN, 1_760_000_040_000, 2);
    const m2 = candleMessage('base', BASE_TOKEN, 1_760_000_040_000, 3);
    suite.edge.route('spot.candles.v1', m1);
    suite.edge.route('spot.candles.v1', m1); // unchanged: no update
    suite.edge.route('spot.candles.v1', m2); // same bucket, new close: replaces it
    suite.edge.route('spot.candles.v1', candleMessage('base', BASE_TOKEN_2, 1_760_000_040_000, 9)); // other token
    const token = await c.subscribe('spot.tokens', { chain: 'base', addresses: [BASE_TOKEN] });
    suite.edge.route('spot.tokens.v1', tokenObject(BASE_TOKEN, 1)); // a marker: everything routed before it has arrived
    await c.until(() => c.updates(token.subscriptionId).length === 1, 'marker');
    assert.deepEqual(
      c.updates(def.subscriptionId).map((u) => [u.seq, u.data]),
      [
        [1, m1.open['1m']!.marketCap.usd],
        [2, m2.open['1m']!.marketCap.usd],
      ],
    );
    assert.deepEqual(
      c.updates(sameAsDefault.subscriptionId).map((u) => u.data),
      c.updates(def.subscriptionId).map((u) => u.data),
    );
    assert.deepEqual(
      c.updates(price5mNative.subscriptionId).map((u) => u.data),
      [m1.open['5m']!.price.native, m2.open['5m']!.price.native],
    );
    assert.deepEqual(Object.keys(c.updates(def.subscriptionId)[0]!.data), [
      'time',
      'open',
      'high',
      'low',
      'close',
      'volume',
    ]);
  });

  it('refuses every spot.candles validation error the spec lists', async () => {
    const c = await open();
    const sub = (filters: unknown) => c.request({ action: 'subscribe', channel: 'spot.candles', filters, id: 'c' });
    expectError(await sub({ token: BASE_TOKEN }), 'VALIDATION_ERROR', ['chain']);
    expectError(await sub({ chain: 'base' }), 'VALIDATION_ERROR', ['token']);
    expectError(await c.request({ action: 'subscribe', channel: 'spot.candles' }), 'VALIDATION_ERROR', [
      'chain',
      'token',
    ]);
    expectError(await sub({ chain: 'solana', token: BASE_TOKEN }), 'VALIDATION_ERROR', ['token']);
    expectError(await sub({ chain: 'base', token: '0x1234' }), 'VALIDATION_ERROR', ['token']);
    expectError(await sub({ chain: 'base', token: BASE_TOKEN, timeframe: '2m' }), 'VALIDATION_ERROR', ['timeframe']);
    expectError(await sub({ chain: 'base', token: BASE_TOKEN, metric: 'volume' }), 'VALIDATION_ERROR', ['metric']);
    expectError(await sub({ chain: 'base', token: BASE_TOKEN, denomination: 'eur' }), 'VALIDATION_ERROR', [
      'denomination',
    ]);
    const unknownField = await sub({ chain: 'base', token: BASE_TOKEN, interval: '1m' });
    expectError(unknownField, 'VALIDATION_ERROR', ['interval']);
    assert.equal(unknownField.id, 'c');
    expectError(await sub({ chain: 'base', token: BASE_TOKEN, timeframe: 'x', metric: 'y' }), 'VALIDATION_ERROR', [
      'timeframe',
      'metric',
    ]);
    const unsupported = await sub({ chain: 'polygon', token: BASE_TOKEN });
    expectError(unsupported, 'UNSUPPORTED_CHAIN');
    assert.deepEqual(unsupported.details, { chain: 'polygon' });
    for (const timeframe of ['1s', '7d'])
      await c.subscribe('spot.candles', { chain: 'solana', token: SOL_TOKEN, timeframe });
  });

  it('streams token updates for up to 100 addresses and refuses 101', async () => {
    const c = await open();
    const addresses = Array.from({ length: 100 }, (_, i) => evmAddress(i + 1));
    const ack = await c.subscribe('spot.tokens', { chain: 'base', addresses });
    const tooMany = await c.request({
      action: 'subscribe',
      channel: 'spot.tokens',
      filters: { chain: 'base', addresses: [...addresses, evmAddress(500)] },
    });
    expectError(tooMany, 'VALIDATION_ERROR', ['addresses']);
    expectError(
      await c.request({ action: 'subscribe', channel: 'spot.tokens', filters: { chain: 'base', addresses: [] } }),
      'VALIDATION_ERROR',
      ['addresses'],
    );
    expectError(
      await c.request({
        action: 'subscribe',
        channel: 'spot.tokens',
        filters: { chain: 'base', addresses: [SOL_TOKEN] },
      }),
      'VALIDATION_ERROR',
      ['addresses'],
    );
    expectError(
      await c.request({
        action: 'subscribe',
        channel: 'spot.tokens',
        filters: { chain: 'base', address: BASE_TOKEN, addresses: [BASE_TOKEN] },
      }),
      'VALIDATION_ERROR',
      ['address'],
    );
    expectError(
      await c.request({ action: 'subscribe', channel: 'spot.tokens', filters: { addresses: [BASE_TOKEN] } }),
      'VALIDATION_ERROR',
      ['chain'],
    );
    const unsupported = await c.request({
      action: 'subscribe',
      channel: 'spot.tokens',
      filters: { chain: 'eth', addresses: [BASE_TOKEN] },
    });
    expectError(unsupported, 'UNSUPPORTED_CHAIN');
    const t1 = tokenObject(evmAddress(1), 10);
    const t100 = tokenObject(evmAddress(100), 11);
    suite.edge.route('spot.tokens.v1', t1);
    suite.edge.route('spot.tokens.v1', tokenObject(evmAddress(101), 12)); // not subscribed
    suite.edge.route('spot.tokens.v1', t100);
    await c.until(() => c.updates(ack.subscriptionId).length === 2, 'token updates');
    assert.deepEqual(
      c.updates(ack.subscriptionId).map((u) => [u.seq, u.data]),
      [
        [1, t1],
        [2, t100],
      ],
    );
    assert.equal(c.updates(ack.subscriptionId)[0]!.channel, 'spot.tokens');
  });

  it('acks an unsubscribe and sends no update for it afterwards', async () => {
    const c = await open();
    const gone = await c.subscribe('spot.trades', { chain: 'base', token: BASE_TOKEN });
    const kept = await c.subscribe('spot.trades', { chain: 'base', wallet: BASE_WALLET });
    suite.edge.route('spot.trades.v1', tradeMessage());
    await c.until(
      () => c.updates(gone.subscriptionId).length === 1 && c.updates(kept.subscriptionId).length === 1,
      'first updates',
    );
    const ack = await c.request({ action: 'unsubscribe', subscriptionId: gone.subscriptionId, id: 'u1' });
    assert.deepEqual(
      { type: ack.type, channel: ack.channel, subscriptionId: ack.subscriptionId, id: ack.id, status: ack.status },
      { type: 'ack', channel: 'spot.trades', subscriptionId: gone.subscriptionId, id: 'u1', status: 'success' },
    );
    suite.edge.route('spot.trades.v1', tradeMessage());
    await c.until(() => c.updates(kept.subscriptionId).length === 2, 'second update of the kept subscription');
    assert.equal(c.updates(gone.subscriptionId).length, 1);
    const again = await c.request({ action: 'unsubscribe', subscriptionId: gone.subscriptionId });
    expectError(again, 'NOT_FOUND');
    assert.equal(again.details, null);
    expectError(await c.request({ action: 'unsubscribe' }), 'VALIDATION_ERROR', ['subscriptionId']);
  });

  it('refuses the 101st subscription on a connection, and takes one again after an unsubscribe', async () => {
    const c = await open();
    const acks: Frame[] = [];
    for (let i = 0; i < MAX_SUBSCRIPTIONS_PER_CONNECTION; i++)
      acks.push(await c.subscribe('spot.trades', { chain: 'base', token: evmAddress(1000 + i) }));
    assert.equal(MAX_SUBSCRIPTIONS_PER_CONNECTION, 100);
    const refused = await c.request({
      action: 'subscribe',
      channel: 'spot.trades',
      filters: { chain: 'base', token: BASE_TOKEN },
      id: 'over',
    });
    expectError(refused, 'RATE_LIMITED');
    assert.equal(refused.details, null);
    assert.equal(refused.id, 'over');
    await c.request({ action: 'unsubscribe', subscriptionId: acks[0]!.subscriptionId });
    await c.subscribe('spot.trades', { chain: 'base', token: BASE_TOKEN });
  });

  it('drops the subscriptions of a closed connection from the indexes', async () => {
    const c = await open();
    const before = suite.edge.stats();
    await c.subscribe('spot.candles', { chain: 'base', token: BASE_TOKEN });
    await c.subscribe('spot.tokens', { chain: 'base', addresses: [BASE_TOKEN, BASE_TOKEN_2] });
    assert.equal(suite.edge.stats().subscriptions, before.subscriptions + 2);
    c.ws.close();
    await c.waitClosed();
    const deadline = Date.now() + 5000;
    while (suite.edge.stats().connections !== before.connections - 1 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    assert.equal(suite.edge.stats().subscriptions, before.subscriptions);
  });

  it('sends keepalive pings at the configured interval', async () => {
    const pinged = createStreamEdge(suite.env.ctx, { log: null, keys: suite.env.keys, pingIntervalMs: 50 });
    const { port: pingPort } = await pinged.start();
    try {
      const c = await connect(pingPort, suite.env.key);
      suite.track(c);
      await new Promise<void>((resolve) => c.ws.once('ping', () => resolve()));
    } finally {
      await pinged.stop();
    }
  });
});
