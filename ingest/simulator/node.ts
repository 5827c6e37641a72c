// The simulator as a local chain node: its market's blocks served over JSON-RPC (HTTP, batches,
// and WebSocket subscriptions) on 127.0.0.1, one endpoint per chain (`/solana`, `/base`, …), so
// `spot up` reads it through the same block sources as a real node.
//
// Solana: getSlot, getBlocks, getBlock, blockSubscribe, slotSubscribe. EVM: eth_blockNumber, eth_getBlockByNumber,
// eth_getLogs, eth_getTransactionReceipt, eth_call (decimals/symbol/name/totalSupply of the
// tokens it launched), eth_subscribe newHeads. Blocks are sealed as the market's clock passes
// them; subscribers are notified on every seal.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { CHAIN_INFO, type Chain } from '../../core/chains.ts';
import type { Context } from '../../core/context.ts';
import type { EvmChain } from './addresses.ts';
import { createEvmNodeChain, createSolanaNodeChain, NodeFault, type Anchor, type NodeChain } from './node-chains.ts';
import type { ChainRecord } from './records.ts';
import { notificationBytes } from './json-bytes.ts';

export interface SimulatorNode {
  /** The HTTP endpoint of a chain (`ws://` on the same path for subscriptions). */
  url(chain: Chain): string;
  wsUrl(chain: Chain): string;
  /** The first block (slot) served on a chain: where a reader without a cursor starts. */
  firstBlock(chain: Chain): number;
  append(record: ChainRecord): void;
  /** Seals every chain's blocks before `until` (event time) and notifies subscribers. */
  seal(until: number): void;
  /** Resolves once every chain's reader processed its blocks up to the tips taken by `mark()`, or `cancelled()` turns true. */
  waitAcknowledged(tips: Map<Chain, number>, cancelled: () => boolean): Promise<void>;
  /** The current tips. */
  mark(): Map<Chain, number>;
  close(): Promise<void>;
}

export interface SimulatorNodeOptions {
  /** The simulator's seed: block hashes derive from it (stable across restarts). */
  seed: string;
  chains: Chain[];
  /** Event time of the first records, ms. */
  start: number;
  /** Per chain, the last block its reader processed in an earlier run. */
  anchors?: Partial<Record<Chain, Anchor>>;
  /** The last block a chain's reader processed and had acknowledged (its saved cursor). */
  processed: (chain: Chain) => number;
}

