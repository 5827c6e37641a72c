// Market simulator: every SimEvent, written as real chain records and decoded by the real
// decoders, comes back as exactly the swap and token events the simulator meant; the warm start
// covers all five chains with graduations; runs are deterministic.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHAIN_INFO, CHAINS, EVM_NATIVE_ADDRESS, type Chain } from '../core/chains.ts';
import { createContext } from '../core/context.ts';
import { fromInt, pct, decToString } from '../core/decimal.ts';
import { createLogger } from '../core/logger.ts';
import { loadConfig } from '../core/config.ts';
import { assertTopicValue, TOPICS, type RawSwap, type TokenEvent } from '../core/topics.ts';
import { createEmbeddedLog } from '../core/eventlog/index.ts';
import { simPlatformOf } from '../ingest/enrichment/sim-platforms.ts';
import { EVM_CONTRACTS } from '../ingest/evm/index.ts';
import { createIngestPublisher, type IngestRecords } from '../ingest/publisher.ts';
import { USDC_MINT, WSOL_MINT } from '../ingest/solana/index.ts';
import { EVM_SETUP, SOLANA_REFERENCE_POOL, createAddressSource, type EvmChain } from '../ingest/simulator/addresses.ts';
import { blockAt } from '../ingest/simulator/clock.ts';
import { createMarket, type SimEvent, type SimToken } from '../ingest/simulator/model.ts';
import { createSimulatorPipeline } from '../ingest/simulator/pipeline.ts';
import { createSimulatorSource, readSimulatorState } from '../ingest/simulator/runner.ts';
import {
  cpmmLayout,
  dammV2Events,
  dbcVersion,
  pumpLayouts,
  pumpSwapLayout,
} from '../ingest/simulator/solana-writer.ts';

const START = Date.UTC(2026, 10, 1, 12);
const MANAGER = EVM_CONTRACTS.fourMemeTokenManager2.bsc;
type Trade = Extract<SimEvent, { type: 'trade' }>;

const progressOf = (sold: bigint, total: bigint) => decToString(pct(fromInt(sold), fromInt(total)));

function quoteOf(token: SimToken, venue: 'curve' | 'pool'): string {
  if (token.chain === 'solana') return WSOL_MINT;
  if (token.launchpad === 'fourmeme') return venue === 'curve' ? EVM_NATIVE_ADDRESS : CHAIN_INFO.bsc.native.wrapped;
  return EVM_SETUP[token.chain as EvmChain].launchQuote.toLowerCase();
}

const CURVE_DEX: Record<string, string> = {
  pumpfun: 'pumpfun',
  launchlab: 'raydium-launchlab',
  'meteora-dbc': 'meteora-dbc',
  fourmeme: 'fourmeme',
};

/** The platform the writer routes a trade through (sim-platforms.ts): on EVM only trade contracts are. */
function routeOf(e: Trade) {
  const fact = simPlatformOf(e.chain, e.tx);
  return fact && (e.chain === 'solana' || fact.kind === 'router') ? fact : null;
}

