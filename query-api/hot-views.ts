// In-memory views the hot reads are served from, built from the topics: token objects (from the
// compacted spot.tokens.v1, each serialised once per version), the discovery column sets, the
// newest trades per token and per identity feed (spot.trades.v1) and the open candle buckets
// (the compacted spot.candles.v1). Tokens with no update for 24 h leave memory; their reads go
// to ClickHouse, as do history pages and anything the views cannot answer exactly.
import crypto from 'node:crypto';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import zlib from 'node:zlib';
import type { SpotStore, TradeCursor } from '../clickhouse/types.ts';
import { CHAINS, tokenKey, type Chain } from '../core/chains.ts';
import type { Context } from '../core/context.ts';
import type { Consumer, EventLog, LogMessage } from '../core/eventlog/types.ts';
import {
  IDENTITIES,
  type Candle,
  type Denomination,
  type Identity,
  type Metric,
  type Timeframe,
  type Token,
} from '../core/schemas.ts';
import { TOPICS, type CandleUpdateMessage, type PricedTradeMessage } from '../core/topics.ts';
import { createSlicer, SERVING_FETCH_BYTES, SLICE_MS, waitForTurn } from '../core/slices.ts';
import { compareNewestFirst } from './cursor.ts';
import { createDiscoveryIndex, type DiscoveryIndex } from './discovery.ts';
import { integerAt } from './json-scan.ts';
import { createPackQueue } from './pack-queue.ts';
import { createStorePageCache } from './store-page-cache.ts';
import { createTokenPacker, type TokenEntry } from './token-pack.ts';
import { STALE_AFTER_MS } from './discovery-filters.ts';
import { compareItemsNewestFirst, tradeItem, tradeRowJson, tradeText, type TradeItem } from './trade-json.ts';

export interface HotViews {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Resolves once the compacted topics are read up to their end as of start. */
  ready(): Promise<void>;
  token(chain: Chain, address: string): TokenEntry | undefined;
  /** The token's JSON as a Buffer (the response body of token details). */
  tokenBody(entry: TokenEntry): Buffer;
  /**
   * The newest `count` trades of a token (strictly older than `before` when given) when memory
   * holds at least that many, or every such trade the token has had (its ring began with its
   * first trade), else null.
   */
  tokenTrades(chain: Chain, address: string, count: number, before?: TradeCursor): TradeItem[] | null;
  /**
   * The newest `count` trades of a token that memory cannot answer: `load(count)` (the store's
   * newest first) with the trades its ring holds, shared and kept briefly (store-page-cache.ts).
   */
  storedTokenTrades(
    chain: Chain,
    address: string,
    count: number,
    load: (count: number) => Promise<TradeItem[]>,
  ): Promise<TradeItem[]>;
  /** The newest `count` trades of an identity feed over `chains` when memory answers exactly, else null. */
  identityTrades(identity: Identity, chains: readonly Chain[], count: number): TradeItem[] | null;
  openCandle(
    chain: Chain,
    address: string,
    timeframe: Timeframe,
    metric: Metric,
    denomination: Denomination,
  ): Candle | undefined;
  /**
   * A number that changes when the token's stored closed buckets may have changed other than by
   * an open bucket moving on (a late trade); undefined when the views hold no candles for it.
   */
  candleGeneration(chain: Chain, address: string): number | undefined;
  readonly discovery: DiscoveryIndex;
  /**
   * Applies one message of each topic (exported for replays and tools). `text` is the message's
   * JSON as it came from the log, kept instead of serialising the object again.
   */
  applyToken(token: Token, text?: string): void;
  applyTrade(message: PricedTradeMessage): void;
  /**
   * A spot.trades.v1 value as it came from the log, keyed `chain:address`, read without parsing
   * its trade (trade-json.ts tradeText); false, applying nothing, when the text has another shape.
   */
  applyTradeText(key: string, text: string): boolean;
  applyCandles(message: CandleUpdateMessage): void;
  /** A spot.candles.v1 value as it came from the log, keyed `chain:address`; not parsed (see candleHeader). */
  applyCandlesText(key: string, text: string): void;
  /**
   * Deflates the token versions and candle states made before `madeBefore` (performance.now()),
   * as start()'s timer does for those not replaced for 2 s (exported for tools that never start).
   */
  packIdle(madeBefore: number): void;
}

