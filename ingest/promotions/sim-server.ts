// The simulator's promotion host: DEX Screener's boosts and orders API for the simulated market.
// Like DEX Screener it learns tokens from the chain (the records ingest publishes, `observe`); a
// deterministic 3 % of them buy a token profile some minutes after launch (40 % an ad too, some a
// takeover order later cancelled), shown once the market's clock passes the payment. Answers carry
// what the real feed carries: tokens of other chains, now and then a malformed entry, a 429 or a
// 503. Bound to loopback; the poller reaches it through the fetcher's host map. It never publishes.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { normalizeAddress, type Chain } from '../../core/chains.ts';
import { draw } from '../enrichment/sim-metadata-server.ts';
import type { IngestRecords } from '../publisher.ts';
import { chainIdOf } from './dexscreener.ts';

/** Host the poller names the simulator's feed by (mapped onto the local origin). */
export const SIM_PROMOTIONS_HOST = 'promotions.sim.spot.dev';

const SHARE = 0.03;
const LISTED = 30;
/** Boost packs DEX Screener sells (10x … 500x). */
const PACKS = [10, 30, 50, 100, 500];

interface SimOrder {
  type: 'tokenProfile' | 'communityTakeover' | 'tokenAd';
  status: 'approved' | 'cancelled';
  paymentTimestamp: number;
}

interface SimPromoted {
  chain: Chain;
  token: string;
  paidAt: number;
  totalAmount: number;
  orders: SimOrder[];
}

export interface SimPromotionServer {
  readonly origin: string;
  /** Records ingest published: new tokens, and the market's clock. */
  observe(records: IngestRecords): void;
  close(): Promise<void>;
}

/** Whether a simulated token buys promotion, and what: deterministic per seed and token. */
export function simPromotionOf(seed: number, chain: Chain, token: string, createdAt: number): SimPromoted | null {
  const id = `${chain}:${token}`;
  if (draw(seed, id, 'promoted') >= SHARE) return null;
  const paidAt = createdAt + Math.floor(60_000 + draw(seed, id, 'delay') * 19 * 60_000);
  const orders: SimOrder[] = [{ type: 'tokenProfile', status: 'approved', paymentTimestamp: paidAt }];
  if (draw(seed, id, 'ad') < 0.4)
    orders.push({ type: 'tokenAd', status: 'approved', paymentTimestamp: paidAt + 600_000 });
  if (draw(seed, id, 'cto') < 0.1)
    orders.push({ type: 'communityTakeover', status: 'cancelled', paymentTimestamp: paidAt + 300_000 });
  const totalAmount = PACKS[Math.floor(draw(seed, id, 'pack') * PACKS.length)]!;
  return { chain, token, paidAt, totalAmount, orders };
}

export async function startSimPromotionServer(options: {
  seed: number;
  /** Promoted tokens kept (newest): memory stays bounded whatever the market's size. */
  maxTokens?: number;
}): Promise<SimPromotionServer> {
  const maxTokens = options.maxTokens ?? 1000;
  const promoted = new Map<string, SimPromoted>();
  let clock = 0;

  const visible = () => [...promoted.values()].filter((p) => p.paidAt <= clock);
  const boostJson = (p: SimPromoted) => {
    const chainId = chainIdOf(p.chain);
    return {
      url: `https://dexscreener.com/${chainId}/${p.token}`,
      chainId,
      tokenAddress: p.token,
      amount: p.totalAmount,
      totalAmount: p.totalAmount,
      icon: `https://dd.dexscreener.com/ds-data/tokens/${chainId}/${p.token}.png`,
      description: 'Simulated boost.',
      links: [],
    };
  };
  /** What the real feed mixes in: other chains always, a malformed entry in one answer of ten. */
  const noise = (path: string, minute: number): unknown[] => {
    const out: unknown[] = [
      { chainId: 'ethereum', tokenAddress: '0x6982508145454ce325ddbe47a25d4ec3d2311933', amount: 10, totalAmount: 10 },
    ];
    if (draw(options.seed, `${path}@${minute}`, 'malformed') < 0.1)
      out.push({ chainId: 'solana', tokenAddress: 'not-a-mint', totalAmount: 10 }, { chainId: 7, amount: 'ten' });
    return out;
  };

  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const minute = Math.floor(clock / 60_000);
    const send = (status: number, body: unknown) => {
      res.statusCode = status;
      res.setHeader('content-type', 'application/json');
      res.end(body === undefined ? '' : JSON.stringify(body));
    };
    if (req.method !== 'GET') return send(405, undefined);
    // One minute of market time in twenty answers 429 or 503, as a busy API does.
    const fault = draw(options.seed, `${path}@${minute}`, 'fault');
    if (fault < 0.05) return send(fault < 0.025 ? 429 : 503, undefined);
    if (path === '/token-boosts/latest/v1') {
      const list = visible()
        .sort((a, b) => b.paidAt - a.paidAt)
        .slice(0, LISTED);
      return send(200, [...list.map(boostJson), ...noise(path, minute)]);
    }
    if (path === '/token-boosts/top/v1') {
      const list = visible()
        .sort((a, b) => b.totalAmount - a.totalAmount || b.paidAt - a.paidAt)
        .slice(0, LISTED);
      return send(200, [...list.map(boostJson), ...noise(path, minute)]);
    }
    const orders = /^\/orders\/v1\/([^/]+)\/([^/]+)$/.exec(path);
    if (orders) {
      const p = [...promoted.values()].find(
        (entry) =>
          chainIdOf(entry.chain) === decodeURIComponent(orders[1]!) && entry.token === decodeURIComponent(orders[2]!),
      );
      return send(200, p && p.paidAt <= clock ? p.orders.filter((o) => o.paymentTimestamp <= clock) : []);
    }
    return send(404, undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    observe(records) {
      for (const swap of records.swaps) if (swap.blockTime > clock) clock = swap.blockTime;
      for (const event of records.events) {
        if (event.blockTime > clock && event.kind !== 'promotion') clock = event.blockTime;
        if (event.kind !== 'created') continue;
        const p = simPromotionOf(
          options.seed,
          event.chain,
          normalizeAddress(event.chain, event.token),
          event.blockTime,
        );
        if (!p) continue;
        promoted.set(`${p.chain}:${p.token}`, p);
        if (promoted.size > maxTokens) promoted.delete(promoted.keys().next().value!);
      }
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
