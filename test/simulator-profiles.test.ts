// The mainnet simulator profile makes REALWORLD.md's shapes: chain shares, launches per day,
// a power-law wallet population; the default profile keeps its light market.
import assert from 'node:assert/strict';
import { CHAINS } from '../core/chains.ts';
import { createAddressSource } from '../ingest/simulator/addresses.ts';
import { createMarket } from '../ingest/simulator/model.ts';
import { SIM_PROFILES, type SimProfileName } from '../ingest/simulator/profiles.ts';

const START = 1_780_000_000_000;

function run(profile: SimProfileName, rate: number, minutes: number) {
  const market = createMarket({
    seed: '11',
    chains: [...CHAINS],
    startTime: START,
    addresses: createAddressSource('11'),
    profile,
  });
  const types = new Map<string, number>();
  const byChain = new Map<string, number>();
  const byWallet = new Map<string, number>();
  const solanaByToken = new Map<string, number>();
  // Wallets made after the start (each is funded once) and those of them labelled.
  let newWallets = 0;
  let newLabelled = 0;
  for (let m = 1; m <= minutes; m++) {
    for (const event of market.advance(START + m * 60_000, rate)) {
      types.set(event.type, (types.get(event.type) ?? 0) + 1);
      if (event.time > START && event.type === 'funding') newWallets++;
      if (event.time > START && event.type === 'walletLabel') newLabelled++;
      if (event.type !== 'trade') continue;
      byChain.set(event.chain, (byChain.get(event.chain) ?? 0) + 1);
      byWallet.set(event.trader, (byWallet.get(event.trader) ?? 0) + 1);
      if (event.chain === 'solana')
        solanaByToken.set(event.token.address, (solanaByToken.get(event.token.address) ?? 0) + 1);
    }
  }
  const trades = types.get('trade') ?? 0;
  const perWallet = [...byWallet.values()].sort((a, b) => b - a);
  const top = perWallet.slice(0, Math.ceil(perWallet.length / 100)).reduce((a, b) => a + b, 0);
  const perSolanaToken = [...solanaByToken.values()].sort((a, b) => b - a);
  return {
    launchesPerDay: ((types.get('launch') ?? 0) * 1440) / minutes,
    share: (chain: string) => (byChain.get(chain) ?? 0) / trades,
    wallets: perWallet.length,
    topPercentShare: top / trades,
    medianPerWallet: perWallet[Math.floor(perWallet.length / 2)]!,
    newWallets,
    labelledShareOfNew: newLabelled / newWallets,
    solanaTokensTraded: perSolanaToken.length,
    busiestSolanaTokenShare: perSolanaToken[0]! / (byChain.get('solana') ?? 1),
  };
}

describe('simulator profiles', () => {
  it('mainnet: chain shares, ~50k launches a day, a few wallets trade a lot and most a little', () => {
    const mainnet = run('mainnet', 500, 10);
    assert.ok(mainnet.share('solana') > 0.7 && mainnet.share('solana') < 0.85, `solana ${mainnet.share('solana')}`);
    assert.ok(mainnet.share('arc') < 0.02);
    assert.ok(
      mainnet.launchesPerDay > 35_000 && mainnet.launchesPerDay < 65_000,
      `${mainnet.launchesPerDay} launches/day`,
    );
    assert.ok(mainnet.topPercentShare > 0.2, `top 1 % of wallets trade ${mainnet.topPercentShare}`);
    assert.ok(mainnet.medianPerWallet < 30, `median wallet trades ${mainnet.medianPerWallet} times`);
    // Trading spreads over the active set (from a cold start ~170 Solana tokens: the busiest
    // under 12 %; with every first candidate from the five hottest it took 22 %).
    assert.ok(mainnet.solanaTokensTraded > 100, `${mainnet.solanaTokensTraded} Solana tokens traded`);
    assert.ok(
      mainnet.busiestSolanaTokenShare < 0.12,
      `the busiest Solana token took ${mainnet.busiestSolanaTokenShare} of its trades`,
    );
    // Label lists name a slowly growing population, not 15 % of every new address.
    assert.ok(mainnet.newWallets > 10_000, `${mainnet.newWallets} new wallets`);
    assert.ok(
      mainnet.labelledShareOfNew > 0.0004 && mainnet.labelledShareOfNew < 0.004,
      `${mainnet.labelledShareOfNew} of new wallets labelled`,
    );
  });

  it('default: the light market (uniform wallets, launches by chance per step)', () => {
    const light = run('default', 500, 10);
    assert.ok(light.topPercentShare < 0.1, `top 1 % of wallets trade ${light.topPercentShare}`);
    assert.ok(light.wallets < 5000, `${light.wallets} wallets`);
    assert.ok(light.share('solana') > 0.4 && light.share('solana') < 0.5, `solana ${light.share('solana')}`);
    assert.ok(
      light.labelledShareOfNew > 0.08 && light.labelledShareOfNew < 0.25,
      `${light.labelledShareOfNew} of new wallets labelled`,
    );
  });

  it('keeps a chain trading between maxActiveTokens and a tenth more: past it the coldest stop, down to it', () => {
    const market = createMarket({
      seed: '12',
      chains: ['solana'],
      startTime: START,
      addresses: createAddressSource('12'),
      profile: { ...SIM_PROFILES.default, maxActiveTokens: 40, launchChance: 0.05 },
    });
    const sizes: number[] = [];
    const stopped = new Set<number>();
    let known = new Set<number>();
    for (let s = 1; s <= 600; s++) {
      for (const event of market.advance(START + s * 1000, 50))
        if (event.type === 'trade' && stopped.has(event.token.id))
          assert.fail(`${event.token.id} traded after it stopped`);
      const now = new Set(market.tokens('solana').map((token) => token.id));
      for (const id of known) if (!now.has(id)) stopped.add(id);
      known = now;
      sizes.push(now.size);
    }
    assert.ok(Math.max(...sizes) === 44, `at most ${Math.max(...sizes)} tokens`);
    assert.ok(sizes.includes(40), 'an eviction brings the set back to 40');
    assert.ok(stopped.size > 100, `${stopped.size} tokens stopped`);
  });

  it('keeps balances only of wallets that still trade: a retired wallet leaves every holder map', () => {
    const activity = { bots: 10, botShare: 0.35, recentWindow: 100, skew: 3, max: 300 };
    const market = createMarket({
      seed: '13',
      chains: ['solana'],
      startTime: START,
      addresses: createAddressSource('13'),
      profile: { ...SIM_PROFILES.mainnet, wallets: { ...SIM_PROFILES.mainnet.wallets, newChance: 0.2, activity } },
    });
    const traders = new Set<string>();
    for (let s = 1; s <= 300; s++)
      for (const event of market.advance(START + s * 1000, 100)) if (event.type === 'trade') traders.add(event.trader);
    const holders = new Set<string>();
    for (const balances of market.holdings('solana').values())
      for (const wallet of balances.keys()) holders.add(wallet);
    assert.ok(traders.size > 10 * activity.max, `${traders.size} wallets traded`);
    // The chain keeps at most max × 1.25 wallets trading; the market forgot the balances of the others.
    assert.ok(holders.size <= activity.max * 1.25, `balances of ${holders.size} wallets kept`);
  });
});