export interface HotViewsOptions {
  log: EventLog;
  store: SpotStore;
  /** Trades kept per token: one more than the largest page answers hasMore from memory. */
  tradesPerToken?: number;
  /** Trades kept per identity feed and chain. */
  tradesPerFeed?: number;
  /** Trades the token rings hold together (default: SPOT_HELD_TRADES); past it the least recently traded token's ring goes. */
  maxHeldTrades?: number;
  now?: () => number;
  sweepIntervalMs?: number;
}

/**
 * How long past 24 h idle a held token stays before the sweep drops it: a client that read it on a
 * discovery board moments before is still answered here, not through the ingest thread.
 */
export const IDLE_GRACE_MS = 5 * 60_000;
/**
 * A token's trades ring goes once its newest trade is this old: most tokens die within minutes of
 * launch, and their first pages are the store's like any older page, instead of 24 h of rings.
 */
export const RING_IDLE_MS = 60 * 60_000;
const UNPACKED_CANDLES = 256;
/** Plain candle states kept at most (~10 KB each); past it, the oldest is deflated at once. */
const MAX_PLAIN_CANDLES = 1024;
/** A token version or candle state not replaced for this long is deflated (token-pack.ts). */
const PLAIN_MS = 2_000;
const PACK_EVERY_MS = 100;

interface CandleState {
  updatedAt: number;
  /** The message's JSON, deflated (latin1 string): open candles repeat across timeframes. Null while plain. */
  packed: string | null;
  /** The message's JSON until it is packed: a busy token's state is replaced every views pass. */
  plain: string | null;
  seenAt: number;
  /** The newest open bucket time over every timeframe: a trade before it is late for some timeframe. */
  newestOpen: number;
  generation: number;
}

const UPDATED_AT = '"updatedAt":';
const TIME = '"time":';

/**
 * updatedAt and the newest open bucket time of a spot.candles.v1 value, read without parsing it:
 * a candles message is ~10 KB, and parsing it and serialising its candles again took ~70 µs of
 * the ~106 µs a message cost the serving thread (it reads thousands in a catch-up). The topic's schema
 * (additionalProperties: false) puts `"updatedAt":` only at the top and `"time":` only in candles;
 * inside a JSON string a quote is always escaped, so neither can occur there. Null when the text
 * does not have that shape.
 */
function candleHeader(text: string): { updatedAt: number; newestOpen: number } | null {
  const at = text.indexOf(UPDATED_AT);
  const updatedAt = at < 0 ? -1 : integerAt(text, at + UPDATED_AT.length);
  if (updatedAt < 0) return null;
  let newestOpen = -Infinity;
  for (let t = text.indexOf(TIME); t >= 0; t = text.indexOf(TIME, t + TIME.length)) {
    const time = integerAt(text, t + TIME.length);
    if (time < 0) return null;
    if (time > newestOpen) newestOpen = time;
  }
  return { updatedAt, newestOpen };
}

/**
 * Trades ordered oldest → newest (appends are cheap); `partial` when older trades may be missing. A
 * token's ring is whole while it holds its token's trades 1 to n by seq, none missing or trimmed.
 */
interface Ring {
  items: TradeItem[];
  partial: boolean;
  ready: boolean;
}

function insertTrade(ring: Ring, item: TradeItem, capacity: number): void {
  const items = ring.items;
  const last = items.length - 1;
  // A ring that may lack older trades holds the newest without a gap: a trade older than all of
  // them may have others beside it that the ring lacks, so it is left to the store.
  if (ring.partial && last >= 0 && compareItemsNewestFirst(items[0]!, item) < 0) return;
  // Oldest first. Most arrivals are the newest; otherwise a binary search: block times are whole
  // seconds, so a busy second's trades all share one timestamp and are ordered by id.
  if (last < 0 || compareItemsNewestFirst(items[last]!, item) > 0) items.push(item);
  else {
    let lo = 0;
    let hi = last;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareItemsNewestFirst(items[mid]!, item) > 0) lo = mid + 1;
      else hi = mid;
    }
    if (compareItemsNewestFirst(items[lo]!, item) === 0) return; // a duplicate
    items.splice(lo, 0, item);
  }
  if (items.length > capacity * 2) {
    items.splice(0, items.length - capacity);
    ring.partial = true;
  }
}

