// The REST trade object, from a topic message or a ClickHouse row, serialised once. REST trades
// carry `flags` (the trader's labels) and `platforms` (the terminals or bots the transaction went
// through), whichever source answers.
import type { TradeRow } from '../clickhouse/types.ts';
import { tradePlatforms, type Trade } from '../core/schemas.ts';
import { integerAt } from './json-scan.ts';

/** A trade ready to page: its (timestamp, id) position and its JSON text. */
export interface TradeItem {
  timestamp: number;
  id: string;
  json: string;
}

const ID_START = '{"id":"'.length;
const QUOTE = 34;

/** A trade item that holds only its JSON: the id is read back from it (ids never need escaping). */
class HeldTrade implements TradeItem {
  constructor(
    readonly timestamp: number,
    readonly json: string,
  ) {}
  get id(): string {
    return this.json.slice(ID_START, this.json.indexOf('"', ID_START));
  }
}

/**
 * compareNewestFirst (query-api/cursor.ts) for items whose JSON is tradeJson's, which starts with
 * the id: the ids are compared in place. A busy second's trades share a timestamp, so nearly every
 * insertion into a ring compares ids, and reading them back allocated two strings per comparison.
 * The closing quote sorts below every id character, so a shorter id that is a prefix of the other
 * sorts first, as with `<` on the ids.
 */
export function compareItemsNewestFirst(a: TradeItem, b: TradeItem): number {
  if (a.timestamp !== b.timestamp) return b.timestamp - a.timestamp;
  const x = a.json;
  const y = b.json;
  for (let i = ID_START; ; i++) {
    const cx = x.charCodeAt(i);
    const cy = y.charCodeAt(i);
    if (cx !== cy) return cx < cy ? 1 : -1;
    if (cx === QUOTE) return 0;
  }
}

/** The item the views keep for a trade (its JSON and timestamp only). */
export function tradeItem(trade: Trade): TradeItem {
  return new HeldTrade(trade.timestamp, tradeJson(trade));
}

const MESSAGE_START = '{"trade":{"id":"';
const TRADE_START = '{"trade":'.length;
const IDENTITIES = ',"identities":[';
const TIMESTAMP = '"timestamp":';
const FLAGS = ',"flags":[';
const PLATFORMS = ',"platforms":[';
const NO_IDENTITIES: readonly string[] = Object.freeze([]);

/** A spot.trades.v1 value read without parsing the trade: its REST item, identity feeds and seq. */
export interface TradeText {
  item: TradeItem;
  identities: readonly string[];
  /** The trade's place among its token's trades; undefined in values written before it. */
  seq: number | undefined;
}

const SEQ = ',"seq":';

/**
 * The trade of a spot.trades.v1 value as its REST JSON, cut from the text instead of parsed and
 * serialised again: the aggregator writes the trade with tradeJson's fields in tradeJson's order
 * (aggregators/process.ts), flags and platforms included, so the two are the same text. Parsing
 * and serialising each trade was most of what the serving thread allocated per trade. Inside a JSON
 * string a quote is always escaped, so `,"identities":[` and `"timestamp":` occur only as keys; the
 * trade has neither an identities key nor a second timestamp. Null when the text has another shape
 * (the caller parses it then).
 */
export function tradeText(text: string): TradeText | null {
  if (!text.startsWith(MESSAGE_START)) return null;
  const end = text.indexOf(IDENTITIES, MESSAGE_START.length);
  if (end < 0 || text.charCodeAt(end - 1) !== 125 /* } */) return null;
  const json = text.slice(TRADE_START, end);
  const at = json.lastIndexOf(TIMESTAMP);
  if (at < 0) return null;
  const timestamp = integerAt(json, at + TIMESTAMP.length);
  // JSON writes no leading zeros, so the digits read are the number's own.
  const after = at + TIMESTAMP.length + String(timestamp).length;
  if (timestamp < 0 || !json.startsWith(FLAGS, after) || json.indexOf(PLATFORMS, after) < 0) return null;
  if (text.charCodeAt(text.length - 1) !== 125 /* } */) return null;
  let identities: unknown = NO_IDENTITIES;
  // Most traders are no identity's: an empty list needs no parse of the tail (pool, dex).
  if (text.charCodeAt(end + IDENTITIES.length) !== 93 /* ] */) {
    try {
      identities = (JSON.parse(`{${text.slice(end + 1)}`) as { identities?: unknown }).identities;
    } catch {
      return null;
    }
  }
  if (!Array.isArray(identities) || !identities.every((i) => typeof i === 'string')) return null;
  // The message's last key when present (the aggregator writes it after dex); only a top-level key
  // can match, as a quote inside a string is escaped.
  const seqAt = text.lastIndexOf(SEQ);
  const seq = seqAt > end ? integerAt(text, seqAt + SEQ.length) : -1;
  // A slice of the message's value, which is a string of its own (record-batch.ts): the ring item
  // keeps the value alive, a few dozen bytes more than the trade.
  return { item: new HeldTrade(timestamp, json), identities, seq: seq > 0 ? seq : undefined };
}

export function tradeJson(trade: Trade): string {
  const out: Trade = {
    id: trade.id,
    chain: trade.chain,
    token: trade.token,
    name: trade.name,
    symbol: trade.symbol,
    trader: trade.trader,
    transactionHash: trade.transactionHash,
    side: trade.side,
    amount: trade.amount,
    price: { native: trade.price.native, usd: trade.price.usd },
    volume: { native: trade.volume.native, usd: trade.volume.usd },
    marketCap: { native: trade.marketCap.native, usd: trade.marketCap.usd },
    timestamp: trade.timestamp,
    flags: trade.flags ?? [],
    platforms: trade.platforms ?? [],
  };
  return JSON.stringify(out);
}

export function tradeFromRow(row: TradeRow): Trade {
  return {
    id: row.id,
    chain: row.chain,
    token: row.token,
    name: row.name,
    symbol: row.symbol,
    trader: row.trader,
    transactionHash: row.transactionHash,
    side: row.side,
    amount: row.amount,
    price: { native: row.priceNative, usd: row.priceUsd },
    volume: { native: row.volumeNative, usd: row.volumeUsd },
    marketCap: { native: row.marketCapNative, usd: row.marketCapUsd },
    timestamp: row.timestamp,
    flags: row.flags,
    platforms: tradePlatforms(row.platforms),
  };
}

export function tradeRowJson(row: TradeRow): string {
  return tradeJson(tradeFromRow(row));
}

export function rowItem(row: TradeRow): TradeItem {
  return { timestamp: row.timestamp, id: row.id, json: tradeRowJson(row) };
}

/** `{trades, hasMore, nextCursor}` from up to limit+1 newest-first items. */
export function pageJson(items: TradeItem[], limit: number, encode: (item: TradeItem) => string): string {
  const hasMore = items.length > limit;
  const page = hasMore ? items.slice(0, limit) : items;
  const last = page[page.length - 1];
  const nextCursor = hasMore && last ? JSON.stringify(encode(last)) : 'null';
  return `{"trades":[${page.map((t) => t.json).join(',')}],"hasMore":${hasMore},"nextCursor":${nextCursor}}`;
}
