// First pages of token trades read from the store, kept for a moment. A token with no trades ring
// (no trade for an hour, or none since the views started) costs a chDB query per read on the one
// thread that owns chDB (~5 ms each), so readers of a quiet token queue there. Reads of one token
// that arrive while its query runs share it, and its page answers for PAGE_TTL_MS: the store
// itself is written once a second (SPOT_STORE_FLUSH_MS), so a page is no staler than the store
// already is. A trade of the token reaching the views drops its page at once.
import type { TradeItem } from './trade-json.ts';

/** How long a page read from the store answers later reads of its token. */
export const PAGE_TTL_MS = 1000;
/** Trades held over every kept page (~0.5 KB each): past it, the oldest pages go. */
export const MAX_PAGE_ITEMS = 10_000;

export interface StorePageCache {
  /**
   * The newest `count` trades of token `key`, newest first: from a kept page, from a query under way
   * that asked for at least as many, or from `load(count)`.
   */
  page(key: string, count: number, load: (count: number) => Promise<TradeItem[]>): Promise<TradeItem[]>;
  /** The token traded: neither its kept page nor a query under way answers a later read. */
  drop(key: string): void;
  /** Trades held over every kept page. */
  readonly items: number;
}

export interface StorePageCacheOptions {
  now?: () => number;
  ttlMs?: number;
  maxItems?: number;
}

interface Page {
  items: TradeItem[];
  /** How many were asked for: fewer items than that are every trade the token has. */
  asked: number;
  expires: number;
}

interface Query {
  asked: number;
  result: Promise<TradeItem[]>;
}

/** The newest `count` of a page, or null when the page cannot tell them. */
function answer(page: { items: TradeItem[]; asked: number }, count: number): TradeItem[] | null {
  if (count <= page.items.length) return page.items.slice(0, count);
  return page.items.length < page.asked ? page.items : null;
}

export function createStorePageCache(options: StorePageCacheOptions = {}): StorePageCache {
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? PAGE_TTL_MS;
  const maxItems = options.maxItems ?? MAX_PAGE_ITEMS;
  // Insertion order is age order: the oldest page goes first.
  const pages = new Map<string, Page>();
  const queries = new Map<string, Query>();
  let held = 0;

  const remove = (key: string, page: Page) => {
    pages.delete(key);
    held -= page.items.length;
  };

  function keep(key: string, items: TradeItem[], asked: number): void {
    const previous = pages.get(key);
    if (previous) remove(key, previous);
    if (items.length > maxItems) return;
    pages.set(key, { items, asked, expires: now() + ttlMs });
    held += items.length;
    for (const [oldKey, oldPage] of pages) {
      if (held <= maxItems) break;
      remove(oldKey, oldPage);
    }
  }

  return {
    page(key, count, load) {
      const page = pages.get(key);
      if (page) {
        if (page.expires <= now()) remove(key, page);
        else {
          const items = answer(page, count);
          if (items) return Promise.resolve(items);
        }
      }
      const running = queries.get(key);
      if (running && running.asked >= count)
        return running.result.then((items) => answer({ items, asked: running.asked }, count)!);
      const query: Query = { asked: count, result: load(count) };
      queries.set(key, query);
      void query.result.then(
        (items) => {
          // Dropped (the token traded) or replaced by a larger query while this one ran: not kept.
          if (queries.get(key) !== query) return;
          queries.delete(key);
          keep(key, items, count);
        },
        () => {
          if (queries.get(key) === query) queries.delete(key);
        },
      );
      return query.result;
    },

    drop(key) {
      if (pages.size > 0) {
        const page = pages.get(key);
        if (page) remove(key, page);
      }
      if (queries.size > 0) queries.delete(key);
    },

    get items() {
      return held;
    },
  };
}
