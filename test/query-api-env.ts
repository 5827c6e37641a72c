// Shared setup of the query-api suites: the API started in-process on an ephemeral port over the
// embedded event log (temp dir), the shared chDB store and a real key store; data fed through the
// topics (hot views) and through the store (history, cold keys).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createStore } from '../clickhouse/store.ts';
import type { CandleRow, SpotStore, TradeRow } from '../clickhouse/types.ts';
import { createKeyStore, type KeyStore } from '../core/auth/keys.ts';
import type { Chain } from '../core/chains.ts';
import { loadConfig } from '../core/config.ts';
import { createContext, type Context } from '../core/context.ts';
import { createEmbeddedLog } from '../core/eventlog/embedded.ts';
import type { EventLog } from '../core/eventlog/types.ts';
import { createLogger } from '../core/logger.ts';
import type { Token, Trade } from '../core/schemas.ts';
import { TOPICS, type CandleUpdateMessage, type PricedTradeMessage } from '../core/topics.ts';
import { base58Encode } from '../ingest/solana/base58.ts';
import { createQueryApi, type QueryApi, type QueryApiOptions } from '../query-api/app.ts';
import { sampleToken } from './fixtures/spec-samples.ts';
import { sharedChdb } from './helpers/chdb.ts';

export const WS_PORT = 18081;

export interface ApiEnv {
  dir: string;
  ctx: Context;
  log: EventLog;
  store: SpotStore;
  keys: KeyStore;
  key: string;
  api: QueryApi;
  base: string;
  /** Another API on the same views and store with its own options (small budgets, other stores). */
  extra(options: Partial<QueryApiOptions>): Promise<{ api: QueryApi; base: string }>;
  close(): Promise<void>;
}

