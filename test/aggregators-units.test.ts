// Pure parts of the aggregator: pricing, windows, candle buckets, holder definitions, discovery.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import Database from 'better-sqlite3';
import { ONE, fromInt, parse, decToString } from '../core/decimal.ts';
import { loadConfig } from '../core/config.ts';
import { createContext } from '../core/context.ts';
import { createLogger } from '../core/logger.ts';
import type { RawSwap, TokenEvent } from '../core/topics.ts';
import {
  markOf,
  median,
  newMarkBook,
  priceTrade,
  quoteRate,
  recordReference,
  referencePrice,
  isReferencePair,
} from '../aggregators/pricing.ts';
import {
  advance,
  bucketAt,
  bucketCount,
  bucketsOf,
  insert,
  newTradeWindow,
  statsAt,
  windowStats,
  type TradeRec,
} from '../aggregators/windows.ts';
import { addTrade, newOpenBuckets, type ClosedBucket } from '../aggregators/candles.ts';
import { bucketStart as bucketOf } from '../core/timeframes.ts';
import { newBatchOutput } from '../aggregators/contracts.ts';
import { createProcessor, newTokenState } from '../aggregators/process.ts';
import { tokenKey } from '../core/chains.ts';
import {
  ATTR,
  STATE_VERSION,
  newState,
  type HolderRec,
  type ParkedToken,
  type TokenState,
} from '../aggregators/state.ts';
import { captureState, readSnapshot, serializeState, writeSnapshotFile } from '../aggregators/snapshot.ts';
import { tokenIn } from '../aggregators/parking.ts';
import { openWalletStore } from '../aggregators/wallet-store.ts';
import { createWalletFacts, holdings, newWallet, setHolding } from '../aggregators/wallet-facts.ts';
import { createWalletRecords } from '../aggregators/wallet-records.ts';
import { createIdleQueue } from '../aggregators/idle-queue.ts';
import {
  joinedMarker,
  processedBeforeStop,
  reachedStop,
  readStopMarker,
  writeStopMarker,
} from '../aggregators/stop-marker.ts';
import { upgradeState, upgradeToken } from '../aggregators/upgrade.ts';
import {
  EMPTY_HOLDER,
  attrsOf,
  balOf,
  holderRec,
  maskOf,
  withAttrs,
  withBal,
  withMask,
  type HolderRecObject,
} from '../aggregators/holder-records.ts';
import { buildToken } from '../aggregators/view.ts';
import { createSinkWriter } from '../aggregators/sink-writer.ts';
import type { SpotStore, TradeRow } from '../clickhouse/types.ts';
import { clampPct, decText } from '../aggregators/format.ts';
import {
  DEDUPE_HORIZON_MS,
  FORGET_EVERY,
  forgetOldIds,
  holdsId,
  idTimes,
  newRecentIds,
  RECENT_IDS_CAP,
  RECENT_IDS_FLOOR,
  recentIdsOf,
  seenBefore,
  type RecentIds,
} from '../aggregators/dedupe.ts';
import { bruteStats } from './fixtures/aggregator-brute.ts';

const ctx = createContext(loadConfig({ SPOT_LOG_LEVEL: 'silent' }), createLogger('silent'));
const d = (text: string) => parse(text);

describe('aggregator pricing', () => {
  it('takes the median of the last five reference prices, per chain', () => {
    assert.equal(median([d('3'), d('1'), d('2')]), d('2'));
    assert.equal(median([d('1'), d('2'), d('3'), d('10')]), d('2.5'));
    const book = newMarkBook();
    for (const p of ['100', '101', '300', '99', '102', '98']) recordReference(book, 'solana', d(p));
    // last five: 101, 300, 99, 102, 98 → median 101
    assert.equal(markOf(book, 'solana'), d('101'));
    assert.equal(markOf(book, 'base'), 0n);
    assert.equal(markOf(book, 'arc'), ONE);
    recordReference(book, 'arc', d('5'));
    assert.equal(markOf(book, 'arc'), ONE);
  });

  it('reads USD per native from reference swaps in both orientations', () => {
    const weth = '0x4200000000000000000000000000000000000006';
    const usdc = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';
    const forward = {
      chain: 'base' as const,
      token: weth,
      quoteAsset: usdc,
      tokenAmount: String(2n * 10n ** 18n),
      tokenDecimals: 18,
      quoteAmount: '6000000000',
      quoteDecimals: 6,
    };
    assert.equal(referencePrice(forward), d('3000'));
    const reversed = {
      chain: 'base' as const,
      token: usdc,
      quoteAsset: weth,
      tokenAmount: '1500000000',
      tokenDecimals: 6,
      quoteAmount: String(10n ** 18n / 2n),
      quoteDecimals: 18,
    };
    assert.equal(referencePrice(reversed), d('3000'));
    assert.ok(isReferencePair(forward) && isReferencePair(reversed));
    assert.equal(referencePrice({ ...forward, token: '0x' + '1'.repeat(40) }), null);
  });

  it('prices native-, stable- and token-quoted trades exactly', () => {
    const mark = d('150');
    const sol = 'So11111111111111111111111111111111111111112';
    const native = priceTrade(
      {
        chain: 'solana',
        token: 'X',
        quoteAsset: sol,
        tokenAmount: '2000000',
        tokenDecimals: 6,
        quoteAmount: '500000000',
        quoteDecimals: 9,
      },
      quoteRate('solana', sol, mark, () => 0n),
    );
    assert.equal(decToString(native.priceNative), '0.25');
    assert.equal(decToString(native.priceUsd), '37.5');
    assert.equal(decToString(native.volumeNative), '0.5');
    assert.equal(decToString(native.volumeUsd), '75');
    const usdc = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
    const stable = priceTrade(
      {
        chain: 'solana',
        token: 'X',
        quoteAsset: usdc,
        tokenAmount: '1000000',
        tokenDecimals: 6,
        quoteAmount: '3000000',
        quoteDecimals: 6,
      },
      quoteRate('solana', usdc, mark, () => 0n),
    );
    assert.equal(decToString(stable.priceUsd), '3');
    assert.equal(decToString(stable.priceNative), '0.02');
    assert.equal(decToString(stable.volumeUsd), '3');
    const other = 'Other1111111111111111111111111111111111111';
    const viaToken = priceTrade(
      {
        chain: 'solana',
        token: 'X',
        quoteAsset: other,
        tokenAmount: '1000000',
        tokenDecimals: 6,
        quoteAmount: '4000000',
        quoteDecimals: 6,
      },
      quoteRate('solana', other, mark, (a) => (a === other ? d('0.5') : 0n)),
    );
    assert.equal(decToString(viaToken.priceNative), '2');
    assert.equal(decToString(viaToken.priceUsd), '300');
    assert.equal(
      quoteRate('solana', other, mark, () => 0n),
      null,
    );
    const unpriced = priceTrade(
      {
        chain: 'solana',
        token: 'X',
        quoteAsset: other,
        tokenAmount: '1',
        tokenDecimals: 0,
        quoteAmount: '1',
        quoteDecimals: 0,
      },
      null,
    );
    assert.equal(unpriced.priceNative, 0n);
    // Arc: native is USDC, so native and USD agree.
    const arc = priceTrade(
      {
        chain: 'arc',
        token: '0x' + '2'.repeat(40),
        quoteAsset: '0x3600000000000000000000000000000000000000',
        tokenAmount: String(10n ** 18n),
        tokenDecimals: 18,
        quoteAmount: '2500000',
        quoteDecimals: 6,
      },
      quoteRate('arc', '0x3600000000000000000000000000000000000000', markOf(newMarkBook(), 'arc'), () => 0n),
    );
    assert.equal(decToString(arc.priceNative), '2.5');
    assert.equal(decToString(arc.priceUsd), '2.5');
  });
});

function randomRecs(seed: number, count: number): TradeRec[] {
  let x = seed;
  const r = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
  const recs: TradeRec[] = [];
  let t = 1_700_000_000_000;
  for (let seq = 1; seq <= count; seq++) {
    // Whole seconds (block times), several trades in some of them.
    if (r() > 0.3) t += Math.floor(r() * 400) * 1000;
    const late = r() < 0.05 ? Math.floor(r() * 600) * 1000 : 0; // some trades arrive late
    const pu = fromInt(Math.floor(r() * 1000) + 1) / 7n;
    recs.push({
      t: t - late,
      seq,
      buy: r() < 0.55,
      pn: pu / 100n,
      pu,
      mn: pu * 10n,
      mu: pu * 1000n,
      vn: fromInt(Math.floor(r() * 50)) / 3n,
      vu: fromInt(Math.floor(r() * 5000)) / 3n,
    });
  }
  return recs;
}

const asRow = (r: TradeRec) => ({
  timestamp: r.t,
  seq: r.seq,
  side: r.buy ? ('buy' as const) : ('sell' as const),
  priceUsd: decToString(r.pu),
  volumeNative: decToString(r.vn),
  volumeUsd: decToString(r.vu),
});
const sortRecs = (recs: TradeRec[]) => [...recs].sort((a, b) => a.t - b.t || a.seq - b.seq);