/** The swap a trade must decode to (fields the venue's event carries). */
function expectedTradeSwap(e: Trade): Partial<RawSwap> {
  const { token } = e;
  const curve = e.venue === 'curve';
  const swap: Partial<RawSwap> = {
    chain: e.chain,
    token: token.address,
    quoteAsset: quoteOf(token, e.venue),
    tokenAmount: e.tokenAmount.toString(),
    tokenDecimals: token.decimals,
    quoteAmount: e.quoteAmount.toString(),
    quoteDecimals: 18,
    side: e.side,
    trader: e.trader,
    pool: e.poolAddress,
    dex: curve ? CURVE_DEX[token.launchpad]! : e.dex,
    launchpad: curve || e.dex === 'uniswap-v4' ? token.launchpad : null,
    platforms: routeOf(e) ? [routeOf(e)!.platform] : undefined,
  };
  if (e.chain === 'solana') swap.quoteDecimals = 9;
  const fees = e.platformFee + e.creatorFee;
  if (curve) {
    const c = e.curve!;
    if (token.launchpad !== 'meteora-dbc') {
      swap.reserves = { token: c.realToken.toString(), quote: c.realQuote.toString() };
      swap.curve = {
        progressPct: progressOf(c.initialRealToken - c.realToken, c.initialRealToken),
        complete: c.complete,
      } as RawSwap['curve'];
    } else if (dbcVersion(token) === 2) {
      swap.curve = {
        progressPct: c.complete ? '100' : progressOf(c.realQuote, c.quoteThreshold!),
        complete: c.complete,
      } as RawSwap['curve'];
    }
    const withFees = token.launchpad !== 'pumpfun' || pumpLayouts(token).trade !== 'dec2024';
    if (withFees) swap.fees = { platform: fees.toString() };
  } else {
    const pool = e.pool!;
    // DAMM v2's EvtSwap (releases to 0.1.4) carries no reserves; EvtSwap2 does.
    const withReserves = e.dex !== 'uniswap-v4' && !(e.dex === 'meteora-damm-v2' && dammV2Events(e.tx) === 'v1');
    if (withReserves) swap.reserves = { token: pool.token.toString(), quote: pool.quote.toString() };
    if (e.dex === 'pumpswap') swap.fees = { dex: e.lpFee.toString(), platform: fees.toString() };
    else if (e.dex === 'raydium-cpmm')
      swap.fees = cpmmLayout(token) === 'v1' ? {} : e.side === 'buy' ? { dex: e.lpFee.toString(), platform: '0' } : {};
    else swap.fees = { dex: e.lpFee.toString() };
  }
  return swap;
}

function pick<T extends object>(value: T, like: object): Partial<T> {
  return Object.fromEntries(
    Object.keys(like).map((key) => [key, (value as Record<string, unknown>)[key]]),
  ) as Partial<T>;
}

function assertSwap(actual: RawSwap | undefined, expected: Partial<RawSwap>, label: string): void {
  assert.ok(actual, `${label}: no swap decoded`);
  const { fees, curve, ...rest } = expected;
  assert.deepEqual(pick(actual, rest), rest, label);
  if (curve) assert.deepEqual(pick(actual.curve ?? {}, curve), curve, `${label}: curve`);
  else assert.equal(actual.curve, undefined, `${label}: unexpected curve`);
  if (fees) assert.deepEqual(pick(actual.fees ?? {}, fees), fees, `${label}: fees`);
}

type EventSpec = Record<string, unknown> & { kind: TokenEvent['kind'] };

function assertEvents(
  actual: TokenEvent[],
  expected: EventSpec[],
  label: string,
  allowed: (event: TokenEvent) => boolean = () => false,
): void {
  const left = [...actual];
  for (const spec of expected) {
    const at = left.findIndex((event) =>
      Object.entries(spec).every(
        ([key, value]) => JSON.stringify((event as Record<string, unknown>)[key]) === JSON.stringify(value),
      ),
    );
    assert.ok(at >= 0, `${label}: missing ${JSON.stringify(spec)} in ${JSON.stringify(actual)}`);
    left.splice(at, 1);
  }
  for (const event of left) assert.ok(allowed(event), `${label}: unexpected ${JSON.stringify(event)}`);
}