export async function startEnv(): Promise<ApiEnv> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-query-api-'));
  const ctx = createContext(
    loadConfig({ SPOT_DATA_DIR: dir, SPOT_LOG_LEVEL: 'silent', SPOT_HTTP_PORT: '0', SPOT_WS_PORT: String(WS_PORT) }),
    createLogger('silent'),
  );
  const chdb = await sharedChdb();
  const store = createStore(chdb.ctx, chdb.client);
  const log = createEmbeddedLog(ctx, { path: path.join(dir, 'log', 'events.sqlite'), pollMs: 5 });
  const keys = createKeyStore(ctx, { path: path.join(dir, 'keys.sqlite') });
  const { key } = keys.create({ label: 'test' });
  const api = createQueryApi(ctx, { store, log, keys });
  const { port } = await api.start();
  const extras: QueryApi[] = [];
  return {
    dir,
    ctx,
    log,
    store,
    keys,
    key,
    api,
    base: `http://127.0.0.1:${port}`,
    async extra(options) {
      const other = createQueryApi(ctx, { store, log, keys, views: api.views, ...options });
      extras.push(other);
      const started = await other.start();
      return { api: other, base: `http://127.0.0.1:${started.port}` };
    },
    async close() {
      for (const other of extras) await other.stop();
      await api.stop();
      await log.close();
      keys.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const solanaAddress = () => base58Encode(crypto.randomBytes(32));
export const evmAddress = () => `0x${crypto.randomBytes(20).toString('hex')}`;
export const addressFor = (chain: Chain) => (chain === 'solana' ? solanaAddress() : evmAddress());

/** A valid token object (the spec sample) with overrides; fresh by default. */
export function makeToken(overrides: Partial<Token> & { chain: Chain; address: string }): Token {
  const now = Date.now();
  const base = sampleToken() as Token;
  return {
    ...base,
    createdAt: now - 10 * 60_000,
    updatedAt: now,
    creator: addressFor(overrides.chain),
    ...overrides,
  } as Token;
}

export async function produceTokens(log: EventLog, tokens: Token[]): Promise<void> {
  await log.produce(
    TOPICS.tokens.name,
    tokens.map((t) => ({ key: `${t.chain}:${t.address}`, value: JSON.stringify(t), timestamp: t.updatedAt })),
  );
}

export function makeTrade(token: Token, timestamp: number, index: number, overrides: Partial<Trade> = {}): Trade {
  const hash =
    token.chain === 'solana' ? base58Encode(crypto.randomBytes(64)) : `0x${crypto.randomBytes(32).toString('hex')}`;
  return {
    id: `${token.chain}:${hash}:${index}`,
    chain: token.chain,
    token: token.address,
    name: token.name,
    symbol: token.symbol,
    trader: addressFor(token.chain),
    transactionHash: hash,
    side: index % 2 === 0 ? 'buy' : 'sell',
    amount: String(100 + index),
    price: { native: '0.001', usd: '0.18' },
    volume: { native: '0.1', usd: '18' },
    marketCap: { native: '1000', usd: '180000' },
    timestamp,
    flags: [],
    platforms: [],
    ...overrides,
  };
}

export function tradeRow(trade: Trade, seq: number, identities: string[] = []): TradeRow {
  return {
    id: trade.id,
    chain: trade.chain,
    token: trade.token,
    seq,
    name: trade.name,
    symbol: trade.symbol,
    trader: trade.trader,
    side: trade.side,
    transactionHash: trade.transactionHash,
    eventIndex: Number(trade.id.split(':')[2]),
    blockNumber: seq,
    timestamp: trade.timestamp,
    amount: trade.amount,
    quoteAmount: '0.1',
    quoteAsset: 'native',
    priceNative: trade.price.native,
    priceUsd: trade.price.usd,
    volumeNative: trade.volume.native,
    volumeUsd: trade.volume.usd,
    marketCapNative: trade.marketCap.native,
    marketCapUsd: trade.marketCap.usd,
    pool: 'pool',
    dex: 'pumpfun',
    identities,
    flags: trade.flags ?? [],
    platforms: (trade.platforms ?? []).map((entry) => entry.platform),
  };
}

export async function produceTrades(log: EventLog, trades: Trade[], identities: string[] = []): Promise<void> {
  await produceTradeMessages(
    log,
    trades.map((trade) => ({ trade, identities, pool: 'pool', dex: 'pumpfun' })),
  );
}

/** Trade messages as the aggregator writes them (aggregators/aggregator.ts): keyed chain:token. */
export async function produceTradeMessages(log: EventLog, messages: PricedTradeMessage[]): Promise<void> {
  await log.produce(
    TOPICS.trades.name,
    messages.map((m) => ({
      key: `${m.trade.chain}:${m.trade.token}`,
      value: JSON.stringify(m),
      timestamp: m.trade.timestamp,
    })),
  );
}

export async function produceCandles(log: EventLog, message: CandleUpdateMessage): Promise<void> {
  await log.produce(TOPICS.candles.name, [
    { key: `${message.chain}:${message.token}`, value: JSON.stringify(message), timestamp: message.updatedAt },
  ]);
}

const ohlc = (v: number) => ({ open: String(v), high: String(v + 1), low: String(v - 0.5), close: String(v + 0.5) });

/** One base-bucket row whose price is `v` (USD) and v/100 (native), volume v*10. */
export function candleRow(token: Token, granularity: CandleRow['granularity'], time: number, v: number): CandleRow {
  return {
    chain: token.chain,
    token: token.address,
    granularity,
    time,
    seq: 1,
    priceNative: ohlc(v / 100),
    priceUsd: ohlc(v),
    marketCapNative: ohlc(v * 10),
    marketCapUsd: ohlc(v * 1000),
    volumeNative: String(v / 10),
    volumeUsd: String(v * 10),
    trades: 1,
  };
}

export async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

export async function call(
  base: string,
  pathAndQuery: string,
  init: { method?: string; key?: string | null; headers?: Record<string, string>; body?: unknown } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.key !== null && init.key !== undefined) headers.authorization = `Bearer ${init.key}`;
  let body: string | undefined;
  if (init.body !== undefined) {
    body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(base + pathAndQuery, { method: init.method ?? 'GET', headers, body });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, text, body: parsed };
}