describe('aggregator decimal text', () => {
  it('prints exactly what core/decimal toString prints', () => {
    const samples = [
      0n,
      1n,
      -1n,
      ONE,
      -ONE,
      10n ** 30n * 123n,
      5n * 10n ** 29n,
      123456789n,
      -(10n ** 45n) - 7n,
      10n ** 60n + 10n ** 12n,
    ];
    let x = 987654321n;
    for (let i = 0; i < 500; i++) {
      x = (x * 6364136223846793005n + 1442695040888963407n) % (1n << 100n);
      samples.push(i % 2 ? x : -x / BigInt(1 + i));
    }
    for (const v of samples) assert.equal(decText(v), decToString(v));
    assert.equal(clampPct('150.5'), '100');
    assert.equal(clampPct('-3'), '0');
    assert.equal(clampPct('42.50'), '42.5');
  });
});

describe('aggregator windows', () => {
  it('statsAt equals a brute-force recomputation at several event times', () => {
    const recs = randomRecs(11, 600);
    const sorted = sortRecs(recs);
    const rows = recs.map(asRow);
    const last = sorted[sorted.length - 1]!.t;
    const times = [
      sorted[0]!.t,
      sorted[50]!.t,
      sorted[300]!.t + 1,
      last - 3_600_000,
      last,
      last + 299_999,
      last + 300_000,
      last + 7 * 3_600_000,
      last + 90_000_000,
    ];
    for (const t of times) assert.deepEqual(statsAt(sorted, t), bruteStats(rows, t), `at ${t}`);
  });

  it('the incremental windows equal statsAt as trades (some late) arrive and time moves on', () => {
    const recs = randomRecs(5, 1500);
    const win = newTradeWindow();
    const seen: TradeRec[] = [];
    recs.forEach((rec, i) => {
      insert(win, rec);
      seen.push(rec);
      if (i % 37 === 0) advance(win, win.t + 45_000);
      if (i % 10 === 0) assert.deepEqual(windowStats(win), statsAt(sortRecs(seen), win.t), `after ${i}`);
    });
    advance(win, win.t + 2 * 86_400_000);
    assert.deepEqual(windowStats(win), statsAt(sortRecs(seen), win.t));
    assert.ok(bucketCount(win) < 1000, 'old buckets dropped');
  });

  it('aligns window starts to their granule: 5m exact to the second, 24h up to one minute more', () => {
    const T0 = Date.UTC(2026, 0, 5); // a multiple of every granule
    const rec = (t: number, seq: number, pu: bigint): TradeRec => ({
      t,
      seq,
      buy: true,
      pn: pu,
      pu,
      mn: pu,
      mu: pu,
      vn: ONE,
      vu: ONE,
    });
    const t = T0 + 86_400_000 + 30_500;
    // t − 24h = T0 + 30.5 s: the 24h window starts at the minute holding T0 + 31 s, so it takes
    // the trade at T0 + 10 s; the one at T0 − 1 s is its reference.
    const trades = [rec(T0 - 1000, 1, fromInt(2)), rec(T0 + 10_000, 2, fromInt(3))];
    // t − 5m = … + 30.5 s: the trade at second 30 is out, the one at second 31 in.
    const five = t - 300_000;
    trades.push(rec(five - 500, 3, fromInt(4)), rec(five + 500, 4, fromInt(5)), rec(t - 200, 5, fromInt(8)));
    const stats = statsAt(trades, t);
    assert.equal(stats['24h'].buyCount, 4);
    assert.equal(stats['24h'].priceChangePct, '300');
    assert.equal(stats['5m'].buyCount, 2);
    assert.equal(stats['5m'].priceChangePct, '100');
    assert.deepEqual(stats, bruteStats(trades.map(asRow), t));
    const win = newTradeWindow();
    for (const r of trades) insert(win, r);
    advance(win, t);
    assert.deepEqual(windowStats(win), stats);
  });

  it('orders the trades merged into a coarse bucket by time, then seq (late trades included)', () => {
    const T0 = Date.UTC(2026, 0, 5);
    const rec = (t: number, seq: number, price: number): TradeRec => {
      const pu = fromInt(price);
      return { t, seq, buy: seq % 2 === 0, pn: pu, pu, mn: pu, mu: pu, vn: ONE, vu: ONE };
    };
    const trades = [rec(T0 + 30_000, 1, 2), rec(T0 + 45_000, 2, 3), rec(T0 + 20 * 3_600_000, 3, 4)];
    const win = newTradeWindow();
    for (const r of trades) insert(win, r);
    // Both early trades now lie in the 60 s granule at T0; a late one joins it before them, and
    // another after them: the first is the window's reference, the last the 6h reference.
    trades.push(rec(T0 + 10_000, 4, 5), rec(T0 + 50_000, 5, 7));
    for (const r of trades.slice(3)) insert(win, r);
    const sorted = sortRecs(trades);
    assert.equal(bucketAt(win, 0).bc + bucketAt(win, 0).sc, 4);
    const stats = statsAt(sorted, win.t);
    assert.equal(stats['24h'].priceChangePct, '-20'); // 5 → 4
    assert.equal(stats['6h'].priceChangePct, '-42.857142857142857142857142857143'); // 7 → 4
    assert.deepEqual(windowStats(win), stats);
    assert.deepEqual(stats, bruteStats(trades.map(asRow), win.t));
  });

  it("a value past the columns' 128-bit limbs keeps the windows exact (the decimals held as bigints from then on)", () => {
    const recs = randomRecs(17, 900);
    // 10^45 at 30 decimals: far past 2^128; a price of one and a volume of the other.
    recs[300] = { ...recs[300]!, vu: fromInt(10) ** 15n * 7n };
    recs[301] = { ...recs[301]!, pu: fromInt(10) ** 12n + 3n };
    const win = newTradeWindow();
    const seen: TradeRec[] = [];
    recs.forEach((rec, i) => {
      insert(win, rec);
      seen.push(rec);
      if (i === 299) assert.ok(win.limbs !== null, 'limbs while every value fits');
      if (i % 25 === 0 || i === 300 || i === 301)
        assert.deepEqual(windowStats(win), statsAt(sortRecs(seen), win.t), `after ${i}`);
    });
    assert.equal(win.limbs, null);
    for (const later of [300_000, 3_600_000, 86_400_000]) {
      advance(win, win.t + later);
      assert.deepEqual(windowStats(win), statsAt(sortRecs(seen), win.t), `${later} ms later`);
    }
  });

  it('a token trading several times a second for 24 h keeps a few thousand buckets, equal to statsAt', () => {
    const T0 = Date.UTC(2026, 0, 5, 0, 0, 0, 250);
    const win = newTradeWindow();
    const seen: TradeRec[] = [];
    let x = 3;
    const r = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
    let seq = 0;
    let most = 0;
    const checks = new Set([3_000, 40_000, 70_000, 89_999]);
    for (let s = 0; s < 90_000; s++) {
      for (let k = 0; k < 1 + (s % 3); k++) {
        // Sub-second times; now and then a trade up to 7 h late.
        const late = r() < 0.002 ? Math.floor(r() * 25_000_000) : 0;
        const pu = fromInt(Math.floor(r() * 1000) + 1) / 7n;
        const rec = {
          t: T0 + s * 1000 + k * 300 - late,
          seq: ++seq,
          buy: r() < 0.5,
          pn: pu,
          pu,
          mn: pu,
          mu: pu,
          vn: pu,
          vu: ONE,
        };
        insert(win, rec);
        seen.push(rec);
      }
      most = Math.max(most, bucketCount(win));
      if (checks.has(s)) assert.deepEqual(windowStats(win), statsAt(sortRecs(seen), win.t), `at second ${s}`);
    }
    // 1 s for 5 min, 5 s to 1 h, 15 s to 6 h, 60 s to 24 h: at most 305 + 663 + 1,205 + 1,082,
    // plus 64 before the 24h reference awaiting their trim (docs/memory.md).
    assert.ok(most <= 3_320, `${most} buckets`);
    for (const later of [299_999, 300_000, 3_600_000, 6 * 3_600_000 + 15_000, 86_400_000]) {
      advance(win, T0 + 89_999_000 + later);
      assert.deepEqual(windowStats(win), statsAt(sortRecs(seen), win.t), `${later} ms after`);
    }
  });
});

describe('aggregator candle buckets', () => {
  it('aligns buckets on the epoch and 7d on Mondays', () => {
    const t = Date.UTC(2026, 0, 7, 13, 45, 17, 250); // a Wednesday
    assert.equal(bucketOf('1s', t), Date.UTC(2026, 0, 7, 13, 45, 17));
    assert.equal(bucketOf('3m', t), Date.UTC(2026, 0, 7, 13, 45));
    assert.equal(bucketOf('4h', t), Date.UTC(2026, 0, 7, 12));
    assert.equal(bucketOf('1d', t), Date.UTC(2026, 0, 7));
    assert.equal(bucketOf('7d', t), Date.UTC(2026, 0, 5));
    assert.equal(new Date(bucketOf('7d', t)).getUTCDay(), 1);
  });

  it('keeps open, high, low and close by (time, seq) with late trades inside the bucket', () => {
    const open = newOpenBuckets();
    const base = Date.UTC(2026, 0, 5, 10);
    const mk = (dt: number, seq: number, p: string): TradeRec => ({
      t: base + dt,
      seq,
      buy: true,
      pn: d(p),
      pu: d(p),
      mn: d(p),
      mu: d(p),
      vn: ONE,
      vu: ONE,
    });
    const closed: ClosedBucket[] = [];
    for (const rec of [mk(10_000, 1, '2'), mk(30_000, 2, '5'), mk(5_000, 3, '1'), mk(20_000, 4, '3')])
      addTrade(open, rec, closed, []);
    const minute = open[4]!; // 1m
    assert.equal(minute.time, base);
    assert.deepEqual([minute.o[0], minute.h[0], minute.l[0], minute.c[0]], [d('1'), d('5'), d('1'), d('5')]);
    assert.equal(minute.n, 4);
    assert.equal(minute.seq, 4);
  });
});

