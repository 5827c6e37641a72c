// Applies one raw swap or token event to the aggregator state and collects what the batch must
// write and publish. Reads event time only (never the wall clock), so the same messages in the
// same order always give the same state and outputs.
import { CHAIN_INFO, normalizeAddress, tokenKey, type Chain } from '../core/chains.ts';
import type { Context } from '../core/context.ts';
import { ZERO, fromUnits, mul, type Dec } from '../core/decimal.ts';
import type { RawSwap, TokenEvent } from '../core/topics.ts';
import { tradePlatforms } from '../core/schemas.ts';
import type { BaseGranularity } from '../clickhouse/types.ts';
import { addLateTrade, addTrade, candleRow, forgetClosed, newOpenBuckets, type ClosedBucket } from './candles.ts';
import {
  FRESH_WALLET_MS,
  FOMO_MULTIPLE,
  PRO_TRADER_TRADES,
  SNIPER_WINDOW_MS,
  detachFromWallets,
  isInsider,
  isProTrader,
} from './holders.ts';
import {
  isReferencePair,
  markOf,
  quoteRate,
  priceTrade,
  recordReference,
  referencePrice,
  toNative,
  toUsd,
  type QuoteRate,
} from './pricing.ts';
import { applyTokenEvent, type StateOps } from './token-events.ts';
import { createExpiryQueue, type ExpiryQueue } from './expiry-queue.ts';
import { createWalletFacts, holdings, newWallet, setHolding, walletKey } from './wallet-facts.ts';
import type { ParkedHolderRow, WalletStore } from './wallet-store.ts';
import { createWalletRecords } from './wallet-records.ts';
import { createIdleQueue, type IdleQueue } from './idle-queue.ts';
import {
  holderChanged,
  parkedHolderOf,
  holdersReset,
  parkHolderRecords,
  parkHolders,
  setHolderRec,
  walletHoldersChanged,
} from './holder-index.ts';
import { EMPTY_HOLDER, attrsOf, balOf, withAttrs, withBal } from './holder-records.ts';
import {
  ATTR,
  type AggregatorState,
  type HolderRec,
  type PoolState,
  type SwapContext,
  type TokenState,
  type WalletState,
} from './state.ts';
import {
  WINDOW_MS,
  advance,
  hasWindowTrades,
  insert,
  lastTradeTime,
  newTradeWindow,
  nextExpiry,
  tradeSecond,
  type TradeRec,
} from './windows.ts';
import { clampPct, decTextOnce, unitsText } from './format.ts';
import { type BatchOutput, type InputPosition, type Partitioning, type Processor } from './contracts.ts';
import { forgetOldIds, newRecentIds, seenBefore } from './dedupe.ts';
import { PARK_TICK_MS, parkToken, tokenIn } from './parking.ts';

// bench/ imports these from here (kept while bench/ is rewritten in parallel).
export { newBatchOutput } from './contracts.ts';

/** Stats of tokens whose windows lose trades are recomputed every this much watermark time. */
export const DECAY_TICK_MS = 10_000;

const zeroFees = () => ({
  txN: ZERO,
  txU: ZERO,
  valN: ZERO,
  valU: ZERO,
  platN: ZERO,
  platU: ZERO,
  dexN: ZERO,
  dexU: ZERO,
});

export function newTokenState(chain: Chain, address: string, decimals: number, time: number): TokenState {
  return {
    chain,
    address,
    known: false,
    name: '',
    symbol: '',
    decimals,
    supply: 0n,
    supplyHuman: ZERO,
    creator: '',
    createdAt: time,
    createdBlock: -1,
    launchpad: null,
    mayhem: false,
    seq: 0,
    priceN: ZERO,
    priceU: ZERO,
    mcapN: ZERO,
    mcapU: ZERO,
    firstPriceN: ZERO,
    athPN: ZERO,
    athPU: ZERO,
    athPAt: null,
    athMN: ZERO,
    athMU: ZERO,
    athMAt: null,
    pools: new Map(),
    bondingCurvePct: null,
    graduatedAt: null,
    graduatedToPool: null,
    graduatedToDex: null,
    security: { mintDisabled: null, transferBlockable: false, lpBurntPct: '0', transferFeeBps: 0 },
    metadata: { description: null, twitter: null, website: null, telegram: null, discord: null },
    fees: zeroFees(),
    trades: 0,
    buys: 0,
    sells: 0,
    volN: ZERO,
    volU: ZERO,
    updatedAt: time,
    win: newTradeWindow(),
    candles: newOpenBuckets(),
    closedCandles: [],
    holders: new Map(),
    recentIds: newRecentIds(),
  };
}

