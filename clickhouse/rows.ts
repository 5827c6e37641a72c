// Row writers: store rows as JSONCompactEachRow text, each row a JSON array in a fixed column
// order. `spot bench store` inserts the same trade and candle rows (a real replay's writes) in
// every form chDB takes: this text as one Buffer, TabSeparated text (DateTime64 written as
// seconds.ms, the one unambiguous text form), RowBinary through a file() insert and Arrow columns
// through arrowstream() (chDB's raw insert takes text only). This text is the cheapest to build on
// the main thread (native JSON.stringify over chunks of row arrays; Arrow costs 2–4×, RowBinary
// 1.4× and a temp file per INSERT) and never the slowest to insert; only RowBinary was faster in
// chDB, 1.15–1.41× on trades in quiet runs (docs/performance.md, the store path). The rows of a
// chunk are separated by commas (the outer brackets of the stringified chunk dropped), and so are
// chunks, which ClickHouse's JSON*EachRow readers accept between rows.
import type { Token } from '../core/schemas.ts';
import { createSlicer } from '../core/slices.ts';
import type { BalanceRow, CandleRow, TokenEventRow, TradeRow, WalletLabelRow } from './types.ts';

/** One table's column order and its row → value arrays (times as Unix ms, decimals as strings). */
export interface RowFormat<Row> {
  columns: readonly string[];
  /** Appends the table rows of `row` to `out` (one, or one per identity for identity_trades). */
  append(row: Row, out: unknown[][]): void;
}

/** Rows `start` to `end` of `rows` as JSONCompactEachRow text ('' when there are none). */
export function encodeRows<Row>(format: RowFormat<Row>, rows: readonly Row[], start = 0, end = rows.length): string {
  const out: unknown[][] = [];
  for (let i = start; i < end; i++) format.append(rows[i]!, out);
  return out.length === 0 ? '' : JSON.stringify(out).slice(1, -1);
}

/**
 * Characters one stringified chunk may reach before the next chunk takes fewer rows. V8 puts a
 * string past 128 KiB in its large-object space, one fresh mapping each: on this machine building
 * a batch as one string (stringify 512 rows, join, Buffer.from) ran 4x slower than chunks kept
 * under it and written straight to a Buffer (65-97 against 16-25 ms for 10,000 trades).
 */
const CHUNK_CHARS = 48 * 1024;
const MAX_CHUNK_ROWS = 512;
/**
 * Encoding a store write may hold the thread this long before it yields. Yielding every 2 ms cost
 * replay 14 % (the write waited a turn of the processing chain at each pause); a write of a
 * replay's 10,000 trades encodes in about 34 ms, so it now yields about four times.
 */
const ENCODE_SLICE_MS = 8;
const COMMA = Buffer.from(',');

/**
 * Rows `start` to `end` as JSONCompactEachRow in one Buffer (the text of encodeRows, UTF-8), built
 * in chunks of at most about CHUNK_CHARS and yielding the thread between chunks once a slice is
 * spent: a write's encoding held the main thread in one go, up to 187 ms of contiguous profile
 * samples in the soak.
 */
