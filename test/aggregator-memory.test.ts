// A token's aggregator state is bounded by event time, never by its trade count: two tokens trade
// over the same hour, one 10× as often (1M trades), and their states stay the same size; a token
// trading every second all day keeps a few thousand window buckets; a token gaining one-off holders
// all the time keeps in memory only the records of its recently active wallets. The size is the
// state's structural size (its v8 serialisation, what a snapshot stores), except for the wallets
// test: one copy of each address and token key is a matter of the heap, read after full collections.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { tokenKey } from '../core/chains.ts';
import { fromInt } from '../core/decimal.ts';
import { loadConfig } from '../core/config.ts';
import { createContext } from '../core/context.ts';
import { createLogger } from '../core/logger.ts';
import type { RawSwap, TokenEvent } from '../core/topics.ts';
import { newBatchOutput } from '../aggregators/contracts.ts';
import { FORGET_EVERY, RECENT_IDS_CAP } from '../aggregators/dedupe.ts';
import { createProcessor } from '../aggregators/process.ts';
import { newState } from '../aggregators/state.ts';
import { holdings, WALLET_PARK_IDLE_MS, walletKey } from '../aggregators/wallet-facts.ts';
import { openWalletStore } from '../aggregators/wallet-store.ts';
import { computeHolders } from '../aggregators/holders.ts';
import { holderFigures } from '../aggregators/holder-index.ts';
import { buildToken } from '../aggregators/view.ts';
import { bucketCount, insert, newTradeWindow, type TradeWindow } from '../aggregators/windows.ts';

const ctx = createContext(loadConfig({ SPOT_LOG_LEVEL: 'silent' }), createLogger('silent'));
const CHAIN = 'base' as const;
const addr = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const WETH = '0x4200000000000000000000000000000000000006';
const QUIET = addr(0xa1),
  BUSY = addr(0xb2),
  POOL = addr(0x900);
const TRADERS = Array.from({ length: 8 }, (_, i) => addr(0x5000 + i));
const T0 = Date.UTC(2026, 0, 5, 12);
const SECONDS = 3600;
const E18 = 10n ** 18n;

let n = 0;
function swap(token: string, time: number, i: number, trader = TRADERS[i % TRADERS.length]!): RawSwap {
  n++;
  const hash = `0x${n.toString(16).padStart(64, '0')}`;
  return {
    id: `base:${hash}:0`,
    chain: CHAIN,
    transactionHash: hash,
    eventIndex: 0,
    blockNumber: time / 1000,
    blockTime: time,
    token,
    quoteAsset: WETH,
    tokenAmount: (BigInt(1000 + (i % 997)) * E18).toString(),
    tokenDecimals: 18,
    quoteAmount: (BigInt(1_000_000 + ((i * 7919) % 100_000)) * 10n ** 9n).toString(),
    quoteDecimals: 18,
    side: i % 3 === 0 ? 'sell' : 'buy',
    trader,
    pool: POOL,
    dex: 'uniswap-v2',
    launchpad: null,
    reserves: { token: (10n ** 9n * E18).toString(), quote: (50n * E18).toString() },
  };
}

function created(token: string): TokenEvent {
  return {
    id: `created:${token}`,
    chain: CHAIN,
    transactionHash: `0x${'c'.repeat(64)}`,
    eventIndex: 0,
    blockNumber: T0 / 1000 - 10,
    blockTime: T0 - 10_000,
    kind: 'created',
    token,
    name: 'T',
    symbol: 'T',
    decimals: 18,
    supply: (10n ** 9n * E18).toString(),
    creator: addr(0xc0),
    launchpad: null,
  } as TokenEvent;
}