// ---- holders: definitions through the real processor ----

const CHAIN = 'base' as const;
const addr = (n: number) => '0x' + n.toString(16).padStart(40, '0');
const TOKEN = addr(0xabc),
  CREATOR = addr(0xc0),
  POOL = addr(0x900),
  WETH = '0x4200000000000000000000000000000000000006';
const USDC = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';
let n = 0;
const at = (time: number, block: number) => {
  n++;
  const hash = '0x' + n.toString(16).padStart(64, '0');
  return {
    id: `base:${hash}:0`,
    chain: CHAIN,
    transactionHash: hash,
    eventIndex: 0,
    blockNumber: block,
    blockTime: time,
  };
};
const T = Date.UTC(2026, 0, 5, 12);
const E = 10n ** 18n;

function swap(
  time: number,
  block: number,
  trader: string,
  side: 'buy' | 'sell',
  tokens: bigint,
  quoteWei: bigint,
): RawSwap {
  return {
    ...at(time, block),
    token: TOKEN,
    quoteAsset: WETH,
    tokenAmount: tokens.toString(),
    tokenDecimals: 18,
    quoteAmount: quoteWei.toString(),
    quoteDecimals: 18,
    side,
    trader,
    pool: POOL,
    dex: 'uniswap-v2',
    launchpad: null,
    reserves: { token: '0', quote: (5n * E).toString() },
  };
}

describe('aggregator trades', () => {
  it("carries the swap's trading platforms on the priced trade, never as paid promotion", () => {
    const p = createProcessor(ctx, newState());
    const out = newBatchOutput();
    p.swap({ ...swap(T, 90, addr(0x31), 'buy', E, E / 10n), platforms: ['axiom', 'photon'] }, out);
    p.swap(swap(T + 1000, 91, addr(0x32), 'buy', E, E / 10n), out);
    assert.deepEqual(
      out.tradeMessages.map((m) => m.trade.platforms),
      [
        [
          { platform: 'axiom', isPaid: false, paidAt: null },
          { platform: 'photon', isPaid: false, paidAt: null },
        ],
        [],
      ],
    );
  });
});

describe('aggregator dedupe of redelivered swaps', () => {
  /** Trades `gapMs` of event time apart; after each, every id the contract promises must be held. */
  function run(count: number, gapMs: number) {
    const ids = newRecentIds();
    const times: number[] = [];
    let maxSize = 0;
    for (let i = 0; i < count; i++) {
      const time = i * gapMs;
      assert.equal(seenBefore(ids, `id${i}`, time), false);
      times.push(time);
      forgetOldIds(ids, time);
      maxSize = Math.max(maxSize, ids.size);
      // Promised: the last RECENT_IDS_FLOOR ids, and those among the last RECENT_IDS_CAP within the
      // horizon (checked after every 7th trade: the walk is up to RECENT_IDS_CAP long).
      if (i % 7 !== 0) continue;
      for (let back = 0; back < Math.min(i + 1, RECENT_IDS_CAP); back++) {
        const j = i - back;
        if (back >= RECENT_IDS_FLOOR && times[j]! <= time - DEDUPE_HORIZON_MS) break;
        assert.ok(holdsId(ids, `id${j}`), `id${j} forgotten after trade ${i}`);
      }
    }
    return { ids, maxSize };
  }

  /** How states written before the typed arrays spelled an id: its digest in seven 15-bit units. */
  function writtenKey(id: string): string {
    const probe = newRecentIds();
    seenBefore(probe, id, 0);
    const [a, b, c] = [probe.words[0]!, probe.words[1]!, probe.words[2]!];
    const unit = (v: number) => String.fromCharCode(0x1000 + v);
    return (
      unit(a & 0x7fff) +
      unit((a >>> 15) & 0x7fff) +
      unit((a >>> 30) | ((b & 0x1fff) << 2)) +
      unit((b >>> 13) & 0x7fff) +
      unit((b >>> 28) | ((c & 0x7ff) << 4)) +
      unit((c >>> 11) & 0x7fff) +
      unit(c >>> 26)
    );
  }

  it('keeps every promised id of a busy token, within RECENT_IDS_CAP + FORGET_EVERY', () => {
    const { ids, maxSize } = run(RECENT_IDS_CAP * 3, 10);
    assert.ok(maxSize <= RECENT_IDS_CAP + FORGET_EVERY, `${maxSize}`);
    assert.ok(ids.size >= RECENT_IDS_CAP);
    assert.ok(ids.times.length <= RECENT_IDS_CAP + FORGET_EVERY, `${ids.times.length} slots`);
    assert.equal(seenBefore(ids, `id${RECENT_IDS_CAP * 3 - 1}`, 0), true, 'the newest is a redelivery');
  });

  it('forgets past the horizon at every trade while a token holds few ids', () => {
    // One trade a minute: 10 in the horizon, and the floor keeps 16.
    const { ids, maxSize } = run(200, 60_000);
    assert.equal(ids.size, RECENT_IDS_FLOOR);
    assert.equal(maxSize, RECENT_IDS_FLOOR);
  });

  it('forgets past the horizon every FORGET_EVERY trades on a token with more ids than that', () => {
    // 100 trades in the horizon: between 100 and 100 + FORGET_EVERY held.
    const { ids, maxSize } = run(2_000, 6_000);
    assert.ok(ids.size >= 100 && ids.size <= 100 + FORGET_EVERY, `${ids.size}`);
    assert.ok(maxSize <= 100 + FORGET_EVERY, `${maxSize}`);
  });

  it('shrinks a busy token’s arrays once it trades rarely', () => {
    const { ids } = run(RECENT_IDS_CAP, 10);
    assert.ok(ids.times.length >= RECENT_IDS_CAP);
    const last = RECENT_IDS_CAP * 10;
    // Enough trades to reach the next pass (FORGET_EVERY), a minute apart.
    for (let i = 0; i < 100; i++) {
      const time = last + DEDUPE_HORIZON_MS + i * 60_000;
      seenBefore(ids, `later${i}`, time);
      forgetOldIds(ids, time);
    }
    assert.equal(ids.size, RECENT_IDS_FLOOR);
    assert.ok(ids.times.length <= RECENT_IDS_FLOOR * 4, `${ids.times.length} slots`);
    for (let i = 100 - RECENT_IDS_FLOOR; i < 100; i++) assert.ok(holdsId(ids, `later${i}`));
  });

  it('answers as a map of ids does, through redeliveries, forgetting and a snapshot round trip', () => {
    // The contract's reference: every id in arrival order with its time, forgotten from the oldest.
    let seed = 7;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const model = new Map<string, number>();
    let ids = newRecentIds();
    let time = 0;
    let next = 0;
    for (let step = 0; step < 30_000; step++) {
      // Bursts and lulls, so the set grows past the cap, shrinks to the floor and grows again.
      time += Math.floor(random() * (step % 10_000 < 5_000 ? 20 : 40_000));
      const redelivery = next > 0 && random() < 0.2;
      const id = redelivery ? `sig${next - 1 - Math.floor(random() * Math.min(next, 5_000))}:0` : `sig${next++}:0`;
      const expected = model.has(id);
      if (!expected) model.set(id, time);
      assert.equal(seenBefore(ids, id, time), expected, `step ${step}: ${id}`);
      forgetOldIds(ids, time);
      const size = model.size;
      if (!(size > FORGET_EVERY && size % FORGET_EVERY !== 0 && size < RECENT_IDS_CAP + FORGET_EVERY))
        for (const [held, at] of model) {
          if (model.size <= RECENT_IDS_FLOOR || (at > time - DEDUPE_HORIZON_MS && model.size <= RECENT_IDS_CAP)) break;
          model.delete(held);
        }
      assert.equal(ids.size, model.size, `step ${step}`);
      if (step % 997 === 0) {
        assert.deepEqual(idTimes(ids), [...model.values()], `step ${step}`);
        for (const held of model.keys()) assert.ok(holdsId(ids, held), `${held} held at step ${step}`);
        ids = recentIdsOf(v8.deserialize(v8.serialize(ids)) as RecentIds);
      }
    }
  });

  it('tells apart ids one unit apart anywhere', () => {
    const base = `solana:${'5'.repeat(87)}K:3`;
    const ids = newRecentIds();
    let count = 0;
    // Every position changed to each of 58 base58 digits, and event indexes 0-9,999: never forgotten.
    const digits = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
    for (let at = 0; at < base.length; at++)
      for (const digit of digits) {
        const id = base.slice(0, at) + digit + base.slice(at + 1);
        if (id === base && at > 0) continue;
        assert.equal(seenBefore(ids, id, 0), false, id);
        count++;
      }
    for (let index = 0; index < 10_000; index++) {
      assert.equal(seenBefore(ids, `base:0x${'ab'.repeat(32)}:${index}`, 0), false);
      count++;
    }
    assert.equal(ids.size, count);
  });

  it('reads ids kept in full by a map of an older state, and forgets them with the horizon', () => {
    // Read back through the upgrade, as snapshots, parked, evicted and stored tokens are.
    const written = new Map<string, number>([
      ['solana:old-signature:0', 0],
      ['solana:old-signature:1', 500],
    ]);
    const token = { ...newTokenState('solana', 'T', 6, 0), recentIds: written as unknown as RecentIds };
    const ids = upgradeToken(token).recentIds;
    assert.deepEqual(idTimes(ids), [0, 500], 'order and times kept');
    assert.equal(seenBefore(ids, 'solana:old-signature:0', 1_000), true);
    assert.equal(seenBefore(ids, 'solana:old-signature:1', 1_000), true);
    assert.equal(seenBefore(ids, 'solana:new-signature:0', 1_000), false);
    assert.equal(seenBefore(ids, 'solana:new-signature:0', 2_000), true);
    for (let i = 0; i < RECENT_IDS_FLOOR; i++) seenBefore(ids, `later${i}`, DEDUPE_HORIZON_MS + 5_000);
    forgetOldIds(ids, DEDUPE_HORIZON_MS + 5_000);
    assert.equal(holdsId(ids, 'solana:old-signature:0'), false);
    assert.equal(holdsId(ids, 'later0'), true);
  });

  it('reads a map of digest keys, after ids in full, in its order', () => {
    const mixed = new Map<string, number>([
      ['solana:old-signature:0', 0],
      [writtenKey('solana:new-signature:0'), 10],
      [writtenKey('solana:new-signature:1'), 20],
    ]);
    const ids = recentIdsOf(mixed);
    assert.deepEqual(idTimes(ids), [0, 10, 20]);
    for (const id of ['solana:old-signature:0', 'solana:new-signature:0', 'solana:new-signature:1'])
      assert.equal(seenBefore(ids, id, 30), true, id);
    assert.equal(seenBefore(ids, 'solana:new-signature:2', 30), false);
  });

  it('gives a token read back arrays of its own, not views of the bytes it was read from', () => {
    const token = newTokenState('solana', 'T', 6, 0);
    for (let i = 0; i < 100; i++) seenBefore(token.recentIds, `sig${i}:0`, i * 1_000);
    const read = upgradeToken(v8.deserialize(v8.serialize(token)) as TokenState).recentIds;
    assert.equal(read.words.buffer.byteLength, read.words.byteLength);
    assert.equal(read.times.buffer.byteLength, read.times.byteLength);
    const { words, times, head, size } = token.recentIds;
    assert.deepEqual({ ...read }, { words, times, head, size }, 'the same ring, slot for slot');
    assert.equal(seenBefore(read, 'sig99:0', 0), true);
    assert.equal(seenBefore(read, 'sig100:0', 100_000), false);
  });

  it("converts a snapshot's shadow tokens' ids too (distributed instances)", () => {
    const state = newState();
    const written = new Map([['base:0xdef:3', 0]]) as unknown as RecentIds;
    state.shadows = new Map([['base:0xabc', { priceN: 0n, lastT: 0, recentIds: written }]]);
    const upgraded = upgradeState(v8.deserialize(v8.serialize(state)))!;
    const ids = upgraded.shadows!.get('base:0xabc')!.recentIds;
    assert.equal(seenBefore(ids, 'base:0xdef:3', 1_000), true);
  });
});

