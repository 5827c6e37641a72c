// DEX Screener's public promotion API, read field by field (docs.dexscreener.com/api/reference):
// `GET /token-boosts/latest/v1` and `/token-boosts/top/v1` list boosted tokens
// `[{chainId, tokenAddress, amount, totalAmount, url, icon, …}]` (no payment time: they only name
// the tokens to ask about); `GET /orders/v1/{chainId}/{tokenAddress}` lists a token's paid orders
// `[{type: tokenProfile|communityTakeover|tokenAd|trendingBarAd, status, paymentTimestamp}]`.
// Entries of the wrong shape are refused one by one with their index; the rest are kept.
import { canonicalAddress, type Chain } from '../../core/chains.ts';
import { paymentTime, type PromotionEntry } from './entry.ts';

export const PLATFORM = 'dexscreener';
export const BOOST_PATHS = ['/token-boosts/latest/v1', '/token-boosts/top/v1'] as const;

/** DEX Screener chain ids of the chains followed (robinhood and arc under their own names, when it lists them). */
const CHAIN_IDS: Readonly<Record<string, Chain>> = {
  solana: 'solana',
  base: 'base',
  bsc: 'bsc',
  robinhood: 'robinhood',
  arc: 'arc',
};

/** The chain id DEX Screener names a followed chain by. */
export function chainIdOf(chain: Chain): string {
  return Object.entries(CHAIN_IDS).find(([, c]) => c === chain)![0];
}

export const ordersPath = (chain: Chain, token: string) =>
  `/orders/v1/${encodeURIComponent(chainIdOf(chain))}/${encodeURIComponent(token)}`;

export interface Boost {
  chain: Chain;
  token: string;
  /** Boosts bought so far: a change means a new purchase, worth asking the orders again. */
  totalAmount: number;
}

export interface FeedProblem {
  /** Entry number in the answer's list, from 1. */
  index: number;
  message: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A boosts answer: the boosts of followed chains, the entries refused, and how many name other chains. */
export function parseBoosts(
  json: unknown,
): { boosts: Boost[]; problems: FeedProblem[]; otherChains: number } | { error: string } {
  const list = Array.isArray(json) ? json : isRecord(json) ? [json] : null;
  if (!list) return { error: 'boosts answer is not a list' };
  const boosts: Boost[] = [];
  const problems: FeedProblem[] = [];
  let otherChains = 0;
  list.forEach((entry, i) => {
    const index = i + 1;
    if (!isRecord(entry)) return void problems.push({ index, message: 'not an object' });
    if (typeof entry.chainId !== 'string') return void problems.push({ index, message: 'chainId is not text' });
    const chain = CHAIN_IDS[entry.chainId];
    if (!chain) return void otherChains++;
    const token = typeof entry.tokenAddress === 'string' ? canonicalAddress(chain, entry.tokenAddress.trim()) : null;
    if (!token)
      return void problems.push({
        index,
        message: `tokenAddress ${JSON.stringify(entry.tokenAddress)} is not a ${chain} address`,
      });
    const total = entry.totalAmount ?? entry.amount;
    if (typeof total !== 'number' || !Number.isFinite(total) || total < 0)
      return void problems.push({ index, message: `totalAmount ${JSON.stringify(total)} is not a count` });
    boosts.push({ chain, token, totalAmount: total });
  });
  return { boosts, problems, otherChains };
}

/** Order statuses that mean the payment stands; cancelled and rejected ones are refunded or void. */
const PAID = new Set(['approved', 'processing', 'on-hold']);
const UNPAID = new Set(['cancelled', 'rejected']);
const ORDER_TYPES = new Set(['tokenProfile', 'communityTakeover', 'tokenAd', 'trendingBarAd']);

/**
 * An orders answer of one token: its paid orders as promotions. The documented answer is the list;
 * an object `{orders, boosts}` is read too (boosts with a paymentTimestamp count as paid).
 */
export function parseOrders(
  json: unknown,
  at: { chain: Chain; token: string; now: number; source: string },
): { entries: PromotionEntry[]; problems: FeedProblem[] } | { error: string } {
  let orders: unknown[];
  let boosts: unknown[] = [];
  if (Array.isArray(json)) orders = json;
  else if (isRecord(json) && (Array.isArray(json.orders) || Array.isArray(json.boosts))) {
    orders = Array.isArray(json.orders) ? json.orders : [];
    boosts = Array.isArray(json.boosts) ? json.boosts : [];
  } else return { error: 'orders answer is not a list' };
  const entries: PromotionEntry[] = [];
  const problems: FeedProblem[] = [];
  const add = (index: number, product: string, paymentTimestamp: unknown) => {
    const paidAt = paymentTime(paymentTimestamp, at.now);
    if (typeof paidAt === 'string') return void problems.push({ index, message: paidAt });
    entries.push({ chain: at.chain, token: at.token, platform: PLATFORM, paidAt, product, source: at.source });
  };
  orders.forEach((order, i) => {
    const index = i + 1;
    if (!isRecord(order)) return void problems.push({ index, message: 'not an object' });
    if (typeof order.type !== 'string' || !ORDER_TYPES.has(order.type))
      return void problems.push({ index, message: `type ${JSON.stringify(order.type)} is not an order type` });
    if (typeof order.status !== 'string' || !(PAID.has(order.status) || UNPAID.has(order.status)))
      return void problems.push({ index, message: `status ${JSON.stringify(order.status)} is not an order status` });
    if (UNPAID.has(order.status)) return;
    add(index, order.type, order.paymentTimestamp);
  });
  boosts.forEach((boost, i) => {
    const index = orders.length + i + 1;
    if (!isRecord(boost)) return void problems.push({ index, message: 'not an object' });
    add(index, 'boost', boost.paymentTimestamp);
  });
  return { entries, problems };
}
