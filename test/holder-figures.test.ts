// The incremental holder figures (aggregators/holder-index.ts) equal the reference recomputation
// over every holder (computeHolders) after each step of random token events, wallet facts and
// swaps applied by the real processor; a twin processor fed the same steps parks idle wallets and
// their holder records in a wallet store, drops its index now and then, reads its token back from
// a v8 copy now and then (or from a copy in the object format of the records before 2026-11-30,
// upgraded), and reads the same figures.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { tokenKey } from '../core/chains.ts';
import { loadConfig } from '../core/config.ts';
import { createContext } from '../core/context.ts';
import { createLogger } from '../core/logger.ts';
import type { RawSwap, TokenEvent } from '../core/topics.ts';
import { newBatchOutput } from '../aggregators/contracts.ts';
import { computeHolders } from '../aggregators/holders.ts';
import { holderFigures, holdersReset } from '../aggregators/holder-index.ts';
import { attrsOf, balOf, maskOf, type HolderRecObject } from '../aggregators/holder-records.ts';
import { createProcessor } from '../aggregators/process.ts';
import { newState, type HolderRec, type TokenState } from '../aggregators/state.ts';
import { upgradeToken } from '../aggregators/upgrade.ts';
import { openWalletStore, type WalletStore } from '../aggregators/wallet-store.ts';

const ctx = createContext(loadConfig({ SPOT_LOG_LEVEL: 'silent' }), createLogger('silent'));
const CHAIN = 'base' as const;
const addr = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const TOKEN = addr(0xabc),
  CREATOR = addr(0xc0),
  POOL = addr(0x900),
  CEX = addr(0xcec),
  WETH = '0x4200000000000000000000000000000000000006';
const T0 = Date.UTC(2026, 0, 5, 12);

/**
 * A copy of the token as the object format stored it: each record kept the mask and balance its
 * index counted, and the index a set of the holders changed since.
 */
function inObjectFormat(token: TokenState): TokenState {
  const copy = v8.deserialize(v8.serialize(token)) as TokenState;
  const dirty = copy.holderIndex?.dirty;
  const holders = new Map<string, HolderRecObject>();
  for (const [address, rec] of copy.holders) {
    const mask = maskOf(rec);
    const counted = dirty?.get(address) ?? rec;
    holders.set(address, { bal: balOf(rec), attrs: attrsOf(rec), mask, counted: mask === -1 ? 0n : balOf(counted) });
  }
  (copy as unknown as { holders: Map<string, HolderRecObject> }).holders = holders;
  if (copy.holderIndex) (copy.holderIndex as unknown as { dirty: Set<string> }).dirty = new Set(dirty!.keys());
  return copy;
}

const balanceOf = (rec: HolderRec | undefined) => (rec === undefined ? 0n : balOf(rec));

function rng(seed: number) {
  let x = seed;
  return () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
}

