// A JSON-RPC node stand-in for tests: HTTP and WebSocket on one 127.0.0.1 ephemeral port,
// answering from handlers the test registers over its fixtures, with subscriptions the test
// can notify, and the failure modes sources must survive (dropped sockets, refused connects).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export class RpcFault extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export type RpcHandler = (params: any) => unknown;

/** How the next HTTP request fails: an HTTP status (429, 5xx), a body that is no JSON, or a dropped socket. */
export type HttpFault = number | 'garbage' | 'drop';

interface Subscription {
  id: string;
  method: string;
  params: unknown;
  socket: WebSocket;
}

/** eth_subscribe → eth_subscription; logsSubscribe → logsNotification. */
const NOTIFICATION_METHOD = (subscribeMethod: string) =>
  subscribeMethod === 'eth_subscribe' ? 'eth_subscription' : subscribeMethod.replace(/Subscribe$/, 'Notification');

export interface RecordedRpcServer {
  readonly url: string;
  readonly wsUrl: string;
  /** Every call served, over either transport, in arrival order. */
  readonly calls: Array<{ method: string; params: any; transport: 'http' | 'ws' }>;
  handle(method: string, handler: RpcHandler): void;
  /** Open subscriptions made with `method` (e.g. "logsSubscribe"). */
  subscriptions(method: string): Subscription[];
  /** Sends `result` to every open subscription of `method` the filter accepts; returns how many. */
  notify(method: string, result: unknown, filter?: (params: any) => boolean): number;
  /** Closes every open WebSocket from the server side. */
  dropSockets(): void;
  /** Faults served to the next HTTP requests, one each, in order. */
  readonly httpFaults: HttpFault[];
  /** Subscribe methods answered "method not found", as endpoints without them do. */
  readonly refusedSubscriptions: Set<string>;
  /** While false, WebSocket upgrades are refused (HTTP keeps working). */
  acceptWebSockets: boolean;
  close(): Promise<void>;
}

export async function startRecordedRpcServer(): Promise<RecordedRpcServer> {
  const handlers = new Map<string, RpcHandler>();
  const subscriptions = new Map<string, Subscription>();
  const calls: RecordedRpcServer['calls'] = [];
  const httpFaults: HttpFault[] = [];
  const refusedSubscriptions = new Set<string>();
  let nextSubscription = 1;

  function answer(
    request: { id?: unknown; method?: string; params?: unknown },
    transport: 'http' | 'ws',
    socket?: WebSocket,
  ): object {
    const id = request.id ?? null;
    const method = request.method ?? '';
    calls.push({ method, params: request.params, transport });
    if (refusedSubscriptions.has(method))
      return { jsonrpc: '2.0', id, error: { code: -32601, message: `method not found: ${method}` } };
    if (socket && (method.endsWith('Subscribe') || method === 'eth_subscribe')) {
      const subscription = String(nextSubscription++);
      subscriptions.set(subscription, { id: subscription, method, params: request.params, socket });
      // Solana answers subscription ids as numbers, Ethereum as hex strings.
      return {
        jsonrpc: '2.0',
        id,
        result: method === 'eth_subscribe' ? `0x${Number(subscription).toString(16)}` : Number(subscription),
      };
    }
    const handler = handlers.get(method);
    if (!handler) return { jsonrpc: '2.0', id, error: { code: -32601, message: `method not found: ${method}` } };
    try {
      return { jsonrpc: '2.0', id, result: handler(request.params) ?? null };
    } catch (error) {
      const fault = error instanceof RpcFault ? error : new RpcFault(-32603, (error as Error).message);
      return { jsonrpc: '2.0', id, error: { code: fault.code, message: fault.message } };
    }
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const fault = httpFaults.shift();
      if (fault === 'drop') return void req.socket.destroy();
      if (fault === 'garbage')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","res');
      if (fault !== undefined) return void res.writeHead(fault).end('{"error":"busy"}');
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400).end();
        return;
      }
      const reply = Array.isArray(body) ? body.map((item) => answer(item, 'http')) : answer(body as object, 'http');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
    });
  });

  const state = { acceptWebSockets: true };
  const wss = new WebSocketServer({
    server,
    verifyClient: (_info, done) => (state.acceptWebSockets ? done(true) : done(false, 503, 'not now')),
  });
  wss.on('connection', (socket) => {
    socket.on('message', (raw) => {
      let request: { id?: unknown; method?: string; params?: unknown };
      try {
        request = JSON.parse(raw.toString());
      } catch {
        return;
      }
      socket.send(JSON.stringify(answer(request, 'ws', socket)));
    });
    socket.on('close', () => {
      for (const [id, subscription] of subscriptions) if (subscription.socket === socket) subscriptions.delete(id);
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const wireId = (subscription: Subscription) =>
    subscription.method === 'eth_subscribe' ? `0x${Number(subscription.id).toString(16)}` : Number(subscription.id);

  return {
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    calls,
    httpFaults,
    refusedSubscriptions,
    handle(method, handler) {
      handlers.set(method, handler);
    },
    subscriptions: (method) => [...subscriptions.values()].filter((subscription) => subscription.method === method),
    notify(method, result, filter) {
      let sent = 0;
      for (const subscription of subscriptions.values()) {
        if (subscription.method !== method || (filter && !filter(subscription.params))) continue;
        subscription.socket.send(
          JSON.stringify({
            jsonrpc: '2.0',
            method: NOTIFICATION_METHOD(method),
            params: { subscription: wireId(subscription), result },
          }),
        );
        sent++;
      }
      return sent;
    },
    dropSockets() {
      for (const socket of wss.clients) socket.terminate();
      subscriptions.clear();
    },
    get acceptWebSockets() {
      return state.acceptWebSockets;
    },
    set acceptWebSockets(value: boolean) {
      state.acceptWebSockets = value;
    },
    async close() {
      for (const socket of wss.clients) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
