// Log messages to subscriptions: look each message up in the indexes, build each distinct
// `data` text once per message, and assemble every subscription's frame by concatenation.
import { normalizeAddress, type Chain } from '../core/chains.ts';
import type { Context } from '../core/context.ts';
import type { Candle, Trade } from '../core/schemas.ts';
import { TOPICS, isTopicValue, type CandleUpdateMessage, type PricedTradeMessage } from '../core/topics.ts';
import type { Token } from '../core/schemas.ts';
import type { Outbox } from './backpressure.ts';
import type { Subscription, SubscriptionIndex } from './subscriptions.ts';

export const ROUTED_TOPICS = [TOPICS.trades.name, TOPICS.candles.name, TOPICS.tokens.name] as const;

export interface RouterCounters {
  messagesRouted: number;
  messagesInvalid: number;
  updatesSent: number;
}

export interface Router {
  /** Routes one log value (JSON text) of a routed topic; call flush() after a batch. */
  routeValue(topic: string, value: string): void;
  /** Routes one decoded message and flushes at once (benchmarks and tests drive this). */
  route(topic: string, message: unknown): void;
  /** Hands queued frames of every connection touched since the last flush to its socket. */
  flush(): void;
}

export interface RouterDeps {
  index: SubscriptionIndex;
  /** Outboxes with queued frames, shared with every connection's outbox. */
  dirty: Set<Outbox>;
  counters: RouterCounters;
}

function deliver(sub: Subscription, data: string, counters: RouterCounters): void {
  if (sub.outbox.closed) return;
  sub.seq++;
  counters.updatesSent++;
  sub.outbox.push(sub.prefix + sub.seq + ',"data":' + data + '}');
}

// Fixed field order, and nothing but the candle's fields, whatever the message carried.
const candleText = (c: Candle) =>
  `{"time":${c.time},"open":${c.open},"high":${c.high},"low":${c.low},"close":${c.close},"volume":${c.volume}}`;

export function createRouter(ctx: Context, deps: RouterDeps): Router {
  const log = ctx.logger.child({ component: 'stream-router' });
  const { index, dirty, counters } = deps;

  const routeTrade = (message: PricedTradeMessage) => {
    const trade = message.trade;
    const chain = trade.chain as Chain;
    const tokenSubs = index.tradesByToken(`${chain}:${normalizeAddress(chain, trade.token)}`);
    if (tokenSubs && tokenSubs.size) {
      const { flags: _flags, platforms: _platforms, ...byToken } = trade;
      const data = JSON.stringify(byToken);
      for (const sub of tokenSubs) deliver(sub, data, counters);
    }
    let full: string | null = null;
    const fullTrade = (t: Trade) => (full ??= JSON.stringify(t));
    const walletSubs = index.tradesByWallet(`${chain}:${normalizeAddress(chain, trade.trader)}`);
    if (walletSubs && walletSubs.size) {
      const data = fullTrade(trade);
      for (const sub of walletSubs) deliver(sub, data, counters);
    }
    for (const identity of new Set(message.identities)) {
      for (const set of index.tradesByIdentity(identity, chain)) {
        const data = fullTrade(trade);
        for (const sub of set) deliver(sub, data, counters);
      }
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
      for (const sub of view.subs) deliver(sub, data, counters);
    }
  };

  const routeToken = (token: Token, text: string | null) => {
    const chain = token.chain as Chain;
    const subs = index.tokens(`${chain}:${normalizeAddress(chain, token.address)}`);
    if (!subs || !subs.size) return;
    const data = text ?? JSON.stringify(token);
    for (const sub of subs) deliver(sub, data, counters);
  };

  /** `text` is the message's own JSON when it came from the log (a token is sent as is). */
  const dispatch = (topic: string, message: unknown, text: string | null) => {
    if (topic === TOPICS.trades.name) {
      if (!isTopicValue(TOPICS.trades, message)) return invalid(topic);
      routeTrade(message);
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

  const flush = () => {
    for (const outbox of dirty) outbox.flush();
    dirty.clear();
  };

  return {
    routeValue(topic, value) {
      let message: unknown;
      try {
        message = JSON.parse(value);
      } catch {
        invalid(topic);
        return;
      }
      dispatch(topic, message, topic === TOPICS.tokens.name ? value : null);
    },
    route(topic, message) {
      dispatch(topic, message, null);
      flush();
    },
    flush,
  };
}