describe('aggregator holders', () => {
  it('computes every holder figure by its written definition', () => {
    const state = newState();
    const p = createProcessor(ctx, state);
    const out = newBatchOutput();
    const ev = (e: TokenEvent) => p.event(e, JSON.stringify(e), out);
    const transfer = (time: number, from: string, to: string, amount: bigint) =>
      ev({ ...at(time, 100), kind: 'transfer', token: TOKEN, from, to, amount: amount.toString() });
    // USD mark 2000 from a reference swap.
    p.swap(
      {
        ...swap(T - 60_000, 90, addr(0x77), 'buy', E, 2000n * 10n ** 6n),
        token: WETH,
        quoteAsset: USDC,
        quoteDecimals: 6,
      },
      out,
    );
    const [sniper, bundler, fresh, fomo, pro, phish, cexFunded, insiderByFunds, insiderByTransfer, kol, cex] = [
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
    ].map((i) => addr(0x1000 + i));
    ev({ ...at(T - 7_200_000, 1), kind: 'walletLabel', token: null, wallet: pro!, labels: ['pro_trader'], name: null });
    ev({ ...at(T - 7_200_000, 1), kind: 'walletLabel', token: null, wallet: phish!, labels: ['phishing'], name: null });
    ev({ ...at(T - 7_200_000, 1), kind: 'walletLabel', token: null, wallet: kol!, labels: ['kol'], name: 'k' });
    ev({ ...at(T - 7_200_000, 1), kind: 'walletLabel', token: null, wallet: cex!, labels: ['cex:okx'], name: null });
    ev({
      ...at(T - 3_600_000, 2),
      kind: 'funding',
      token: null,
      from: cex!,
      to: cexFunded!,
      amount: E.toString(),
      fromLabel: null,
    });
    ev({
      ...at(T - 3_600_000, 2),
      kind: 'funding',
      token: null,
      from: addr(0x55),
      to: fresh!,
      amount: E.toString(),
      fromLabel: null,
    });
    ev({
      ...at(T - 3_000_000, 3),
      kind: 'funding',
      token: null,
      from: CREATOR,
      to: insiderByFunds!,
      amount: E.toString(),
      fromLabel: null,
    });
    ev({
      ...at(T - 100_000, 4),
      kind: 'funding',
      token: null,
      from: cex!,
      to: CREATOR,
      amount: (3n * E).toString(),
      fromLabel: 'cex:okx',
    });
    ev({
      ...at(T, 100),
      kind: 'created',
      token: TOKEN,
      name: 'Tok',
      symbol: 'TOK',
      uri: '',
      decimals: 18,
      supply: (1000n * E).toString(),
      creator: CREATOR,
      launchpad: null,
      pool: null,
      quoteAsset: WETH,
    });
    transfer(T, addr(0), POOL, 900n * E);
    transfer(T, addr(0), CREATOR, 100n * E);
    transfer(T + 1000, CREATOR, insiderByTransfer!, 20n * E);
    // Trades: bundler in the creation block, sniper at +10 s, fomo at ≥ 3× the first price.
    p.swap(swap(T, 100, bundler!, 'buy', 10n * E, E / 100n), out); // first price 0.001
    p.swap(swap(T + 10_000, 101, sniper!, 'buy', 10n * E, E / 100n), out);
    p.swap(swap(T + 60_000, 150, fresh!, 'buy', 10n * E, E / 50n), out);
    p.swap(swap(T + 70_000, 160, fomo!, 'buy', 10n * E, (3n * E) / 100n), out); // 0.003 = 3×
    p.swap(swap(T + 80_000, 170, pro!, 'buy', 10n * E, E / 100n), out);
    p.swap(swap(T + 90_000, 180, kol!, 'buy', 10n * E, E / 100n), out);
    for (const [wallet, amount] of [
      [bundler, 50n],
      [sniper, 40n],
      [fresh, 30n],
      [fomo, 20n],
      [pro, 15n],
      [phish, 12n],
      [cexFunded, 11n],
      [insiderByFunds, 7n],
      [kol, 5n],
    ] as const) {
      transfer(T + 100_000, POOL, wallet!, amount * E);
    }
    transfer(T + 100_000, POOL, '0x000000000000000000000000000000000000dEaD', 200n * E);
    const token = buildToken(state.tokens.get(`base:${TOKEN}`)!, state.wallets);
    const h = token.holders;
    // Holders: creator 80, insiderByTransfer 20, and the nine wallets above; pool and dead excluded.
    assert.equal(h.count, 11);
    assert.equal(h.devPct, '8');
    assert.equal(h.top10Pct, '28.5'); // 80+50+40+30+20+20+15+12+11+7 of 1000
    assert.equal(h.sniperPct, '9', 'the bundler also bought within 15 s');
    assert.equal(h.sniperCount, 2);
    assert.equal(h.bundlerPct, '5');
    assert.equal(h.bundlerCount, 1);
    assert.equal(h.freshWalletPct, '3');
    assert.equal(h.freshWalletCount, 1);
    assert.equal(h.fomoPct, '2');
    assert.equal(h.proTraderPct, '1.5');
    assert.equal(h.proTraderCount, 1);
    assert.equal(h.phishingPct, '1.2');
    assert.equal(h.fundedByCexPct, decToString(d('1.1') + d('8')), 'cexFunded and the creator (funded by cex:okx)');
    assert.equal(h.insiderPct, '2.7');
    assert.equal(h.insiderCount, 2);
    assert.equal(token.devFunding.funder, cex);
    assert.equal(token.devFunding.funderLabel, 'cex:okx');
    assert.deepEqual(token.devFunding.amount, { native: '3', usd: '6000' });
    // Trade flags follow the same facts.
    const flagsOf = (wallet: string) => out.trades.find((t) => t.trader === wallet)!.flags;
    assert.deepEqual(flagsOf(bundler!), ['sniper', 'bundler']);
    assert.deepEqual(flagsOf(sniper!), ['sniper']);
    assert.deepEqual(flagsOf(fresh!), ['fresh_wallet']);
    assert.deepEqual(flagsOf(pro!), ['pro_trader']);
    assert.deepEqual(flagsOf(kol!), ['kol']);
    assert.deepEqual(out.trades.find((t) => t.trader === kol)!.identities, ['kol']);
    assert.equal(token.price.usd, '2');
    assert.equal(token.liquidity.native, '10');
    assert.equal(token.liquidity.usd, '20000');
    assert.equal(token.marketCap.usd, '2000');
    assert.equal(token.anchorSymbol, 'WETH');
  });
});