/** Newest `count` of a ring, newest first, from the item before index `end`. */
function newest(ring: Ring, count: number, end = ring.items.length): TradeItem[] {
  const out: TradeItem[] = [];
  for (let i = end - 1; i >= 0 && out.length < count; i--) out.push(ring.items[i]!);
  return out;
}

/** How many of a ring's items are strictly older than `before` (they come first). */
function olderThan(ring: Ring, before: TradeCursor): number {
  let lo = 0;
  let hi = ring.items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareNewestFirst(ring.items[mid]!, before) > 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The newest `count` of a store page and a ring, newest first, each trade once. */
function withRing(stored: TradeItem[], ring: Ring | undefined, count: number): TradeItem[] {
  if (!ring || ring.items.length === 0) return stored;
  const out: TradeItem[] = [];
  for (const item of [...stored, ...newest(ring, count)].sort(compareItemsNewestFirst)) {
    if (out.length === count) break;
    if (out.length === 0 || compareItemsNewestFirst(out[out.length - 1]!, item) !== 0) out.push(item);
  }
  return out;
}

export function createHotViews(ctx: Context, options: HotViewsOptions): HotViews {
  const logger = ctx.logger.child({ component: 'hot-views' });
  const now = options.now ?? Date.now;
  const perToken = options.tradesPerToken ?? 101;
  const perFeed = options.tradesPerFeed ?? 500;
  const packer = createTokenPacker();
  const discovery = createDiscoveryIndex(packer.body);
  // Insertion order = order of last update, so the stalest entries sit at the front.
  const tokens = new Map<string, TokenEntry>();
  // In least recently traded order (a trade moves its token's ring to the end).
  const tokenRings = new Map<string, Ring>();
  const maxHeldTrades = options.maxHeldTrades ?? ctx.config.heldTrades;
  let heldTrades = 0;

  // The trades rings are memory per traded token (up to 2 × perToken trades of ~1.2 KB each, an
  // hour after its last trade): past the budget the least recently traded tokens' rings go first,
  // and their pages come from the store, as those of a token whose ring the sweep dropped.
  function keepHeldTradesInBudget(): void {
    for (const [key, ring] of tokenRings) {
      if (heldTrades <= maxHeldTrades) return;
      tokenRings.delete(key);
      heldTrades -= ring.items.length;
      ctx.metrics.inc('views.trade_rings_evicted');
    }
  }
  const storePages = createStorePageCache({ now });
  // By identity, then chain: looked up for every trade, without building a key.
  const feedRings = new Map<string, Map<string, Ring>>();
  for (const identity of IDENTITIES)
    feedRings.set(identity, new Map(CHAINS.map((chain) => [chain, { items: [], partial: true, ready: false }])));
  const candles = new Map<string, CandleState>();
  let generations = 0;
  // Unpacked open maps of the candle states read lately (a state is replaced, never changed).
  const unpacked = new Map<CandleState, CandleUpdateMessage['open']>();
  const openOf = (state: CandleState): CandleUpdateMessage['open'] => {
    let open = unpacked.get(state);
    if (open) return open;
    const text = state.plain ?? zlib.inflateRawSync(Buffer.from(state.packed!, 'latin1')).toString();
    open = (JSON.parse(text) as CandleUpdateMessage).open;
    unpacked.set(state, open);
    if (unpacked.size > UNPACKED_CANDLES) unpacked.delete(unpacked.keys().next().value as CandleState);
    return open;
  };
  const consumers: Consumer[] = [];
  let sweepTimer: NodeJS.Timeout | undefined;
  let packTimer: NodeJS.Timeout | undefined;
  let readyPromise: Promise<void> = Promise.resolve();

  function applyToken(token: Token, text?: string): void {
    const key = tokenKey(token.chain, token.address);
    const previous = tokens.get(key);
    // Past the idle cutoff, a version replaces one still held (the aggregator publishes the token
    // with its emptied 24 h window as it leaves) and keeps its place: the sweep goes in
    // updatedAt order. A token not held is the store's.
    const idle = token.updatedAt < now() - STALE_AFTER_MS;
    if (idle && !previous) return;
    if (previous && previous.fields.updatedAt > token.updatedAt) return;
    const entry = packer.entry(key, token, text);
    if (!idle) tokens.delete(key);
    tokens.set(key, entry);
    discovery.upsert(entry, previous);
    if (previous) packer.drop(previous);
  }

  /**
   * A trade of token `key` (chain:address) at `timestamp`: its item, or a function making it when a
   * ring takes it (a parsed trade is serialised only then).
   */
  function holdTrade(
    key: string,
    chain: string,
    timestamp: number,
    identities: readonly string[],
    itemOf: TradeItem | (() => TradeItem),
    seq: number | undefined,
  ): void {
    const candleState = candles.get(key);
    if (candleState && timestamp < candleState.newestOpen) candleState.generation = ++generations;
    let item = typeof itemOf === 'function' ? undefined : itemOf;
    storePages.drop(key);
    const ring = tokenRings.get(key);
    if (ring) {
      tokenRings.delete(key);
      tokenRings.set(key, ring);
      const held = ring.items.length;
      insertTrade(ring, (item ??= (itemOf as () => TradeItem)()), perToken);
      heldTrades += ring.items.length - held;
      // Trades arrive in seq order (a token's trades share a partition); a redelivery adds nothing.
      if (!ring.partial && ring.items.length > held && seq !== ring.items.length) ring.partial = true;
    } else if (timestamp >= now() - RING_IDLE_MS) {
      // A trade already past the ring's hour (a warm start's history, a backfill) starts no ring:
      // the next sweep would drop it. The first trade goes in a one-slot array (17 slots when
      // pushed onto an empty one: 128 B a token that trades once).
      tokenRings.set(key, { items: [(item ??= (itemOf as () => TradeItem)())], partial: seq !== 1, ready: true });
      heldTrades += 1;
    }
    if (heldTrades > maxHeldTrades) keepHeldTradesInBudget();
    for (let i = 0; i < identities.length; i++) {
      const identity = identities[i]!;
      if (identities.indexOf(identity) !== i) continue; // listed twice
      const feed = feedRings.get(identity)?.get(chain);
      if (feed) insertTrade(feed, (item ??= (itemOf as () => TradeItem)()), perFeed);
    }
  }

  function applyTrade(message: PricedTradeMessage): void {
    const trade = message.trade;
    holdTrade(
      tokenKey(trade.chain, trade.token),
      trade.chain,
      trade.timestamp,
      message.identities,
      () => tradeItem(trade),
      message.seq,
    );
  }

  function applyTradeText(key: string, text: string): boolean {
    const held = tradeText(text);
    const colon = key.indexOf(':');
    if (!held || colon <= 0) return false;
    holdTrade(key, key.slice(0, colon), held.item.timestamp, held.identities, held.item, held.seq);
    return true;
  }

  // Candle states not deflated yet (as token versions in token-pack.ts).
  const plainCandles = createPackQueue((state: CandleState) => {
    state.packed = zlib.deflateRawSync(Buffer.from(state.plain!), { level: 1 }).toString('latin1');
    state.plain = null;
  }, MAX_PLAIN_CANDLES);

  function putCandles(key: string, text: string, updatedAt: number, newestOpen: number): void {
    const previous = candles.get(key);
    if (previous && previous.updatedAt > updatedAt) return;
    if (previous) plainCandles.delete(previous);
    candles.delete(key);
    const state: CandleState = {
      updatedAt,
      packed: null,
      plain: text,
      seenAt: now(),
      newestOpen,
      generation: previous?.generation ?? ++generations,
    };
    candles.set(key, state);
    plainCandles.add(state);
  }

  function applyCandles(message: CandleUpdateMessage): void {
    const text = JSON.stringify(message);
    const header = candleHeader(text);
    if (header) putCandles(tokenKey(message.chain, message.token), text, header.updatedAt, header.newestOpen);
  }

  function applyCandlesText(key: string, text: string): void {
    const header = candleHeader(text);
    if (header) putCandles(key, text, header.updatedAt, header.newestOpen);
    else logger.warn({ key }, 'skipping a candles message without updatedAt and candle times');
  }

  function packIdle(madeBefore: number, due?: () => boolean): void {
    packer.pack(madeBefore, due);
    plainCandles.pack(madeBefore, due);
  }

  function sweep(): void {
    const cutoff = now() - STALE_AFTER_MS;
    for (const [key, entry] of tokens) {
      if (entry.fields.updatedAt >= cutoff - IDLE_GRACE_MS) break;
      tokens.delete(key);
      discovery.remove(entry);
      packer.drop(entry);
    }
    const ringCutoff = now() - RING_IDLE_MS;
    for (const [key, ring] of tokenRings) {
      const last = ring.items[ring.items.length - 1];
      if (last && last.timestamp >= ringCutoff) break;
      tokenRings.delete(key);
      heldTrades -= ring.items.length;
    }
    ctx.metrics.set('views.trades_held', heldTrades);
    for (const [key, state] of candles) {
      if (state.seenAt >= cutoff) break;
      candles.delete(key);
      plainCandles.delete(state);
    }
  }

  const parse = (message: LogMessage): unknown => {
    if (message.value === '') return null;
    try {
      return JSON.parse(message.value);
    } catch (error) {
      logger.warn({ topic: message.topic, offset: message.offset, err: error }, 'skipping a message that is not JSON');
      return null;
    }
  };

  const uniqueGroup = (role: string) =>
    `spot-query-api-${role}-${os.hostname()}-${process.pid}-${crypto.randomUUID().slice(0, 8)}`;

  /** Fills the identity feeds from ClickHouse so the first pages are answered from memory. */
  async function seedFeeds(): Promise<void> {
    for (const identity of IDENTITIES) {
      for (const chain of CHAINS) {
        const ring = feedRings.get(identity)!.get(chain)!;
        try {
          const rows = await options.store.queryIdentityTrades(identity, [chain], perFeed);
          // The store's newest and the trades held since the views started are every trade down
          // to the oldest row: the ring takes the rows wherever they fall among the held ones.
          ring.partial = false;
          for (const row of rows)
            insertTrade(ring, { timestamp: row.timestamp, id: row.id, json: tradeRowJson(row) }, perFeed);
          // A full page may have older trades past it (and the loop may have trimmed the ring).
          ring.partial ||= rows.length >= perFeed;
          ring.ready = true;
        } catch (error) {
          logger.warn({ err: error, identity, chain }, 'identity feed not seeded; its pages come from ClickHouse');
        }
      }
    }
  }

  return {
    discovery,
    applyToken,
    applyTrade,
    applyTradeText,
    applyCandles,
    applyCandlesText,
    packIdle: (madeBefore) => packIdle(madeBefore),

    async start() {
      await options.log.ensureTopics([TOPICS.tokens, TOPICS.candles, TOPICS.trades]);
      // Compacted topics from the beginning with a group of our own; ready once at the end as of now.
      const ends = new Map<string, Map<number, number>>();
      for (const topic of [TOPICS.tokens.name, TOPICS.candles.name])
        ends.set(topic, await options.log.endOffsets(topic));
      let markReady!: () => void;
      readyPromise = new Promise<void>((resolve) => (markReady = resolve));
      const pending = new Set<string>();
      for (const [topic, offsets] of ends)
        for (const [partition, end] of offsets) if (end > 0) pending.add(`${topic}/${partition}`);
      const caughtUp = (topic: string, partition: number, offset: number) => {
        const end = ends.get(topic)?.get(partition);
        if (end !== undefined && offset >= end - 1) pending.delete(`${topic}/${partition}`);
      };

      const trades = options.log.consumer({
        group: uniqueGroup('trades'),
        topics: [TOPICS.trades.name],
        start: 'latest',
        maxBatchSize: 2000,
        maxFetchBytes: SERVING_FETCH_BYTES,
        sliceMs: SLICE_MS,
      });
      consumers.push(trades);
      trades
        .run(async (batch) => {
          const slicer = createSlicer();
          for (const message of batch.messages) {
            // Keyed chain:address by the aggregator (core/topics.ts); any other shape is parsed.
            if (!message.key || !applyTradeText(message.key, message.value)) {
              const value = parse(message) as PricedTradeMessage | null;
              if (value?.trade) applyTrade(value);
            }
            if (slicer.due()) await slicer.pause();
          }
          ctx.metrics.batchConsumed('hot-views-trades', batch, 'trades');
        })
        .catch((error) => logger.error({ err: error }, 'trades consumer stopped'));

      const compacted = options.log.consumer({
        group: uniqueGroup('state'),
        topics: [TOPICS.tokens.name, TOPICS.candles.name],
        start: 'earliest',
        maxBatchSize: 250,
        maxFetchBytes: SERVING_FETCH_BYTES,
        sliceMs: SLICE_MS,
      });
      consumers.push(compacted);
      compacted
        .run(async (batch) => {
          // A token version is packed (deflated) as it lands: ~50 µs each, so a batch is sliced.
          const slicer = createSlicer();
          for (const message of batch.messages) {
            if (batch.topic === TOPICS.tokens.name) {
              const value = parse(message);
              if (value !== null && typeof value === 'object') applyToken(value as Token, message.value);
            } else if (message.value !== '') {
              // Keyed chain:address by the aggregator (core/topics.ts); a keyless value is parsed for its token.
              if (message.key) applyCandlesText(message.key, message.value);
              else {
                const value = parse(message);
                if (value !== null && typeof value === 'object') applyCandles(value as CandleUpdateMessage);
              }
            }
            if (slicer.due()) await slicer.pause();
          }
          const last = batch.messages[batch.messages.length - 1];
          ctx.metrics.batchConsumed(
            'hot-views-state',
            batch,
            batch.topic === TOPICS.tokens.name ? 'tokens' : 'candles',
          );
          if (last) caughtUp(batch.topic, batch.partition, last.offset);
          if (pending.size === 0) markReady();
        })
        .catch((error) => logger.error({ err: error }, 'tokens/candles consumer stopped'));
      if (pending.size === 0) markReady();

      sweepTimer = setInterval(sweep, options.sweepIntervalMs ?? 60_000);
      sweepTimer.unref();
      // Token versions and candle states not replaced for PLAIN_MS are deflated, one slice at a time, in a turn of
      // their own (core/slices.ts) rather than beside the consumers' slices.
      let packQueued = false;
      packTimer = setInterval(() => {
        if (packQueued) return;
        packQueued = true;
        void waitForTurn().then(() => {
          packQueued = false;
          packIdle(performance.now() - PLAIN_MS, createSlicer().due);
        });
      }, PACK_EVERY_MS);
      packTimer.unref();
      await seedFeeds();
      await readyPromise;
      logger.info({ tokens: tokens.size }, 'hot views ready');
    },

    async stop() {
      if (sweepTimer) clearInterval(sweepTimer);
      if (packTimer) clearInterval(packTimer);
      await Promise.all(
        consumers.splice(0).map((c) => c.stop().catch((error) => logger.warn({ err: error }, 'consumer stop failed'))),
      );
    },

    ready: () => readyPromise,

    // A token that went idle is answered from here until the sweep drops it (IDLE_GRACE_MS): the
    // store holds the same version, read through the ingest thread.
    token: (chain, address) => tokens.get(tokenKey(chain, address)),

    tokenBody(entry) {
      return packer.body(entry);
    },

    tokenTrades(chain, address, count, before) {
      const ring = tokenRings.get(tokenKey(chain, address));
      if (!ring) return null;
      const end = before ? olderThan(ring, before) : ring.items.length;
      if (end < count && ring.partial) return null;
      return newest(ring, count, end);
    },

    storedTokenTrades(chain, address, count, load) {
      const key = tokenKey(chain, address);
      // The ring is read once the store answered: a trade the store has not written yet is in it.
      return storePages.page(key, count, async (asked) => withRing(await load(asked), tokenRings.get(key), asked));
    },

    identityTrades(identity, chains, count) {
      const rings: Ring[] = [];
      for (const chain of chains) {
        const ring = feedRings.get(identity)?.get(chain);
        if (!ring?.ready) return null;
        rings.push(ring);
      }
      const merged = rings
        .flatMap((ring) => newest(ring, count))
        .sort(compareItemsNewestFirst)
        .slice(0, count);
      // A ring that may lack older trades must still hold everything down to the page's last trade.
      const last = merged[merged.length - 1];
      for (const ring of rings) {
        if (!ring.partial) continue;
        const oldest = ring.items[0];
        if (merged.length < count || !last || !oldest || compareItemsNewestFirst(oldest, last) < 0) return null;
      }
      return merged;
    },

    candleGeneration(chain, address) {
      return candles.get(tokenKey(chain, address))?.generation;
    },

    openCandle(chain, address, timeframe, metric, denomination) {
      const state = candles.get(tokenKey(chain, address));
      return state ? openOf(state)[timeframe]?.[metric]?.[denomination] : undefined;
    },
  };
}