describe('aggregator memory', function () {
  this.timeout(180_000);

  it('one token state does not grow with its trade count (1M trades vs 100k over the same hour)', () => {
    const state = newState();
    const p = createProcessor(ctx, state);
    let out = newBatchOutput();
    for (const token of [QUIET, BUSY]) p.event(created(token), '{}', out);
    let quiet = 0,
      busy = 0;
    for (let s = 0; s < SECONDS; s++) {
      const time = T0 + s * 1000;
      // 100,000 and 1,000,000 trades spread evenly over the hour.
      const quietNow = Math.floor(((s + 1) * 100_000) / SECONDS) - quiet;
      const busyNow = Math.floor(((s + 1) * 1_000_000) / SECONDS) - busy;
      for (let i = 0; i < quietNow; i++) p.swap(swap(QUIET, time, quiet++), out);
      for (let i = 0; i < busyNow; i++) p.swap(swap(BUSY, time, busy++), out);
      if (s % 60 === 0) out = newBatchOutput(); // a batch's rows go to the sinks
    }
    const quietState = state.tokens.get(tokenKey(CHAIN, QUIET))!;
    const busyState = state.tokens.get(tokenKey(CHAIN, BUSY))!;
    const busyToken = buildToken(busyState, state.wallets);
    assert.equal(busyToken.totals.trades, 1_000_000);
    assert.equal(busyToken.stats['24h'].buyCount + busyToken.stats['24h'].sellCount, 1_000_000);
    assert.ok(busyState.recentIds.size <= RECENT_IDS_CAP + FORGET_EVERY);
    const quietBytes = v8.serialize(quietState).length;
    const busyBytes = v8.serialize(busyState).length;
    assert.ok(busyBytes < quietBytes * 1.1, `1M trades: ${busyBytes} B; 100k trades: ${quietBytes} B`);
    // Per granule of the windows, not per trade.
    assert.ok(busyBytes < 2_000_000, `${busyBytes} B`);
  });

  it('a token trading every second for 25 h of event time keeps a few thousand window buckets', () => {
    const state = newState();
    const p = createProcessor(ctx, state);
    let out = newBatchOutput();
    p.event(created(BUSY), '{}', out);
    const token = () => state.tokens.get(tokenKey(CHAIN, BUSY))!;
    let i = 0,
      most = 0;
    for (let s = 0; s < 25 * 3600; s++) {
      for (let k = 0; k < 1 + (s % 2); k++) p.swap(swap(BUSY, T0 + s * 1000, i++), out);
      most = Math.max(most, bucketCount(token().win));
      if (s % 60 === 0) out = newBatchOutput();
    }
    // 1 s buckets for 5 min, 5 s to 1 h, 15 s to 6 h, 60 s to 24 h, and at most 64 older ones
    // awaiting their trim: 305 + 663 + 1,205 + 1,082 + 64 (per-second buckets: 86,400).
    assert.ok(most <= 3_320, `${most} buckets`);
    const stats = buildToken(token(), state.wallets).stats;
    assert.equal(stats['5m'].buyCount + stats['5m'].sellCount, 450); // 300 s, 1 or 2 trades each
    const bytes = v8.serialize(token()).length;
    assert.ok(bytes < 1_500_000, `${bytes} B`);
  });

  it('a window bucket takes under 200 B of memory (columns of numbers and 64-bit limbs, not an object of bigints)', () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const heldNow = () => {
      gc();
      gc();
      const usage = process.memoryUsage();
      return usage.heapUsed + usage.external;
    };
    const WINDOWS = 400;
    const SECONDS = 290; // within the 1 s level: a bucket per trade
    const before = heldNow();
    const windows: TradeWindow[] = [];
    for (let w = 0; w < WINDOWS; w++) {
      const win = newTradeWindow();
      for (let s = 0; s < SECONDS; s++) {
        // Each trade its own decimals, as parsed from its message.
        const pu = fromInt(1_000 + w * SECONDS + s) / 7n;
        const rec = {
          t: T0 + s * 1000,
          seq: s + 1,
          buy: s % 3 !== 0,
          pn: pu,
          pu,
          mn: pu,
          mu: pu,
          vn: pu * 3n,
          vu: pu * 5n,
        };
        insert(win, rec);
      }
      windows.push(win);
    }
    const perBucket = (heldNow() - before) / (WINDOWS * SECONDS);
    // Read after the measure: the windows are alive through it.
    assert.equal(
      windows.reduce((n, win) => n + bucketCount(win), 0),
      WINDOWS * SECONDS,
    );
    // 152 B of columns and the room to grow; about 288 B as objects with their bigints.
    assert.ok(perBucket < 200, `${perBucket.toFixed(1)} B a bucket`);
  });

  it("a token's holder records in memory follow its active wallets (20,000 one-off holders)", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-holders-memory-'));
    const store = openWalletStore(path.join(dir, 'w.sqlite'), true);
    try {
      const state = newState();
      const p = createProcessor(ctx, state, undefined, { walletStore: store });
      const out = newBatchOutput();
      const event = (e: TokenEvent) => p.event(e, JSON.stringify(e), out);
      event(created(BUSY));
      const key = tokenKey(CHAIN, BUSY);
      const HOLDERS = 20_000;
      const PER_SECOND = 16;
      let peak = 0;
      let version = 0;
      // Each second 16 new wallets buy once and receive their tokens; every 30 s of event time the
      // idle wallets and their holder records park, as the aggregator does after each snapshot.
      for (let i = 0; i < HOLDERS; i++) {
        const time = T0 + Math.floor(i / PER_SECOND) * 1000;
        const wallet = addr(0x200000 + i);
        p.swap({ ...swap(BUSY, time, i, wallet), side: 'buy' }, out);
        event({
          id: `t${i}`,
          chain: CHAIN,
          transactionHash: `0x${i.toString(16).padStart(64, '0')}`,
          eventIndex: 1,
          blockNumber: time / 1000,
          blockTime: time,
          kind: 'transfer',
          token: BUSY,
          from: POOL,
          to: wallet,
          amount: String(1 + (i % 5000)),
        });
        if (i % (30 * PER_SECOND) === 0) {
          version++;
          p.wallets.park(() => time - WALLET_PARK_IDLE_MS, version);
          // In slices, as the aggregator runs it: each writes at most 256 rows, the last reaches the end.
          for (let slice = 0; ; slice++) {
            const { parked, done } = p.parkHolders(
              version,
              () => time - WALLET_PARK_IDLE_MS,
              () => false,
            );
            assert.ok(parked <= 256, `${parked} rows in one slice`);
            if (done) break;
            assert.ok(slice < 100, 'the pass ends');
          }
          store.confirm(version);
          peak = Math.max(peak, state.tokens.get(key)!.holders.size);
        }
      }
      const token = state.tokens.get(key)!;
      // At most the wallets of the last 2 minutes and one pass interval (16 a second): 2,400 + 480.
      assert.ok(peak <= 3_000, `${peak} holder records in memory at most`);
      assert.ok(store.holderCount() >= HOLDERS - 3_000, `${store.holderCount()} on disk`);
      const figures = holderFigures(token, p.wallets.reader);
      assert.equal(figures.count, HOLDERS);
      assert.deepEqual(figures, computeHolders(token, p.wallets.reader));
      assert.ok(v8.serialize(token).length < 1_000_000, 'the token state stays small');
      // The 40 largest holders (parked) sell out: the top list refills from the parked rows by balance.
      const time = T0 + (HOLDERS / PER_SECOND) * 1000;
      const largest = Array.from({ length: HOLDERS }, (_, i) => i).filter((i) => i % 5000 >= 4990);
      for (const [n, i] of largest.entries()) {
        event({
          id: `s${i}`,
          chain: CHAIN,
          transactionHash: `0x${(HOLDERS + i).toString(16).padStart(64, '0')}`,
          eventIndex: 1,
          blockNumber: time / 1000,
          blockTime: time,
          kind: 'transfer',
          token: BUSY,
          from: addr(0x200000 + i),
          to: POOL,
          amount: String(1 + (i % 5000)),
        });
        if (n % 8 === 7)
          assert.deepEqual(holderFigures(token, p.wallets.reader), computeHolders(token, p.wallets.reader));
      }
      assert.equal(holderFigures(token, p.wallets.reader).count, HOLDERS - largest.length);
    } finally {
      store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a parked wallet's holder records leave the live tokens at the next holder slice, before the pass reaches them", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-wallet-records-'));
    const store = openWalletStore(path.join(dir, 'w.sqlite'), true);
    try {
      const state = newState();
      const p = createProcessor(ctx, state, undefined, { walletStore: store });
      const out = newBatchOutput();
      const tokens = Array.from({ length: 100 }, (_, i) => addr(0xc000 + i));
      const [active, idle] = [addr(0x7001), addr(0x7002)];
      for (const token of tokens) p.event(created(token), '{}', out);
      // The active wallet trades every token, the idle one only the last (the pass reaches it last).
      tokens.forEach((token, i) => p.swap(swap(token, T0, i, active), out));
      const last = tokenKey(CHAIN, tokens.at(-1)!);
      p.swap(swap(tokens.at(-1)!, T0 + 1000, 1, idle), out);
      assert.ok(state.tokens.get(last)!.holders.has(idle));
      const later = T0 + 2 * WALLET_PARK_IDLE_MS;
      tokens.forEach((token, i) => p.swap(swap(token, later, i, active), out));
      p.wallets.park(() => later - WALLET_PARK_IDLE_MS, 1);
      assert.ok(!state.wallets.has(walletKey(CHAIN, idle)), 'the idle wallet left memory');
      assert.ok(state.wallets.has(walletKey(CHAIN, active)));
      // A slice spent at once: the pass through the live tokens scans 64 of them and stops.
      const { parked, done } = p.parkHolders(
        1,
        () => later - WALLET_PARK_IDLE_MS,
        () => true,
      );
      assert.equal(done, false);
      assert.equal(parked, 1);
      assert.ok(!state.tokens.get(last)!.holders.has(idle), "the idle wallet's record left memory");
      assert.equal(store.holder(last, idle)?.wallet, idle);
      assert.equal(state.tokens.get(last)!.holders.has(active), true);
      // Back on its next trade, the same record.
      p.swap(swap(tokens.at(-1)!, later + 1000, 2, idle), out);
      assert.ok(state.tokens.get(last)!.holders.has(idle));
      assert.equal(ctx.metrics.get('aggregator.holders_loaded') > 0, true);
    } finally {
      store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("an active wallet's records in the tokens it stopped trading leave memory, and come back as they left", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-idle-records-'));
    const store = openWalletStore(path.join(dir, 'w.sqlite'), true);
    try {
      const state = newState();
      const p = createProcessor(ctx, state, undefined, { walletStore: store });
      const out = newBatchOutput();
      const tokens = Array.from({ length: 100 }, (_, i) => addr(0xe000 + i));
      const active = addr(0x7003);
      for (const token of tokens) p.event(created(token), '{}', out);
      tokens.forEach((token, i) => p.swap(swap(token, T0, i, active), out));
      const idleBefore = (time: number) => () => time - WALLET_PARK_IDLE_MS;
      // The first check notes each record as it is; a later one finds it unchanged.
      const first = T0 + 2 * WALLET_PARK_IDLE_MS;
      p.swap(swap(tokens[0]!, first, 1, active), out);
      assert.equal(p.parkHolders(1, idleBefore(first)).parked, 0);
      // A trade comes with its transfer: the record's balance changes.
      const second = first + 2 * WALLET_PARK_IDLE_MS;
      p.swap(swap(tokens[0]!, second, 2, active), out);
      const transfer: TokenEvent = {
        id: 'bought',
        chain: CHAIN,
        transactionHash: `0x${'b'.repeat(64)}`,
        eventIndex: 1,
        blockNumber: second / 1000,
        blockTime: second,
        kind: 'transfer',
        token: tokens[0]!,
        from: addr(0xeeee),
        to: active,
        amount: '5',
      };
      p.event(transfer, JSON.stringify(transfer), out);
      const { parked } = p.parkHolders(2, idleBefore(second));
      assert.equal(parked, 99, 'every record but the one still trading');
      assert.ok(state.wallets.has(walletKey(CHAIN, active)), 'the wallet stays in memory');
      const key5 = tokenKey(CHAIN, tokens[5]!);
      const t5 = state.tokens.get(key5)!;
      assert.ok(!t5.holders.has(active));
      assert.equal(store.holder(key5, active)?.wallet, active);
      assert.ok(state.tokens.get(tokenKey(CHAIN, tokens[0]!))!.holders.has(active));
      assert.deepEqual(holderFigures(t5, p.wallets.reader), computeHolders(t5, p.wallets.reader));
      // Back on its next trade there, counted as it left.
      const loaded = ctx.metrics.get('aggregator.holders_loaded');
      p.swap(swap(tokens[5]!, second + 1000, 3, active), out);
      assert.ok(t5.holders.has(active));
      assert.equal(ctx.metrics.get('aggregator.holders_loaded'), loaded + 1);
      assert.deepEqual(holderFigures(t5, p.wallets.reader), computeHolders(t5, p.wallets.reader));
    } finally {
      store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("records found unchanged get their turn while the parked wallets' records fill every slice", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-record-turns-'));
    const store = openWalletStore(path.join(dir, 'w.sqlite'), true);
    try {
      const state = newState();
      const p = createProcessor(ctx, state, undefined, { walletStore: store });
      const out = newBatchOutput();
      const tokens = Array.from({ length: 50 }, (_, i) => addr(0xf000 + i));
      for (const token of tokens) p.event(created(token), '{}', out);
      const active = addr(0x7004);
      tokens.forEach((token, i) => p.swap(swap(token, T0, i, active), out));
      // 1,000 one-off wallets, each with a record in the first token: their records follow them.
      for (let i = 0; i < 1000; i++) p.swap(swap(tokens[0]!, T0, 100 + i, addr(0x300000 + i)), out);
      const first = T0 + 2 * WALLET_PARK_IDLE_MS;
      p.swap(swap(tokens[0]!, first, 1, active), out);
      const idleBefore = (time: number) => () => time - WALLET_PARK_IDLE_MS;
      // The first check of every record (nothing parks: each is noted as it is).
      while (!p.parkHolders(1, idleBefore(first)).done);
      const second = first + 2 * WALLET_PARK_IDLE_MS;
      p.swap(swap(tokens[0]!, second, 2, active), out);
      p.wallets.park(idleBefore(second), 2);
      assert.equal(state.wallets.size, 1, 'the one-off wallets parked');
      // Two slices of at most 256 rows each: one goes to the queue that went first last time.
      const never = () => false;
      const rows =
        p.parkHolders(2, idleBefore(second), never).parked + p.parkHolders(2, idleBefore(second), never).parked;
      assert.equal(rows, 512);
      const key = (token: string) => tokenKey(CHAIN, token);
      const stillIn = tokens.slice(1).filter((token) => state.tokens.get(key(token))!.holders.has(active));
      assert.deepEqual(stillIn, [], "the active wallet's unchanged records left in the second slice");
    } finally {
      store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('wallets and holder records keep one copy of each address and token key, not one per message', () => {
    // Every message is parsed text, as from the log: its strings are new instances each time.
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const state = newState();
    const p = createProcessor(ctx, state);
    // A fresh output per message: what a batch emits is not state.
    let out = newBatchOutput();
    const parsed = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
    const event = (e: TokenEvent) => p.event(parsed(e), JSON.stringify(e), out);
    const tokens = [addr(0xd1), addr(0xd2), addr(0xd3), addr(0xd4)];
    for (const token of tokens) event(created(token));
    const base = { chain: CHAIN, eventIndex: 0, blockNumber: T0 / 1000, blockTime: T0, token: null };
    const funder = addr(0xf00);
    const WALLETS = 5_000;
    // The JS heap and what it holds outside (typed arrays' bytes: the dedupe ids).
    const heapOf = () => {
      gc();
      gc();
      const usage = process.memoryUsage();
      return usage.heapUsed + usage.external;
    };
    const before = heapOf();
    for (let i = 0; i < WALLETS; i++) {
      const wallet = addr(0x300000 + i);
      const hash = `0x${(0x300000 + i).toString(16).padStart(64, '0')}`;
      event({
        ...base,
        id: `f${i}`,
        transactionHash: hash,
        kind: 'funding',
        from: funder,
        to: wallet,
        amount: '1',
        fromLabel: null,
      });
      for (const [k, token] of tokens.entries()) {
        p.swap(parsed({ ...swap(token, T0, i, wallet), side: 'buy' }), out);
        event({
          ...base,
          id: `t${i}:${k}`,
          transactionHash: hash,
          kind: 'transfer',
          token,
          from: POOL,
          to: wallet,
          amount: '7',
        });
      }
      out = newBatchOutput();
    }
    const perWallet = (heapOf() - before) / WALLETS;
    assert.equal([...holdings(state.wallets.get(walletKey(CHAIN, addr(0x300000)))!)].length, tokens.length);
    // About 1.25 KB a wallet with four holdings: its facts, four holder records, its four held keys
    // and its trades' four dedupe ids. With the records as objects it was 1.48 KB; with the
    // holdings in a Set and the ids on the heap 1.75 KB; with copies of its address per record and
    // of the token key per holding, an array with room for 17 funders and the ids' text, 2.5 KB.
    assert.ok(perWallet < 1_450, `${Math.round(perWallet)} B of heap and external memory a wallet`);
  });

  it('wallets that hold nothing, created nothing, carry no label and idle for 24 h are forgotten', () => {
    const state = newState();
    const p = createProcessor(ctx, state);
    const out = newBatchOutput();
    const event = (e: TokenEvent) => p.event(e, JSON.stringify(e), out);
    const base = { chain: CHAIN, transactionHash: `0x${'e'.repeat(64)}`, eventIndex: 0, blockNumber: 1 };
    event(created(QUIET));
    const holder = addr(0x7001),
      labelled = addr(0x7002);
    event({ ...base, id: 'e1', blockTime: T0, kind: 'transfer', token: QUIET, from: POOL, to: holder, amount: '5' });
    event({
      ...base,
      id: 'e2',
      blockTime: T0,
      kind: 'walletLabel',
      token: null,
      wallet: labelled,
      labels: ['kol'],
      name: null,
    });
    // 48 hours; each hour 500 wallets trade once and are never seen again.
    let i = 0;
    for (let hour = 0; hour < 48; hour++) {
      for (let k = 0; k < 500; k++) {
        const time = T0 + hour * 3_600_000 + k * 1000;
        p.swap(swap(QUIET, time, i, addr(0x100000 + i)), out);
        i++;
      }
    }
    const kept = (address: string) => state.wallets.has(walletKey(CHAIN, address));
    assert.ok(kept(holder) && kept(labelled) && kept(addr(0xc0)), 'a holder, a labelled wallet and a creator stay');
    assert.ok(!kept(addr(0x100000)), 'a wallet idle for 24 h is forgotten');
    assert.ok(kept(addr(0x100000 + i - 1)), 'a recent wallet stays');
    // Only the last 24 h (and the hour being filled) of one-off wallets remain, not all 24,000.
    assert.ok(state.wallets.size <= 26 * 500 + 3, `${state.wallets.size} wallets`);
    assert.ok(ctx.metrics.get('aggregator.wallets_expired') >= 22 * 500);
  });
});