describe('holder records (holder-records.ts)', () => {
  it('keeps balance, attributes and mask exact, whatever their size and sign', () => {
    const attrsAll = Object.values(ATTR).reduce((a, b) => a | b, 0);
    const masks = [-1, 0, 1, 255, 511];
    const balances = [0n, 1n, -1n, 2n ** 63n, -(2n ** 63n), 10n ** 27n + 7n, -(10n ** 30n) - 3n, 2n ** 200n - 1n];
    for (const bal of balances)
      for (const attrs of [0, ATTR.bought, attrsAll])
        for (const mask of masks) {
          const rec = holderRec(bal, attrs, mask);
          assert.deepEqual([balOf(rec), attrsOf(rec), maskOf(rec)], [bal, attrs, mask], `${bal} ${attrs} ${mask}`);
          const moved = withBal(rec, -bal - 5n);
          assert.deepEqual([balOf(moved), attrsOf(moved), maskOf(moved)], [-bal - 5n, attrs, mask]);
          const marked = withMask(withAttrs(rec, attrs | ATTR.insider), 3);
          assert.deepEqual([balOf(marked), attrsOf(marked), maskOf(marked)], [bal, attrs | ATTR.insider, 3]);
        }
    assert.deepEqual([balOf(EMPTY_HOLDER), attrsOf(EMPTY_HOLDER), maskOf(EMPTY_HOLDER)], [0n, 0, -1]);
  });
});

describe('aggregator holders: singleton pools', () => {
  it("leaves out the contract holding a V4 pool's tokens (the swap's custody), also when it got them before its first swap", () => {
    const state = newState();
    const p = createProcessor(ctx, state);
    const out = newBatchOutput();
    const POOL_ID = '0x' + '5d'.repeat(32),
      MANAGER = addr(0x4444),
      buyer = addr(0x2001),
      other = addr(0x2002);
    const ev = (e: TokenEvent) => p.event(e, JSON.stringify(e), out);
    const transfer = (time: number, from: string, to: string, amount: bigint) =>
      ev({ ...at(time, 200), kind: 'transfer', token: TOKEN, from, to, amount: amount.toString() });
    ev({
      ...at(T, 200),
      kind: 'created',
      token: TOKEN,
      name: 'Tok',
      symbol: 'TOK',
      uri: '',
      decimals: 18,
      supply: (1000n * E).toString(),
      creator: CREATOR,
      launchpad: null,
      pool: null,
      quoteAsset: WETH,
    });
    transfer(T, addr(0), CREATOR, 1000n * E);
    // The launch moves 900 to the PoolManager (a transfer from the creator: an insider, were it a holder).
    transfer(T, CREATOR, MANAGER, 900n * E);
    const before = buildToken(state.tokens.get(`base:${TOKEN}`)!, state.wallets).holders;
    assert.equal(before.count, 2, 'before any swap names it, the PoolManager looks like a holder');
    const v4 = (time: number, trader: string, tokens: bigint) => ({
      ...swap(time, 201, trader, 'buy', tokens, E / 100n),
      pool: POOL_ID,
      dex: 'uniswap-v4',
      custody: MANAGER,
    });
    p.swap(v4(T + 1000, buyer, 30n * E), out);
    transfer(T + 1000, MANAGER, buyer, 30n * E);
    p.swap(v4(T + 2000, other, 20n * E), out);
    transfer(T + 2000, MANAGER, other, 20n * E);
    const h = buildToken(state.tokens.get(`base:${TOKEN}`)!, state.wallets).holders;
    assert.equal(h.count, 3, 'creator 100, buyer 30, other 20; the PoolManager (850) is no holder');
    assert.equal(h.top10Pct, '15');
    assert.equal(h.devPct, '10');
    assert.equal(h.insiderCount, 0);
    assert.equal(h.insiderPct, '0');
    assert.ok(out.changed.has(`base:${TOKEN}`));
  });
});

describe('aggregator state upgrade', () => {
  it('brings a version-1 token (every trade of 24 h kept) to the same windows, closed candles and attributes', () => {
    const state = newState();
    const p = createProcessor(ctx, state);
    const out = newBatchOutput();
    const traders = [addr(0x31), addr(0x32), addr(0x33)];
    let time = T;
    for (let i = 0; i < 400; i++) {
      time += (i % 4 === 0 ? 0 : 1 + (i % 7)) * 1000; // whole seconds, some shared
      p.swap(
        swap(time, 100 + i, traders[i % 3]!, i % 5 === 0 ? 'sell' : 'buy', 10n ** 18n, BigInt(1000 + i) * 10n ** 12n),
        out,
      );
    }
    p.swap(swap(time - 30_000, 90, traders[0]!, 'buy', 10n ** 18n, 5n * 10n ** 15n), out); // late
    const current = state.tokens.get(`${CHAIN}:${TOKEN}`)!;
    const recs: TradeRec[] = out.trades
      .map((r) => ({
        t: r.timestamp,
        seq: r.seq,
        buy: r.side === 'buy',
        pn: parse(r.priceNative),
        pu: parse(r.priceUsd),
        mn: parse(r.marketCapNative),
        mu: parse(r.marketCapUsd),
        vn: parse(r.volumeNative),
        vu: parse(r.volumeUsd),
      }))
      .sort((a, b) => a.t - b.t || a.seq - b.seq);
    const copy = v8.deserialize(v8.serialize(current)) as Record<string, unknown> & {
      holders: Map<string, HolderRec | HolderRecObject>;
    };
    const v1Bits: Array<[number, number]> = [
      [ATTR.bought, 1],
      [ATTR.sniper, 2],
      [ATTR.bundler, 4],
      [ATTR.insider, 8],
      [ATTR.fresh, 16],
      [ATTR.fomo, 32],
    ];
    // Version 1 records: objects, with version 1's attribute bits.
    for (const [address, h] of copy.holders) {
      const rec = h as HolderRec;
      const attrs = attrsOf(rec);
      const v1 = v1Bits.reduce((a, [now, bit]) => (attrs & now ? a | bit : a), 0);
      const mask = maskOf(rec);
      copy.holders.set(address, { bal: balOf(rec), attrs: v1, mask, counted: mask === -1 ? 0n : balOf(rec) });
    }
    copy.win = { recs, heads: [], sums: [], t: current.win.t, trimmed: false };
    delete copy.closedCandles;
    const upgraded = upgradeToken(copy as unknown as TokenState);
    assert.deepEqual(windowStats(upgraded.win), windowStats(current.win));
    assert.deepEqual(upgraded.closedCandles, current.closedCandles);
    assert.deepEqual(upgraded.holders, current.holders);
    assert.ok(current.closedCandles.length > 0);
  });

  it('brings windows whose buckets were objects to columns, the same buckets and stats', () => {
    const recs = randomRecs(23, 1200);
    const win = newTradeWindow();
    for (const rec of recs.slice(0, 1000)) insert(win, rec);
    const state = newState();
    const p = createProcessor(ctx, state);
    p.swap(swap(T, 100, addr(0x31), 'buy', 10n ** 18n, 10n ** 15n), newBatchOutput());
    const token = state.tokens.get(`${CHAIN}:${TOKEN}`)!;
    token.win = win;
    // The object form as a snapshot of before 2026-12-03 held it.
    const copy = v8.deserialize(v8.serialize(token)) as Record<string, unknown>;
    const { heads, sums, cuts, t } = win;
    copy.win = v8.deserialize(v8.serialize({ buckets: bucketsOf(win), heads, sums, cuts, t }));
    const upgraded = upgradeToken(copy as unknown as TokenState).win;
    assert.deepEqual(bucketsOf(upgraded), bucketsOf(win));
    assert.deepEqual(windowStats(upgraded), windowStats(win));
    // And both go on alike.
    for (const rec of recs.slice(1000)) {
      insert(win, rec);
      insert(upgraded, rec);
    }
    assert.deepEqual(bucketsOf(upgraded), bucketsOf(win));
    assert.deepEqual(windowStats(upgraded), windowStats(win));
  });

  it('brings a version-2 token (one window bucket per event time) to the current windows', () => {
    const state = newState();
    const p = createProcessor(ctx, state);
    const out = newBatchOutput();
    let time = T;
    for (let i = 0; i < 600; i++) {
      time += (i % 4 === 0 ? 0 : 1 + (i % 7)) * 1000;
      p.swap(
        swap(
          time,
          100 + i,
          addr(0x31 + (i % 3)),
          i % 5 === 0 ? 'sell' : 'buy',
          10n ** 18n,
          BigInt(1000 + i) * 10n ** 12n,
        ),
        out,
      );
    }
    p.swap(swap(time - 1_500_000, 90, addr(0x31), 'buy', 10n ** 18n, 5n * 10n ** 15n), out); // late, in a 5 s granule
    const current = state.tokens.get(`${CHAIN}:${TOKEN}`)!;
    assert.ok(
      bucketsOf(current.win).some((b) => b.bc + b.sc > 1 && b.lo > b.fo),
      'some buckets merged several seconds',
    );
    // The version-2 window: one bucket per distinct event time, first and last trade by seq.
    const v2 = new Map<number, Record<string, unknown> & { ls: number }>();
    for (const r of [...out.trades].sort((a, b) => a.seq - b.seq)) {
      const buy = r.side === 'buy';
      const [vn, vu, pu] = [parse(r.volumeNative), parse(r.volumeUsd), parse(r.priceUsd)];
      const b = v2.get(r.timestamp) ?? {
        t: r.timestamp,
        fs: r.seq,
        fp: pu,
        ls: r.seq,
        lp: pu,
        bc: 0,
        sc: 0,
        bn: 0n,
        bu: 0n,
        sn: 0n,
        su: 0n,
      };
      Object.assign(b, {
        ls: r.seq,
        lp: pu,
        bc: (b.bc as number) + (buy ? 1 : 0),
        sc: (b.sc as number) + (buy ? 0 : 1),
      });
      if (buy) Object.assign(b, { bn: (b.bn as bigint) + vn, bu: (b.bu as bigint) + vu });
      else Object.assign(b, { sn: (b.sn as bigint) + vn, su: (b.su as bigint) + vu });
      v2.set(r.timestamp, b);
    }
    const copy = v8.deserialize(v8.serialize(current)) as Record<string, unknown>;
    copy.win = {
      buckets: [...v2.values()].sort((a, b) => (a.t as number) - (b.t as number)),
      heads: [0, 0, 0, 0, 0],
      sums: [],
      t: current.win.t,
    };
    // A version-2 snapshot (what readSnapshot reads) comes back as the current version.
    const snapshot = v8.deserialize(v8.serialize({ ...state, version: 2, tokens: new Map([['k', copy]]) }));
    const upgraded = upgradeState(snapshot)!.tokens.get('k')!;
    assert.deepEqual(upgraded.win, current.win);
    assert.equal(upgradeState(snapshot)?.version, STATE_VERSION);
  });
});