/** Compares one event's decoded records with what the simulator meant; returns the protocol keys it covered. */
function check(e: SimEvent, decoded: IngestRecords): string[] {
  const label = `${e.chain} ${e.type} ${e.tx}`;
  for (const swap of decoded.swaps) assertTopicValue(TOPICS.swaps, swap);
  for (const event of decoded.events) assertTopicValue(TOPICS.tokenEvents, event);
  const solana = e.chain === 'solana';
  const blockTime = solana
    ? Math.floor(blockAt('solana', e.time).timeMs / 1000) * 1000
    : blockAt(e.chain, e.time).timeMs;
  for (const record of [...decoded.swaps, ...decoded.events]) {
    assert.equal(record.chain, e.chain, label);
    assert.equal(record.blockTime, blockTime, `${label}: block time`);
    assert.equal(record.blockNumber, blockAt(e.chain, e.time).number, `${label}: block`);
  }
  switch (e.type) {
    case 'walletLabel':
      assert.equal(decoded.swaps.length, 0);
      assertEvents(decoded.events, [{ kind: 'walletLabel', wallet: e.wallet, labels: e.labels, name: e.name }], label);
      return [`${e.chain}:label`];
    case 'funding':
      assert.equal(decoded.swaps.length, 0);
      assertEvents(
        decoded.events,
        [{ kind: 'funding', from: e.from, to: e.to, amount: e.amount.toString(), fromLabel: null }],
        label,
      );
      return [`${e.chain}:funding`];
    case 'reference': {
      assert.equal(decoded.swaps.length, 1, label);
      assert.equal(decoded.events.length, 0, label);
      if (solana) {
        assertSwap(
          decoded.swaps[0],
          {
            token: WSOL_MINT,
            quoteAsset: USDC_MINT,
            tokenAmount: e.nativeAmount.toString(),
            quoteAmount: e.stableAmount.toString(),
            side: e.side,
            trader: e.trader,
            pool: SOLANA_REFERENCE_POOL,
            dex: 'raydium-cpmm',
            launchpad: null,
            reserves: { token: e.reserves.native.toString(), quote: e.reserves.stable.toString() },
          },
          label,
        );
        return ['solana:reference:raydium-cpmm'];
      }
      // EVM decoders rank the wrapped native above stables: the stable is the "token".
      const ref = EVM_SETUP[e.chain as EvmChain].reference!;
      assertSwap(
        decoded.swaps[0],
        {
          token: ref.stable,
          quoteAsset: CHAIN_INFO[e.chain].native.wrapped.toLowerCase(),
          tokenAmount: e.stableAmount.toString(),
          quoteAmount: e.nativeAmount.toString(),
          side: e.side === 'buy' ? 'sell' : 'buy',
          trader: e.trader,
          pool: ref.pool,
          dex: ref.dex,
          launchpad: null,
        },
        label,
      );
      return [`${e.chain}:reference:${ref.dex}`];
    }
    case 'launch': {
      const { token } = e;
      assert.equal(decoded.swaps.length, 0, label);
      const created: EventSpec = {
        kind: 'created',
        token: token.address,
        name: token.name,
        symbol: token.symbol,
        decimals: token.decimals,
        supply: token.supply.toString(),
        creator: token.creator,
        launchpad: token.launchpad,
        pool: token.curveAddress,
        quoteAsset: quoteOf(token, 'curve'),
        uri: solana ? token.uri : '',
      };
      if (token.launchpad === 'pumpfun') {
        const layout = pumpLayouts(token).create;
        if (layout === 'feb2026' || layout === 'may2026') created.mayhemMode = token.mayhemMode;
        assertEvents(
          decoded.events,
          [
            created,
            { kind: 'balance', token: token.address, owner: token.curveAddress, amount: token.supply.toString() },
          ],
          label,
        );
        return [`solana:pumpfun:create:${layout}`];
      }
      if (solana) {
        // The whole supply is minted into the curve's base vault.
        const vault: EventSpec = {
          kind: 'balance',
          token: token.address,
          owner: token.curveAddress,
          amount: token.supply.toString(),
        };
        assertEvents(decoded.events, [created, vault], label);
        return [`solana:${token.launchpad}:create`];
      }
      const holder =
        token.launchpad === 'fourmeme' ? MANAGER : EVM_SETUP[e.chain as EvmChain].poolManager.toLowerCase();
      assertEvents(
        decoded.events,
        [
          created,
          {
            kind: 'transfer',
            token: token.address,
            from: EVM_NATIVE_ADDRESS,
            to: holder,
            amount: token.supply.toString(),
          },
        ],
        label,
      );
      return [`${e.chain}:${token.launchpad}:create`];
    }
    case 'trade': {
      assert.equal(decoded.swaps.length, 1, label);
      assertSwap(decoded.swaps[0], expectedTradeSwap(e), label);
      const first = decoded.swaps[0]!;
      assert.ok(first.fees?.transaction !== undefined, `${label}: transaction fee`);
      const { token } = e;
      const expected: EventSpec[] = [];
      const poolOwners = new Set([e.poolAddress]);
      if (solana) {
        expected.push({ kind: 'balance', token: token.address, owner: e.trader, amount: e.traderBalance.toString() });
        if (e.venue === 'curve' && e.curve!.complete)
          expected.push({ kind: 'curve', token: token.address, progressPct: '100', complete: true });
      } else {
        const venue =
          e.venue === 'curve'
            ? MANAGER
            : e.dex === 'uniswap-v4'
              ? EVM_SETUP[e.chain as EvmChain].poolManager.toLowerCase()
              : e.poolAddress;
        const [from, to] = e.side === 'buy' ? [venue, e.trader] : [e.trader, venue];
        expected.push({ kind: 'transfer', token: token.address, from, to, amount: e.tokenAmount.toString() });
      }
      // Besides the trader's balance, a Solana venue reports its own token account.
      assertEvents(
        decoded.events,
        expected,
        label,
        (event) =>
          event.kind === 'balance' &&
          event.token === token.address &&
          poolOwners.has(event.owner) &&
          e.trader !== event.owner,
      );
      const layout =
        token.launchpad === 'pumpfun' && e.venue === 'curve'
          ? `:${pumpLayouts(token).trade}`
          : e.dex === 'pumpswap'
            ? `:${pumpSwapLayout(token)}`
            : e.dex === 'raydium-cpmm'
              ? `:${cpmmLayout(token)}`
              : e.dex === 'meteora-damm-v2'
                ? `:${dammV2Events(e.tx)}`
                : token.launchpad === 'meteora-dbc' && e.venue === 'curve'
                  ? `:v${dbcVersion(token)}`
                  : '';
      const dex = e.venue === 'curve' ? CURVE_DEX[token.launchpad] : e.dex;
      const keys = [`${e.chain}:${dex}:${e.side}`, `${e.chain}:${dex}${layout}`];
      if (e.venue === 'curve' && e.curve!.complete) keys.push(`${e.chain}:${token.launchpad}:complete`);
      const route = routeOf(e);
      if (route) keys.push(`${e.chain}:platform:${route.kind}`);
      return keys;
    }
    case 'graduate': {
      const { token } = e;
      assert.equal(decoded.swaps.length, 0, label);
      const graduated: EventSpec = { kind: 'graduated', token: token.address, pool: e.pool, dex: e.dex };
      if (token.launchpad === 'fourmeme') {
        assertEvents(
          decoded.events,
          [
            { kind: 'curve', token: token.address, progressPct: '100', complete: true },
            graduated,
            { kind: 'transfer', token: token.address, from: MANAGER, to: e.pool, amount: e.reserves.token.toString() },
          ],
          label,
        );
      } else {
        assertEvents(decoded.events, [graduated], label);
      }
      return [`${e.chain}:${token.launchpad}:graduate`];
    }
  }
}