interface Request {
  jsonrpc?: string;
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

interface Subscription {
  chain: NodeChain;
  method: string;
  socket: WebSocket;
}

const NOTIFICATION: Record<string, string> = {
  slotSubscribe: 'slotNotification',
  blockSubscribe: 'blockNotification',
  eth_subscribe: 'eth_subscription',
};
const UNSUBSCRIBE = new Set(['slotUnsubscribe', 'blockUnsubscribe', 'eth_unsubscribe']);

export async function startSimulatorNode(ctx: Context, options: SimulatorNodeOptions): Promise<SimulatorNode> {
  const logger = ctx.logger.child({ component: 'simulator-node' });
  const chains = new Map<Chain, NodeChain>();
  for (const chain of options.chains) {
    const anchor = options.anchors?.[chain];
    chains.set(
      chain,
      CHAIN_INFO[chain].family === 'solana'
        ? createSolanaNodeChain({ seed: options.seed, start: options.start, ...(anchor ? { anchor } : {}) })
        : createEvmNodeChain({
            seed: options.seed,
            chain: chain as EvmChain,
            start: options.start,
            ...(anchor ? { anchor } : {}),
          }),
    );
  }
  const subscriptions = new Map<string, Subscription>();
  let nextSubscription = 1;

  const chainOf = (url: string | undefined) =>
    chains.get((url ?? '').split('?')[0]!.replace(/^\/+|\/+$/g, '') as Chain);

  function answer(chain: NodeChain, request: Request, socket?: WebSocket): object {
    const id = request.id ?? null;
    if (typeof request.method !== 'string')
      return { jsonrpc: '2.0', id, error: { code: -32600, message: 'Invalid request' } };
    const params = Array.isArray(request.params)
      ? request.params
      : request.params === undefined
        ? []
        : [request.params];
    ctx.metrics.inc(`simulator.node.calls.${chain.chain}`);
    ctx.metrics.inc(`simulator.node.method.${chain.chain}.${request.method}`);
    try {
      if (socket && chain.subscriptions.includes(request.method)) {
        if (request.method === 'eth_subscribe' && params[0] !== 'newHeads')
          throw new NodeFault(-32602, `unsupported subscription ${JSON.stringify(params[0])}`);
        const number = nextSubscription++;
        const wire = request.method === 'eth_subscribe' ? `0x${number.toString(16)}` : number;
        subscriptions.set(String(wire), { chain, method: request.method, socket });
        return { jsonrpc: '2.0', id, result: wire };
      }
      if (socket && UNSUBSCRIBE.has(request.method))
        return { jsonrpc: '2.0', id, result: subscriptions.delete(String(params[0])) };
      return { jsonrpc: '2.0', id, result: chain.call(request.method, params) ?? null };
    } catch (error) {
      const fault = error instanceof NodeFault ? error : new NodeFault(-32603, (error as Error).message);
      return { jsonrpc: '2.0', id, error: { code: fault.code, message: fault.message } };
    }
  }

  function reply(chain: NodeChain | undefined, raw: string, socket?: WebSocket): string {
    if (!chain) return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32601, message: 'no such chain' } });
    ctx.metrics.inc(`simulator.node.requests.${chain.chain}`);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    }
    return JSON.stringify(
      Array.isArray(body)
        ? body.map((item) => answer(chain, item as Request, socket))
        : answer(chain, body as Request, socket),
    );
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const chain = chainOf(req.url);
      res
        .writeHead(chain ? 200 : 404, { 'content-type': 'application/json' })
        .end(reply(chain, Buffer.concat(chunks).toString('utf8')));
    });
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (socket, req) => {
    const chain = chainOf(req.url);
    socket.on('message', (raw) => socket.send(reply(chain, raw.toString(), socket)));
    socket.on('close', () => {
      for (const [id, subscription] of subscriptions) if (subscription.socket === socket) subscriptions.delete(id);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  logger.info({ port, chains: options.chains }, 'simulator node serving JSON-RPC on loopback');

  function notify(chain: NodeChain, previousTip: number): void {
    for (const [id, subscription] of subscriptions) {
      if (subscription.chain !== chain) continue;
      const wire = subscription.method === 'eth_subscribe' ? id : Number(id);
      for (const result of chain.notifications(subscription.method, previousTip)) {
        // Sent as text, as JSON.stringify's string would be.
        subscription.socket.send(
          notificationBytes({
            jsonrpc: '2.0',
            method: NOTIFICATION[subscription.method],
            params: { subscription: wire, result },
          }),
          { binary: false },
        );
      }
    }
  }

  return {
    url: (chain) => `http://127.0.0.1:${port}/${chain}`,
    firstBlock: (chain) => chains.get(chain)!.first,
    wsUrl: (chain) => `ws://127.0.0.1:${port}/${chain}`,
    append(record) {
      const chain = chains.get(record.chain);
      if (!chain) throw new RangeError(`the node serves no ${record.chain}`);
      chain.append(record);
    },
    seal(until) {
      for (const chain of chains.values()) {
        // A reader fed by pushes (blockSubscribe) seldom asks past its cursor: its saved cursor says it.
        chain.acknowledge(options.processed(chain.chain));
        const before = chain.tip;
        if (chain.seal(until) > before) notify(chain, before);
      }
    },
    mark: () => new Map([...chains].map(([name, chain]) => [name, chain.tip])),
    async waitAcknowledged(tips, cancelled) {
      for (;;) {
        if (cancelled() || [...tips].every(([name, tip]) => options.processed(name) >= tip)) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    async close() {
      for (const socket of wss.clients) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
