// Older state formats brought to the current one (snapshots, parked and evicted tokens, and
// distributed durable token rows).
// Version 1 kept every trade of 24 h per token (win.recs): its windows and recently closed candle
// buckets are rebuilt from them. Version 2 kept one window bucket per distinct event time: its
// buckets are merged into the granules of their age. Version 3 processed partitions in offset
// order (no per-chain positions). Until 2026-11-30 holder records were objects (any version);
// until 2026-12-03 window buckets were objects (any version).
import { chainOfKey } from '../core/chains.ts';
import { addTrade, forgetClosed, newOpenBuckets, type ClosedBucket } from './candles.ts';
import { recentIdsOf } from './dedupe.ts';
import { countedRec, packedRec, type HolderRecObject } from './holder-records.ts';
import { ATTR, STATE_VERSION, type AggregatorState, type HolderRec, type TokenState } from './state.ts';
import {
  advance,
  insert,
  newTradeWindow,
  windowFromBucketObjects,
  windowFromTimeBuckets,
  type TradeRec,
} from './windows.ts';
import type { BaseGranularity } from '../clickhouse/types.ts';

interface TokenStateV1 extends Omit<TokenState, 'win' | 'closedCandles'> {
  win: { recs: TradeRec[]; t: number };
}

// Version 1 attribute bits: bought 1, sniper 2, bundler 4, insider 8, fresh 16, fomo 32.
const V1_ATTRS: Array<[number, number]> = [
  [1, ATTR.bought],
  [2, ATTR.sniper],
  [4, ATTR.bundler],
  [8, ATTR.insider],
  [16, ATTR.fresh],
  [32, ATTR.fomo],
];

function attrsV2(v1: number): number {
  let attrs = 0;
  for (const [from, to] of V1_ATTRS) if (v1 & from) attrs |= to;
  return attrs;
}

type TokenStateV2 = Omit<TokenState, 'win'> & { win: Parameters<typeof windowFromTimeBuckets>[0] };
/** Windows with their buckets as objects (until 2026-12-03). */
type WindowV4 = Parameters<typeof windowFromBucketObjects>[0];

/**
 * Holder records as objects, packed (holder-records.ts). The index's dirty set becomes a map to the
 * record as counted, which the object kept (mask and counted balance).
 */
function packHolders(token: TokenState): void {
  const holders = token.holders as Map<string, HolderRec | HolderRecObject>;
  const index = token.holderIndex;
  const dirty = index?.dirty as Set<string> | Map<string, HolderRec | undefined> | undefined;
  if (index && dirty instanceof Set) {
    index.dirty = new Map();
    for (const address of dirty) {
      const rec = holders.get(address);
      index.dirty.set(address, typeof rec === 'object' ? countedRec(rec) : rec);
    }
  }
  // A token's records are all of one format.
  if (typeof holders.values().next().value !== 'object') return;
  for (const [address, rec] of holders) if (typeof rec === 'object') holders.set(address, packedRec(rec));
}

/** A token state of any stored version as the current one (converted in place). */
export function upgradeToken(token: TokenState | TokenStateV2 | TokenStateV1): TokenState {
  // Dedupe ids in arrays of their own; a Map of ids or digest keys converted (any version).
  token.recentIds = recentIdsOf(token.recentIds);
  if ('closedCandles' in token) {
    const current = token as TokenState;
    if (!('cuts' in token.win)) current.win = windowFromTimeBuckets(token.win);
    else if ('buckets' in token.win) current.win = windowFromBucketObjects(token.win as WindowV4);
    packHolders(current);
    return current;
  }
  const old = token.win;
  const win = newTradeWindow();
  const open = newOpenBuckets();
  const closed: ClosedBucket[] = [];
  const late: BaseGranularity[] = [];
  for (const rec of old.recs) {
    insert(win, rec);
    addTrade(open, rec, closed, late);
  }
  advance(win, old.t);
  for (const c of closed) c.b.dirty = false;
  forgetClosed(closed, win.t);
  const upgraded = token as unknown as TokenState;
  upgraded.win = win;
  upgraded.closedCandles = closed;
  for (const holder of (upgraded.holders as unknown as Map<string, HolderRecObject>).values())
    holder.attrs = attrsV2(holder.attrs);
  packHolders(upgraded);
  return upgraded;
}

/** A snapshot of any known version as the current state; null for an unknown one. */
export function upgradeState(state: { version?: unknown } | null): AggregatorState | null {
  if (!state || ![1, 2, 3, STATE_VERSION].includes(state.version as number)) return null;
  const s = state as AggregatorState;
  // Up to version 3 partitions were processed in offset order: the offsets say it all.
  s.chainOffsets ??= {};
  for (const [key, token] of s.tokens) s.tokens.set(key, upgradeToken(token));
  for (const shadow of s.shadows?.values() ?? []) shadow.recentIds = recentIdsOf(shadow.recentIds);
  // Version 1 wallets carry no activity time: active as of their chain's watermark.
  // Version 1 kept an empty set of holdings per wallet: absent now when empty.
  for (const [key, wallet] of s.wallets) {
    wallet.at ??= s.watermarks[chainOfKey(key)] ?? 0;
    if (wallet.held instanceof Set && wallet.held.size === 0) wallet.held = undefined;
  }
  s.version = STATE_VERSION;
  return s;
}
