// The simulated market: wallets, launches that climb a curve, graduate and trade on a pool,
// reference pools that move the native/USD mark. It emits semantic events in event-time order;
// chain-writer.ts encodes them as real chain records for the decoders.
import type { Chain } from '../../core/chains.ts';
import { createRandom, type Random } from './random.ts';
import { curveBuy, curveSell, newPumpCurve, poolBuy, poolSell, PUMP, type CurveState, type PoolState } from './curves.ts';

export type Launchpad = 'pumpfun' | 'launchlab' | 'meteora-dbc' | 'fourmeme' | 'clanker' | 'pools.trade' | 'arc-launch';

export interface SimToken {
  chain: Chain;
  id: number;
  address: string;
  name: string;
  symbol: string;
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
  | (Base & { type: 'reference'; pool: string; side: 'buy' | 'sell'; trader: string; nativeAmount: bigint; stableAmount: bigint; reserves: { native: bigint; stable: bigint } })
  | (Base & { type: 'launch'; token: SimToken })
  | (Base & {
      type: 'trade'; token: SimToken; venue: 'curve' | 'pool'; side: 'buy' | 'sell'; trader: string;
      tokenAmount: bigint; quoteAmount: bigint; platformFee: bigint; creatorFee: bigint; lpFee: bigint;
      curve: CurveState | null; pool: PoolState | null;
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
  solana: { chain: 'solana', nativeDecimals: 9, stableDecimals: 6, nativeUsd: 180, launchpads: ['pumpfun', 'pumpfun', 'launchlab', 'meteora-dbc'], medianBuy: 0.4, weight: 5 },
  base: { chain: 'base', nativeDecimals: 18, stableDecimals: 6, nativeUsd: 3500, launchpads: ['clanker'], medianBuy: 0.02, weight: 2 },
  bsc: { chain: 'bsc', nativeDecimals: 18, stableDecimals: 18, nativeUsd: 650, launchpads: ['fourmeme'], medianBuy: 0.1, weight: 2 },
  robinhood: { chain: 'robinhood', nativeDecimals: 18, stableDecimals: 6, nativeUsd: 3500, launchpads: ['pools.trade'], medianBuy: 0.02, weight: 1 },
  arc: { chain: 'arc', nativeDecimals: 18, stableDecimals: 6, nativeUsd: 1, launchpads: ['arc-launch'], medianBuy: 60, weight: 1 },
};

/** Curve parameters per launchpad: virtual reserves in base units, the sellable share, token decimals. */
function newCurve(launchpad: Launchpad, nativeDecimals: number): { curve: CurveState | null; decimals: number; supply: bigint } {
  const unit = 10n ** BigInt(nativeDecimals);
  switch (launchpad) {
    case 'pumpfun':
      return { curve: newPumpCurve(), decimals: 6, supply: PUMP.totalSupply };
    case 'launchlab':
    case 'meteora-dbc':
      return { curve: { ...newPumpCurve(), virtualQuote: 30n * unit }, decimals: 6, supply: PUMP.totalSupply };
    case 'fourmeme': {
      const token = 10n ** 18n;
      const sellable = 800_000_000n * token;
      return {
        curve: { virtualToken: 1_073_300_000n * token, virtualQuote: (75n * unit) / 10n, realToken: sellable, realQuote: 0n, initialRealToken: sellable, complete: false },
        decimals: 18,
        supply: 1_000_000_000n * token,
      };
    }
    default:
      // Uniswap-V4 launches: no bonding curve, the pool holds the supply from the start.
      return { curve: null, decimals: 18, supply: 1_000_000_000n * 10n ** 18n };
  }
}

const GRADUATION_DEX: Partial<Record<Launchpad, string>> = {
  pumpfun: 'pumpswap',
  launchlab: 'raydium-cpmm',
  'meteora-dbc': 'raydium-cpmm',
  fourmeme: 'pancakeswap-v2',
};

const POOL_FEE_BPS: Record<string, bigint> = {
  pumpswap: 25n, 'raydium-cpmm': 25n, 'pancakeswap-v2': 25n, 'uniswap-v4': 100n,
};

const NAMES = ['Moon', 'Pepe', 'Doge', 'Cat', 'Frog', 'Based', 'Giga', 'Chad', 'Wojak', 'Bonk', 'Turbo', 'Snek', 'Pengu', 'Goat', 'Ape', 'Shiba', 'Rocket', 'Hood', 'Arc', 'Neko'];
const SUFFIXES = ['Inu', 'Coin', 'AI', 'Fi', 'Mode', 'Bull', 'Kong', 'Wif', 'Hat', 'Cult'];

export interface AddressSource {
  wallet(chain: Chain, seed: string): string;
  token(chain: Chain, seed: string): string;
  pool(chain: Chain, seed: string): string;
}

export interface MarketOptions {
  seed: number;
  chains: Chain[];
  startTime: number;
  addresses: AddressSource;
  walletsPerChain?: number;
}

interface ChainState {
  profile: ChainProfile;
  random: Random;
  wallets: Wallet[];
  cexWallets: Wallet[];
  tokens: SimToken[];
  holdings: Map<string, bigint>; // `${tokenId}:${wallet}` -> base units
  reference: { pool: string; native: bigint; stable: bigint } | null;
  txCounter: number;
  nextAt: number;
  tokenCounter: number;
}

const MAX_ACTIVE_TOKENS = 400;

export interface Market {
  /** Events up to (excluding) `until`, in event-time order; `rate` is swaps per second of event time. */
  advance(until: number, rate: number): SimEvent[];
  readonly now: number;
  tokens(chain: Chain): readonly SimToken[];
}

export function createMarket(options: MarketOptions): Market {
  const root = createRandom(options.seed);
  const states = new Map<Chain, ChainState>();
  const pending: SimEvent[] = [];
  let now = options.startTime;
  const totalWeight = options.chains.reduce((sum, chain) => sum + PROFILES[chain].weight, 0);

  for (const chain of options.chains) {
    const profile = PROFILES[chain];
    const random = root.fork(chain);
    const state: ChainState = { profile, random, wallets: [], cexWallets: [], tokens: [], holdings: new Map(), reference: null, txCounter: 0, nextAt: now, tokenCounter: 0 };
    states.set(chain, state);
    for (const name of ['binance', 'coinbase', 'okx']) {
      const wallet = { address: options.addresses.wallet(chain, `cex:${name}`), labels: [`cex:${name}`] };
      state.cexWallets.push(wallet);
      pending.push({ type: 'walletLabel', chain, time: now, tx: txSeed(state, 'label'), wallet: wallet.address, labels: wallet.labels, name });
    }
    for (let i = 0; i < (options.walletsPerChain ?? 300); i++) createWallet(state, now, i);
    if (chain !== 'arc') {
      const nativeReserve = 20_000n * 10n ** BigInt(profile.nativeDecimals);
      const stableReserve = BigInt(Math.round(20_000 * profile.nativeUsd)) * 10n ** BigInt(profile.stableDecimals);
      state.reference = { pool: options.addresses.pool(chain, 'reference'), native: nativeReserve, stable: stableReserve };
      // Reference swaps first, so the mark exists before any launch trades.
      for (let i = 0; i < 5; i++) referenceSwap(state, now);
    }
  }

  function txSeed(state: ChainState, kind: string): string {
    return `${state.profile.chain}/${kind}/${state.txCounter++}`;
  }

  function createWallet(state: ChainState, time: number, index: number): Wallet {
    const { random, profile } = state;
    const labels: string[] = [];
    if (random.chance(0.04)) labels.push('kol');
    if (random.chance(0.06)) labels.push('fomoscan');
    if (random.chance(0.05)) labels.push('pro_trader');
    if (random.chance(0.01)) labels.push('phishing');
    const wallet = { address: options.addresses.wallet(profile.chain, `w${index}-${state.txCounter}`), labels };
    state.wallets.push(wallet);
    if (labels.length > 0) pending.push({ type: 'walletLabel', chain: profile.chain, time, tx: txSeed(state, 'label'), wallet: wallet.address, labels, name: labels.includes('kol') ? `kol_${index}` : null });
    const funder = random.chance(0.45) ? random.pick(state.cexWallets) : state.wallets.length > 1 ? random.pick(state.wallets) : random.pick(state.cexWallets);
    const amount = BigInt(Math.round(random.logNormal(profile.medianBuy * 20, 1) * 1e6)) * 10n ** BigInt(profile.nativeDecimals - 6);
    pending.push({ type: 'funding', chain: profile.chain, time, tx: txSeed(state, 'fund'), from: funder.address, to: wallet.address, amount });
    return wallet;
  }

  function referenceSwap(state: ChainState, time: number): void {
    const reference = state.reference;
    if (!reference) return;
    const { random, profile } = state;
    const side = random.chance(0.5) ? 'buy' : 'sell';
    const nativeAmount = BigInt(Math.max(1, Math.round(random.logNormal(5, 1) * 1e6))) * 10n ** BigInt(profile.nativeDecimals - 6);
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
      type: 'reference', chain: profile.chain, time, tx: txSeed(state, 'ref'), pool: reference.pool, side,
      trader: random.pick(state.wallets).address, nativeAmount, stableAmount, reserves: { native: reference.native, stable: reference.stable },
    });
  }

