// The simulated market: wallets, launches that climb a curve, graduate and trade on a pool,
// reference pools that move the native/USD mark. It emits semantic events in event-time order;
// chain-writer.ts encodes them as real chain records for the decoders.
import type { Chain } from '../../core/chains.ts';
import { createRandom, type Random } from './random.ts';
import type { CurveState, PoolState } from './curves.ts';
import { GRADUATION_DEX, newCurve, priceTrade, type Launchpad } from './venues.ts';
import { launchChanceOf, SIM_PROFILES, type SimProfile, type SimProfileName } from './profiles.ts';

export type { Launchpad } from './venues.ts';

export interface SimToken {
  chain: Chain;
  id: number;
  address: string;
  name: string;
  symbol: string;
  uri: string;
  decimals: number;
  supply: bigint;
  creator: string;
  launchpad: Launchpad;
  /** Curve account or launch pool (V4 pool id on the V4 launchpads). */
  curveAddress: string;
  curve: CurveState | null;
  pool: PoolState | null;
  poolAddress: string | null;
  poolDex: string | null;
  hype: number;
  halfLifeMs: number;
  lastHypeAt: number;
  mayhemMode: boolean;
  createdAt: number;
  graduatedAt: number | null;
  firstPrice: number | null;
}

export interface Wallet {
  address: string;
  labels: string[];
}

interface Base {
  chain: Chain;
  time: number;
  /** Seed text from which the chain writer derives the transaction hash or signature. */
  tx: string;
}

export type SimEvent =
  | (Base & { type: 'walletLabel'; wallet: string; labels: string[]; name: string | null })
  | (Base & { type: 'funding'; from: string; to: string; amount: bigint })
  | (Base & {
      type: 'reference';
      pool: string;
      side: 'buy' | 'sell';
      trader: string;
      nativeAmount: bigint;
      stableAmount: bigint;
      reserves: { native: bigint; stable: bigint };
    })
  | (Base & { type: 'launch'; token: SimToken })
  | (Base & {
      type: 'trade';
      token: SimToken;
      venue: 'curve' | 'pool';
      side: 'buy' | 'sell';
      trader: string;
      /** quoteAmount as the venue reports it (venues.ts); fees in quote base units. */
      tokenAmount: bigint;
      quoteAmount: bigint;
      platformFee: bigint;
      creatorFee: bigint;
      lpFee: bigint;
      /** Curve or pool state after (curve/pool) and before the trade. */
      curve: CurveState | null;
      pool: PoolState | null;
      curveBefore: CurveState | null;
      poolBefore: PoolState | null;
      /** The trader's token balance after the trade (base units). */
      traderBalance: bigint;
      /** The pool (or curve) the trade ran on. */
      poolAddress: string;
      dex: string;
    })
  | (Base & { type: 'graduate'; token: SimToken; pool: string; dex: string; reserves: PoolState });

export interface ChainProfile {
  chain: Chain;
  nativeDecimals: number;
  stableDecimals: number;
  /** Starting USD price of the native asset; arc's native is USDC. */
  nativeUsd: number;
  launchpads: Launchpad[];
  /** Median buy size in native units. */
  medianBuy: number;
  /** Share of the chain's swaps, relative. */
  weight: number;
}

export const PROFILES: Record<Chain, ChainProfile> = {
  solana: {
    chain: 'solana',
    nativeDecimals: 9,
    stableDecimals: 6,
    nativeUsd: 180,
    launchpads: ['pumpfun', 'pumpfun', 'launchlab', 'meteora-dbc'],
    medianBuy: 0.4,
    weight: 5,
  },
  base: {
    chain: 'base',
    nativeDecimals: 18,
    stableDecimals: 6,
    nativeUsd: 3500,
    launchpads: ['clanker'],
    medianBuy: 0.02,
    weight: 2,
  },
  bsc: {
    chain: 'bsc',
    nativeDecimals: 18,
    stableDecimals: 18,
    nativeUsd: 650,
    launchpads: ['fourmeme'],
    medianBuy: 0.1,
    weight: 2,
  },
  robinhood: {
    chain: 'robinhood',
    nativeDecimals: 18,
    stableDecimals: 6,
    nativeUsd: 3500,
    launchpads: ['pools.trade'],
    medianBuy: 0.02,
    weight: 1,
  },
  arc: {
    chain: 'arc',
    nativeDecimals: 18,
    stableDecimals: 6,
    nativeUsd: 1,
    launchpads: ['arc-launch'],
    medianBuy: 60,
    weight: 1,
  },
};

