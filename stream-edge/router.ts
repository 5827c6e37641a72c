// Log messages to subscriptions: look each message up in the indexes, build each distinct
// `data` text (and its bytes) once per message, and assemble every subscription's frame from
// its own prefix, its seq and those shared bytes.
import { normalizeAddress, type Chain } from '../core/chains.ts';
import type { Context } from '../core/context.ts';
import type { Candle, Trade } from '../core/schemas.ts';
import { TOPICS, isTopicValue, type CandleUpdateMessage, type PricedTradeMessage } from '../core/topics.ts';
import type { Token } from '../core/schemas.ts';
import { createSlicer, waitForTurn } from '../core/slices.ts';
import { flushAll, type OutboxHub } from './backpressure.ts';
import { statePosition, tradePosition } from './cursor.ts';
import { caughtUp, coveredPositions, liveAccepts } from './resume.ts';
import { updateTail } from './update-frames.ts';
import type { Subscription, SubscriptionIndex } from './subscriptions.ts';

/** Longest a routed frame waits for the end of a long event-loop turn before it is written. */
const MAX_HOLD_MS = 2;

export interface RouterCounters {
  messagesRouted: number;
  messagesInvalid: number;
  updatesSent: number;
}

export interface Router {
  /**
   * Routes one log value (JSON text) of a routed topic at its log position; call flush() or
   * flushSoon() after a batch.
   */
  routeValue(topic: string, value: string, partition?: number, offset?: number, key?: string): void;
  /** Routes one decoded message (benchmarks and tests drive this), then flushSoon(). */
  route(topic: string, message: unknown): void;
  /**
   * Hands the queued frames of every connection touched since to its socket once the current
   * event-loop turn ends (with writeSliceMs: in slices, a turn each, ahead of the sliced loops
   * waiting; core/slices.ts): every message routed before (all the batches of a consumer round, a
   * burst of route() calls) reaches a socket in one write.
   */
  flushSoon(): void;
}

export interface RouterDeps {
  index: SubscriptionIndex;
  /** Shared with every connection's outbox: the ones with queued frames. */
  hub: OutboxHub;
  counters: RouterCounters;
  /**
   * Next offset per partition of spot.trades.v1 routed so far (written here): the position a
   * live trade's cursor carries and where a resume hands over to the live feed.
   */
  tradePositions: number[];
  /** Sockets are written in slices of this many ms (see StreamEdgeOptions.writeSliceMs); unset, all at once. */
  writeSliceMs?: number;
}

/** One update, with its own seq, to every open subscription of `subs`. */
function deliverAll(subs: Iterable<Subscription>, data: string, counters: RouterCounters): void {
  const tail = updateTail(data, statePosition(Date.now()));
  for (const sub of subs) {
    const outbox = sub.outbox;
    if (outbox.closed) continue;
    counters.updatesSent++;
    outbox.pushUpdate(sub.prefix, ++sub.seq, tail, sub.cursorPrefix);
  }
}

// Fixed field order, and nothing but the candle's fields, whatever the message carried.
const candleText = (c: Candle) =>
  `{"time":${c.time},"open":${c.open},"high":${c.high},"low":${c.low},"close":${c.close},"volume":${c.volume}}`;