  function launch(state: ChainState, time: number): void {
    const { random, profile } = state;
    const launchpad = random.pick(profile.launchpads);
    const { curve, decimals, supply } = newCurve(launchpad, profile.nativeDecimals);
    const id = state.tokenCounter++;
    const name = `${random.pick(NAMES)} ${random.pick(SUFFIXES)}`;
    const symbol = name.replace(/[^A-Z]/g, '') + (id % 100);
    const creator = createWallet(state, time - 1, 100_000 + id).address;
    const address = options.addresses.token(profile.chain, `${launchpad}/${id}`);
    // Most launches die within minutes; a few run for hours.
    const halfLifeMs = random.chance(0.08) ? random.range(1, 6) * 3_600_000 : random.range(0.5, 8) * 60_000;
    const token: SimToken = {
      chain: profile.chain, id, address, name, symbol, decimals, supply, creator, launchpad,
      curveAddress: options.addresses.pool(profile.chain, `curve/${launchpad}/${id}`),
      curve, pool: null, poolAddress: null, poolDex: null,
      hype: random.range(0.5, 3), halfLifeMs, lastHypeAt: time, mayhemMode: launchpad === 'pumpfun' && random.chance(0.05),
      createdAt: time, graduatedAt: null, firstPrice: null,
    };
    if (!curve) {
      // V4 launch: the pool starts with the whole supply against a virtual native reserve.
      token.pool = { token: supply, quote: BigInt(Math.round(profile.medianBuy * 50 * 1e6)) * 10n ** BigInt(profile.nativeDecimals - 6) };
      token.poolAddress = token.curveAddress;
      token.poolDex = 'uniswap-v4';
    }
    state.tokens.push(token);
    if (state.tokens.length > MAX_ACTIVE_TOKENS) state.tokens.sort((a, b) => hypeAt(b, time) - hypeAt(a, time)).length = MAX_ACTIVE_TOKENS;
    pending.push({ type: 'launch', chain: profile.chain, time, tx: txSeed(state, 'launch'), token });
    // The dev often buys in the creation block: a bundled buy.
    if (random.chance(0.6)) trade(state, token, time, 'buy', token.creator);
  }

