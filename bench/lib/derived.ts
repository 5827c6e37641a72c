// Real topic values (priced trades, token objects, open-candle messages) for the scenarios that
// drive the read side: the aggregator's processor applied in memory to decoded simulator records,
// the same code `spot aggregate` runs, without a log or a store.
import type { TradeRow } from '../../clickhouse/types.ts';
import type { Context } from '../../core/context.ts';
import type { Token } from '../../core/schemas.ts';
import type { CandleUpdateMessage, PricedTradeMessage, RawSwap, TokenEvent } from '../../core/topics.ts';
import type { IngestRecords } from '../../ingest/publisher.ts';
import { candleMessage } from '../../aggregators/candles.ts';
import { createProcessor, newBatchOutput } from '../../aggregators/process.ts';
import { newState } from '../../aggregators/state.ts';
import { buildToken } from '../../aggregators/view.ts';

export interface Derived {
  trades: PricedTradeMessage[];
  /** The same trades as the store's rows. */
  tradeRows: TradeRow[];
  tokens: Token[];
  candles: CandleUpdateMessage[];
}

/** Events before swaps within a record, records in order (the aggregator's merge does the same by event time). */
export function derive(ctx: Context, decoded: readonly IngestRecords[]): Derived {
  const state = newState();
  const processor = createProcessor(ctx, state);
  const out = newBatchOutput();
  const items: Array<{ time: number; rank: number; value: RawSwap | TokenEvent }> = [];
  for (const d of decoded) {
    for (const event of d.events) items.push({ time: event.blockTime, rank: 0, value: event });
    for (const swap of d.swaps) items.push({ time: swap.blockTime, rank: 1, value: swap });
  }
  items.sort((a, b) => a.time - b.time || a.rank - b.rank);
  for (const item of items) {
    if (item.rank === 1) processor.swap(item.value as RawSwap, out);
    else processor.event(item.value as TokenEvent, JSON.stringify(item.value), out);
  }
  const tokens: Token[] = [];
  const candles: CandleUpdateMessage[] = [];
  for (const t of state.tokens.values()) {
    if (!t.known || t.trades === 0) continue;
    tokens.push(buildToken(t, state.wallets));
    const message = candleMessage(t.chain, t.address, t.updatedAt, t.candles);
    if (message) candles.push(message);
  }
  return { trades: out.tradeMessages, tradeRows: out.trades, tokens, candles };
}