describe('holder figures', () => {
  let dir: string;
  let store: WalletStore;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-holders-'));
    store = openWalletStore(path.join(dir, 'w.sqlite'), true);
  });
  afterEach(() => {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  // 12 wallets keep every balance in the top-balances list; 300 make it drop and refill some.
  for (const [seed, walletCount] of [
    [1, 12],
    [2, 12],
    [3, 12],
    [4, 12],
    [5, 12],
    [6, 300],
    [7, 300],
  ] as const) {
    it(`incremental figures equal computeHolders after every step (seed ${seed}, ${walletCount} wallets)`, () => {
      const WALLETS = Array.from({ length: walletCount }, (_, i) => addr(0x1000 + i));
      const rand = rng(seed);
      const pick = <T>(items: readonly T[]) => items[Math.floor(rand() * items.length)]!;
      const state = newState();
      const p = createProcessor(ctx, state);
      const parkingState = newState();
      const q = createProcessor(ctx, parkingState, undefined, { walletStore: store });
      const out = newBatchOutput();
      let n = 0;
      const pos = (time: number, block: number) => {
        n++;
        const hash = `0x${n.toString(16).padStart(64, '0')}`;
        return {
          id: `base:${hash}:0`,
          chain: CHAIN,
          transactionHash: hash,
          eventIndex: 0,
          blockNumber: block,
          blockTime: time,
        };
      };
      const event = (e: TokenEvent) => {
        p.event(e, JSON.stringify(e), out);
        q.event(e, JSON.stringify(e), out);
      };
      const applySwap = (s: RawSwap) => {
        p.swap(s, out);
        q.swap(s, out);
      };
      let parkedHolders = 0;
      event({ ...pos(T0 - 60_000, 1), kind: 'walletLabel', token: null, wallet: CEX, labels: ['cex:okx'], name: null });
      event({
        ...pos(T0, 10),
        kind: 'created',
        token: TOKEN,
        name: 'T',
        symbol: 'T',
        decimals: 18,
        supply: '1000000',
        creator: CREATOR,
        launchpad: null,
        pool: POOL,
      } as TokenEvent);
      event({ ...pos(T0, 10), kind: 'transfer', token: TOKEN, from: addr(0), to: POOL, amount: '900000' });
      event({ ...pos(T0, 10), kind: 'transfer', token: TOKEN, from: addr(0), to: CREATOR, amount: '100000' });
      const key = tokenKey(CHAIN, TOKEN);
      let time = T0;
      for (let step = 0; step < 400; step++) {
        time += Math.floor(rand() * 8) * 1000;
        const block = 10 + Math.floor((time - T0) / 2000);
        const who = pick(WALLETS);
        const r = rand();
        if (r < 0.35) {
          const swap: RawSwap = {
            ...pos(time, block),
            token: TOKEN,
            quoteAsset: WETH,
            tokenAmount: String(1 + Math.floor(rand() * 1000)),
            tokenDecimals: 18,
            quoteAmount: String(1 + Math.floor(rand() * 5000)),
            quoteDecimals: 18,
            side: rand() < 0.7 ? 'buy' : 'sell',
            trader: who,
            pool: POOL,
            dex: 'uniswap-v2',
            launchpad: null,
          };
          applySwap(swap);
        } else if (r < 0.7) {
          // With many wallets the pool hands out small amounts often, so holders pile up.
          const fromPool = walletCount > 12 && rand() < 0.5;
          const from = fromPool ? POOL : pick([POOL, CREATOR, ...WALLETS]);
          const t = state.tokens.get(key)!;
          const bal = balanceOf(t.holders.get(from));
          if (bal > 0n) {
            const amount = 1n + BigInt(Math.floor(rand() * Number(fromPool && bal > 2000n ? 2000n : bal)));
            event({ ...pos(time, block), kind: 'transfer', token: TOKEN, from, to: who, amount: amount.toString() });
          }
        } else if (r < 0.8) {
          const from = pick([CREATOR, CEX, addr(0x55)]);
          event({ ...pos(time, block), kind: 'funding', token: null, from, to: who, amount: '1000', fromLabel: null });
        } else if (r < 0.9) {
          const labels = pick([[], ['pro_trader'], ['phishing'], ['kol'], ['cex:binance']]);
          event({ ...pos(time, block), kind: 'walletLabel', token: null, wallet: who, labels, name: null });
        } else if (r < 0.93) {
          event({ ...pos(time, block), kind: 'graduated', token: TOKEN, pool: pick(WALLETS), dex: 'uniswap-v3' });
        } else {
          // Trades elsewhere on the chain: wallets cross the pro-trader count.
          for (let k = 0; k < 20; k++) {
            applySwap({
              ...pos(time, block),
              token: addr(0xdef),
              quoteAsset: WETH,
              tokenAmount: '10',
              tokenDecimals: 18,
              quoteAmount: '10',
              quoteDecimals: 18,
              side: 'buy',
              trader: who,
              pool: addr(0x901),
              dex: 'uniswap-v2',
              launchpad: null,
            });
          }
        }
        // Read every few steps, so several changes are applied to the index at once.
        if (step % 3 === 0) {
          const t = state.tokens.get(key)!;
          const figures = holderFigures(t, state.wallets);
          assert.deepEqual(figures, computeHolders(t, state.wallets), `step ${step}`);
          const parked = parkingState.tokens.get(key)!;
          assert.deepEqual(holderFigures(parked, q.wallets.reader), figures, `step ${step}, parking`);
          assert.deepEqual(computeHolders(parked, q.wallets.reader), figures, `step ${step}, parking reference`);
        }
        // Wallets idle for 20 s leave memory, and their holder records with them; so do records
        // unchanged for 20 s of wallets still in memory.
        if (step % 11 === 5) {
          q.wallets.park(() => time - 20_000, step);
          parkedHolders += q.parkHolders(step, () => time - 20_000).parked;
        }
        // A dropped index is rebuilt from the records in memory and the parked rows.
        if (step % 13 === 7) holdersReset(parkingState.tokens.get(key)!);
        // The index is in the token's state: a copy read back (a snapshot, parking) goes on with it,
        // changes not yet applied included; so does a copy in the records' older format.
        if (step % 17 === 3) parkingState.tokens.set(key, v8.deserialize(v8.serialize(parkingState.tokens.get(key)!)));
        if (step % 17 === 11) parkingState.tokens.set(key, upgradeToken(inObjectFormat(parkingState.tokens.get(key)!)));
      }
      assert.ok(parkedHolders > 0, 'holder records were parked');
      assert.ok(
        parkingState.tokens.get(key)!.holders.size < state.tokens.get(key)!.holders.size,
        'fewer records in memory',
      );
      const figures = computeHolders(state.tokens.get(key)!, state.wallets);
      assert.ok(figures.count >= 2 && figures.proTraderCount + figures.insiderCount > 0, JSON.stringify(figures));
      if (walletCount > 12) assert.ok(figures.count > 40, `${figures.count} holders: more than the list keeps`);
    });
  }
});
