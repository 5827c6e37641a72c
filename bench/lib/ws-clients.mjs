// Child process holding the benchmark's WebSocket subscribers (a `ws` client per connection), so
// receiving frames never shares an event loop with the server under test. Driven over IPC:
//   argv[2]: {url, authorization?, connections, subscribe: string[] (frame i % n goes to connection i), recordIds}
//   parent → {type:'stats'} | {type:'latency', sent: [id, epochMs][], samples?} | {type:'reset'} | {type:'close'}
//   child  → {type:'ready', connections} | {type:'stats', ...} | {type:'latency', ..., loopDelayMs} | {type:'error', message}
// Plain JavaScript so it starts without the TypeScript loader; params are ClientOptions (clients.ts).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import WebSocket from 'ws';
import { summarize } from './summarize.mjs';

/** Wall-clock epoch ms with sub-ms precision (as scenario.ts epochNow). */
const epochNow = () => performance.timeOrigin + performance.now();

const params = JSON.parse(process.argv[2] ?? '{}');
const send = (message) => process.send?.(message);
const ID = /"data":\{"id":"([^"]+)"/;

let frames = 0;
let firstAt = 0;
let lastAt = 0;
const ids = [];
const arrivals = [];
const sockets = [];
// This process's own event-loop delay since the last reset: how late it may stamp a frame.
const loopDelay = monitorEventLoopDelay({ resolution: 2 });
loopDelay.enable();

function onFrame(data) {
  const now = epochNow();
  frames++;
  if (firstAt === 0) firstAt = now;
  lastAt = now;
  if (params.recordIds) {
    const match = ID.exec(data.toString());
    if (match) {
      ids.push(match[1]);
      arrivals.push(now);
    }
  }
}

async function connect(index) {
  const ws = new WebSocket(params.url, {
    headers: params.authorization ? { Authorization: params.authorization } : {},
    perMessageDeflate: false,
  });
  sockets.push(ws);
  await new Promise((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`handshake refused: HTTP ${res.statusCode}`)));
  });
  const frame = params.subscribe[index % params.subscribe.length];
  if (frame === undefined) {
    ws.on('message', onFrame);
    return;
  }
  await new Promise((resolve, reject) => {
    if (!params.expectAck) {
      ws.on('message', onFrame);
      ws.send(frame, (error) => (error ? reject(error) : resolve()));
      return;
    }
    ws.once('message', (data) => {
      const text = data.toString();
      if (!text.startsWith('{"type":"ack"')) return reject(new Error(`subscribe refused: ${text.slice(0, 300)}`));
      ws.on('message', onFrame);
      resolve();
    });
    ws.send(frame);
  });
}

async function main() {
  // A few connections at a time: a thousand handshakes at once would trip accept backlogs.
  for (let i = 0; i < params.connections; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, params.connections - i) }, (_, k) => connect(i + k)));
  }
  send({ type: 'ready', connections: sockets.length });
}

process.on('message', (raw) => {
  const message = raw;
  if (message.type === 'stats') {
    send({
      type: 'stats',
      frames,
      firstAt,
      lastAt,
      open: sockets.filter((s) => s.readyState === WebSocket.OPEN).length,
    });
  } else if (message.type === 'reset') {
    frames = 0;
    firstAt = 0;
    lastAt = 0;
    ids.length = 0;
    arrivals.length = 0;
    loopDelay.reset();
    send({ type: 'reset' });
  } else if (message.type === 'latency') {
    const sentAt = new Map(message.sent ?? []);
    const samples = [];
    for (let i = 0; i < ids.length; i++) {
      const t0 = sentAt.get(ids[i]);
      if (t0 !== undefined) samples.push(arrivals[i] - t0);
    }
    send({
      type: 'latency',
      frames,
      matched: samples.length,
      summary: summarize(samples),
      loopDelayMs: { p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 },
      ...(message.samples ? { samples } : {}),
    });
  } else if (message.type === 'close') {
    for (const ws of sockets) ws.terminate();
    process.exit(0);
  }
});

main().catch((error) => {
  send({ type: 'error', message: error.message });
  process.exit(1);
});
