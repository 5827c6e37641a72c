import assert from 'node:assert/strict';
import { assertTopicValue, TOPICS } from '../core/topics.ts';
import { createPlatformRegistry, PLATFORM_FACTS } from '../ingest/enrichment/platforms.ts';
import { simEvmRouter, simSolanaRoute } from '../ingest/enrichment/sim-platforms.ts';
import {
  buildReceipt,
  createEvmDecoder,
  createPoolRegistry,
  createTokenRegistry,
  encodePairCreated,
  encodeV2Swap,
  seedAddress,
  seedHash,
  sortTokens,
} from '../ingest/evm/index.ts';
import { createSolanaDecoder, encodePumpTrade, solanaAddress } from '../ingest/solana/index.ts';
import { isEvmAddress } from '../core/chains.ts';
import { base58Decode } from '../ingest/solana/base58.ts';

const AXIOM_ROUTER = 'FLASHX8DrLbgeR8FcfNV1F5krxYcYMUdBkrP1EPBtxB9';
const TROJAN_FEE = '9yMwSPk9mrXSN7yDHUuZurAh1sjbJsfpUqjZ7SvVtdco';

describe('enrichment: trading platforms', () => {
  const pumpTrade = (envelope: { router?: string; loadedAddresses?: { writable?: string[] } }) =>
    encodePumpTrade({
      layout: 'oct2025',
      mint: solanaAddress('platform:mint'),
      user: solanaAddress('platform:user'),
      isBuy: true,
      solAmount: 1_000_000_000n,
      tokenAmount: 30_000_000_000_000n,
      timestamp: 1_772_000_000n,
      virtualSolReserves: 31_000_000_000n,
      virtualTokenReserves: 1_043_000_000_000_000n,
      realSolReserves: 1_000_000_000n,
      realTokenReserves: 763_100_000_000_000n,
      slot: 10,
      blockTime: 1_772_000_000,
      ...envelope,
    });

  it('every fact is a well-formed address of its chain, with a source, and names one platform per address', () => {
    const seen = new Map<string, string>();
    for (const fact of PLATFORM_FACTS) {
      if (fact.chain === 'solana') assert.equal(base58Decode(fact.address).length, 32, fact.address);
      else assert.ok(isEvmAddress(fact.address), fact.address);
      assert.ok(fact.source.length > 10);
      const key = `${fact.chain}:${fact.address.toLowerCase()}`;
      assert.ok(!seen.has(key) || seen.get(key) === fact.platform, `${key} named twice`);
      seen.set(key, fact.platform);
    }
  });

  it('a solana swap through a platform router program carries the platform', () => {
    const { swaps } = createSolanaDecoder().decodeTransaction(pumpTrade({ router: AXIOM_ROUTER }));
    assert.equal(swaps.length, 1);
    assert.deepEqual(swaps[0]!.platforms, ['axiom']);
    assertTopicValue(TOPICS.swaps, swaps[0]);
  });

  it('a solana swap paying a platform fee account carries the platform (address-table accounts included)', () => {
    const { swaps } = createSolanaDecoder().decodeTransaction(
      pumpTrade({ loadedAddresses: { writable: [TROJAN_FEE] } }),
    );
    assert.deepEqual(swaps[0]!.platforms, ['trojan']);
  });

  it('a direct swap names no platform', () => {
    const { swaps } = createSolanaDecoder().decodeTransaction(pumpTrade({}));
    assert.equal(swaps[0]!.platforms, undefined);
  });

  it('an EVM swap sent to a platform trade contract carries the platform', () => {
    const token = seedAddress('platform token');
    const wbnb = '0xbb4cdb9cbd36b01bd1cbaebf2de08d9173bc095c';
    const pair = seedAddress('platform pair');
    const [token0, token1] = sortTokens(token, wbnb);
    const tokens = createTokenRegistry();
    tokens.registerToken('bsc', token, { decimals: 18, name: 'T', symbol: 'T' });
    const decode = (to: string) =>
      createEvmDecoder({ chain: 'bsc', tokens, pools: createPoolRegistry() }).decodeReceipt(
        buildReceipt({
          transactionHash: seedHash(`platform ${to}`),
          blockNumber: 5,
          from: seedAddress('trader'),
          to,
          logs: [
            encodePairCreated({ factory: '0xca143ce32fe78f1f7019d7d551a6402fc5350c73', token0, token1, pair }),
            encodeV2Swap({
              pair,
              sender: to,
              to: seedAddress('trader'),
              amount0In: 10n ** 18n,
              amount1In: 0n,
              amount0Out: 0n,
              amount1Out: 10n ** 15n,
            }),
          ],
        }),
        1_750_000_000_000,
      ).swaps;
    const [viaAxiom] = decode('0x05701DC0b8F6711f6DE3B282f46B10c813AFb02d');
    assert.deepEqual(viaAxiom!.platforms, ['axiom']);
    assertTopicValue(TOPICS.swaps, viaAxiom);
    assert.equal(decode(seedAddress('some router'))[0]!.platforms, undefined);
  });

  it('the simulator routes about 40% of trades through named platforms, recognisably', () => {
    const decoder = createSolanaDecoder();
    const names = new Map<string, number>();
    let routed = 0;
    for (let n = 0; n < 300; n++) {
      const route = simSolanaRoute(`sim tx ${n}`);
      const [swap] = decoder.decodeTransaction(pumpTrade(route)).swaps;
      if (route.router || route.loadedAddresses) {
        routed++;
        assert.equal(swap!.platforms?.length, 1, JSON.stringify(route));
        names.set(swap!.platforms![0]!, (names.get(swap!.platforms![0]!) ?? 0) + 1);
      } else assert.equal(swap!.platforms, undefined);
    }
    assert.ok(routed > 90 && routed < 150, `${routed} of 300 routed`);
    assert.ok(names.size >= 6, `${names.size} platforms seen`);
    const evm = Array.from({ length: 100 }, (_, n) => simEvmRouter('bsc', `evm ${n}`)).filter(Boolean);
    assert.ok(evm.length > 20 && evm.length < 60);
    assert.equal(simEvmRouter('arc', 'x'), null, 'no platform facts on arc');
  });

  it('knows no platform on a chain without public facts', () => {
    assert.deepEqual(createPlatformRegistry().platformsOf('arc', ['0x1']), []);
  });
});