const REQUIRED = [
  ...CHAINS.map((chain) => `${chain}:label`),
  ...CHAINS.map((chain) => `${chain}:funding`),
  'solana:reference:raydium-cpmm',
  'base:reference:uniswap-v3',
  'robinhood:reference:uniswap-v3',
  'bsc:reference:pancakeswap-v3',
  'solana:pumpfun:create:legacy',
  'solana:pumpfun:create:may2025',
  'solana:pumpfun:create:feb2026',
  'solana:pumpfun:buy',
  'solana:pumpfun:sell',
  'solana:pumpfun:dec2024',
  'solana:pumpfun:may2025',
  'solana:pumpfun:feb2026',
  'solana:pumpfun:may2026',
  'solana:pumpfun:complete',
  'solana:pumpfun:graduate',
  'solana:pumpswap:buy',
  'solana:pumpswap:sell',
  'solana:pumpswap:feb2026',
  'solana:launchlab:create',
  'solana:raydium-launchlab:buy',
  'solana:raydium-launchlab:sell',
  'solana:launchlab:complete',
  'solana:launchlab:graduate',
  'solana:meteora-dbc:create',
  'solana:meteora-dbc:buy',
  'solana:meteora-dbc:sell',
  'solana:meteora-dbc:v2',
  'solana:meteora-dbc:complete',
  'solana:meteora-dbc:graduate',
  'solana:raydium-cpmm:buy',
  'solana:raydium-cpmm:sell',
  'solana:raydium-cpmm:v2',
  'solana:meteora-damm-v2:buy',
  'solana:meteora-damm-v2:sell',
  'solana:meteora-damm-v2:v1',
  'solana:meteora-damm-v2:both',
  'solana:meteora-damm-v2:v2',
  'bsc:fourmeme:create',
  'bsc:fourmeme:buy',
  'bsc:fourmeme:sell',
  'bsc:fourmeme:complete',
  'bsc:fourmeme:graduate',
  'bsc:pancakeswap-v2:buy',
  'bsc:pancakeswap-v2:sell',
  'base:clanker:create',
  'base:uniswap-v4:buy',
  'base:uniswap-v4:sell',
  'robinhood:pools.trade:create',
  'robinhood:uniswap-v4:buy',
  'arc:arc-launch:create',
  'arc:uniswap-v4:buy',
  'arc:uniswap-v4:sell',
  'solana:platform:router',
  'solana:platform:fee-account',
  'bsc:platform:router',
  'robinhood:platform:router',
];