  function hypeAt(token: SimToken, time: number): number {
    return token.hype * Math.pow(0.5, (time - token.lastHypeAt) / token.halfLifeMs);
  }

  function holdingKey(token: SimToken, wallet: string): string {
    return `${token.id}:${wallet}`;
  }

  function trade(state: ChainState, token: SimToken, time: number, side: 'buy' | 'sell', trader: string): void {
    const { random, profile } = state;
    const unit = 10n ** BigInt(profile.nativeDecimals);
    const key = holdingKey(token, trader);
    const held = state.holdings.get(key) ?? 0n;
    if (side === 'sell' && held === 0n) side = 'buy';
    let tokenAmount = 0n, quoteAmount = 0n, platformFee = 0n, creatorFee = 0n, lpFee = 0n;
    const venue = token.curve && !token.curve.complete ? 'curve' : 'pool';
    if (side === 'buy') {
      const spend = BigInt(Math.max(1, Math.round(random.logNormal(profile.medianBuy, 1.1) * 1e6))) * (unit / 1_000_000n);
      if (venue === 'curve') {
        const result = curveBuy(token.curve!, spend);
        tokenAmount = result.tokenOut;
        quoteAmount = result.quoteIn;
        platformFee = (quoteAmount * PUMP.feeBps + 9_999n) / 10_000n;
        creatorFee = (quoteAmount * PUMP.creatorFeeBps + 9_999n) / 10_000n;
      } else {
        const result = poolBuy(token.pool!, spend, POOL_FEE_BPS[token.poolDex!] ?? 25n);
        tokenAmount = result.tokenOut;
        quoteAmount = spend;
        lpFee = result.fee;
      }
      state.holdings.set(key, held + tokenAmount);
    } else {
      const share = random.chance(0.4) ? 1 : random.range(0.1, 0.9);
      tokenAmount = share === 1 ? held : (held * BigInt(Math.round(share * 1000))) / 1000n;
      if (tokenAmount === 0n) return;
      if (venue === 'curve') {
        quoteAmount = curveSell(token.curve!, tokenAmount).quoteOut;
        platformFee = (quoteAmount * PUMP.feeBps + 9_999n) / 10_000n;
        creatorFee = (quoteAmount * PUMP.creatorFeeBps + 9_999n) / 10_000n;
      } else {
        const result = poolSell(token.pool!, tokenAmount, POOL_FEE_BPS[token.poolDex!] ?? 25n);
        quoteAmount = result.quoteOut;
        lpFee = result.fee;
      }
      state.holdings.set(key, held - tokenAmount);
    }
    if (tokenAmount === 0n || quoteAmount === 0n) return;
    if (token.firstPrice === null) token.firstPrice = Number(quoteAmount) / Number(tokenAmount);
    pending.push({
      type: 'trade', chain: profile.chain, time, tx: txSeed(state, 'swap'), token, venue, side, trader,
      tokenAmount, quoteAmount, platformFee, creatorFee, lpFee,
      curve: venue === 'curve' && token.curve ? { ...token.curve } : null,
      pool: venue === 'pool' && token.pool ? { ...token.pool } : null,
    });
    if (venue === 'curve' && token.curve!.complete) graduate(state, token, time);
  }

