// Fan-out: WebSocket frames/s delivered to N subscribers of one token's spot.trades, three ways in
// one run, each with the same subscriber process (ws clients) and the same trade messages:
//   spot edge   — createStreamEdge driven through route() (schema check, index lookup, per-
//                 subscription frame with its own seq, outbox);
//   raw uWS     — uWebSockets.js app.publish of one prebuilt frame to a topic;
//   ws server   — a `ws` server doing the same routing: Map lookup by token, frame per subscriber.
// Rate = frames received / (last frame's arrival − first route call), both on the wall clock.
import uWS from 'uWebSockets.js';
import { WebSocketServer, type WebSocket as WsSocket } from 'ws';
import type { AddressInfo } from 'node:net';
import { normalizeAddress, tokenKey, type Chain } from '../../core/chains.ts';
import type { PricedTradeMessage } from '../../core/topics.ts';
import { TOPICS } from '../../core/topics.ts';
import { createStreamEdge } from '../../stream-edge/server.ts';
import { startClients, type ClientOptions } from '../lib/clients.ts';
import { derive } from '../lib/derived.ts';
import { benchKeys } from '../lib/edge-env.ts';
import { readDecoded } from '../lib/inputs.ts';
import { check, epochNow, runScenarioMain, type Measurement } from '../lib/scenario.ts';
import { round } from '../lib/stats.ts';

interface Params {
  inputFile: string;
  subscribers: number;
  /** Trade messages routed; frames = messages × subscribers. */
  messages: number;
  /** Messages routed between two event-loop turns (lets the server write). */
  burst: number;
  targetRatio: number;
}

interface Server {
  name: string;
  url: string;
  clientOptions: Omit<ClientOptions, 'url' | 'connections' | 'recordIds'>;
  route(message: PricedTradeMessage): void;
  close(): Promise<void>;
}

const yieldNow = () => new Promise<void>((resolve) => setImmediate(resolve));

async function measure(
  server: Server,
  params: Params,
  messages: PricedTradeMessage[],
): Promise<{ framesPerSecond: number; frames: number; ms: number; handoffMs: number }> {
  const clients = await startClients({
    ...server.clientOptions,
    url: server.url,
    connections: params.subscribers,
    recordIds: false,
  });
  try {
    await clients.reset();
    const expected = params.messages * params.subscribers;
    const started = epochNow();
    for (let i = 0; i < params.messages; i++) {
      server.route(messages[i % messages.length]!);
      if (i % params.burst === params.burst - 1) await yieldNow();
    }
    const handoffMs = epochNow() - started;
    const stats = await clients.waitFrames(expected, 3000, 60_000);
    const ms = stats.lastAt - started;
    return { framesPerSecond: (stats.frames * 1000) / ms, frames: stats.frames, ms, handoffMs };
  } finally {
    await clients.close();
  }
}

function tradeSubscribe(chain: string, token: string): string {
  return JSON.stringify({ action: 'subscribe', channel: 'spot.trades', filters: { chain, token }, id: 'fan' });
}

async function spotEdge(
  params: Params,
  ctx: Parameters<typeof benchKeys>[0],
  chain: string,
  token: string,
): Promise<Server> {
  const env = benchKeys(ctx);
  const edge = createStreamEdge(ctx, {
    log: null,
    keys: env.keys,
    limiters: env.limiters,
    maxConnectionsPerKey: params.subscribers + 10,
    maxUnsentFrames: 10_000_000,
  });
  const { port } = await edge.start();
  return {
    name: 'spot stream edge (route → outbox → uWS)',
    url: `ws://127.0.0.1:${port}/v1/stream`,
    clientOptions: { authorization: env.authorization, subscribe: [tradeSubscribe(chain, token)], expectAck: true },
    route: (message) => edge.route(TOPICS.trades.name, message),
    async close() {
      await edge.stop();
      env.close();
    },
  };
}

async function rawUws(): Promise<Server> {
  const app = uWS.App();
  app.ws('/*', {
    compression: uWS.DISABLED,
    maxBackpressure: 1024 * 1024 * 1024,
    closeOnBackpressureLimit: 0,
    open: (ws) => void ws.subscribe('trades'),
  });
  let listen: uWS.us_listen_socket | null = null;
  const port = await new Promise<number>((resolve, reject) => {
    app.listen('127.0.0.1', 0, (socket) => {
      if (!socket) return reject(new Error('raw uWS could not listen'));
      listen = socket;
      resolve(uWS.us_socket_local_port(socket as unknown as uWS.us_socket));
    });
  });
  let seq = 0;
  return {
    name: 'raw uWebSockets.js app.publish',
    url: `ws://127.0.0.1:${port}/`,
    clientOptions: { subscribe: [], expectAck: false },
    // One frame for everyone: the same envelope, built once per message.
    route: (message) =>
      void app.publish(
        'trades',
        `{"type":"update","channel":"spot.trades","subscriptionId":"raw","seq":${++seq},"data":${JSON.stringify(message.trade)}}`,
        false,
      ),
    async close() {
      if (listen) uWS.us_listen_socket_close(listen);
      app.close();
    },
  };
}