describe('aggregator snapshot with parked tokens', () => {
  const parkedRun = (viewPending?: (key: string) => boolean) => {
    // Two tokens trade; two hours later trades of the second (a decay of the first, then a new
    // minute with nothing due for it) park the first (idle 10 min).
    const state = newState();
    const p = createProcessor(ctx, state, undefined, { parkIdleMs: 10 * 60_000, viewPending });
    const other = (time: number, block: number) => ({
      ...swap(time, block, addr(0x42), 'buy', E, E / 10n),
      token: addr(0xdef),
    });
    p.swap(swap(T, 1, addr(0x41), 'buy', E, E / 10n), newBatchOutput());
    p.swap(other(T + 1000, 2), newBatchOutput());
    p.swap(other(T + 2 * 3_600_000, 3), newBatchOutput());
    p.swap(other(T + 2 * 3_600_000 + 61_000, 4), newBatchOutput());
    return state;
  };

  /** Runs fn in a fresh temporary directory, removed afterwards. */
  const inTempDir = async (fn: (dir: string) => Promise<void>) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-snapshot-'));
    try {
      await fn(dir);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };

  it('keeps an idle token whose view is still to be built in memory (the views pass would read it back)', () => {
    const pending = new Set([tokenKey(CHAIN, TOKEN)]);
    const state = parkedRun((key) => pending.has(key));
    assert.equal(state.parked?.size ?? 0, 0);
    assert.ok(state.tokens.has(tokenKey(CHAIN, TOKEN)));
  });

  it('writes parked tokens as their own section and reads them back, each in its own buffer', () =>
    inTempDir(async (dir) => {
      const state = parkedRun();
      assert.equal(state.parked?.size, 1, 'the idle token is parked');
      const file = path.join(dir, 'snapshot.bin');
      await writeSnapshotFile(file, serializeState(state));
      const loaded = readSnapshot(file)!;
      assert.deepEqual([...loaded.parked!.keys()], [...state.parked!.keys()]);
      for (const [key, parked] of loaded.parked!) {
        assert.deepEqual(parked, state.parked!.get(key));
        assert.equal(parked.bytes.buffer.byteLength, parked.bytes.byteLength);
      }
      assert.deepEqual(loaded.tokens, state.tokens);
      assert.deepEqual(loaded.wallets, state.wallets);
      const key = [...loaded.parked!.keys()][0]!;
      assert.equal(tokenIn(loaded, key)?.address, TOKEN);
      fs.truncateSync(file, fs.statSync(file).size - 1);
      assert.throws(() => readSnapshot(file), /truncated or corrupt/);
    }));

  it('writes a snapshot of more pieces than one writev takes, every byte in order', () =>
    inTempDir(async (dir) => {
      const pieces = Array.from({ length: 2_500 }, (_, i) => Buffer.alloc(1 + ((i * 7919) % 3_000), i % 251));
      const file = path.join(dir, 'pieces.bin');
      await writeSnapshotFile(file, pieces);
      assert.ok(fs.readFileSync(file).equals(Buffer.concat(pieces)));
      assert.equal(fs.existsSync(`${file}.tmp`), false);
    }));

  it('a capture taken while processing goes on holds the state as of its start', () =>
    inTempDir(async (dir) => {
      const state = parkedRun();
      const p = createProcessor(ctx, state, undefined, { parkIdleMs: 10 * 60_000 });
      const tokenSwap = (token: number, time: number, block: number) => ({
        ...swap(time, block, addr(0x50 + token), 'buy', E, E / 10n),
        token: addr(0xa00 + token),
      });
      const later = T + 2 * 3_600_000 + 120_000;
      for (let i = 0; i < 6; i++) p.swap(tokenSwap(i, later, 10 + i), newBatchOutput());
      const reference = path.join(dir, 'reference.bin');
      await writeSnapshotFile(reference, serializeState(state));
      const capture = captureState(state);
      // Processing goes on between slices: traded tokens, one of them before any slice, and a new one.
      p.swap(tokenSwap(0, later + 1000, 20), newBatchOutput());
      let slices = 0;
      for (let i = 1; !capture.step(() => true); i++, slices++)
        p.swap(tokenSwap(i % 7, later + 1000 + i * 1000, 20 + i), newBatchOutput());
      assert.ok(slices >= 3, `taken in slices (${slices})`);
      const captured = path.join(dir, 'captured.bin');
      await writeSnapshotFile(captured, capture.pieces());
      const expected = readSnapshot(reference)!;
      assert.deepEqual(readSnapshot(captured), expected);
      assert.notDeepEqual(state.tokens, expected.tokens, 'the live state moved on');
      // The hook is gone once the capture is complete: later reads serialise nothing.
      p.swap(tokenSwap(1, later + 60_000, 90), newBatchOutput());
      assert.deepEqual(readSnapshot(captured), expected);
    }));

  it('reads a snapshot of the version before, whose tokens in memory are in the state section', () =>
    inTempDir(async (dir) => {
      const state = parkedRun();
      const { parked, ...rest } = state;
      const body = v8.serialize(rest);
      const entries = [...parked!];
      const index = v8.serialize(entries.map(([key, p]) => [key, p.chain, p.updatedAt, p.expiry, p.bytes.byteLength]));
      const head = Buffer.alloc(24);
      head.write('SPOTSNP2');
      head.writeBigUInt64LE(BigInt(body.length), 8);
      head.writeBigUInt64LE(BigInt(index.length), 16);
      const file = path.join(dir, 'snapshot.bin');
      fs.writeFileSync(file, Buffer.concat([head, body, index, ...entries.map(([, p]) => p.bytes)]));
      const loaded = readSnapshot(file)!;
      assert.deepEqual(loaded.tokens, state.tokens);
      assert.deepEqual(loaded.parked, state.parked);
      assert.deepEqual(loaded.wallets, state.wallets);
    }));

  it('reads a whole-state snapshot whose parked tokens were kept undeflated', () =>
    inTempDir(async (dir) => {
      const state = parkedRun();
      const [key, parked] = [...state.parked!][0]!;
      const token = tokenIn(newStateWith(state, key, parked), key)!;
      const legacy = { ...state, parked: new Map([[key, { ...parked, bytes: v8.serialize(token) }]]) };
      const file = path.join(dir, 'snapshot.bin');
      fs.writeFileSync(file, v8.serialize(legacy));
      const loaded = readSnapshot(file)!;
      assert.deepEqual(tokenIn(loaded, key), token);
    }));
});

/** A copy of the state's parked entry alone, to bring it back without touching the state. */
function newStateWith(state: ReturnType<typeof newState>, key: string, parked: ParkedToken) {
  return { ...newState(), watermarks: state.watermarks, parked: new Map([[key, parked]]) };
}

