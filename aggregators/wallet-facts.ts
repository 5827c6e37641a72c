// Wallet facts, a keyed stage of their own (wallet key → WalletState): labels, first funding and
// funders, trade count, and which tokens' figures depend on the wallet (held, created). Token
// state reads them; they are chain-wide (every distributed instance keeps all of them). A wallet
// that holds nothing, created nothing, carries no label and was idle for WALLET_IDLE_MS of its
// chain's event time is forgotten (docs/holders.md). With a store (the embedded aggregator), a
// wallet idle in memory for WALLET_PARK_IDLE_MS moves to disk after the next snapshot (taken from
// its chain's idle queue) and comes back, the same facts, on its next read: memory follows the
// active wallets.
import v8 from 'node:v8';
import { chainOfKey, tokenKey, type Chain } from '../core/chains.ts';
import type { Metrics } from '../core/metrics.ts';
import { createIdleQueue, type IdleQueue } from './idle-queue.ts';
import type { WalletState } from './state.ts';
import type { ParkedWalletRow, WalletStore } from './wallet-store.ts';

export const WALLET_IDLE_MS = 24 * 3_600_000;
/** Idle wallets are looked for each time a chain's watermark enters a new hour. */
export const WALLET_EXPIRY_TICK_MS = 3_600_000;
/**
 * Event time without activity after which a wallet leaves memory for the store. Most wallets trade
 * for minutes: at 10 minutes the ones in memory kept rising for the first 10 minutes of a mainnet
 * run (to 71k), at 2 they stayed at about 22k from minute 4; at 1 the main thread's committed heap
 * grew 31–49 MB over the check's live minutes against 54–67, for ~2 % more CPU (docs/memory.md).
 */
export const WALLET_PARK_IDLE_MS = 60_000;

/** Wallet facts by wallet key (a Map of them is one): what holder figures and views read. */
export interface WalletReader {
  get(key: string): WalletState | undefined;
  /** The facts as they are, without bringing a parked wallet back into memory. Absent: get. */
  view?(key: string): WalletState | undefined;
  /** Parked holder records (the embedded aggregator's store). Absent: every record is in memory. */
  holders?: ParkedHolders;
}

/** The wallet's facts without bringing a parked wallet back into memory. */
export const viewWallet = (wallets: WalletReader, key: string): WalletState | undefined =>
  wallets.view ? wallets.view(key) : wallets.get(key);

/** Reads of parked holder records (wallet-store.ts). */
export type ParkedHolders = Pick<WalletStore, 'holder' | 'holdersOf' | 'countedByBalance'>;

export interface WalletFacts {
  /** The wallet's facts, created empty when it has none. */
  get(chain: Chain, address: string): WalletState;
  /** The wallet's facts, if it has any. */
  peek(chain: Chain, address: string): WalletState | undefined;
  /** Records activity at `time` (event time): a trade, a funding received, a label, a balance change. */
  touch(wallet: WalletState, time: number): void;
  /** The chain's watermark moved from `old` to `time`: on a new hour, forgets its idle wallets. */
  tick(chain: Chain, old: number, time: number): number;
  /** Reads by wallet key, from memory or the store. */
  readonly reader: WalletReader;
  /**
   * Moves wallets idle since `idleBefore(chain)` to the store at `version` (one no written snapshot
   * names yet), until `due()` says the slice is spent (at most 128 written a slice; without `due`,
   * every idle one): the next call goes on where this one stopped. Returns how many left memory and
   * whether none idle is left (true without a store).
   */
  park(idleBefore: (chain: string) => number, version: number, due?: () => boolean): { parked: number; done: boolean };
}

/** A wallet's key in the wallet-facts stage: `chain:address`, as token keys. */
export function walletKey(chain: Chain, wallet: string): string {
  return tokenKey(chain, wallet);
}

export const newWallet = (at: number): WalletState => ({
  labels: [],
  name: null,
  funder: null,
  fundedBy: [],
  trades: 0,
  created: [],
  at,
});

/** True when nothing depends on the wallet's facts but its own future trades. */
function unpinned(w: WalletState): boolean {
  return w.held === undefined && w.created.length === 0 && w.labels.length === 0;
}

/** Wallets one slice of the park writes at most (serialised and upserted, about 10 µs each). */
const WALLET_ROWS_PER_SLICE = 128;

const NONE: readonly string[] = [];
/**
 * Holdings kept in an array up to this many: most wallets in memory hold 3-5 tokens on the mainnet
 * profile, and an array of 5 keys takes 88 B of heap against 232 B for a Set. Past it, a Set (a
 * bot holding hundreds); an array is copied at each change, in insertion order as a Set iterates.
 */
const SMALL_HELD = 8;

/** Per wallets map, what must see a wallet's key before a read hands the wallet out (a snapshot capture). */
const walletReadHooks = new WeakMap<Map<string, WalletState>, (key: string) => void>();

/** Sets (or clears, with null) the hook every read of `wallets` calls with the key first. */
export function onWalletRead(wallets: Map<string, WalletState>, hook: ((key: string) => void) | null): void {
  if (hook) walletReadHooks.set(wallets, hook);
  else walletReadHooks.delete(wallets);
}

/** The tokens the wallet holds a balance of, in the order it came to hold them. */
export const holdings = (w: WalletState): Iterable<string> => w.held ?? NONE;