export function createRouter(ctx: Context, deps: RouterDeps): Router {
  const log = ctx.logger.child({ component: 'stream-router' });
  const { index, hub, counters, tradePositions } = deps;

  /**
   * One trade to `subs`. Subscriptions that are live on every partition share one tail (cursor
   * = the feed's position); one still catching up gets it only past its hand-over point, with
   * its own position.
   */
  const deliverTrade = (subs: Iterable<Subscription>, data: string, partition: number, offset: number, id: string) => {
    let shared: Buffer | null = null;
    for (const sub of subs) {
      const outbox = sub.outbox;
      if (outbox.closed) continue;
      if (sub.sentIds?.has(id)) continue; // a snapshot sent it already
      let tail: Buffer;
      const catchUp = sub.catchUp;
      if (catchUp) {
        if (!liveAccepts(catchUp, partition, offset)) continue;
        tail = updateTail(data, tradePosition(coveredPositions(catchUp, tradePositions), Date.now()));
        if (caughtUp(catchUp, tradePositions)) sub.catchUp = null;
      } else {
        tail = shared ??= updateTail(data, tradePosition(tradePositions, Date.now()));
      }
      counters.updatesSent++;
      outbox.pushUpdate(sub.prefix, ++sub.seq, tail, sub.cursorPrefix);
    }
  };

  const routeTrade = (message: PricedTradeMessage, partition: number, offset: number) => {
    const trade = message.trade;
    const chain = trade.chain as Chain;
    const tokenSubs = index.tradesByToken(`${chain}:${normalizeAddress(chain, trade.token)}`);
    if (tokenSubs?.size) {
      const { flags: _flags, platforms: _platforms, ...byToken } = trade;
      deliverTrade(tokenSubs, JSON.stringify(byToken), partition, offset, trade.id);
    }
    let full: string | null = null;
    const fullTrade = (t: Trade) => (full ??= JSON.stringify(t));
    const walletSubs = index.tradesByWallet(`${chain}:${normalizeAddress(chain, trade.trader)}`);
    if (walletSubs?.size) {
      deliverTrade(walletSubs, fullTrade(trade), partition, offset, trade.id);
    }
    for (const identity of new Set(message.identities)) {
      for (const set of index.tradesByIdentity(identity, chain))
        deliverTrade(set, fullTrade(trade), partition, offset, trade.id);
    }
  };

  const routeCandles = (message: CandleUpdateMessage) => {
    const chain = message.chain as Chain;
    const views = index.candleViews(`${chain}:${normalizeAddress(chain, message.token)}`);
    if (!views) return;
    for (const view of views.values()) {
      const candle = message.open[view.timeframe]?.[view.metric]?.[view.denomination];
      if (!candle) continue;
      const data = candleText(candle);
      if (data === view.last) continue; // unchanged for this view: nothing to send
      view.last = data;
      deliverAll(view.subs, data, counters);
    }
  };

  const routeToken = (token: Token, text: string | null) => {
    const chain = token.chain as Chain;
    const subs = index.tokens(`${chain}:${normalizeAddress(chain, token.address)}`);
    if (!subs?.size) return;
    deliverAll(subs, text ?? JSON.stringify(token), counters);
  };

  /** Whether a message keyed `key` (the token's chain:address, core/topics.ts) may reach a subscription. */
  const wanted = (topic: string, key: string): boolean => {
    if (topic === TOPICS.trades.name) return index.wantsTradesOf(key);
    if (topic === TOPICS.candles.name) return index.candleViews(key) !== undefined;
    if (topic === TOPICS.tokens.name) return (index.tokens(key)?.size ?? 0) > 0;
    return true;
  };

  /** `text` is the message's own JSON when it came from the log (a token is sent as is). */
  const dispatch = (topic: string, message: unknown, text: string | null, partition = -1, offset = -1) => {
    if (topic === TOPICS.trades.name) {
      if (!isTopicValue(TOPICS.trades, message)) return invalid(topic);
      routeTrade(message, partition, offset);
    } else if (topic === TOPICS.candles.name) {
      if (!isTopicValue(TOPICS.candles, message)) return invalid(topic);
      routeCandles(message);
    } else if (topic === TOPICS.tokens.name) {
      if (!isTopicValue(TOPICS.tokens, message)) return invalid(topic);
      routeToken(message, text);
    } else {
      return;
    }
    counters.messagesRouted++;
  };

  const invalid = (topic: string) => {
    counters.messagesInvalid++;
    if (counters.messagesInvalid <= 10 || counters.messagesInvalid % 1000 === 0) {
      log.warn({ topic, invalid: counters.messagesInvalid }, 'skipped a message that does not match its topic schema');
    }
  };

  // Syscalls, not JavaScript, bound fan-out: one write per socket per turn instead of one per
  // batch or per message. The 1,024-frame limit still holds: a push at the limit flushes at once.
  const sliceMs = deps.writeSliceMs;
  let flushQueued = false;
  let queuedAt = 0;
  /** Writes what is queued, or a slice of it; true once nothing is left. */
  const write = () => flushAll(hub, sliceMs === undefined ? undefined : createSlicer(sliceMs).due);
  const flushTurn = () => {
    flushQueued = false;
    if (!write()) flushSoon();
  };
  const flushSoon = () => {
    if (!flushQueued) {
      flushQueued = true;
      queuedAt = performance.now();
      if (sliceMs === undefined) setImmediate(flushTurn);
      else void waitForTurn(true).then(flushTurn);
    } else if (performance.now() - queuedAt >= MAX_HOLD_MS) {
      // A turn that keeps routing (a consumer catching up on a backlog) still writes every few ms.
      write();
      queuedAt = performance.now();
    }
  };

  return {
    routeValue(topic, value, partition = -1, offset = -1, key) {
      // The position moves past every message, routed or skipped: a cursor never points before it.
      if (topic === TOPICS.trades.name && partition >= 0) tradePositions[partition] = offset + 1;
      // Most messages are of tokens nobody follows: their JSON is not even parsed.
      if (key && !wanted(topic, key)) return; // a message without a key (none from spot) is read
      let message: unknown;
      try {
        message = JSON.parse(value);
      } catch {
        invalid(topic);
        return;
      }
      dispatch(topic, message, topic === TOPICS.tokens.name ? value : null, partition, offset);
    },
    route(topic, message) {
      dispatch(topic, message, null);
      flushSoon();
    },
    flushSoon,
  };
}