describe('parked wallets (wallet-store.ts, wallet-facts.ts)', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-wallets-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const facts = (trades: number) => v8.serialize({ ...newWallet(1000), trades });
  const tradesOf = (bytes: Buffer | undefined) => (bytes ? (v8.deserialize(bytes) as { trades: number }).trades : null);

  it('a restart from an older snapshot finds the rows that snapshot expects', () => {
    const file = path.join(dir, 'w.sqlite');
    let store = openWalletStore(file);
    store.rollback(0);
    const row = (key: string, trades: number) => ({
      key,
      chain: 'solana',
      at: 1000,
      pinned: true,
      facts: facts(trades),
    });
    store.put([row('solana:a', 1), row('solana:b', 1)], 100);
    store.confirm(100);
    // Written for snapshot 200, which never reached the disk; then again for the retry, 300.
    store.put([row('solana:a', 2), row('solana:c', 2)], 200);
    store.put([row('solana:a', 3)], 300);
    assert.equal(tradesOf(store.get('solana:a')), 3);
    store.close();

    store = openWalletStore(file);
    store.rollback(100);
    assert.equal(tradesOf(store.get('solana:a')), 1, 'back to the version snapshot 100 names');
    assert.equal(tradesOf(store.get('solana:b')), 1);
    assert.equal(store.get('solana:c'), undefined, 'in memory at snapshot 100: no row');
    assert.equal(store.count(), 2);
    store.close();

    store = openWalletStore(file);
    store.rollback(0);
    assert.equal(store.count(), 0, 'no snapshot: no parked wallet');
    store.close();
  });

  it('parked holder records roll back with the wallets, and a token lists all of its rows', () => {
    const file = path.join(dir, 'w.sqlite');
    let store = openWalletStore(file);
    store.rollback(0);
    const row = (wallet: string, bal: bigint, mask = 3) => ({ token: 'base:0xt', wallet, bal, attrs: 512, mask });
    // More rows than one page of holdersOf; balances may be negative on EVM.
    store.putHolders(
      Array.from({ length: 4_500 }, (_, i) => row(`0x${String(i).padStart(5, '0')}`, BigInt(i) - 1n)),
      100,
    );
    store.putHolders([{ ...row('0xother', 5n), token: 'base:0xu' }], 100);
    store.confirm(100);
    store.putHolders([row('0x00001', 77n, -1), row('0xnew', 1n)], 200);
    assert.deepEqual(store.holder('base:0xt', '0x00001'), row('0x00001', 77n, -1));
    const listed = [...store.holdersOf('base:0xt')];
    assert.equal(listed.length, 4_501);
    assert.equal(new Set(listed.map((r) => r.wallet)).size, 4_501, 'each row once');
    assert.equal(listed[0]!.bal, -1n);
    store.close();

    store = openWalletStore(file);
    store.rollback(100);
    assert.deepEqual(store.holder('base:0xt', '0x00001'), row('0x00001', 0n), 'the row snapshot 100 names');
    assert.equal(store.holder('base:0xt', '0xnew'), undefined);
    assert.equal(store.holderCount(), 4_501);
    store.close();
    assert.deepEqual(
      store.holder('base:0xu', '0xother'),
      { ...row('0xother', 5n), token: 'base:0xu' },
      'read after close',
    );
  });

  it("lists a token's counted parked rows by balance, largest first, across rollbacks and an older file", () => {
    const file = path.join(dir, 'w.sqlite');
    // A file written before the balance order (its holders table had no top column).
    const old = new Database(file);
    old.exec(`CREATE TABLE holders (
  token TEXT NOT NULL, wallet TEXT NOT NULL, version INTEGER NOT NULL, rec TEXT NOT NULL,
  prev_version INTEGER, prev_rec TEXT, PRIMARY KEY (token, wallet)) WITHOUT ROWID`);
    old.prepare('INSERT INTO holders VALUES (?, ?, ?, ?, ?, ?)').run('solana:T', 'old1', 10, '900 0 1', 5, '7 0 1');
    old.prepare('INSERT INTO holders VALUES (?, ?, ?, ?, ?, ?)').run('solana:T', 'old2', 10, '5 0 -1', null, null);
    old.close();
    let store = openWalletStore(file);
    store.rollback(10);
    const row = (wallet: string, bal: bigint, mask = 1) => ({ token: 'solana:T', wallet, bal, attrs: 0, mask });
    // Balances of many digit counts, ties, uncounted and non-positive rows, more than one page.
    const rows = Array.from({ length: 3_000 }, (_, i) => row(`w${i}`, BigInt(i % 7 === 0 ? 10 ** (i % 13) : i * 37)));
    rows.push(row('zero', 0n, -1), row('neg', -5n, -1), row('uncounted', 10n ** 30n, -1), row('big', 10n ** 30n));
    store.putHolders(rows, 20);
    store.putHolders([{ ...row('other', 10n ** 31n), token: 'solana:U' }], 20);
    const expected = [...rows, row('old1', 900n)]
      .filter((r) => r.mask !== -1)
      .map((r) => r.bal)
      .sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
    const listed = [...store.countedByBalance('solana:T')];
    assert.deepEqual(
      listed.map((r) => r.bal),
      expected,
    );
    assert.equal(new Set(listed.map((r) => r.wallet)).size, listed.length, 'each row once');
    store.close();

    store = openWalletStore(file);
    store.rollback(10);
    assert.deepEqual(
      [...store.countedByBalance('solana:T')].map((r) => r.wallet),
      ['old1'],
      'the rows of version 20 are undone',
    );
    store.rollback(4);
    assert.deepEqual([...store.countedByBalance('solana:T')], [], 'older than both of its versions: no row');
    store.close();
  });

  it('forgets only idle unpinned rows a snapshot confirmed', () => {
    const store = openWalletStore(path.join(dir, 'w.sqlite'));
    store.rollback(0);
    const row = (key: string, at: number, pinned: boolean) => ({ key, chain: 'base', at, pinned, facts: facts(0) });
    store.put([row('base:idle', 10, false), row('base:held', 10, true), row('base:recent', 500, false)], 50);
    assert.equal(store.forget('base', 100), 0, 'version 50 not confirmed yet');
    store.confirm(50);
    assert.equal(store.forget('solana', 100), 0, 'another chain');
    assert.equal(store.forget('base', 100), 1);
    assert.equal(store.get('base:idle'), undefined);
    assert.ok(store.get('base:held') && store.get('base:recent'));
    store.close();
    assert.ok(store.get('base:held'), 'read after close');
  });

  it('an idle wallet parks and comes back with the same facts; an unchanged one is not rewritten', () => {
    const store = openWalletStore(path.join(dir, 'w.sqlite'));
    store.rollback(0);
    const wallets = new Map();
    const stage = createWalletFacts(wallets, { expire: true, store });
    const w = stage.get('solana', 'W1');
    stage.touch(w, 1000);
    w.trades = 7;
    w.fundedBy.push('F1');
    setHolding(w, 'solana:T1', true);
    stage.touch(stage.get('solana', 'W2'), 5000);
    assert.deepEqual(
      stage.park(() => 2000, 10),
      { parked: 1, done: true },
    );
    assert.deepEqual([...wallets.keys()], ['solana:W2']);
    const back = stage.peek('solana', 'W1')!;
    assert.deepEqual(back, w);
    assert.deepEqual(back.held, ['solana:T1']);
    store.confirm(10);
    // Read back, it waits in the queue behind W2 (queued at 5000). Parked again unchanged: the row
    // keeps its version (a restart at 10 still finds it).
    assert.deepEqual(
      stage.park(() => 2000, 20),
      { parked: 0, done: true },
    );
    assert.deepEqual(
      stage.park(() => 6000, 20),
      { parked: 2, done: true },
    );
    store.rollback(10);
    assert.deepEqual(stage.reader.get('solana:W1'), w);
    store.close();
  });

  it('a park pass goes in slices: each call stops when its slice is spent and the next goes on', () => {
    const store = openWalletStore(path.join(dir, 'w.sqlite'), true);
    const wallets = new Map();
    const stage = createWalletFacts(wallets, { expire: true, store });
    for (let i = 0; i < 300; i++) stage.touch(stage.get('solana', `W${i}`), 1000);
    const first = stage.park(
      () => 2000,
      10,
      () => true,
    );
    assert.equal(first.done, false);
    assert.ok(first.parked > 0 && first.parked < 300, `a spent slice stops early (${first.parked})`);
    // Added while the pass is under way: the pass still reaches it.
    stage.touch(stage.get('solana', 'late'), 1500);
    const rest = stage.park(() => 2000, 11);
    assert.deepEqual(rest, { parked: 301 - first.parked, done: true });
    assert.equal(wallets.size, 0);
    assert.equal(store.count(), 301);
    // A new pass starts from the first wallet again.
    stage.touch(stage.get('solana', 'W0'), 5000);
    stage.touch(stage.get('solana', 'W1'), 1000);
    assert.deepEqual(
      stage.park(() => 2000, 12),
      { parked: 1, done: true },
    );
    assert.deepEqual([...wallets.keys()], ['solana:W0']);
    // A slice that is never spent still writes at most 128 rows: the write comes after it.
    for (let i = 0; i < 300; i++) stage.touch(stage.get('solana', `X${i}`), 1000);
    const capped = stage.park(
      () => 6000,
      13,
      () => false,
    );
    assert.deepEqual(capped, { parked: 128, done: false });
    store.close();
  });
});

