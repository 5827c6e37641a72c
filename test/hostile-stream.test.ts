// Hostile stream input (issue 14): X-Request-ID on the stream port follows the REST rule on the
// 101 and the plain answers; oversized and invalid-UTF-8 frames close as docs/hostile-input.md
// says (1009; 1006 where uWS drops the connection itself).
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import {
  MAX_CLIENT_FRAME_BYTES,
  MAX_READ_FRAME_BYTES,
  createStreamEdge,
  type StreamEdge,
} from '../stream-edge/server.ts';
import { rawRequest } from './helpers/raw-http.ts';
import { createEnv, type Env } from './helpers/stream-edge.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('hostile stream input', () => {
  let env: Env;
  let edge: StreamEdge;
  let port: number;
  before(async () => {
    env = createEnv();
    edge = createStreamEdge(env.ctx, { log: null, keys: env.keys });
    port = (await edge.start()).port;
  });
  after(async () => {
    await edge?.stop();
    env?.cleanup();
  });

  const upgrade = (requestId: string, websocket: boolean) =>
    rawRequest(
      port,
      Buffer.from(
        [
          'GET /v1/stream HTTP/1.1',
          'Host: x',
          `X-Request-ID: ${requestId}`,
          ...(websocket
            ? [
                'Upgrade: websocket',
                'Connection: Upgrade',
                'Sec-WebSocket-Version: 13',
                'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
                `Authorization: Bearer ${env.key}`,
              ]
            : ['Connection: close']),
          '',
          '',
        ].join('\r\n'),
        'utf8',
      ),
    );

  it('echoes a valid X-Request-ID and replaces an invalid one on the 101 and the 426', async () => {
    for (const websocket of [true, false]) {
      const status = websocket ? 101 : 426;
      let reply = await upgrade('trace-1', websocket);
      assert.equal(reply.status, status);
      assert.equal(reply.headers['x-request-id'], 'trace-1');
      for (const invalid of ['a🦄b', 'a b', 'x'.repeat(129)]) {
        reply = await upgrade(invalid, websocket);
        assert.equal(reply.status, status);
        assert.match(reply.headers['x-request-id'] ?? '', UUID, JSON.stringify(invalid));
      }
    }
  });

  const closeOf = (send: (ws: WebSocket) => void) =>
    new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/stream`, { headers: { authorization: `Bearer ${env.key}` } });
      ws.on('open', () => send(ws));
      ws.on('close', (code) => resolve(code));
      ws.on('error', () => {});
      setTimeout(() => reject(new Error('no close')), 10_000);
    });

  it('closes 1009 on a frame over the frame limit, up to where uWS reads', async () => {
    assert.equal(await closeOf((ws) => ws.send('x'.repeat(MAX_CLIENT_FRAME_BYTES + 1))), 1009);
    assert.equal(await closeOf((ws) => ws.send(Buffer.alloc(MAX_READ_FRAME_BYTES - 16))), 1009);
    // Beyond MAX_READ_FRAME_BYTES uWS drops the TCP connection itself: no close frame.
    assert.equal(await closeOf((ws) => ws.send('x'.repeat(MAX_READ_FRAME_BYTES + 1))), 1006);
  });

  it('loses the connection on invalid UTF-8 in a text frame (uWS closes it, no 1007 possible)', async () => {
    const code = await closeOf((ws) =>
      (ws as unknown as { _socket: { write(b: Buffer): void } })._socket.write(
        Buffer.from([0x81, 0x84, 0, 0, 0, 0, 0x7b, 0xff, 0xfe, 0x7d]),
      ),
    );
    assert.equal(code, 1006);
  });
});