export interface ProcessorOptions {
  /** Embedded: event time without input after which a token is parked (aggregators/parking.ts); absent, none is. */
  parkIdleMs?: number;
  /** Embedded: where idle wallets are parked (aggregators/wallet-store.ts); absent, every wallet stays. */
  walletStore?: WalletStore;
  /** Tokens whose views are still to be built: not parked yet, the views pass would bring them back at once. */
  viewPending?: (key: string) => boolean;
}

/** Holder records one slice of the holder pass writes at most (about 5 µs each, written after the slice's scan). */
const HOLDER_ROWS_PER_SLICE = 256;

/** A token about to lose a window trade within this much event time stays in memory. */
const PARK_EXPIRY_GAP_MS = 60_000;

export function createProcessor(
  ctx: Context,
  state: AggregatorState,
  partitioning?: Partitioning,
  options: ProcessorOptions = {},
): Processor {
  const { metrics } = ctx;
  const parkIdleMs = partitioning ? undefined : options.parkIdleMs;
  const viewPending = options.viewPending;
  // Token keys whose windows still hold trades, per chain, with a lower bound of the event time at
  // which a window next loses a trade (derived: rebuilt from the state on load).
  const active = new Map<string, ExpiryQueue>();
  for (const [key, token] of state.tokens)
    if (hasWindowTrades(token.win)) activeOf(token.chain).set(key, nextExpiry(token.win));
  for (const [key, parked] of state.parked ?? [])
    if (parked.expiry !== null) activeOf(parked.chain).set(key, parked.expiry);

  function activeOf(chain: string): ExpiryQueue {
    let queue = active.get(chain);
    if (!queue) active.set(chain, (queue = createExpiryQueue()));
    return queue;
  }

  const walletStore = partitioning ? undefined : options.walletStore;
  // The live tokens holding each wallet's records (embedded): they follow a parked wallet to disk.
  const walletRecords = walletStore
    ? createWalletRecords((wallet, key) => {
        const t = state.tokens.get(key);
        return t !== undefined && t.holders.has(wallet.slice(wallet.indexOf(':') + 1));
      })
    : undefined;
  // Distributed instances hold different `held` sets (owned tokens only): expiry would diverge.
  const walletFacts = createWalletFacts(state.wallets, {
    expire: !partitioning,
    store: walletStore,
    metrics,
    onLeft: walletRecords && ((keys) => walletRecords.left(keys)),
  });
  const wallet = walletFacts.get;

  /**
   * A holder record in memory as of a check: queued when it comes into memory (`rec` unknown), it
   * leaves once a later check finds it unchanged, its wallet in memory or not.
   */
  interface QueuedRecord {
    token: string;
    address: string;
    rec: HolderRec | undefined;
  }
  // Embedded: an active wallet's records stayed in every live token it ever traded (the busiest
  // hundred wallets held 36,665 of 193,853 at minute 5.5 of the spread mainnet market).
  const recordQueues = walletStore ? new Map<string, IdleQueue<QueuedRecord>>() : undefined;
  function queueRecord(chain: Chain, record: QueuedRecord): void {
    let queue = recordQueues!.get(chain);
    if (!queue) recordQueues!.set(chain, (queue = createIdleQueue<QueuedRecord>()));
    queue.push(record, state.watermarks[chain] ?? 0);
  }

  function token(chain: Chain, address: string, decimals: number, time: number): TokenState {
    const key = tokenKey(chain, address);
    let t = tokenIn(state, key);
    if (!t) state.tokens.set(key, (t = newTokenState(chain, address, decimals, time)));
    return t;
  }

  /** The first `text` kept for `owner`: one string instance per state object (weak: it goes with it). */
  function keptFor<Owner extends object>(kept: WeakMap<Owner, string>, owner: Owner, text: string): string {
    const known = kept.get(owner);
    if (known !== undefined) return known;
    kept.set(owner, text);
    return text;
  }

  // One instance of a wallet's address for the holder maps of the tokens it trades (about four a
  // wallet in memory on the mainnet profile): the address parsed from each message is a new string,
  // and each record kept its own (6 MB at minute 6 of a mainnet start).
  const walletAddresses = new WeakMap<WalletState, string>();
  /** `address` as kept for its wallet when that is in memory (no read of the wallet store). */
  function sharedAddress(chain: Chain, address: string): string {
    const w = state.wallets.get(walletKey(chain, address));
    return w ? keptFor(walletAddresses, w, address) : address;
  }

  function holder(t: TokenState, address: string): HolderRec {
    let h = t.holders.get(address);
    if (h !== undefined) return h;
    h = parkedHolderOf(t, address, walletFacts.reader);
    if (h !== undefined) metrics.inc('aggregator.holders_loaded');
    else t.holders.set(sharedAddress(t.chain, address), (h = EMPTY_HOLDER));
    const key = heldKeys.get(t) ?? heldKey(t, tokenKey(t.chain, t.address));
    walletRecords?.entered(walletKey(t.chain, address), key);
    if (recordQueues) queueRecord(t.chain, { token: key, address, rec: undefined });
    return h;
  }

  /** Every token whose holder figures depend on this wallet changes with it (call after the change). */
  function markWallet(w: WalletState, address: string, out: BatchOutput): void {
    const held = holdings(w);
    for (const key of held) out.changed.add(key);
    for (const key of w.created) out.changed.add(key);
    walletHoldersChanged((key) => tokenIn(state, key), held, address);
  }

  // One instance of a token's key for the wallets' `held` sets: the key is built anew for each
  // message, and each (wallet, token) pair kept its own copy (7 MB at minute 6 of a mainnet start).
  const heldKeys = new WeakMap<TokenState, string>();
  const heldKey = (t: TokenState, key: string) => keptFor(heldKeys, t, key);

  function setBalance(t: TokenState, key: string, address: string, bal: bigint, time: number, out: BatchOutput): void {
    const h = holder(t, address);
    setHolderRec(t, address, h, withBal(h, bal));
    const w = wallet(t.chain, address);
    walletFacts.touch(w, time);
    setHolding(w, heldKey(t, key), bal > 0n);
    out.balances.set(`${key}:${address}`, {
      chain: t.chain,
      token: t.address,
      wallet: address,
      amount: bal.toString(),
      updatedAt: time,
    });
    out.changed.add(key);
  }

  function watermark(chain: Chain, time: number, out: BatchOutput): void {
    const old = state.watermarks[chain] ?? 0;
    if (time <= old) return;
    state.watermarks[chain] = time;
    if (old !== 0) {
      const forgotten = walletFacts.tick(chain, old, time);
      if (forgotten > 0) metrics.inc('aggregator.wallets_expired', forgotten);
    }
    if (old === 0 || Math.floor(time / DECAY_TICK_MS) === Math.floor(old / DECAY_TICK_MS)) return;
    partitioning?.tick(chain, time);
    decay(chain, time, out);
    if (parkIdleMs !== undefined && Math.floor(time / PARK_TICK_MS) !== Math.floor(old / PARK_TICK_MS))
      parkIdle(chain, time, parkIdleMs, out);
  }

  function decay(chain: Chain, time: number, out: BatchOutput): void {
    const tokens = active.get(chain);
    if (!tokens) return;
    for (const key of tokens.takeDue(time)) {
      const t = tokenIn(state, key);
      if (!t) continue;
      const exact = nextExpiry(t.win);
      if (exact > time) {
        tokens.set(key, exact);
        continue;
      }
      advance(t.win, time);
      out.changed.add(key);
      if (hasWindowTrades(t.win)) tokens.set(key, nextExpiry(t.win));
    }
  }

  /** The chain's tokens idle for `idleMs` leave the heap, unless their views or a decay are due. */
  function parkIdle(chain: Chain, time: number, idleMs: number, out: BatchOutput): number {
    const tracked = activeOf(chain);
    let parked = 0;
    for (const [key, t] of state.tokens) {
      if (t.chain !== chain || t.updatedAt > time - idleMs || out.changed.has(key) || out.traded.has(key)) continue;
      if (viewPending?.(key)) continue;
      let expiry: number | null = null;
      if (hasWindowTrades(t.win)) {
        expiry = nextExpiry(t.win);
        if (expiry - time < PARK_EXPIRY_GAP_MS) continue;
        tracked.set(key, expiry);
      }
      parkToken(state, key, t, expiry);
      parked++;
    }
    if (parked > 0) metrics.inc('aggregator.parked', parked);
    return parked;
  }

  function poolUpdate(t: TokenState, swap: RawSwap, pool: string, rate: QuoteRate | null): void {
    let ps = t.pools.get(pool);
    if (!ps) {
      t.pools.set(
        pool,
        (ps = {
          dex: swap.dex,
          quote: normalizeAddress(swap.chain, swap.quoteAsset),
          curve: false,
          liqN: ZERO,
          liqU: ZERO,
        } as PoolState),
      );
      holderChanged(t, pool); // a pool is no holder
    }
    ps.dex = swap.dex;
    ps.quote = normalizeAddress(swap.chain, swap.quoteAsset);
    if (!rate) return;
    if (swap.curve) {
      ps.curve = true;
      const real = swap.curve.realQuoteReserves ?? swap.reserves?.quote;
      if (real !== undefined) {
        const quote = fromUnits(real, swap.quoteDecimals);
        ps.liqN = toNative(rate, quote);
        ps.liqU = toUsd(rate, quote);
      }
    } else if (swap.reserves) {
      const quote = 2n * fromUnits(swap.reserves.quote, swap.quoteDecimals);
      ps.liqN = toNative(rate, quote);
      ps.liqU = toUsd(rate, quote);
    }
  }

  /** A trade older than some open base bucket joins its closed bucket, kept within the late-trade horizon. */
  function lateCandles(t: TokenState, rec: TradeRec, granularities: BaseGranularity[], out: BatchOutput): void {
    metrics.inc('aggregator.late_trades');
    for (const g of granularities) {
      const b = addLateTrade(t.closedCandles, g, rec, t.win.t);
      if (!b) {
        metrics.inc('aggregator.late_candle_skipped');
        continue;
      }
      out.candleRows.push(candleRow(t.chain, t.address, g, b, decTextOnce));
      b.dirty = false;
    }
  }

  const ops: StateOps = {
    state,
    wallet,
    peekWallet: walletFacts.peek,
    touch: walletFacts.touch,
    token,
    holder,
    setBalance,
    markWallet,
  };

  // Reused per trade: the hot path allocates no scratch arrays.
  const scratchClosed: ClosedBucket[] = [];
  const scratchLate: BaseGranularity[] = [];

  /** Native price of a token used as a quote asset: its latest trade's, owned or not. */
  function quotePrice(chain: Chain, quote: string): Dec {
    const key = tokenKey(chain, quote);
    return tokenIn(state, key)?.priceN ?? state.shadows?.get(key)?.priceN ?? ZERO;
  }

  function swap(swap: RawSwap, out: BatchOutput, at?: InputPosition): void {
    const chain = swap.chain;
    if (isReferencePair(swap)) {
      const price = referencePrice(swap);
      if (price !== null) recordReference(state.marks, chain, price);
      metrics.inc('aggregator.reference_swaps');
      watermark(chain, swap.blockTime, out);
      return;
    }
    const applied =
      at && partitioning && !partitioning.owns(at.partition)
        ? shadowSwap(swap, out, at, partitioning)
        : applySwap(swap, out, null);
    if (applied) watermark(chain, swap.blockTime, out);
  }

  /**
   * A swap of a token of a partition not owned: what is chain-wide moves here (the trader's
   * wallet); the token's side (its shadow, the journal) is the partitioning's.
   */
  function shadowSwap(swap: RawSwap, out: BatchOutput, at: InputPosition, partitioning: Partitioning): boolean {
    const chain = swap.chain;
    const mark = markOf(state.marks, chain);
    let quoteN: Dec | null = null;
    const rate = quoteRate(chain, swap.quoteAsset, mark, (quote) => (quoteN = quotePrice(chain, quote)));
    const trader = normalizeAddress(chain, swap.trader);
    const before = walletFacts.peek(chain, trader);
    const context: SwapContext = {
      mark,
      quoteN,
      trades: before?.trades ?? 0,
      funder: before?.funder ?? null,
      fundedBy: before ? before.fundedBy.slice() : [],
      labels: before?.labels ?? [],
    };
    if (!partitioning.shadowSwap(swap, at, context, priceTrade(swap, rate).priceNative)) {
      metrics.inc('aggregator.duplicate_swaps');
      return false;
    }
    const w = wallet(chain, trader);
    walletFacts.touch(w, swap.blockTime);
    w.trades += 1;
    if (w.trades === PRO_TRADER_TRADES) markWallet(w, trader, out);
    return true;
  }

  /** A swap applied to its token's state; `context` replays one journaled elsewhere. False for a redelivery. */
  function applySwap(swap: RawSwap, out: BatchOutput, context: SwapContext | null): boolean {
    const chain = swap.chain;
    const address = normalizeAddress(chain, swap.token);
    const key = tokenKey(chain, address);
    const t = token(chain, address, swap.tokenDecimals, swap.blockTime);
    if (seenBefore(t.recentIds, swap.id, swap.blockTime)) {
      metrics.inc('aggregator.duplicate_swaps');
      return false;
    }
    if (!t.known) {
      t.decimals = swap.tokenDecimals;
      metrics.inc('aggregator.swaps_unknown_token');
    }
    const mark = context ? context.mark : markOf(state.marks, chain);
    const rate = quoteRate(
      chain,
      swap.quoteAsset,
      mark,
      context ? () => context.quoteN ?? ZERO : (quote) => quotePrice(chain, quote),
    );
    if (!rate) metrics.inc('aggregator.unpriced_swaps');
    const p = priceTrade(swap, rate);
    const mcapN = mul(p.priceNative, t.supplyHuman);
    const mcapU = mul(p.priceUsd, t.supplyHuman);
    const seq = ++t.seq;
    const buy = swap.side === 'buy';
    const trader = normalizeAddress(chain, swap.trader);
    // Replayed: the wallet as it was then (a copy; the real one already counted this trade).
    const w: WalletState = context
      ? {
          ...newWallet(swap.blockTime),
          labels: context.labels,
          funder: context.funder,
          fundedBy: context.fundedBy,
          trades: context.trades,
        }
      : wallet(chain, trader);
    const h = holder(t, trader);
    let attrs = attrsOf(h);
    if (buy && (attrs & ATTR.bought) === 0) {
      attrs |= ATTR.bought;
      if (t.known && swap.blockTime >= t.createdAt && swap.blockTime - t.createdAt <= SNIPER_WINDOW_MS)
        attrs |= ATTR.sniper;
      if (t.known && swap.blockNumber === t.createdBlock) attrs |= ATTR.bundler;
      const f = w.funder;
      if (f && w.trades === 0 && f.at <= swap.blockTime && f.at >= swap.blockTime - FRESH_WALLET_MS)
        attrs |= ATTR.fresh;
      if (t.firstPriceN > 0n && p.priceNative >= FOMO_MULTIPLE * t.firstPriceN) attrs |= ATTR.fomo;
      setHolderRec(t, trader, h, withAttrs(h, attrs));
    }
    if (t.firstPriceN === 0n) t.firstPriceN = p.priceNative;
    walletFacts.touch(w, swap.blockTime);
    w.trades += 1;
    if (w.trades === PRO_TRADER_TRADES) markWallet(w, trader, out);

    const pool = normalizeAddress(chain, swap.pool);
    poolUpdate(t, swap, pool, rate);
    if (swap.custody !== undefined) {
      const custody = normalizeAddress(chain, swap.custody);
      if (!t.custody?.includes(custody)) {
        (t.custody ??= []).push(custody);
        holderChanged(t, custody); // the custodian is no holder
        out.changed.add(key);
      }
    }
    if (swap.curve && t.graduatedAt === null) t.bondingCurvePct = clampPct(swap.curve.progressPct);
    if (swap.launchpad && !t.launchpad) t.launchpad = swap.launchpad;
    if (swap.mayhemMode) t.mayhem = true;

    if (swap.fees) {
      const nativeDecimals = CHAIN_INFO[chain].native.decimals;
      const f = t.fees;
      if (swap.fees.transaction) {
        const n = fromUnits(swap.fees.transaction, nativeDecimals);
        f.txN += n;
        f.txU += mul(n, mark);
      }
      if (swap.fees.validator) {
        const n = fromUnits(swap.fees.validator, nativeDecimals);
        f.valN += n;
        f.valU += mul(n, mark);
      }
      if (rate && swap.fees.platform) {
        const q = fromUnits(swap.fees.platform, swap.quoteDecimals);
        f.platN += toNative(rate, q);
        f.platU += toUsd(rate, q);
      }
      if (rate && swap.fees.dex) {
        const q = fromUnits(swap.fees.dex, swap.quoteDecimals);
        f.dexN += toNative(rate, q);
        f.dexU += toUsd(rate, q);
      }
    }
    t.trades += 1;
    if (buy) t.buys += 1;
    else t.sells += 1;
    t.volN += p.volumeNative;
    t.volU += p.volumeUsd;
    if (p.priceNative > t.athPN) {
      t.athPN = p.priceNative;
      t.athPU = p.priceUsd;
      t.athPAt = swap.blockTime;
    }
    if (mcapN > t.athMN) {
      t.athMN = mcapN;
      t.athMU = mcapU;
      t.athMAt = swap.blockTime;
    }
    if (swap.blockTime > t.updatedAt) t.updatedAt = swap.blockTime;

    const rec: TradeRec = {
      t: swap.blockTime,
      seq,
      buy,
      pn: p.priceNative,
      pu: p.priceUsd,
      mn: mcapN,
      mu: mcapU,
      vn: p.volumeNative,
      vu: p.volumeUsd,
    };
    const newest = rec.t >= lastTradeTime(t.win);
    insert(t.win, rec);
    if (newest) {
      t.priceN = rec.pn;
      t.priceU = rec.pu;
      t.mcapN = mcapN;
      t.mcapU = mcapU;
    }
    // The new trade leaves its shortest window first (by its second); earlier bounds stay valid.
    activeOf(chain).lower(key, tradeSecond(rec.t) + WINDOW_MS['5m']);

    const closed = scratchClosed,
      late = scratchLate;
    closed.length = 0;
    late.length = 0;
    addTrade(t.candles, rec, closed, late);
    for (const c of closed) {
      if (c.b.dirty) out.candleRows.push(candleRow(chain, address, c.g, c.b, decTextOnce));
      c.b.dirty = false;
      t.closedCandles.push(c);
    }
    if (late.length > 0) lateCandles(t, rec, late, out);
    forgetClosed(t.closedCandles, t.win.t);

    forgetOldIds(t.recentIds, t.win.t);

    const identities = w.labels.filter((l) => l === 'kol' || l === 'fomoscan');
    const flags: string[] = [...identities];
    if (t.creator !== '' && trader === t.creator) flags.push('dev');
    if (attrs & ATTR.sniper) flags.push('sniper');
    if (isInsider(t, attrs, w)) flags.push('insider');
    if (attrs & ATTR.bundler) flags.push('bundler');
    if (attrs & ATTR.fresh) flags.push('fresh_wallet');
    if (isProTrader(w)) flags.push('pro_trader');

    const amount = unitsText(swap.tokenAmount, swap.tokenDecimals);
    const price = { native: decTextOnce(p.priceNative), usd: decTextOnce(p.priceUsd) };
    const volume = { native: decTextOnce(p.volumeNative), usd: decTextOnce(p.volumeUsd) };
    const marketCap = { native: decTextOnce(mcapN), usd: decTextOnce(mcapU) };
    const platforms = swap.platforms ?? [];
    out.trades.push({
      id: swap.id,
      chain,
      token: address,
      seq,
      name: t.name,
      symbol: t.symbol,
      trader,
      side: swap.side,
      transactionHash: swap.transactionHash,
      eventIndex: swap.eventIndex,
      blockNumber: swap.blockNumber,
      timestamp: swap.blockTime,
      amount,
      quoteAmount: unitsText(swap.quoteAmount, swap.quoteDecimals),
      quoteAsset: normalizeAddress(chain, swap.quoteAsset),
      priceNative: price.native,
      priceUsd: price.usd,
      volumeNative: volume.native,
      volumeUsd: volume.usd,
      marketCapNative: marketCap.native,
      marketCapUsd: marketCap.usd,
      pool,
      dex: swap.dex,
      identities,
      flags,
      platforms,
    });
    out.tradeMessages.push({
      trade: {
        id: swap.id,
        chain,
        token: address,
        name: t.name,
        symbol: t.symbol,
        trader,
        transactionHash: swap.transactionHash,
        side: swap.side,
        amount,
        price,
        volume,
        marketCap,
        timestamp: swap.blockTime,
        flags,
        platforms: tradePlatforms(platforms),
      },
      identities,
      pool,
      dex: swap.dex,
      seq,
    });
    out.changed.add(key);
    out.traded.add(key);
    return true;
  }

  function event(e: TokenEvent, raw: string, out: BatchOutput, at?: InputPosition): void {
    // Wallet facts (labels, funding) are chain-wide: every instance applies them.
    if (at && partitioning && e.token !== null && !partitioning.owns(at.partition)) {
      partitioning.journal(at.partition, { k: 'event', offset: at.offset, event: e, raw });
    } else {
      applyTokenEvent(ops, e, raw, out);
    }
    watermark(e.chain, e.blockTime, out);
  }

  /**
   * Moves the records of the wallets that left memory (walletRecords) from the live tokens into
   * `rows`, until it holds `most` or `due()`; true when the slice is spent.
   */
  function parkLeftRecords(rows: ParkedHolderRow[], most: number, due?: () => boolean): boolean {
    if (!walletRecords) return false;
    while (rows.length < most) {
      const next = walletRecords.nextDue();
      if (!next) return false;
      const [wallet, tokens] = next;
      // Back in memory since: its records stay with it.
      if (state.wallets.has(wallet)) continue;
      const address = wallet.slice(wallet.indexOf(':') + 1);
      for (const key of tokens) {
        const t = state.tokens.get(key);
        if (t?.holders.has(address))
          for (const row of parkHolderRecords(t, walletFacts.reader, [address])) rows.push(row);
      }
      if (due?.()) return true;
    }
    return true;
  }

  /**
   * Moves the records the idle queues find unchanged since their last check (of a live token: a
   * parked one keeps its records) into `rows`, until it holds `most` or `due()`; true when the
   * slice is spent.
   */
  function parkIdleRecords(
    rows: ParkedHolderRow[],
    most: number,
    idleBefore: (chain: string) => number,
    due?: () => boolean,
  ): boolean {
    if (!recordQueues) return false;
    let taken = 0;
    for (const [chain, queue] of recordQueues) {
      const bound = idleBefore(chain);
      const now = state.watermarks[chain] ?? 0;
      for (;;) {
        if (rows.length >= most || (due && (++taken & 63) === 0 && due())) return true;
        const record = queue.takeDue(bound);
        if (record === undefined) break;
        const t = state.tokens.get(record.token);
        const rec = t?.holders.get(record.address);
        if (rec === undefined) continue;
        if (rec !== record.rec) {
          record.rec = rec;
          queue.push(record, now);
          continue;
        }
        for (const row of parkHolderRecords(t!, walletFacts.reader, [record.address])) rows.push(row);
      }
    }
    return false;
  }

  /** The holder park pass under way (parkHolders resumes it), and a token it stopped inside of. */
  let holderPass: MapIterator<[string, TokenState]> | null = null;
  let holderPassAt: string | null = null;
  /** Which of the two record queues goes first in the next call (they alternate). */
  let holderTurn = 0;

  return {
    state,
    wallets: walletFacts,
    parkHolders(version, idleBefore, due) {
      const store = walletStore;
      if (!store) return { parked: 0, done: true };
      const rows: ParkedHolderRow[] = [];
      const most = due ? HOLDER_ROWS_PER_SLICE : Number.POSITIVE_INFINITY;
      const written = (done: boolean) => {
        store.putHolders(rows, version);
        if (rows.length > 0) metrics.inc('aggregator.holders_parked', rows.length);
        return { parked: rows.length, done };
      };
      // First the two queues (the records of the wallets parked since, where they are known; those
      // found unchanged), taking turns at going first: either can fill every slice for minutes. The
      // pass finds the rest.
      const left = () => parkLeftRecords(rows, most, due);
      const unchanged = () => {
        const before = rows.length;
        const spent = parkIdleRecords(rows, most, idleBefore, due);
        if (rows.length > before) metrics.inc('aggregator.holders_parked_unchanged', rows.length - before);
        return spent;
      };
      const leftFirst = (holderTurn++ & 1) === 0;
      if (leftFirst ? left() : unchanged()) return written(false);
      if (leftFirst ? unchanged() : left()) return written(false);
      // A Map iterator survives the tokens added and deleted between slices.
      holderPass ??= state.tokens.entries();
      let done = false;
      // The slice is checked after each token that parked any; the rows are written after it, so
      // a busy token's thousands go over several slices.
      for (let scanned = 1; rows.length < most; scanned++) {
        if (due && ((scanned & 63) === 0 || rows.length > 0) && due()) break;
        // Where the last slice stopped, if that token is still in memory (not parked since).
        let t = holderPassAt === null ? undefined : state.tokens.get(holderPassAt);
        holderPassAt = null;
        if (!t) {
          const next = holderPass.next();
          if (next.done) {
            holderPass = null;
            done = true;
            break;
          }
          t = next.value[1];
        }
        if (t.holders.size === 0) continue;
        const chain = t.chain;
        const idle = (address: string) => !state.wallets.has(walletKey(chain, address));
        const room = most - rows.length;
        const parked = parkHolders(t, walletFacts.reader, idle, room);
        for (const row of parked) rows.push(row);
        if (parked.length === room) holderPassAt = tokenKey(chain, t.address);
      }
      return written(done);
    },
    swap,
    event,
    replaySwap: (s, context, out) => void applySwap(s, out, context),
    replayEvent: (e, raw, out) => applyTokenEvent(ops, e, raw, out),
    decay(tokens, time, out) {
      for (const t of tokens) {
        if (!hasWindowTrades(t.win) || nextExpiry(t.win) > time) continue;
        advance(t.win, time);
        out.changed.add(tokenKey(t.chain, t.address));
      }
    },
    adopted(t) {
      const key = heldKey(t, tokenKey(t.chain, t.address));
      for (const [address, h] of t.holders) if (balOf(h) > 0n) setHolding(wallet(t.chain, address), key, true);
      if (t.creator !== '') {
        const creator = wallet(t.chain, t.creator);
        if (!creator.created.includes(key)) creator.created = creator.created.concat(key);
      }
      holdersReset(t);
      if (hasWindowTrades(t.win)) activeOf(t.chain).set(key, nextExpiry(t.win));
    },
    released(t) {
      detachFromWallets(state.wallets, t);
      active.get(t.chain)?.delete(tokenKey(t.chain, t.address));
    },
  };
}
