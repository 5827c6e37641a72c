// Embedded aggregator: a token with no input for EVICT_IDLE_MS of its chain's event time (and no
// trade left in its 24h window) leaves memory for ClickHouse (spot.aggregator_evicted) and comes
// back, the same state, right before its next input is applied (or a trade quoted in it).
// Evictions run where snapshots run: after the views were published and the sinks drained (when
// there is a token to evict), and before the snapshot that records them, so a crash never loses an
// evicted state.
import { normalizeAddress, tokenKey } from '../core/chains.ts';
import type { Context } from '../core/context.ts';
import type { RawSwap, TokenEvent } from '../core/topics.ts';
import type { EvictedTokenStore } from '../clickhouse/aggregator-state.ts';
import type { Processor } from './contracts.ts';
import { decodeToken, encodeToken } from './snapshot.ts';
import type { AggregatorState } from './state.ts';
import { parkedBase64 } from './parking.ts';
import { hasWindowTrades } from './windows.ts';

export const EVICT_IDLE_MS = 24 * 3_600_000;

export interface Eviction {
  /** Evicted tokens the input reads (its token; a swap's quote token): to reload before it is applied. */
  wanted(value: RawSwap | TokenEvent): string[];
  reload(keys: string[]): Promise<void>;
  /** The evicted ones among `keys` (a wallet fact changed their holder figures: their views are rebuilt). */
  evictedIn(keys: Iterable<string>): string[];
  /** Moves the idle tokens out of memory, after `beforeWrite` when there are any; returns how many left. */
  evictIdle(beforeWrite: () => Promise<void>): Promise<number>;
}

export interface EvictionDeps {
  store: EvictedTokenStore;
  state: () => AggregatorState;
  processor: () => Processor;
  /** Event time without input after which a token leaves memory (default EVICT_IDLE_MS). */
  idleMs?: number;
}

const NONE: string[] = [];

export function createEviction(ctx: Context, deps: EvictionDeps): Eviction {
  const idleMs = deps.idleMs ?? EVICT_IDLE_MS;
  const logger = ctx.logger.child({ component: 'aggregator-eviction' });

  return {
    wanted(value) {
      const evicted = deps.state().evicted;
      if (!evicted || evicted.size === 0) return NONE;
      const chain = value.chain;
      if ('kind' in value) {
        if (value.token === null) return NONE;
        const key = tokenKey(chain, normalizeAddress(chain, value.token));
        return evicted.has(key) ? [key] : NONE;
      }
      let keys = NONE;
      for (const address of [value.token, value.quoteAsset]) {
        const key = tokenKey(chain, normalizeAddress(chain, address));
        if (evicted.has(key)) keys = keys === NONE ? [key] : [...keys, key];
      }
      return keys;
    },

    evictedIn(keys) {
      const evicted = deps.state().evicted;
      const out: string[] = [];
      if (!evicted || evicted.size === 0) return out;
      for (const key of keys) if (evicted.has(key)) out.push(key);
      return out;
    },

    async reload(keys) {
      if (keys.length === 0) return;
      const state = deps.state();
      const stored = await deps.store.read(keys);
      for (const key of keys) {
        state.evicted?.delete(key);
        const text = stored.get(key);
        if (text === undefined) {
          // Only a store that lost the row gets here: the token starts again from its next input.
          ctx.metrics.inc('aggregator.evicted_missing');
          logger.error({ token: key }, 'an evicted token state is missing from the store; it starts empty');
          continue;
        }
        const token = decodeToken(text);
        state.tokens.set(key, token);
        deps.processor().adopted(token);
      }
      ctx.metrics.inc('aggregator.tokens_reloaded', keys.length);
    },

    async evictIdle(beforeWrite) {
      const state = deps.state();
      const idle: Array<{ key: string; state: string }> = [];
      const idleSince = (chain: string) => (state.watermarks[chain] ?? 0) - idleMs;
      for (const [key, t] of state.tokens)
        if (t.updatedAt <= idleSince(t.chain) && !hasWindowTrades(t.win)) idle.push({ key, state: encodeToken(t) });
      for (const [key, parked] of state.parked ?? [])
        if (parked.updatedAt <= idleSince(parked.chain) && parked.expiry === null)
          idle.push({ key, state: parkedBase64(parked) });
      if (idle.length > 0) {
        await beforeWrite();
        await deps.store.write(idle, state.processed);
        // Wallets keep pointing at an evicted token (held, created): a change of their facts
        // still names it, and it comes back for its view (evictedIn).
        const evicted = (state.evicted ??= new Set());
        for (const { key } of idle) {
          state.tokens.delete(key);
          state.parked?.delete(key);
          evicted.add(key);
        }
        ctx.metrics.inc('aggregator.tokens_evicted', idle.length);
      }
      return idle.length;
    },
  };
}