/** Records whether the wallet holds a balance of the token (`held` exists only while non-empty). */
export function setHolding(w: WalletState, key: string, holds: boolean): void {
  const held = w.held;
  if (held instanceof Set) {
    if (holds) held.add(key);
    else if (held.delete(key) && held.size === 0) w.held = undefined;
  } else if (holds) {
    // concat and slice allocate the exact length (a push would leave room for 16 more).
    if (!held) w.held = [key];
    else if (!held.includes(key)) w.held = held.length < SMALL_HELD ? held.concat(key) : new Set(held).add(key);
  } else if (held) {
    const at = held.indexOf(key);
    if (at >= 0) w.held = held.length === 1 ? undefined : held.slice(0, at).concat(held.slice(at + 1));
  }
}

export interface WalletFactsOptions {
  /** Forget idle unpinned wallets (distributed instances keep every wallet: their holdings differ). */
  expire: boolean;
  /** Where idle wallets are parked (embedded); none keeps every wallet in memory. */
  store?: WalletStore;
  /** Counts wallets brought back from the store (aggregator.wallets_loaded). */
  metrics?: Metrics;
  /** Told the keys of the wallets that left memory (parked, or forgotten at an hour's tick). */
  onLeft?: (keys: string[]) => void;
}

export function createWalletFacts(wallets: Map<string, WalletState>, options: WalletFactsOptions): WalletFacts {
  const store = options.store;
  // Wallets brought back from the store, with the bytes they came as: unchanged, they are not rewritten.
  const loaded = new WeakMap<WalletState, Buffer>();

  function lookup(key: string): WalletState | undefined {
    walletReadHooks.get(wallets)?.(key);
    const live = wallets.get(key);
    if (live || !store) return live;
    const facts = store.get(key);
    if (!facts) return undefined;
    const w = v8.deserialize(facts) as WalletState;
    loaded.set(w, facts);
    wallets.set(key, w);
    fresh.push(key);
    options.metrics?.inc('aggregator.wallets_loaded');
    return w;
  }

  const reader: WalletReader = store
    ? {
        get: lookup,
        view(key) {
          const live = wallets.get(key);
          if (live) return live;
          const facts = store.get(key);
          return facts && (v8.deserialize(facts) as WalletState);
        },
        holders: store,
      }
    : { get: lookup };
  // With a store, every wallet in memory is in its chain's idle queue (at least once), or among the
  // fresh ones: created or read back since the last park, they are queued then, at their activity.
  const idleQueues = new Map<string, IdleQueue<string>>();
  let fresh: string[] = [];
  function queued(key: string, time: number): void {
    const chain = chainOfKey(key);
    let queue = idleQueues.get(chain);
    if (!queue) idleQueues.set(chain, (queue = createIdleQueue<string>()));
    queue.push(key, time);
  }
  /** Queues the fresh wallets still in memory, oldest activity first. */
  function queueFresh(): void {
    const entries: Array<[string, WalletState]> = [];
    for (const key of fresh) {
      const w = wallets.get(key);
      if (w) entries.push([key, w]);
    }
    fresh = [];
    entries.sort((a, b) => a[1].at - b[1].at);
    for (const [key, w] of entries) queued(key, w.at);
  }
  // Those of a snapshot.
  if (store) fresh = [...wallets.keys()];

  return {
    reader,

    get(chain, address) {
      const key = walletKey(chain, address);
      let w = lookup(key);
      if (!w) {
        wallets.set(key, (w = newWallet(0)));
        if (store) fresh.push(key);
      }
      return w;
    },

    peek: (chain, address) => lookup(walletKey(chain, address)),

    touch(w, time) {
      if (time > w.at) w.at = time;
    },

    tick(chain, old, time) {
      if (!options.expire || Math.floor(time / WALLET_EXPIRY_TICK_MS) === Math.floor(old / WALLET_EXPIRY_TICK_MS))
        return 0;
      const prefix = `${chain}:`;
      const idleBefore = time - WALLET_IDLE_MS;
      // One brought back from the store may still have a row there (written when it was pinned).
      const withRows: string[] = [];
      const left: string[] = [];
      for (const [key, w] of wallets) {
        if (w.at <= idleBefore && unpinned(w) && key.startsWith(prefix)) {
          wallets.delete(key);
          left.push(key);
          if (loaded.has(w)) withRows.push(key);
        }
      }
      if (left.length > 0) options.onLeft?.(left);
      if (!store) return left.length;
      store.remove(withRows);
      return left.length + store.forget(chain, idleBefore);
    },

    park(idleBefore, version, due) {
      if (!store) return { parked: 0, done: true };
      const rows: ParkedWalletRow[] = [];
      const leaving: string[] = [];
      // The rows are written after the slice's takes: at most so many, so the write fits the slice.
      const most = due ? WALLET_ROWS_PER_SLICE : Number.POSITIVE_INFINITY;
      queueFresh();
      let done = true;
      let taken = 0;
      for (const [chain, queue] of idleQueues) {
        const bound = idleBefore(chain);
        for (;;) {
          if (rows.length >= most || (due && (++taken & 63) === 0 && due())) {
            done = false;
            break;
          }
          const key = queue.takeDue(bound);
          if (key === undefined) break;
          const w = wallets.get(key);
          // Gone (forgotten, or parked from an earlier place in the queue), or active since: back in at its time.
          if (!w) continue;
          if (w.at > bound) {
            queue.push(key, w.at);
            continue;
          }
          leaving.push(key);
          wallets.delete(key);
          const facts = v8.serialize(w);
          const before = loaded.get(w);
          if (!before || !before.equals(facts)) rows.push({ key, chain, at: w.at, pinned: !unpinned(w), facts });
        }
        if (!done) break;
      }
      store.put(rows, version);
      options.onLeft?.(leaving);
      return { parked: leaving.length, done };
    },
  };
}
