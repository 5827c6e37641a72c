// Simulator profiles: how much of each thing the market makes. `default` is the light market
// `npm start` runs (its figures are the model's historical constants); `mainnet` is sized from
// ../shared/REALWORLD.md (docs/simulator-profiles.md lists each figure and its source). Both
// make the same event shapes; SPOT_SIM_RATE still sets the total swaps per second.
import type { Chain } from '../../core/chains.ts';
import type { Random } from './random.ts';

export const SIM_PROFILE_NAMES = ['default', 'mainnet'] as const;
export type SimProfileName = (typeof SIM_PROFILE_NAMES)[number];

export interface TokenLifetime {
  /** A launch frenzy: far more hype at the start. */
  frenzy: boolean;
  halfLifeMs: number;
}

export interface SimProfile {
  name: SimProfileName;
  /** Relative share of the total swaps per chain. */
  chainWeights: Record<Chain, number>;
  /** Launches per day of event time per chain; null: a fixed chance per market step (`launchChance`). */
  launchesPerDay: Record<Chain, number> | null;
  launchChance: number;
  /** Tokens a chain keeps trading; a tenth past it, the coldest stop for good, down to it. */
  maxActiveTokens: number;
  /**
   * Chance that a trade's first candidate token comes from the chain's five hottest (the others
   * are drawn from every token). At 1 trading piles onto those five; lower spreads it out.
   */
  hotPickChance: number;
  /** Draws a new token's lifetime (the default keeps the model's historical draws). */
  lifetime(random: Random): TokenLifetime;
  wallets: {
    initialPerChain: number;
    /** Chance per market step that a new wallet appears (funded, maybe labelled). */
    newChance: number;
    /**
     * Each label's chance for a wallet that appears after the start, as a share of a starting
     * wallet's (kol 4 %, fomoscan 6 %, pro_trader 5 %, phishing 1 %). Label lists are curated:
     * they name a known population that grows slowly, not a fixed share of every new address.
     */
    newLabelScale: number;
    /** null: every trade picks a wallet uniformly. Else a power law: */
    activity: null | {
      /** The first `bots` wallets of a chain trade `botShare` of its swaps, rank r with weight ∝ u^skew. */
      bots: number;
      botShare: number;
      /** The other trades go to recent wallets, the newest most (so most wallets live minutes). */
      recentWindow: number;
      skew: number;
      /** Wallets kept per chain; the oldest non-bot wallets beyond it never trade again. */
      max: number;
    };
  };
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export const SIM_PROFILES: Record<SimProfileName, SimProfile> = {
  default: {
    name: 'default',
    chainWeights: { solana: 5, base: 2, bsc: 2, robinhood: 1, arc: 1 },
    launchesPerDay: null,
    launchChance: 0.004,
    maxActiveTokens: 400,
    hotPickChance: 1,
    // Most launches die within minutes; a few run for hours, and a rare one gets a frenzy.
    lifetime(random) {
      const runner = random.chance(0.08);
      const frenzy = random.chance(0.04);
      const halfLifeMs = runner || frenzy ? random.range(1, 6) * HOUR_MS : random.range(0.5, 8) * 60_000;
      return { frenzy, halfLifeMs };
    },
    wallets: { initialPerChain: 300, newChance: 0.002, newLabelScale: 1, activity: null },
  },
  mainnet: {
    name: 'mainnet',
    // ~1,000–1,500 Solana swaps/s, BSC ~190 tx/s, Base ~170 tx/s; Robinhood and Arc: assumed small.
    chainWeights: { solana: 1250, bsc: 190, base: 170, robinhood: 20, arc: 10 },
    // 40–55k launches a day across launchpads (pump.fun ~20k, four.meme up to 26.8k, Base 54k+ at peaks).
    launchesPerDay: { solana: 25_000, bsc: 12_000, base: 12_000, robinhood: 500, arc: 500 },
    launchChance: 0,
    maxActiveTokens: 2000,
    // Per hot memecoin 0.2–0.3 tx/s over 10 min, frenzies far above: most trades go to the whole
    // active set, a tenth start from the five hottest (measured: ~2,000 Solana tokens a minute).
    hotPickChance: 0.1,
    // 68.6 % trade only on launch day, 80 % stop within 2 days, 4.5 % still trade after 3 months.
    lifetime(random) {
      const roll = random.next();
      const frenzy = random.chance(0.04);
      if (roll < 0.045) return { frenzy, halfLifeMs: random.range(3, 30) * DAY_MS };
      if (roll < 0.2) return { frenzy, halfLifeMs: random.range(2, 24) * HOUR_MS };
      return { frenzy, halfLifeMs: random.range(0.5, 8) * 60_000 };
    },
    // Solana: 0.7–8M active traders a day, 96.6 % of addresses live < 1 day, 15 min on average.
    // Bots' share of swaps (35 %) is assumed: no public figure. Labels are assumed too: about
    // 0.16 % of new wallets (some 14k a day at 2,000 swaps/s) join a list.
    wallets: {
      initialPerChain: 2000,
      newChance: 0.05,
      newLabelScale: 0.01,
      activity: { bots: 200, botShare: 0.35, recentWindow: 3000, skew: 3, max: 20_000 },
    },
  },
};

/** Chance per market step that a chain launches a token, at `chainRate` swaps/s of event time. */
export function launchChanceOf(profile: SimProfile, chain: Chain, chainRate: number): number {
  if (profile.launchesPerDay === null) return profile.launchChance;
  return profile.launchesPerDay[chain] / ((DAY_MS / 1000) * Math.max(chainRate, 1e-9));
}