const NAMES = [
  'Moon',
  'Pepe',
  'Doge',
  'Cat',
  'Frog',
  'Based',
  'Giga',
  'Chad',
  'Wojak',
  'Bonk',
  'Turbo',
  'Snek',
  'Pengu',
  'Goat',
  'Ape',
  'Shiba',
  'Rocket',
  'Hood',
  'Arc',
  'Neko',
];
const SUFFIXES = ['Inu', 'Coin', 'AI', 'Fi', 'Mode', 'Bull', 'Kong', 'Wif', 'Hat', 'Cult'];

export interface AddressSource {
  wallet(chain: Chain, seed: string): string;
  token(chain: Chain, seed: string): string;
  /** Curve account or launch pool of a new token (a PDA, the TokenManager, a V4 pool id). */
  launchPool(chain: Chain, launchpad: Launchpad, token: string, seed: string): string;
  /** The DEX pool a graduating token moves to. */
  graduationPool(chain: Chain, dex: string, token: string, seed: string): string;
  /** The chain's native/stable reference pool; the same across restarts. */
  referencePool(chain: Chain): string;
}

export interface MarketOptions {
  /** Seed of the market's randomness and of its addresses. */
  seed: number | string;
  chains: Chain[];
  startTime: number;
  addresses: AddressSource;
  walletsPerChain?: number;
  /** How much of each thing the market makes (profiles.ts); default 'default'. */
  profile?: SimProfileName | SimProfile;
}

interface ChainState {
  profile: ChainProfile;
  random: Random;
  wallets: Wallet[];
  cexWallets: Wallet[];
  tokens: SimToken[];
  /** token id -> wallet -> base units; dropped with the token. */
  holdings: Map<number, Map<string, bigint>>;
  reference: { pool: string; native: bigint; stable: bigint } | null;
  txCounter: number;
  nextAt: number;
  tokenCounter: number;
  hot: SimToken[];
  hotAt: number;
}

export interface Market {
  /** Events up to (excluding) `until`, in event-time order; `rate` is swaps per second of event time. */
  advance(until: number, rate: number): SimEvent[];
  readonly now: number;
  tokens(chain: Chain): readonly SimToken[];
  /** The balances the market keeps on a chain: token id -> wallet -> base units. */
  holdings(chain: Chain): ReadonlyMap<number, ReadonlyMap<string, bigint>>;
}