export async function encodeRowsInSlices<Row>(
  format: RowFormat<Row>,
  rows: readonly Row[],
  start = 0,
  end = rows.length,
): Promise<Buffer> {
  const slicer = createSlicer(ENCODE_SLICE_MS);
  const parts: Buffer[] = [];
  let chunkRows = 64;
  for (let at = start; at < end; ) {
    const to = Math.min(end, at + chunkRows);
    const text = encodeRows(format, rows, at, to);
    if (text !== '') {
      if (parts.length > 0) parts.push(COMMA);
      parts.push(Buffer.from(text));
    }
    // The next chunk's row count follows this one's size: rows of a table differ little in length.
    if (text.length > CHUNK_CHARS) chunkRows = Math.max(1, chunkRows >> 1);
    else if (text.length < CHUNK_CHARS / 4) chunkRows = Math.min(MAX_CHUNK_ROWS, chunkRows * 2);
    at = to;
    if (at < end && slicer.due()) await slicer.pause();
  }
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

const TRADE_COLUMNS = [
  'id',
  'chain',
  'token',
  'seq',
  'name',
  'symbol',
  'trader',
  'side',
  'transaction_hash',
  'event_index',
  'block_number',
  'timestamp',
  'quote_asset',
  'pool',
  'dex',
  'identities',
  'flags',
  'platforms',
  'amount',
  'quote_amount',
  'price_native',
  'price_usd',
  'volume_native',
  'volume_usd',
  'market_cap_native',
  'market_cap_usd',
] as const;

const tradeValues = (r: TradeRow): unknown[] => [
  r.id,
  r.chain,
  r.token,
  r.seq,
  r.name,
  r.symbol,
  r.trader,
  r.side,
  r.transactionHash,
  r.eventIndex,
  r.blockNumber,
  r.timestamp,
  r.quoteAsset,
  r.pool,
  r.dex,
  r.identities,
  r.flags,
  r.platforms,
  r.amount,
  r.quoteAmount,
  r.priceNative,
  r.priceUsd,
  r.volumeNative,
  r.volumeUsd,
  r.marketCapNative,
  r.marketCapUsd,
];

export const tradeFormat: RowFormat<TradeRow> = {
  columns: TRADE_COLUMNS,
  append: (r, out) => void out.push(tradeValues(r)),
};

/** One identity_trades row per identity the trade carries (none without identities). */
export const identityTradeFormat: RowFormat<TradeRow> = {
  columns: ['identity', ...TRADE_COLUMNS],
  append(r, out) {
    if (r.identities.length === 0) return;
    const values = tradeValues(r);
    for (const identity of new Set(r.identities)) out.push([identity, ...values]);
  },
};

export const candleFormat: RowFormat<CandleRow> = {
  columns: [
    'chain',
    'token',
    'granularity',
    'time',
    'seq',
    ...['price_native', 'price_usd', 'market_cap_native', 'market_cap_usd'].flatMap((prefix) =>
      ['open', 'high', 'low', 'close'].map((part) => `${prefix}_${part}`),
    ),
    'volume_native',
    'volume_usd',
    'trades',
  ],
  append: (r, out) =>
    void out.push([
      r.chain,
      r.token,
      r.granularity,
      r.time,
      r.seq,
      r.priceNative.open,
      r.priceNative.high,
      r.priceNative.low,
      r.priceNative.close,
      r.priceUsd.open,
      r.priceUsd.high,
      r.priceUsd.low,
      r.priceUsd.close,
      r.marketCapNative.open,
      r.marketCapNative.high,
      r.marketCapNative.low,
      r.marketCapNative.close,
      r.marketCapUsd.open,
      r.marketCapUsd.high,
      r.marketCapUsd.low,
      r.marketCapUsd.close,
      r.volumeNative,
      r.volumeUsd,
      r.trades,
    ]),
};

/** Token → spot.tokens: the full JSON body plus the columns analysts filter and sort on. */
export const tokenFormat: RowFormat<Token> = {
  columns: [
    'chain',
    'address',
    'name',
    'symbol',
    'created_at',
    'launchpad',
    'market_cap_usd',
    'liquidity_usd',
    'volume_24h_usd',
    'holders_count',
    'bonding_curve_pct',
    'graduated_at',
    'updated_at',
    'body',
  ],
  append: (t, out) =>
    void out.push([
      t.chain,
      t.address,
      t.name,
      t.symbol,
      t.createdAt,
      t.launchpad ?? null,
      t.marketCap.usd,
      t.liquidity.usd,
      t.stats['24h'].volume.usd,
      t.holders.count,
      t.bondingCurvePct ?? null,
      t.graduatedAt ?? null,
      t.updatedAt,
      JSON.stringify(t),
    ]),
};

export const tokenEventFormat: RowFormat<TokenEventRow> = {
  columns: ['id', 'chain', 'token', 'kind', 'block_time', 'body'],
  append: (r, out) => void out.push([r.id, r.chain, r.token, r.kind, r.blockTime, r.body]),
};

export const walletLabelFormat: RowFormat<WalletLabelRow> = {
  columns: ['chain', 'wallet', 'labels', 'name', 'updated_at'],
  append: (r, out) => void out.push([r.chain, r.wallet, r.labels, r.name, r.updatedAt]),
};

export const balanceFormat: RowFormat<BalanceRow> = {
  columns: ['chain', 'token', 'wallet', 'amount', 'updated_at'],
  append: (r, out) => void out.push([r.chain, r.token, r.wallet, r.amount, r.updatedAt]),
};