  function graduate(state: ChainState, token: SimToken, time: number): void {
    const dex = GRADUATION_DEX[token.launchpad];
    if (!dex || !token.curve) return;
    // The curve's raised quote and the unsold reserve seed the pool.
    token.pool = { token: token.supply - (token.curve.initialRealToken - token.curve.realToken), quote: token.curve.realQuote };
    token.poolAddress = options.addresses.pool(token.chain, `pool/${dex}/${token.id}`);
    token.poolDex = dex;
    token.graduatedAt = time;
    token.hype *= 2;
    token.lastHypeAt = time;
    pending.push({ type: 'graduate', chain: token.chain, time, tx: txSeed(state, 'graduate'), token, pool: token.poolAddress, dex, reserves: { ...token.pool } });
  }

  function step(state: ChainState, time: number): void {
    const { random } = state;
    if (state.reference && random.chance(0.06)) return referenceSwap(state, time);
    if (random.chance(0.004) || state.tokens.length < 5) return launch(state, time);
    if (random.chance(0.002)) {
      createWallet(state, time, state.wallets.length);
      return;
    }
    // Pick a token by hype among a few candidates (cheap weighted choice).
    let best: SimToken | undefined;
    let bestScore = -1;
    for (let i = 0; i < 4; i++) {
      const candidate = random.pick(state.tokens);
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
    const trader = random.pick(state.wallets).address;
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
    advance(until, rate) {
      const out: SimEvent[] = pending.splice(0);
      if (rate <= 0) {
        now = Math.max(now, until);
        return out;
      }
      const chainList = [...states.values()];
      while (true) {
        // The next chain to act is the one with the earliest scheduled time.
        let next: ChainState | undefined;
        for (const state of chainList) if (!next || state.nextAt < next.nextAt) next = state;
        if (!next || next.nextAt >= until) break;
        const time = Math.floor(next.nextAt);
        step(next, time);
        out.push(...pending.splice(0));
        const chainRate = (rate * next.profile.weight) / totalWeight;
        next.nextAt += (-Math.log(1 - next.random.next()) / chainRate) * 1000;
      }
      now = until;
      return out;
    },
  };
}