export function createMarket(options: MarketOptions): Market {
  const root = createRandom(options.seed);
  const states = new Map<Chain, ChainState>();
  const pending: SimEvent[] = [];
  let now = options.startTime;
  const sim = typeof options.profile === 'object' ? options.profile : SIM_PROFILES[options.profile ?? 'default'];
  /** Launches kept past maxActiveTokens before the coldest are dropped in one sort. */
  const evictionSlack = Math.ceil(sim.maxActiveTokens / 10);
  const weightOf = (chain: Chain) => sim.chainWeights[chain];
  const totalWeight = options.chains.reduce((sum, chain) => sum + weightOf(chain), 0);

  for (const chain of options.chains) {
    const profile = PROFILES[chain];
    const random = root.fork(chain);
    const state: ChainState = {
      profile,
      random,
      wallets: [],
      cexWallets: [],
      tokens: [],
      holdings: new Map(),
      reference: null,
      txCounter: 0,
      nextAt: now,
      tokenCounter: 0,
      hot: [],
      hotAt: now,
    };
    states.set(chain, state);
    for (const name of ['binance', 'coinbase', 'okx']) {
      const wallet = { address: options.addresses.wallet(chain, `cex:${name}`), labels: [`cex:${name}`] };
      state.cexWallets.push(wallet);
      // Exchange wallets are known before anything they fund (a label source has them long before):
      // a minute ahead, so no funding's block time (rounded down to its block) precedes the label.
      pending.push({
        type: 'walletLabel',
        chain,
        time: now - 60_000,
        tx: txSeed(state, 'label'),
        wallet: wallet.address,
        labels: wallet.labels,
        name,
      });
    }
    for (let i = 0; i < (options.walletsPerChain ?? sim.wallets.initialPerChain); i++) createWallet(state, now, i);
    if (chain !== 'arc') {
      const nativeReserve = 20_000n * 10n ** BigInt(profile.nativeDecimals);
      const stableReserve = BigInt(Math.round(20_000 * profile.nativeUsd)) * 10n ** BigInt(profile.stableDecimals);
      state.reference = { pool: options.addresses.referencePool(chain), native: nativeReserve, stable: stableReserve };
      // Reference swaps first, so the mark exists before any launch trades.
      for (let i = 0; i < 5; i++) referenceSwap(state, now);
    }
  }

  function txSeed(state: ChainState, kind: string): string {
    return `${state.profile.chain}/${kind}/${state.txCounter++}`;
  }

  function createWallet(state: ChainState, time: number, index: number, labelScale = 1): Wallet {
    const { random, profile } = state;
    const labels: string[] = [];
    if (random.chance(0.04 * labelScale)) labels.push('kol');
    if (random.chance(0.06 * labelScale)) labels.push('fomoscan');
    if (random.chance(0.05 * labelScale)) labels.push('pro_trader');
    if (random.chance(0.01 * labelScale)) labels.push('phishing');
    const wallet = { address: options.addresses.wallet(profile.chain, `w${index}-${state.txCounter}`), labels };
    state.wallets.push(wallet);
    const activity = sim.wallets.activity;
    // The oldest wallets beyond the cap (bots excepted) never trade again: dropped in one splice a quarter at a time.
    if (activity && state.wallets.length > activity.max * 1.25)
      forgetHoldings(state, state.wallets.splice(activity.bots, state.wallets.length - activity.max));
    if (labels.length > 0)
      pending.push({
        type: 'walletLabel',
        chain: profile.chain,
        time,
        tx: txSeed(state, 'label'),
        wallet: wallet.address,
        labels,
        name: labels.includes('kol') ? `kol_${index}` : null,
      });
    const funder = random.chance(0.45)
      ? random.pick(state.cexWallets)
      : state.wallets.length > 1
        ? random.pick(state.wallets)
        : random.pick(state.cexWallets);
    const amount =
      BigInt(Math.round(random.logNormal(profile.medianBuy * 20, 1) * 1e6)) * 10n ** BigInt(profile.nativeDecimals - 6);
    pending.push({
      type: 'funding',
      chain: profile.chain,
      time,
      tx: txSeed(state, 'fund'),
      from: funder.address,
      to: wallet.address,
      amount,
    });
    return wallet;
  }

  /**
   * A retired wallet's balances are never read again (only a trader's own balance is), so they go
   * with it: the busiest tokens' holder maps otherwise grew by every wallet that ever bought them.
   */
  function forgetHoldings(state: ChainState, retired: readonly Wallet[]): void {
    const gone = new Set(retired.map((wallet) => wallet.address));
    for (const holders of state.holdings.values())
      for (const wallet of holders.keys()) if (gone.has(wallet)) holders.delete(wallet);
  }

  function referenceSwap(state: ChainState, time: number): void {
    const reference = state.reference;
    if (!reference) return;
    const { random, profile } = state;
    const side = random.chance(0.5) ? 'buy' : 'sell';
    const nativeAmount =
      BigInt(Math.max(1, Math.round(random.logNormal(5, 1) * 1e6))) * 10n ** BigInt(profile.nativeDecimals - 6);
    let stableAmount: bigint;
    if (side === 'buy') {
      // Buying native with the stable: native leaves the pool.
      stableAmount = (reference.stable * nativeAmount) / (reference.native - nativeAmount) + 1n;
      reference.native -= nativeAmount;
      reference.stable += stableAmount;
    } else {
      stableAmount = (reference.stable * nativeAmount) / (reference.native + nativeAmount);
      reference.native += nativeAmount;
      reference.stable -= stableAmount;
    }
    pending.push({
      type: 'reference',
      chain: profile.chain,
      time,
      tx: txSeed(state, 'ref'),
      pool: reference.pool,
      side,
      trader: random.pick(state.wallets).address,
      nativeAmount,
      stableAmount,
      reserves: { native: reference.native, stable: reference.stable },
    });
  }

  function launch(state: ChainState, time: number): void {
    const { random, profile } = state;
    const launchpad = random.pick(profile.launchpads);
    const { curve, decimals, supply } = newCurve(launchpad, profile.nativeDecimals);
    const id = state.tokenCounter++;
    const name = `${random.pick(NAMES)} ${random.pick(SUFFIXES)}`;
    const symbol = name.replace(/[^A-Z]/g, '') + (id % 100);
    const creator = createWallet(state, time - 1, 100_000 + id, sim.wallets.newLabelScale).address;
    const address = options.addresses.token(profile.chain, `${launchpad}/${id}`);
    const { frenzy, halfLifeMs } = sim.lifetime(random);
    const launchPool = options.addresses.launchPool(profile.chain, launchpad, address, `${launchpad}/${id}`);
    const token: SimToken = {
      chain: profile.chain,
      id,
      address,
      name,
      symbol,
      uri: `https://sim.spot.dev/meta/${profile.chain}/${id}.json`,
      decimals,
      supply,
      creator,
      launchpad,
      curveAddress: launchPool,
      curve,
      pool: null,
      poolAddress: null,
      poolDex: null,
      hype: frenzy ? random.range(40, 80) : random.range(0.5, 3),
      halfLifeMs,
      lastHypeAt: time,
      mayhemMode: launchpad === 'pumpfun' && random.chance(0.05),
      createdAt: time,
      graduatedAt: null,
      firstPrice: null,
    };
    if (!curve) {
      // V4 launch: the pool starts with the whole supply against a virtual native reserve.
      token.pool = {
        token: supply,
        quote: BigInt(Math.round(profile.medianBuy * 50 * 1e6)) * 10n ** BigInt(profile.nativeDecimals - 6),
      };
      token.poolAddress = launchPool;
      token.poolDex = 'uniswap-v4';
    }
    state.tokens.push(token);
    if (state.tokens.length > sim.maxActiveTokens + evictionSlack) {
      // The coldest tokens stop trading for good: forget them and their holders. A slack of
      // launches between sorts: one sort per launch was two thirds of the model's time through
      // the mainnet profile's one-day warm start (~50k launches, 2,000 tokens kept per chain).
      sortByHype(state.tokens, time);
      for (const dropped of state.tokens.splice(sim.maxActiveTokens)) state.holdings.delete(dropped.id);
      state.hot = state.hot.filter((hot) => state.tokens.includes(hot));
    }
    pending.push({ type: 'launch', chain: profile.chain, time, tx: txSeed(state, 'launch'), token });
    // The dev often buys in the creation block: a bundled buy.
    if (random.chance(0.6)) trade(state, token, time, 'buy', token.creator);
  }

  function hypeAt(token: SimToken, time: number): number {
    return token.hype * Math.pow(0.5, (time - token.lastHypeAt) / token.halfLifeMs);
  }

  /** Hottest first, in place; each token's hype computed once (the same order as comparing hypeAt). */
  function sortByHype(tokens: SimToken[], time: number): SimToken[] {
    const keyed = tokens.map((token) => ({ token, hype: hypeAt(token, time) }));
    keyed.sort((a, b) => b.hype - a.hype);
    for (let i = 0; i < keyed.length; i++) tokens[i] = keyed[i]!.token;
    return tokens;
  }

  function holdersOf(state: ChainState, token: SimToken): Map<string, bigint> {
    let holders = state.holdings.get(token.id);
    if (!holders) {
      holders = new Map();
      state.holdings.set(token.id, holders);
    }
    return holders;
  }

  function trade(state: ChainState, token: SimToken, time: number, side: 'buy' | 'sell', trader: string): void {
    const { random, profile } = state;
    const unit = 10n ** BigInt(profile.nativeDecimals);
    const holders = holdersOf(state, token);
    const held = holders.get(trader) ?? 0n;
    if (side === 'sell' && held === 0n) side = 'buy';
    let amount: bigint;
    if (side === 'buy') {
      amount = BigInt(Math.max(1, Math.round(random.logNormal(profile.medianBuy, 1.1) * 1e6))) * (unit / 1_000_000n);
    } else {
      const share = random.chance(0.4) ? 1 : random.range(0.1, 0.9);
      amount = share === 1 ? held : (held * BigInt(Math.round(share * 1000))) / 1000n;
      if (amount === 0n) return;
    }
    const result = priceTrade(token, side, amount);
    if (!result) return;
    // Commit only what the venue reports: a trade that rounds to nothing leaves no trace.
    if (result.curve) token.curve = result.curve;
    if (result.pool) token.pool = result.pool;
    const traderBalance = side === 'buy' ? held + result.tokenAmount : held - result.tokenAmount;
    holders.set(trader, traderBalance);
    if (token.firstPrice === null) token.firstPrice = Number(result.quoteAmount) / Number(result.tokenAmount);
    const onCurve = result.venue === 'curve';
    pending.push({
      type: 'trade',
      chain: profile.chain,
      time,
      tx: txSeed(state, 'swap'),
      token,
      venue: result.venue,
      side,
      trader,
      tokenAmount: result.tokenAmount,
      quoteAmount: result.quoteAmount,
      platformFee: result.platformFee,
      creatorFee: result.creatorFee,
      lpFee: result.lpFee,
      curve: result.curve ? { ...result.curve } : null,
      pool: result.pool ? { ...result.pool } : null,
      curveBefore: result.curveBefore,
      poolBefore: result.poolBefore,
      traderBalance,
      poolAddress: onCurve ? token.curveAddress : token.poolAddress!,
      dex: onCurve ? token.launchpad : token.poolDex!,
    });
    if (onCurve && token.curve!.complete) graduate(state, token, time);
  }

  function graduate(state: ChainState, token: SimToken, time: number): void {
    const dex = GRADUATION_DEX[token.launchpad];
    if (!dex || !token.curve) return;
    // The curve's raised quote and the unsold reserve seed the pool.
    token.pool = {
      token: token.supply - (token.curve.initialRealToken - token.curve.realToken),
      quote: token.curve.realQuote,
    };
    token.poolAddress = options.addresses.graduationPool(token.chain, dex, token.address, `${dex}/${token.id}`);
    token.poolDex = dex;
    token.graduatedAt = time;
    token.hype *= 2;
    token.lastHypeAt = time;
    pending.push({
      type: 'graduate',
      chain: token.chain,
      time,
      tx: txSeed(state, 'graduate'),
      token,
      pool: token.poolAddress,
      dex,
      reserves: { ...token.pool },
    });
  }

  /** The hottest tokens, refreshed now and then: trading concentrates on them. */
  function refreshHot(state: ChainState, time: number): void {
    state.hot = sortByHype([...state.tokens], time).slice(0, 5);
    state.hotAt = time;
  }

  /** Who trades: uniformly any wallet, or (a power-law profile) a bot or a recent wallet. */
  function pickTrader(state: ChainState): string {
    const { random, wallets } = state;
    const activity = sim.wallets.activity;
    if (!activity || wallets.length <= activity.bots) return random.pick(wallets).address;
    if (random.chance(activity.botShare))
      return wallets[Math.floor(activity.bots * random.next() ** activity.skew)]!.address;
    const window = Math.min(activity.recentWindow, wallets.length - activity.bots);
    return wallets[wallets.length - 1 - Math.floor(window * random.next() ** activity.skew)]!.address;
  }

  function step(state: ChainState, time: number, chainRate: number): void {
    const { random } = state;
    if (state.reference && random.chance(0.06)) return referenceSwap(state, time);
    const launchChance = launchChanceOf(sim, state.profile.chain, chainRate);
    if (random.chance(launchChance) || state.tokens.length < 5) return launch(state, time);
    if (random.chance(sim.wallets.newChance)) {
      createWallet(state, time, state.wallets.length, sim.wallets.newLabelScale);
      return;
    }
    if (time - state.hotAt > 10_000 || state.hot.length === 0) refreshHot(state, time);
    // Pick a token by hype among a few candidates, one of them from the hot list.
    let best: SimToken | undefined;
    let bestScore = -1;
    for (let i = 0; i < 4; i++) {
      // No draw at 1: the default profile's seeded market stays what it was.
      const fromHot = i === 0 && (sim.hotPickChance >= 1 || random.chance(sim.hotPickChance));
      const candidate = fromHot ? random.pick(state.hot) : random.pick(state.tokens);
      const score = hypeAt(candidate, time) * random.next();
      if (score > bestScore) {
        best = candidate;
        bestScore = score;
      }
    }
    if (!best) return;
    const young = time - best.createdAt < 15_000;
    // Momentum: hyped tokens see more buys; snipers pile into fresh launches.
    const buyProbability = Math.min(0.85, 0.42 + 0.08 * Math.log1p(hypeAt(best, time)) + (young ? 0.3 : 0));
    const side = random.chance(buyProbability) ? 'buy' : 'sell';
    const trader = pickTrader(state);
    trade(state, best, time, side, trader);
    if (random.chance(0.01)) {
      best.hype += random.range(0.5, 4);
      best.lastHypeAt = time;
    }
  }

  return {
    get now() {
      return now;
    },
    tokens: (chain) => states.get(chain)?.tokens ?? [],
    holdings: (chain) => states.get(chain)?.holdings ?? new Map(),
    advance(until, rate) {
      const out: SimEvent[] = pending.splice(0);
      if (rate <= 0) {
        now = Math.max(now, until);
        return byTime(out);
      }
      const chainList = [...states.values()];
      while (true) {
        // The next chain to act is the one with the earliest scheduled time.
        let next: ChainState | undefined;
        for (const state of chainList) if (!next || state.nextAt < next.nextAt) next = state;
        if (!next || next.nextAt >= until) break;
        const time = Math.floor(next.nextAt);
        const chainRate = (rate * weightOf(next.profile.chain)) / totalWeight;
        step(next, time, chainRate);
        out.push(...pending.splice(0));
        next.nextAt += (-Math.log(1 - next.random.next()) / chainRate) * 1000;
      }
      now = until;
      return byTime(out);
    },
  };
}

/**
 * Events in event-time order (stable: same-time events keep their order). The set-up events are
 * made chain by chain (one chain's fundings before the next chain's earlier labels); published in
 * that order they would share partitions out of time order, and the aggregator's merge, which
 * takes each partition as time-ordered, would apply a funding before its funder's label.
 */
function byTime(events: SimEvent[]): SimEvent[] {
  return events.sort((a, b) => a.time - b.time);
}