async function wsServer(): Promise<Server> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const byToken = new Map<string, Set<{ ws: WsSocket; seq: number; prefix: string }>>();
  let nextId = 0;
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as { filters: { chain: Chain; token: string } };
      const key = tokenKey(frame.filters.chain, normalizeAddress(frame.filters.chain, frame.filters.token));
      const subscriptionId = `ws-${nextId++}`;
      const sub = {
        ws,
        seq: 0,
        prefix: `{"type":"update","channel":"spot.trades","subscriptionId":"${subscriptionId}","seq":`,
      };
      let set = byToken.get(key);
      if (!set) byToken.set(key, (set = new Set()));
      set.add(sub);
      ws.on('close', () => set!.delete(sub));
      ws.send(JSON.stringify({ type: 'ack', channel: 'spot.trades', subscriptionId, id: 'fan', status: 'success' }));
    });
  });
  const port = (wss.address() as AddressInfo).port;
  return {
    name: '`ws` server, same routing (Map lookup + send)',
    url: `ws://127.0.0.1:${port}/`,
    clientOptions: { subscribe: [], expectAck: true },
    route(message) {
      const chain = message.trade.chain as Chain;
      const subs = byToken.get(tokenKey(chain, normalizeAddress(chain, message.trade.token)));
      if (!subs) return;
      const data = JSON.stringify(message.trade);
      for (const sub of subs) sub.ws.send(`${sub.prefix}${++sub.seq},"data":${data}}`);
    },
    async close() {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

runScenarioMain<Params>(
  'fanout',
  { inputFile: '', subscribers: 1000, messages: 300, burst: 10, targetRatio: 0.8 },
  async ({ ctx }, params) => {
    const { trades } = derive(ctx, readDecoded(params.inputFile));
    // The most traded token's messages.
    const counts = new Map<string, number>();
    for (const m of trades) counts.set(m.trade.token, (counts.get(m.trade.token) ?? 0) + 1);
    const token = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
    const messages = trades.filter((m) => m.trade.token === token);
    const chain = messages[0]!.trade.chain;

    const results: Record<string, Awaited<ReturnType<typeof measure>>> = {};
    const names: Record<string, string> = {};
    const factories: Array<[string, () => Promise<Server>]> = [
      ['spot', () => spotEdge(params, ctx, chain, token)],
      ['uws', rawUws],
      [
        'ws',
        async () => {
          const server = await wsServer();
          const subscribe = tradeSubscribe(chain, token);
          return { ...server, clientOptions: { ...server.clientOptions, subscribe: [subscribe] } };
        },
      ],
    ];
    for (const [key, make] of factories) {
      const server = await make();
      names[key] = server.name;
      try {
        results[key] = await measure(server, params, messages);
      } finally {
        await server.close();
      }
    }
    const measurements: Measurement[] = Object.entries(results).map(([key, r]) => ({
      subject: names[key]!,
      metric: 'frames/s',
      value: round(r.framesPerSecond, 0),
      unit: 'frames/s',
      extra: { frames: r.frames, ms: round(r.ms, 0), serverHandoffMs: round(r.handoffMs, 0) },
    }));
    const ratio = results.spot!.framesPerSecond / results.uws!.framesPerSecond;
    return {
      params: {
        subscribers: params.subscribers,
        messages: params.messages,
        framesExpected: params.messages * params.subscribers,
        frameBytes: JSON.stringify(messages[0]!.trade).length + 90,
      },
      measurements,
      ratios: {
        spot_vs_raw_uws_publish: round(ratio, 3),
        spot_vs_ws_server: round(results.spot!.framesPerSecond / results.ws!.framesPerSecond, 3),
      },
      targets: [
        check(
          `fan-out >= ${params.targetRatio}× raw uWebSockets.js publish`,
          'ratio',
          '>=',
          params.targetRatio,
          round(ratio, 3),
          '×',
        ),
      ],
      notes: [
        'Subscribers live in one separate process (ws clients); frames are counted there. serverHandoffMs is the time the server spent routing and writing.',
      ],
    };
  },
);
