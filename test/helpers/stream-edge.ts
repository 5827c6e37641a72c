// Shared pieces of the stream-edge suites: a context on a temp dir, a real key store, a `ws`
// client that collects frames, and valid topic messages.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { loadConfig } from '../../core/config.ts';
import { createContext, type Context } from '../../core/context.ts';
import { createLogger } from '../../core/logger.ts';
import { createKeyStore, type KeyStore } from '../../core/auth/keys.ts';
import type { CandleUpdateMessage, PricedTradeMessage } from '../../core/topics.ts';
import type { Candle, Token } from '../../core/schemas.ts';
import { sampleToken } from '../fixtures/spec-samples.ts';
import { createStreamEdge, type StreamEdge } from '../../stream-edge/server.ts';

export interface Env {
  dir: string;
  ctx: Context;
  keys: KeyStore;
  key: string;
  cleanup(): void;
}

export function createEnv(): Env {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-stream-edge-'));
  const ctx = createContext(
    loadConfig({ SPOT_DATA_DIR: dir, SPOT_LOG_LEVEL: 'silent', SPOT_WS_PORT: '0' }),
    createLogger('silent'),
  );
  const keys = createKeyStore(ctx, { path: path.join(dir, 'keys.sqlite') });
  const { key } = keys.create({ label: 'test' });
  return {
    dir,
    ctx,
    keys,
    key,
    cleanup() {
      keys.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type Frame = Record<string, any>;

export interface HttpRefusal {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A real WebSocket client that keeps every frame it received, in order. */
export class StreamClient {
  readonly frames: Frame[] = [];
  closed: { code: number; reason: string } | null = null;
  private waiters: Array<() => void> = [];

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.frames.push(JSON.parse(data.toString()));
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
  }

  private wake() {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Waits until `predicate` holds over the frames received so far. */
  async until(predicate: (frames: Frame[]) => boolean, what = 'frames', timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.frames)) {
      if (this.closed && !predicate(this.frames))
        throw new Error(`socket closed (${this.closed.code}) while waiting for ${what}`);
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.frames).slice(0, 2000)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Sends a frame and returns the reply to it: the next ack or error frame (updates pass by). */
  async request(frame: unknown): Promise<Frame> {
    const before = this.frames.length;
    const isReply = (f: Frame) => f.type !== 'update';
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
    await this.until((f) => f.slice(before).some(isReply), 'a reply');
    return this.frames.slice(before).find(isReply)!;
  }

  /** Subscribes and returns the ack (throws on an error frame). */
  async subscribe(channel: string, filters: unknown, id?: string): Promise<Frame> {
    const reply = await this.request({ action: 'subscribe', channel, filters, ...(id !== undefined ? { id } : {}) });
    if (reply.type !== 'ack') throw new Error(`subscribe refused: ${JSON.stringify(reply)}`);
    return reply;
  }

  updates(subscriptionId: string): Frame[] {
    return this.frames.filter((f) => f.type === 'update' && f.subscriptionId === subscriptionId);
  }

  async waitClosed(timeoutMs = 10_000): Promise<{ code: number; reason: string }> {
    await this.until(() => this.closed !== null, 'close', timeoutMs).catch((error) => {
      if (!this.closed) throw error;
    });
    return this.closed!;
  }

  close(): void {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.terminate();
  }
}

/** Opens a socket; rejects with the HTTP refusal (status, headers, body) when the upgrade is refused. */
export function connect(
  port: number,
  key: string | null,
  extraHeaders: Record<string, string> = {},
): Promise<StreamClient> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...extraHeaders };
    if (key !== null) headers.Authorization = `Bearer ${key}`;
    const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/stream`, { headers });
    const client = new StreamClient(ws);
    ws.once('open', () => resolve(client));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () =>
        reject(
          Object.assign(new Error(`refused ${res.statusCode}`), {
            refusal: { status: res.statusCode!, headers: res.headers, body },
          }),
        ),
      );
    });
    ws.once('error', (error) => reject(error));
  });
}

export async function refusalOf(promise: Promise<StreamClient>): Promise<HttpRefusal> {
  try {
    const client = await promise;
    client.close();
  } catch (error) {
    const refusal = (error as { refusal?: HttpRefusal }).refusal;
    if (refusal) return refusal;
    throw error;
  }
  throw new Error('the handshake was accepted');
}

// ---- topic messages ----

export const BASE_TOKEN = '0x4200000000000000000000000000000000000006';
export const BASE_TOKEN_2 = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';
export const BASE_WALLET = '0x1111111111111111111111111111111111111111';
export const SOL_TOKEN = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
export const SOL_WALLET = '4wTV1YmiEkRvAtNtsSGPtUrqRYQMe5SKy2uB4Jjaxnjf';

export const evmAddress = (n: number) => '0x' + n.toString(16).padStart(40, '0');

let tradeCounter = 0;
export function tradeMessage(
  over: Partial<PricedTradeMessage['trade']> = {},
  identities: string[] = [],
  extra: { name?: string } = {},
): PricedTradeMessage {
  tradeCounter++;
  const pv = (usd: string) => ({ native: '0.5', usd });
  return {
    trade: {
      id: `base:0x${tradeCounter.toString(16)}:0`,
      chain: 'base',
      token: BASE_TOKEN,
      name: extra.name ?? 'Moon',
      symbol: 'MOON',
      trader: BASE_WALLET,
      transactionHash: `0x${tradeCounter.toString(16)}`,
      side: 'buy',
      amount: String(tradeCounter),
      price: pv('0.35'),
      volume: pv('525'),
      marketCap: pv('350000000'),
      timestamp: 1760000000000 + tradeCounter,
      flags: ['kol'],
      platforms: [{ platform: 'axiom', isPaid: false, paidAt: null }],
      ...over,
    },
    identities,
    pool: '0x2222222222222222222222222222222222222222',
    dex: 'uniswap-v3',
  };
}

export function candle(time: number, close: number, volume = 1): Candle {
  return { time, open: 1, high: Math.max(1, close), low: Math.min(1, close), close, volume };
}

/** Open buckets of `timeframes`; each metric/denomination gets a distinct close so views differ. */
export function candleMessage(
  chain: 'base' | 'solana',
  token: string,
  time: number,
  close: number,
  timeframes = ['1m', '5m'],
): CandleUpdateMessage {
  const open: CandleUpdateMessage['open'] = {};
  for (const tf of timeframes) {
    open[tf] = {
      price: { usd: candle(time, close), native: candle(time, close / 1000) },
      marketCap: { usd: candle(time, close * 1e6, 7), native: candle(time, close * 1e3, 0.007) },
    };
  }
  return { chain, token, updatedAt: time, open };
}

export function tokenObject(address: string, updatedAt: number): Token {
  return { ...(sampleToken() as Token), chain: 'base', address, creator: BASE_WALLET, updatedAt };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface SuiteEdge {
  readonly env: Env;
  readonly edge: StreamEdge;
  readonly port: number;
  /** A client connected with the suite's key, closed after the suite. */
  open(): Promise<StreamClient>;
  /** Closes `client` after the suite too. */
  track(client: StreamClient): StreamClient;
}

/** A stream edge without a log (tests drive it through route()), started before the suite's tests and stopped after them. */
export function edgeForSuite(): SuiteEdge {
  let env: Env | null = null;
  let edge: StreamEdge | null = null;
  let port = 0;
  const clients: StreamClient[] = [];
  before(async () => {
    env = createEnv();
    edge = createStreamEdge(env.ctx, { log: null, keys: env.keys });
    ({ port } = await edge.start());
  });
  after(async () => {
    for (const c of clients) c.close();
    await edge?.stop();
    env?.cleanup();
  });
  const track = (client: StreamClient) => {
    clients.push(client);
    return client;
  };
  return {
    get env() {
      return env!;
    },
    get edge() {
      return edge!;
    },
    get port() {
      return port;
    },
    open: async () => track(await connect(port, env!.key)),
    track,
  };
}

/** A TCP relay in front of the edges: the test can cut every socket or point it at another edge. */
export function createRelay(target: () => number) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    const outbound = net.connect(target(), '127.0.0.1');
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        sockets.delete(s);
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  return {
    listen: () =>
      new Promise<number>((resolve) =>
        server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)),
      ),
    /** Destroys every relayed socket: the client sees its connection die without a close frame. */
    cut() {
      for (const s of sockets) s.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