describe('stop markers (stop-marker.ts)', () => {
  const marker = {
    base: 100,
    processed: 180,
    chainOffsets: { 'spot.swaps.v1:0': { solana: 50, base: 20 }, 'spot.swaps.v1:1': { solana: 7 } },
    views: { changed: ['solana:A'], traded: [] },
  };

  it('is read only beside the snapshot it follows, and never when it cannot be parsed', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marker-'));
    const file = path.join(dir, 'stopped-x.json');
    assert.equal(readStopMarker(file, 100), null);
    await writeStopMarker(file, marker);
    assert.deepEqual(readStopMarker(file, 100), marker);
    assert.equal(readStopMarker(file, 90), null, 'another snapshot voids it');
    fs.writeFileSync(file, '{"base":100,');
    assert.equal(readStopMarker(file, 100), null);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('tells the messages a stop had processed, when the state reached it, and joins two stops', () => {
    assert.equal(processedBeforeStop(marker, 'spot.swaps.v1', 0, 'solana', 49), true);
    assert.equal(processedBeforeStop(marker, 'spot.swaps.v1', 0, 'solana', 50), false);
    assert.equal(processedBeforeStop(marker, 'spot.swaps.v1', 0, 'arc', 0), false);
    assert.equal(processedBeforeStop(marker, 'spot.swaps.v1', 2, 'solana', 0), false);
    assert.equal(
      reachedStop(marker, { 'spot.swaps.v1:0': { solana: 50, base: 19 }, 'spot.swaps.v1:1': { solana: 9 } }),
      false,
    );
    assert.equal(
      reachedStop(marker, { 'spot.swaps.v1:0': { solana: 51, base: 20 }, 'spot.swaps.v1:1': { solana: 7 } }),
      true,
    );
    const later = {
      base: 100,
      processed: 150,
      chainOffsets: { 'spot.swaps.v1:0': { solana: 40, base: 25, arc: 3 } },
      views: { changed: ['solana:B', 'solana:A'], traded: ['solana:B'] },
    };
    assert.deepEqual(joinedMarker(marker, later), {
      base: 100,
      processed: 180,
      chainOffsets: { 'spot.swaps.v1:0': { solana: 50, base: 25, arc: 3 }, 'spot.swaps.v1:1': { solana: 7 } },
      views: { changed: ['solana:A', 'solana:B'], traded: ['solana:B'] },
    });
  });
});

describe('wallet idle queues (idle-queue.ts)', () => {
  it('gives keys back in order up to the bound, a late push at the newest time queued', () => {
    const queue = createIdleQueue<string>();
    queue.push('a', 10);
    queue.push('b', 30);
    // Older than what is queued: it goes in at 30 and waits behind b.
    queue.push('c', 20);
    assert.equal(queue.takeDue(25), 'a');
    assert.equal(queue.takeDue(25), undefined);
    assert.equal(queue.size, 2);
    assert.equal(queue.takeDue(30), 'b');
    assert.equal(queue.takeDue(30), 'c');
    assert.equal(queue.takeDue(Number.POSITIVE_INFINITY), undefined);
    // Past the compaction point the order and the times are kept.
    for (let i = 0; i < 5000; i++) queue.push(`k${i}`, i);
    const taken: string[] = [];
    for (let key = queue.takeDue(2999); key !== undefined; key = queue.takeDue(2999)) taken.push(key);
    assert.equal(taken.length, 3000);
    assert.equal(taken[2999], 'k2999');
    queue.push('late', 0);
    assert.equal(queue.size, 2001);
    assert.equal(queue.takeDue(3000), 'k3000');
  });

  it('a park looks only at the wallets due, not at every wallet in memory', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idle-'));
    const store = openWalletStore(path.join(dir, 'w.sqlite'), true);
    const wallets = new Map();
    const stage = createWalletFacts(wallets, { expire: true, store });
    stage.touch(stage.get('solana', 'idle'), 1000);
    stage.touch(stage.get('base', 'idle'), 1000);
    for (let i = 0; i < 10_000; i++) stage.touch(stage.get('solana', `busy${i}`), 5000);
    // A wallet queued early but active since goes back in at its time and parks once idle from it.
    stage.touch(stage.get('solana', 'busy0'), 9000);
    let asked = 0;
    const due = () => {
      asked++;
      return false;
    };
    assert.deepEqual(
      stage.park(() => 2000, 1, due),
      { parked: 2, done: true },
    );
    // A pass through every wallet asks every 64 it looks at.
    assert.equal(asked, 0);
    assert.equal(wallets.size, 10_000);
    const parked = stage.park(() => 6000, 2);
    assert.deepEqual(parked, { parked: 9_999, done: true });
    assert.deepEqual([...wallets.keys()], ['solana:busy0']);
    assert.deepEqual(
      stage.park(() => 9000, 3),
      { parked: 1, done: true },
    );
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the wallets of a snapshot are queued oldest activity first', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idle-'));
    const store = openWalletStore(path.join(dir, 'w.sqlite'), true);
    const restored = new Map([
      ['solana:late', { ...newWallet(0), at: 9000 }],
      ['solana:early', { ...newWallet(0), at: 1000 }],
    ]);
    const stage = createWalletFacts(restored, { expire: true, store });
    assert.deepEqual(
      stage.park(() => 2000, 1),
      { parked: 1, done: true },
    );
    assert.deepEqual([...restored.keys()], ['solana:late']);
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('aggregator store writes (sink-writer.ts)', () => {
  const part = (id: string) => ({
    trades: [{ id } as unknown as TradeRow],
    candleRows: [],
    tokens: [],
    tokenEvents: [],
    labels: new Map(),
    balances: new Map(),
  });
  /** A store whose trade inserts finish when the test says so. */
  function heldStore() {
    const writes: Array<{ ids: string[]; finish: (error?: Error) => void }> = [];
    const store = {
      insertTrades: (rows: TradeRow[]) =>
        new Promise<void>((resolve, reject) =>
          writes.push({ ids: rows.map((r) => r.id), finish: (error) => (error ? reject(error) : resolve()) }),
        ),
    } as unknown as SpotStore;
    return { store, writes };
  }
  const settled = async (promise: Promise<unknown>) => {
    let done = false;
    void promise.then(
      () => (done = true),
      () => (done = true),
    );
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    return done;
  };

  it('acknowledged() waits for the rows handed over before it, not for later ones', async () => {
    const { store, writes } = heldStore();
    const sinks = createSinkWriter(ctx, { store, flushEvery: 1000, flushAfterMs: 60_000, onFailure: () => {} });
    await sinks.add(part('a'), 1);
    const acknowledged = sinks.acknowledged();
    await sinks.add(part('b'), 1);
    assert.equal(await settled(acknowledged), false, 'the write holding a is in flight');
    assert.deepEqual(
      writes.map((w) => w.ids),
      [['a']],
    );
    writes[0]!.finish();
    assert.equal(await settled(acknowledged), true);
    assert.equal(writes.length, 1, 'b is not written for it');
    assert.equal(sinks.pending(), 1);
    const drained = sinks.drain();
    await settled(drained);
    writes[1]!.finish();
    await drained;
    assert.equal(sinks.pending(), 0);
    sinks.stop();
  });

  it('acknowledged() rejects when the write fails for good', async () => {
    const { store, writes } = heldStore();
    let failed: Error | null = null;
    const sinks = createSinkWriter(ctx, {
      store,
      flushEvery: 1000,
      flushAfterMs: 60_000,
      attempts: 1,
      onFailure: (error) => (failed = error),
    });
    await sinks.add(part('a'), 1);
    const acknowledged = sinks.acknowledged();
    await settled(acknowledged);
    writes[0]!.finish(new Error('store down'));
    await assert.rejects(acknowledged, /store down/);
    assert.match(String(failed), /store down/);
    sinks.stop();
  });
});

describe('wallet holdings (wallet-facts.ts setHolding)', () => {
  it('keeps a few in an array, more in a Set, in the order they came', () => {
    const w = newWallet(0);
    const keys = Array.from({ length: 12 }, (_, i) => `solana:T${i}`);
    setHolding(w, keys[0]!, true);
    assert.deepEqual(w.held, [keys[0]]);
    const before = w.held;
    setHolding(w, keys[0]!, true);
    assert.equal(w.held, before, 'held already: unchanged');
    for (const key of keys.slice(1, 8)) setHolding(w, key, true);
    assert.ok(Array.isArray(w.held) && w.held.length === 8);
    setHolding(w, keys[3]!, false);
    assert.deepEqual(
      [...holdings(w)],
      [0, 1, 2, 4, 5, 6, 7].map((i) => keys[i]),
    );
    setHolding(w, keys[3]!, true);
    setHolding(w, keys[8]!, true);
    assert.ok(w.held instanceof Set, 'a ninth: a Set');
    assert.deepEqual(
      [...holdings(w)],
      [0, 1, 2, 4, 5, 6, 7, 3, 8].map((i) => keys[i]),
    );
    for (const key of keys.slice(0, 9)) setHolding(w, key, false);
    assert.equal(w.held, undefined, 'none: absent');
    setHolding(w, keys[9]!, false);
    assert.equal(w.held, undefined);
  });

  it('goes on with a Set read from an older state', () => {
    const w = { ...newWallet(0), held: new Set(['solana:A', 'solana:B']) };
    setHolding(w, 'solana:C', true);
    setHolding(w, 'solana:A', false);
    assert.deepEqual([...holdings(w)], ['solana:B', 'solana:C']);
    setHolding(w, 'solana:B', false);
    setHolding(w, 'solana:C', false);
    assert.equal(w.held, undefined);
  });
});

describe('wallet records (the live tokens a wallet has records in)', () => {
  it('hands out a left wallet once, with its tokens, and prunes a long list of records gone from memory', () => {
    const gone = new Set<string>();
    const records = createWalletRecords((_wallet, token) => !gone.has(token));
    records.entered('solana:W', 'solana:A');
    records.entered('solana:W', 'solana:A');
    records.entered('solana:V', 'solana:B');
    records.left(['solana:W', 'solana:X']);
    assert.deepEqual(records.nextDue(), ['solana:W', ['solana:A']]);
    assert.equal(records.nextDue(), undefined);
    // A bot's list: the records of tokens parked since are dropped as it doubles.
    for (let i = 0; i < 40; i++) {
      records.entered('solana:V', `solana:T${i}`);
      gone.add(`solana:T${i}`);
    }
    records.left(['solana:V']);
    const [wallet, tokens] = records.nextDue()!;
    assert.equal(wallet, 'solana:V');
    assert.ok(tokens.length < 20, `${tokens.length} tokens kept`);
    assert.ok(tokens.includes('solana:T39'));
    records.left(['solana:V']);
    assert.equal(records.nextDue(), undefined, 'a wallet is handed out once per stay in memory');
  });
});
