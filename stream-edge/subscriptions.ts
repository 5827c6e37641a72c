// Routing indexes: a message reaches only the subscriptions its keys name, never a scan of
// every subscription. Candle subscriptions are grouped by view (timeframe, metric,
// denomination) so a candle is serialised once per view and compared with the last one sent.
import type { Chain } from '../core/chains.ts';
import type { Denomination, Identity, Metric, Timeframe } from '../core/schemas.ts';
import type { Outbox } from './backpressure.ts';
import type { DiscoverySpec, SubscriptionSpec } from './protocol.ts';

export interface CatchUp {
  /** Per partition: the offset from which the live feed delivers, or -1 while the reader covers it. */
  liveFrom: number[];
  /** Per partition: the next offset the reader covers. */
  readerAt: number[];
}

export interface Subscription {
  id: string;
  spec: SubscriptionSpec;
  outbox: Outbox;
  /** Updates sent so far; the next update carries seq + 1. */
  seq: number;
  /** `{"type":"update","channel":…,"subscriptionId":…,"seq":` (bytes) */
  prefix: Buffer;
  /** `,"cursor":"<kind><filters hash>.` (bytes), written after seq. */
  cursorPrefix: Buffer;
  /** A resumed trades subscription while the log reader still covers some partitions; else null. */
  catchUp: CatchUp | null;
  /** Trade ids a snapshot already sent; a live copy of one is skipped (cleared shortly after). */
  sentIds: Set<string> | null;
}

export interface CandleView {
  timeframe: Timeframe;
  metric: Metric;
  denomination: Denomination;
  subs: Set<Subscription>;
  /** JSON text of the last candle sent to this view of this token. */
  last: string | null;
}

interface IdentityIndex {
  /** Subscriptions without a chains filter. */
  anyChain: Set<Subscription>;
  byChain: Map<Chain, Set<Subscription>>;
}

export interface SubscriptionIndex {
  add(sub: Subscription): void;
  remove(sub: Subscription): void;
  tradesByToken(key: string): Set<Subscription> | undefined;
  tradesByWallet(key: string): Set<Subscription> | undefined;
  /** Sets (disjoint) of subscriptions following `identity` that accept trades of `chain`. */
  tradesByIdentity(identity: string, chain: Chain): Array<Set<Subscription>>;
  candleViews(key: string): Map<string, CandleView> | undefined;
  tokens(key: string): Set<Subscription> | undefined;
  /** True when a trade of the token (`chain:address`) may reach a subscription: by token, any wallet or identity. */
  wantsTradesOf(key: string): boolean;
  /** Every spot.discovery subscription (ranked on a timer, not per message). */
  discovery(): ReadonlySet<Subscription & { spec: DiscoverySpec }>;
  size(): number;
}

const key = (chain: string, address: string) => `${chain}:${address}`;

function addTo<K>(map: Map<K, Set<Subscription>>, k: K, sub: Subscription): void {
  let set = map.get(k);
  if (!set) map.set(k, (set = new Set()));
  set.add(sub);
}

function removeFrom<K>(map: Map<K, Set<Subscription>>, k: K, sub: Subscription): void {
  const set = map.get(k);
  if (!set) return;
  set.delete(sub);
  if (set.size === 0) map.delete(k);
}

export function createSubscriptionIndex(): SubscriptionIndex {
  const byToken = new Map<string, Set<Subscription>>();
  const byWallet = new Map<string, Set<Subscription>>();
  const byIdentity = new Map<Identity, IdentityIndex>();
  const candles = new Map<string, Map<string, CandleView>>();
  const tokens = new Map<string, Set<Subscription>>();
  const discovery = new Set<Subscription & { spec: DiscoverySpec }>();
  let count = 0;

  const identityIndex = (identity: Identity): IdentityIndex => {
    let index = byIdentity.get(identity);
    if (!index) byIdentity.set(identity, (index = { anyChain: new Set(), byChain: new Map() }));
    return index;
  };

  return {
    add(sub) {
      const spec = sub.spec;
      count++;
      if (spec.channel === 'spot.trades') {
        if (spec.by === 'token') addTo(byToken, key(spec.chain, spec.token), sub);
        else if (spec.by === 'wallet') addTo(byWallet, key(spec.chain, spec.wallet), sub);
        else {
          const index = identityIndex(spec.identity);
          if (spec.chains === null) index.anyChain.add(sub);
          else for (const chain of spec.chains) addTo(index.byChain, chain, sub);
        }
      } else if (spec.channel === 'spot.candles') {
        const tokenKey = key(spec.chain, spec.token);
        let views = candles.get(tokenKey);
        if (!views) candles.set(tokenKey, (views = new Map()));
        const viewKey = `${spec.timeframe}:${spec.metric}:${spec.denomination}`;
        let view = views.get(viewKey);
        if (!view) {
          view = {
            timeframe: spec.timeframe,
            metric: spec.metric,
            denomination: spec.denomination,
            subs: new Set(),
            last: null,
          };
          views.set(viewKey, view);
        }
        view.subs.add(sub);
      } else if (spec.channel === 'spot.tokens') {
        for (const address of spec.addresses) addTo(tokens, key(spec.chain, address), sub);
      } else {
        discovery.add(sub as Subscription & { spec: DiscoverySpec });
      }
    },

    remove(sub) {
      const spec = sub.spec;
      count--;
      if (spec.channel === 'spot.trades') {
        if (spec.by === 'token') removeFrom(byToken, key(spec.chain, spec.token), sub);
        else if (spec.by === 'wallet') removeFrom(byWallet, key(spec.chain, spec.wallet), sub);
        else {
          const index = byIdentity.get(spec.identity);
          if (!index) return;
          if (spec.chains === null) index.anyChain.delete(sub);
          else for (const chain of spec.chains) removeFrom(index.byChain, chain, sub);
          if (index.anyChain.size === 0 && index.byChain.size === 0) byIdentity.delete(spec.identity);
        }
      } else if (spec.channel === 'spot.candles') {
        const tokenKey = key(spec.chain, spec.token);
        const views = candles.get(tokenKey);
        const viewKey = `${spec.timeframe}:${spec.metric}:${spec.denomination}`;
        const view = views?.get(viewKey);
        if (!views || !view) return;
        view.subs.delete(sub);
        if (view.subs.size === 0) views.delete(viewKey);
        if (views.size === 0) candles.delete(tokenKey);
      } else if (spec.channel === 'spot.tokens') {
        for (const address of spec.addresses) removeFrom(tokens, key(spec.chain, address), sub);
      } else {
        discovery.delete(sub as Subscription & { spec: DiscoverySpec });
      }
    },

    tradesByToken: (k) => byToken.get(k),
    tradesByWallet: (k) => byWallet.get(k),
    tradesByIdentity(identity, chain) {
      const index = byIdentity.get(identity as Identity);
      if (!index) return [];
      const sets: Array<Set<Subscription>> = [];
      if (index.anyChain.size) sets.push(index.anyChain);
      const chainSet = index.byChain.get(chain);
      if (chainSet) sets.push(chainSet);
      return sets;
    },
    candleViews: (k) => candles.get(k),
    tokens: (k) => tokens.get(k),
    wantsTradesOf(k) {
      if (byToken.get(k)?.size || byWallet.size > 0) return true;
      for (const index of byIdentity.values()) {
        if (index.anyChain.size > 0) return true;
        for (const set of index.byChain.values()) if (set.size > 0) return true;
      }
      return false;
    },
    discovery: () => discovery,
    size: () => count,
  };
}
