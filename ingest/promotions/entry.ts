// A paid promotion of a token, as every promotion source gives it (the DEX Screener poller, an
// imported promotions file), its checks, and the `promotion` token event it becomes. The event's
// id is a digest of its content, so a promotion polled or imported twice is the same event.
import { createHash } from 'node:crypto';
import { CHAINS, canonicalAddress, type Chain } from '../../core/chains.ts';
import { assertTopicValue, TOPICS, type TokenEvent } from '../../core/topics.ts';

export interface PromotionEntry {
  chain: Chain;
  /** Canonical token address (EVM lower-case). */
  token: string;
  /** Where it was promoted, e.g. dexscreener. */
  platform: string;
  /** Payment time, Unix ms. */
  paidAt: number;
  /** What was bought (tokenProfile, tokenAd, boost…), when the source says. */
  product: string | null;
  /** The feed or list it came from. */
  source: string;
}

/** A platform name: lower-case word, as the trade platforms are named (dexscreener, pumpfun…). */
const PLATFORM = /^[a-z0-9][a-z0-9_.:-]{0,63}$/;
const PRODUCT = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
/** Payments before this are no memecoin promotion (2015-01-01): a time in seconds, most likely. */
const EARLIEST = Date.UTC(2015, 0, 1);
/** A payment can be at most this far ahead of the clock (clock skew): later ones would move event time. */
const FUTURE_SKEW_MS = 5 * 60_000;

/** Unix ms from a number of ms or an ISO 8601 text; a reason when it is neither, too old or in the future. */
export function paymentTime(value: unknown, now: number): number | string {
  let ms: number;
  if (typeof value === 'number') ms = value;
  else if (typeof value === 'string' && /^\d+$/.test(value.trim())) ms = Number(value.trim());
  else if (typeof value === 'string' && /^\d{4}-\d\d-\d\dT/.test(value.trim())) ms = Date.parse(value.trim());
  else return `paidAt ${JSON.stringify(value)} is not Unix ms or an ISO 8601 time`;
  if (!Number.isSafeInteger(ms) || ms < EARLIEST) return `paidAt ${JSON.stringify(value)} is not Unix ms after 2015`;
  if (ms > now + FUTURE_SKEW_MS) return `paidAt ${JSON.stringify(value)} is in the future`;
  return ms;
}

/** The entry, or why it is refused. `raw` holds chain, token, platform, paidAt and optionally product, source. */
export function checkPromotion(
  raw: Record<string, unknown>,
  options: { now: number; source: string },
): PromotionEntry | string {
  const chain = raw.chain;
  if (typeof chain !== 'string' || !(CHAINS as readonly string[]).includes(chain))
    return `unknown chain ${JSON.stringify(chain)} (one of ${CHAINS.join(', ')})`;
  const token = typeof raw.token === 'string' ? canonicalAddress(chain as Chain, raw.token.trim()) : null;
  if (!token) return `token ${JSON.stringify(raw.token)} is not a ${chain} address`;
  const platform = typeof raw.platform === 'string' ? raw.platform.trim() : '';
  if (!PLATFORM.test(platform)) return `platform ${JSON.stringify(raw.platform)} is not a lower-case name`;
  const paidAt = paymentTime(raw.paidAt, options.now);
  if (typeof paidAt === 'string') return paidAt;
  const product = raw.product === undefined || raw.product === null || raw.product === '' ? null : raw.product;
  if (product !== null && (typeof product !== 'string' || !PRODUCT.test(product)))
    return `product ${JSON.stringify(raw.product)} is not a name`;
  const source = raw.source === undefined || raw.source === null || raw.source === '' ? options.source : raw.source;
  if (typeof source !== 'string' || source.length > 200) return 'source must be text of at most 200 characters';
  return { chain: chain as Chain, token, platform, paidAt, product, source: source.trim() || options.source };
}

/** The promotion's token event (checked against the topic schema); the same entry always gives the same id. */
export function promotionEvent(entry: PromotionEntry): TokenEvent {
  const digest = createHash('sha256')
    .update([entry.chain, entry.token, entry.platform, entry.paidAt, entry.product ?? ''].join('|'))
    .digest('hex')
    .slice(0, 16);
  const transactionHash = `promotion-${digest}`;
  const event: TokenEvent = {
    id: `${entry.chain}:${transactionHash}:0`,
    chain: entry.chain,
    transactionHash,
    eventIndex: 0,
    blockNumber: 0,
    // The payment is when it happened: an old order does not move the chain's event time.
    blockTime: entry.paidAt,
    kind: 'promotion',
    token: entry.token,
    platform: entry.platform,
    paidAt: entry.paidAt,
    product: entry.product,
    source: entry.source,
  };
  assertTopicValue(TOPICS.tokenEvents, event);
  return event;
}