function testContext(dataDir: string) {
  const config = loadConfig({ SPOT_DATA_DIR: dataDir, SPOT_LOG_LEVEL: 'warn' });
  return createContext(config, createLogger(config.logLevel));
}

function collector() {
  const batches: IngestRecords[] = [];
  return {
    batches,
    publisher: {
      publish: async (records: IngestRecords) => {
        batches.push(records);
      },
    },
  };
}

describe('market simulator', function () {
  this.timeout(60_000);

  it('hands out events in event-time order, its set-up across chains included (the merge takes each partition as time-ordered)', () => {
    const seed = '42';
    const market = createMarket({ seed, chains: [...CHAINS], startTime: START, addresses: createAddressSource(seed) });
    for (const until of [START + 60_000, START + 10 * 60_000]) {
      const events = market.advance(until, 2);
      const late = events.findIndex((event, i) => i > 0 && event.time < events[i - 1]!.time);
      assert.equal(
        late,
        -1,
        late < 0
          ? ''
          : `event ${late} (${events[late]!.type} at ${events[late]!.time}) after ${events[late - 1]!.type} at ${events[late - 1]!.time}`,
      );
    }
  });

  it('decodes every protocol back to exactly what the simulator meant to emit', () => {
    const seed = '2';
    const market = createMarket({ seed, chains: [...CHAINS], startTime: START, addresses: createAddressSource(seed) });
    const pipeline = createSimulatorPipeline({ seed });
    const covered = new Set<string>();
    const events = market.advance(START + 10 * 60_000, 12);
    for (const event of events) for (const key of check(event, pipeline.decodeEvent(event))) covered.add(key);
    const missing = REQUIRED.filter((key) => !covered.has(key));
    assert.deepEqual(missing, [], `protocols not exercised: ${missing.join(', ')}`);
  });

  it("a Meteora DBC token's whole life is chain data: create → curve trades → migration_damm_v2 → DAMM v2 trades (issue 15)", () => {
    const seed = '2';
    const market = createMarket({ seed, chains: ['solana'], startTime: START, addresses: createAddressSource(seed) });
    const pipeline = createSimulatorPipeline({ seed });
    const events = market.advance(START + 10 * 60_000, 12);
    const graduation = events.find((e) => e.type === 'graduate' && e.token.launchpad === 'meteora-dbc');
    assert.ok(graduation?.type === 'graduate', 'a DBC token graduated');
    const { token } = graduation;
    const life = events.filter((e) => 'token' in e && e.token === token);
    const swaps: RawSwap[] = [];
    const tokenEvents: TokenEvent[] = [];
    for (const event of life) {
      const decoded = pipeline.decodeEvent(event);
      swaps.push(...decoded.swaps);
      tokenEvents.push(...decoded.events.filter((e) => e.kind !== 'balance'));
    }
    // Its token events, in order, all read by a decoder from the transactions.
    assert.deepEqual(
      tokenEvents.map((e) => [e.kind, e.token, 'pool' in e ? e.pool : null, 'dex' in e ? e.dex : null]),
      [
        ['created', token.address, token.curveAddress, null],
        ['curve', token.address, null, null],
        ['graduated', token.address, graduation.pool, 'meteora-damm-v2'],
      ],
    );
    // Every trade the model made is one decoded swap on its venue, in order, with the model's amounts.
    const trades = life.filter((e): e is Trade => e.type === 'trade');
    const venueOf = (t: Trade) => (t.venue === 'curve' ? 'meteora-dbc' : 'meteora-damm-v2');
    assert.deepEqual(
      swaps.map((s) => [s.dex, s.pool, s.side, s.trader, s.tokenAmount, s.quoteAmount]),
      trades.map((t) => [venueOf(t), t.poolAddress, t.side, t.trader, String(t.tokenAmount), String(t.quoteAmount)]),
    );
    const firstPoolTrade = trades.findIndex((t) => t.venue === 'pool');
    assert.ok(firstPoolTrade > 0, 'curve trades, then pool trades');
    assert.ok(trades.slice(firstPoolTrade).every((t) => t.venue === 'pool' && t.poolAddress === graduation.pool));
    assert.ok(trades.indexOf(trades.find((t) => t.curve?.complete)!) === firstPoolTrade - 1, 'the curve completes');
    const poolTrades = trades.slice(firstPoolTrade);
    assert.ok(['buy', 'sell'].every((side) => poolTrades.some((t) => t.side === side)));
    // The pool starts from what the migration moved, and its fee (in SOL) is reported apart.
    assert.deepEqual(poolTrades[0]!.poolBefore, graduation.reserves);
    assert.deepEqual(
      swaps.slice(firstPoolTrade).map((s) => s.fees?.dex),
      poolTrades.map((t) => String(t.lpFee)),
    );
  });

  it('ends a history longer than an hour with an hour at the recent rate (a fresh board looks live); a short one stays at the history rate', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-sim-'));
    try {
      const swapsPerHour = async (warmHours: number, recentRate: number) => {
        fs.rmSync(dir, { recursive: true, force: true });
        fs.mkdirSync(dir);
        const { batches, publisher } = collector();
        const source = createSimulatorSource(testContext(dir), {
          publisher,
          seed: 5,
          rate: 200,
          warmHours,
          chains: ['solana'],
          now: () => START,
          historyRate: 0.5,
          recentRate,
          tickMs: 5,
        });
        await source.start();
        await source.warmedUp;
        await source.stop();
        const swaps = batches.flatMap((batch) => batch.swaps);
        const lastHour = swaps.filter((swap) => swap.blockTime >= START - 3_600_000).length;
        return { lastHour, before: swaps.length - lastHour };
      };
      const long = await swapsPerHour(3, 5);
      // Two hours at 0.5/s (~3,600 swaps) then one at 5/s (~18,000).
      assert.ok(long.before > 2_500 && long.before < 5_000, `older history ${long.before}`);
      assert.ok(long.lastHour > 14_000, `last hour ${long.lastHour}`);
      const short = await swapsPerHour(0.5, 5);
      assert.ok(short.lastHour < 1_500, `a half-hour history at 0.5/s: ${short.lastHour}`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('extends the history to the clock that moved on while it was published, at the density it ended with, so live trading starts at the clock', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-sim-'));
    try {
      const batches: IngestRecords[] = [];
      // Publishing is slow: each batch takes 20 s of wall clock, for the first two minutes.
      let clock = START;
      const publisher = {
        publish: async (records: IngestRecords) => {
          batches.push(records);
          clock = Math.min(START + 120_000, clock + 20_000);
        },
      };
      const source = createSimulatorSource(testContext(dir), {
        publisher,
        seed: 5,
        rate: 2_000,
        warmHours: 2,
        chains: ['solana'],
        now: () => clock,
        historyRate: 0.5,
        recentRate: 20,
        historyChunkMs: 300_000,
        tickMs: 5,
      });
      await source.start();
      await source.warmedUp;
      const warm = batches.flatMap((batch) => batch.swaps);
      await source.stop();
      const afterStart = warm.filter((swap) => swap.blockTime >= START);
      // Two minutes at the recent rate (~2,400), not at the live rate (~240,000).
      assert.ok(afterStart.length > 1_000 && afterStart.length < 5_000, `${afterStart.length} swaps after the start`);
      assert.ok(
        Math.max(...warm.map((swap) => swap.blockTime)) >= START + 119_000 - 1000,
        'the history reaches the clock',
      );
      assert.ok((readSimulatorState(dir)?.lastEventTime ?? 0) >= START + 119_000, 'live starts at the clock');

      // A clock that moves two seconds whenever it is read: every batch, however small, finds a gap of
      // seconds. The gap stops shrinking and the warm start ends.
      fs.rmSync(dir, { recursive: true, force: true });
      fs.mkdirSync(dir);
      let slowClock = START;
      const slow = createSimulatorSource(testContext(dir), {
        publisher: { publish: async () => {} },
        seed: 5,
        rate: 0,
        warmHours: 1,
        chains: ['solana'],
        now: () => (slowClock += 2_000),
        historyRate: 0.5,
        tickMs: 5,
      });
      await slow.start();
      const warmed = await Promise.race([
        slow.warmedUp.then(() => true),
        new Promise((resolve) => setTimeout(() => resolve(false), 5_000)),
      ]);
      await slow.stop();
      assert.ok(warmed, 'the warm start ends when the gap stops shrinking');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports a marker it cannot write as a failure (a full disk), and still stops without throwing', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-sim-'));
    try {
      // The marker is written to simulator.json.tmp, then renamed: a directory there fails every write.
      fs.mkdirSync(path.join(dir, 'simulator.json.tmp'));
      const { publisher } = collector();
      const failures: Error[] = [];
      const source = createSimulatorSource(testContext(dir), {
        publisher,
        seed: 5,
        rate: 200,
        warmHours: 0.1,
        chains: ['solana'],
        now: () => START,
        tickMs: 5,
        onFailure: (error) => failures.push(error),
      });
      await source.start();
      await source.warmedUp;
      await source.stop();
      assert.equal(failures.length, 1, 'the failure is reported once');
      assert.match(failures[0]!.message, /EISDIR/);
      assert.equal(readSimulatorState(dir), null, 'no marker was written');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('cuts a dense history into batches of at most historyChunkSwaps swaps (a batch is one synchronous step)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-sim-'));
    try {
      const { batches, publisher } = collector();
      const source = createSimulatorSource(testContext(dir), {
        publisher,
        seed: 5,
        rate: 200,
        warmHours: 10 / 60,
        chains: ['solana'],
        now: () => START,
        historyRate: 50,
        recentRate: 50,
        // 5-minute batches at 50 swaps/s would be ~15,000 swaps each.
        historyChunkMs: 300_000,
        historyChunkSwaps: 2_000,
        tickMs: 5,
      });
      await source.start();
      await source.warmedUp;
      await source.stop();
      const sizes = batches.map((batch) => batch.swaps.length);
      const total = sizes.reduce((a, b) => a + b, 0);
      assert.ok(total > 20_000, `history of ${total} swaps`);
      assert.ok(Math.max(...sizes) <= 2_600, `largest batch ${Math.max(...sizes)} swaps`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('warm-starts ten minutes of history on all five chains with graduations, deterministically, and resumes without a second warm start', async () => {
    const dirs = [
      fs.mkdtempSync(path.join(os.tmpdir(), 'spot-sim-')),
      fs.mkdtempSync(path.join(os.tmpdir(), 'spot-sim-')),
    ];
    try {
      const runs: IngestRecords[][] = [];
      for (const dir of dirs) {
        const { batches, publisher } = collector();
        const source = createSimulatorSource(testContext(dir), {
          publisher,
          seed: 99,
          rate: 200,
          warmHours: 10 / 60,
          chains: [...CHAINS],
          now: () => START,
          historyRate: 12,
          tickMs: 5,
        });
        await source.start();
        await source.warmedUp;
        await source.stop();
        runs.push(batches);
      }
      const [first, second] = runs as [IngestRecords[], IngestRecords[]];
      assert.deepEqual(second, first, 'same seed and clock give the same records');
      const swaps = first.flatMap((batch) => batch.swaps);
      const events = first.flatMap((batch) => batch.events);
      for (const swap of swaps) assertTopicValue(TOPICS.swaps, swap);
      for (const event of events) assertTopicValue(TOPICS.tokenEvents, event);
      for (const chain of CHAINS)
        assert.ok(
          swaps.some((swap) => swap.chain === chain),
          `swaps on ${chain}`,
        );
      for (const chain of ['solana', 'bsc'] as Chain[])
        assert.ok(
          events.some((event) => event.chain === chain && event.kind === 'graduated'),
          `graduation on ${chain}`,
        );
      assert.ok(
        swaps.every((swap) => swap.blockTime < START && swap.blockTime >= START - 10 * 60_000 - 1000),
        'history ends now',
      );
      const state = readSimulatorState(dirs[0]!);
      assert.equal(state?.seed, '99');
      assert.equal(state?.lastEventTime, START);

      // Restart on the same data dir an hour later: the gap is filled, there is no second warm start.
      const later = START + 3_600_000;
      const { batches, publisher } = collector();
      const resumed = createSimulatorSource(testContext(dirs[0]!), {
        publisher,
        seed: 99,
        rate: 200,
        warmHours: 10 / 60,
        chains: ['base'],
        now: () => later,
        historyRate: 2,
        tickMs: 5,
      });
      await resumed.start();
      await resumed.warmedUp;
      await resumed.stop();
      const resumedSwaps = batches.flatMap((batch) => batch.swaps);
      assert.ok(resumedSwaps.length > 0);
      assert.ok(
        resumedSwaps.every((swap) => swap.blockTime >= later - 10 * 60_000 - 2000 && swap.blockTime < later),
        'gap capped at warmHours',
      );
      const ids = new Set(swaps.map((swap) => swap.id));
      assert.ok(resumedSwaps.every((swap) => !ids.has(swap.id)));
      assert.equal(readSimulatorState(dirs[0]!)?.runSeed, `99/resume@${START}`);
    } finally {
      for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('live: a market behind the clock advances at most one second of event time per step and stops at once', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-sim-behind-'));
    try {
      const { batches, publisher } = collector();
      let clock = START;
      const source = createSimulatorSource(testContext(dir), {
        publisher,
        seed: 5,
        rate: 200,
        warmHours: 0,
        chains: ['base'],
        now: () => clock,
        tickMs: 5,
      });
      await source.start();
      await source.warmedUp;
      clock = START + 3_600_000; // an hour behind: one batch of it would be ~720k swaps
      await new Promise((resolve) => setTimeout(resolve, 300));
      const asked = Date.now();
      await source.stop();
      assert.ok(Date.now() - asked < 2000, `stopped in ${Date.now() - asked} ms`);
      const live = batches.filter((batch) => batch.swaps.length > 0);
      assert.ok(live.length > 1, `${live.length} live steps`);
      for (const batch of live) {
        const times = batch.swaps.map((swap) => swap.blockTime);
        assert.ok(Math.max(...times) - Math.min(...times) <= 1000, 'one step spans at most 1 s of event time');
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('publishes through the ingest publisher onto the event log', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-sim-log-'));
    const ctx = testContext(dir);
    const log = createEmbeddedLog(ctx, { path: path.join(dir, 'log', 'events.sqlite'), retentionIntervalMs: 0 });
    try {
      const source = createSimulatorSource(ctx, {
        publisher: createIngestPublisher(ctx, { log }),
        seed: 5,
        rate: 0,
        warmHours: 2 / 60,
        chains: ['solana', 'bsc'],
        now: () => START,
        historyRate: 10,
      });
      await source.start();
      await source.warmedUp;
      await source.stop();
      const swaps: RawSwap[] = [];
      const events: TokenEvent[] = [];
      await log.readToEnd(TOPICS.swaps.name, (message) => {
        swaps.push(JSON.parse(message.value) as RawSwap);
      });
      await log.readToEnd(TOPICS.tokenEvents.name, (message) => {
        events.push(JSON.parse(message.value) as TokenEvent);
      });
      assert.equal(swaps.length, ctx.metrics.get('ingest.simulator.swaps'));
      assert.ok(swaps.some((swap) => swap.chain === 'solana') && swaps.some((swap) => swap.chain === 'bsc'));
      const created = new Set(events.filter((event) => event.kind === 'created').map((event) => event.token));
      assert.ok(
        swaps
          .filter((swap) => swap.launchpad === 'pumpfun' || swap.launchpad === 'fourmeme')
          .every((swap) => created.has(swap.token)),
        'launch tokens were created first',
      );
    } finally {
      await log.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
