// Stream edge against SPEC.md and the docs/stream.md, as a client sees it: handshakes
// that are not RFC 6455 upgrades, oversized client frames, and refusals that list every problem.
import assert from 'node:assert/strict';
import net from 'node:net';
import { MAX_CLIENT_FRAME_BYTES } from '../stream-edge/server.ts';
import { BASE_TOKEN, edgeForSuite, type Frame } from './helpers/stream-edge.ts';

/** Sends a raw HTTP request to the stream port and returns the response head and body as text. */
function rawRequest(port: number, lines: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`${lines.join('\r\n')}\r\n\r\n`));
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(text);
    }, 500);
    socket.on('data', (chunk) => {
      text += chunk.toString();
      // a 101 keeps the socket open: the head is all there is to read
      if (/^HTTP\/1\.1 101 /.test(text) && text.includes('\r\n\r\n')) {
        clearTimeout(timer);
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('end', () => {
      clearTimeout(timer);
      resolve(text);
    });
    socket.on('error', reject);
  });
}

describe('stream edge: conformance details', () => {
  const suite = edgeForSuite();
  const { open } = suite;
  const fieldsOf = (frame: Frame) => {
    assert.equal(frame.type, 'error', JSON.stringify(frame));
    assert.equal(frame.code, 'VALIDATION_ERROR', JSON.stringify(frame));
    return (frame.details as Array<{ field: string }>).map((d) => d.field).sort();
  };

  it('answers an upgrade without Sec-WebSocket-Key with 400 in plain text', async () => {
    const head = await rawRequest(suite.port, [
      'GET /v1/stream HTTP/1.1',
      'Host: x',
      'Upgrade: websocket',
      'Connection: Upgrade',
      'Sec-WebSocket-Version: 13',
      `Authorization: Bearer ${suite.env.key}`,
    ]);
    assert.match(head, /^HTTP\/1\.1 400 /);
    assert.match(head, /content-type: text\/plain/i);
    assert.match(head, /x-request-id: /i);
  });

  it('never switches protocols for a request without Upgrade: websocket or with another WebSocket version', async () => {
    const common = ['Host: x', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', `Authorization: Bearer ${suite.env.key}`];
    const noUpgrade = await rawRequest(suite.port, ['GET /v1/stream HTTP/1.1', ...common, 'Sec-WebSocket-Version: 13']);
    assert.match(noUpgrade, /^HTTP\/1\.1 426 /);
    assert.match(noUpgrade, /content-type: text\/plain/i);
    const otherUpgrade = await rawRequest(suite.port, [
      'GET /v1/stream HTTP/1.1',
      ...common,
      'Upgrade: h2c',
      'Connection: Upgrade',
      'Sec-WebSocket-Version: 13',
    ]);
    assert.match(otherUpgrade, /^HTTP\/1\.1 426 /);
    const version8 = await rawRequest(suite.port, [
      'GET /v1/stream HTTP/1.1',
      ...common,
      'Upgrade: websocket',
      'Connection: Upgrade',
      'Sec-WebSocket-Version: 8',
    ]);
    assert.match(version8, /^HTTP\/1\.1 426 /);
    assert.match(version8, /sec-websocket-version: 13/i);
    // the same handshake with the right version and headers is accepted
    const ok = await rawRequest(suite.port, [
      'GET /v1/stream HTTP/1.1',
      ...common,
      'Upgrade: WebSocket',
      'Connection: Upgrade',
      'Sec-WebSocket-Version: 13',
    ]);
    assert.match(ok, /^HTTP\/1\.1 101 /);
  });

  it('closes the socket with 1009 for a client frame above 64 KiB, and answers one of exactly 64 KiB', async () => {
    assert.equal(MAX_CLIENT_FRAME_BYTES, 64 * 1024);
    const c = await open();
    const frameOf = (bytes: number) => {
      const shell = JSON.stringify({
        action: 'subscribe',
        channel: 'spot.trades',
        filters: { chain: 'base', token: BASE_TOKEN },
        id: '',
      });
      return JSON.stringify({
        action: 'subscribe',
        channel: 'spot.trades',
        filters: { chain: 'base', token: BASE_TOKEN },
        id: 'x'.repeat(bytes - shell.length),
      });
    };
    const fits = frameOf(MAX_CLIENT_FRAME_BYTES);
    assert.equal(Buffer.byteLength(fits), MAX_CLIENT_FRAME_BYTES);
    assert.equal((await c.request(fits)).type, 'ack');
    c.ws.send(frameOf(MAX_CLIENT_FRAME_BYTES + 1));
    const closed = await c.waitClosed();
    assert.equal(closed.code, 1009);
    // binary frames obey the same limit
    const b = await open();
    b.ws.send(Buffer.from(frameOf(200 * 1024)), { binary: true });
    assert.equal((await b.waitClosed()).code, 1009);
  });

  it('lists a non-string id together with every other problem of the frame in one VALIDATION_ERROR', async () => {
    const c = await open();
    const missingFilters = await c.request({
      action: 'subscribe',
      channel: 'spot.candles',
      filters: { timeframe: '2m' },
      id: 7,
    });
    assert.deepEqual(fieldsOf(missingFilters), ['chain', 'id', 'timeframe', 'token']);
    assert.equal(missingFilters.id, null);
    assert.deepEqual(fieldsOf(await c.request({ action: 'publish', id: {} })), ['action', 'id']);
    assert.deepEqual(fieldsOf(await c.request({ action: 'unsubscribe', id: 1 })), ['id', 'subscriptionId']);
    // alone, it is the only problem; an unsupported chain still answers UNSUPPORTED_CHAIN
    assert.deepEqual(
      fieldsOf(
        await c.request({
          action: 'subscribe',
          channel: 'spot.trades',
          filters: { chain: 'base', token: BASE_TOKEN },
          id: 7,
        }),
      ),
      ['id'],
    );
    const unsupported = await c.request({
      action: 'subscribe',
      channel: 'spot.trades',
      filters: { chain: 'polygon', token: BASE_TOKEN },
      id: 7,
    });
    assert.equal(unsupported.code, 'UNSUPPORTED_CHAIN');
    assert.deepEqual(unsupported.details, { chain: 'polygon' });
  });

  it('lists an unknown channel and non-object filters together', async () => {
    const c = await open();
    const refused = await c.request({ action: 'subscribe', channel: 'spot.orders', filters: 'all', id: 'f1' });
    assert.deepEqual(fieldsOf(refused), ['channel', 'filters']);
    assert.equal(refused.id, 'f1');
    // nothing was subscribed and the connection stays usable
    assert.equal(
      (await c.request({ action: 'subscribe', channel: 'spot.trades', filters: { chain: 'base', token: BASE_TOKEN } }))
        .type,
      'ack',
    );
  });
});
