// Encoders → receipt → decoder gives back exactly the intended records, for every protocol.
import assert from 'node:assert/strict';
import type { Chain } from '../core/chains.ts';
import { assertTopicValue, TOPICS, type RawSwap, type TokenEvent } from '../core/topics.ts';
import {
  buildReceipt,
  createEvmDecoder,
  createPoolRegistry,
  createTokenRegistry,
  seedAddress,
  seedHash,
  sortTokens,
  v4PoolId,
  encodeAerodromePoolCreated,
  encodeAerodromeSwap,
  encodeAerodromeSync,
  encodeFourMemeCreate,
  encodeFourMemeLiquidityAdded,
  encodeFourMemePurchase,
  encodeFourMemePurchaseV1,
  encodeFourMemeSale,
  encodeFourMemeSaleV1,
  encodeFourMemeTradeStop,
  encodePairCreated,
  encodePancakeV3Swap,
  encodePoolCreated,
  encodeTransfer,
  encodeV2Swap,
  encodeV2Sync,
  encodeV3Swap,
  encodeV4Initialize,
  encodeV4Swap,
  type EncodedLog,
} from '../ingest/evm/index.ts';

const E18 = 10n ** 18n;
const NATIVE = '0x0000000000000000000000000000000000000000';
const TX = seedHash('round trip tx');
const TRADER = seedAddress('trader');
const ROUTER = seedAddress('router');
const TOKEN = seedAddress('token');
const WETH_BASE = '0x4200000000000000000000000000000000000006';
const WBNB = '0xbb4cdb9cbd36b01bd1cbaebf2de08d9173bc095c';
const USDC_BASE = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';
const BLOCK = 1234;
const TIME = 1_750_000_000_000;
const GAS_FEE = (150_000n * 3_000_000_000n).toString();

function decode(chain: Chain, logs: EncodedLog[], firstLogIndex = 40) {
  const tokens = createTokenRegistry();
  tokens.registerToken(chain, TOKEN, { decimals: 18, name: 'Token', symbol: 'TKN' });
  const pools = createPoolRegistry();
  const decoder = createEvmDecoder({ chain, tokens, pools });
  const receipt = buildReceipt({
    transactionHash: TX,
    blockNumber: BLOCK,
    from: TRADER,
    to: ROUTER,
    logs,
    gasUsed: 150_000n,
    effectiveGasPrice: 3_000_000_000n,
    firstLogIndex,
  });
  // Through JSON, as an RPC node would deliver it.
  const out = decoder.decodeReceipt(JSON.parse(JSON.stringify(receipt)), TIME);
  for (const swap of out.swaps) assertTopicValue(TOPICS.swaps, swap);
  for (const event of out.events) assertTopicValue(TOPICS.tokenEvents, event);
  return { ...out, pools, tokens, decoder };
}

const at = (chain: Chain, eventIndex: number) => ({
  id: `${chain}:${TX}:${eventIndex}`,
  chain,
  transactionHash: TX,
  eventIndex,
  blockNumber: BLOCK,
  blockTime: TIME,
});

function swapRecord(chain: Chain, eventIndex: number, fields: Partial<RawSwap>): RawSwap {
  return {
    ...at(chain, eventIndex),
    token: TOKEN,
    quoteAsset: NATIVE,
    tokenAmount: '0',
    tokenDecimals: 18,
    quoteAmount: '0',
    quoteDecimals: 18,
    side: 'buy',
    trader: TRADER,
    pool: '',
    dex: '',
    launchpad: null,
    ...fields,
  } as RawSwap;
}

describe('ingest/evm encoders round trip', () => {
  it('derives addresses and hashes deterministically from seed texts', () => {
    assert.match(seedAddress('x'), /^0x[0-9a-f]{40}$/);
    assert.equal(seedAddress('x'), seedAddress('x'));
    assert.notEqual(seedAddress('x'), seedAddress('y'));
    assert.equal(seedHash('x').slice(0, 42), seedAddress('x'));
    assert.match(seedHash('x'), /^0x[0-9a-f]{64}$/);
  });

  it('encodes the same words a V2 swap log holds on chain', () => {
    const log = encodeV2Swap({
      pair: ROUTER,
      sender: TRADER,
      to: TRADER,
      amount0In: 0n,
      amount1In: E18,
      amount0Out: 1000n * E18,
      amount1Out: 0n,
    });
    assert.deepEqual(log.topics, [
      '0xd78ad95fa46c994b6551d0da85fc275fe613ce37657fb8d5e3d130840159d822',
      `0x${TRADER.slice(2).padStart(64, '0')}`,
      `0x${TRADER.slice(2).padStart(64, '0')}`,
    ]);
    assert.equal(
      log.data,
      `0x${'0'.repeat(64)}${'de0b6b3a7640000'.padStart(64, '0')}${'3635c9adc5dea00000'.padStart(64, '0')}${'0'.repeat(64)}`,
    );
    const v3 = encodeV3Swap({
      pool: ROUTER,
      sender: TRADER,
      recipient: TRADER,
      amount0: -(10n * E18),
      amount1: 1n,
      sqrtPriceX96: 1n,
      liquidity: 1n,
      tick: -262461,
    });
    assert.equal(v3.data.slice(2, 66), 'ffffffffffffffffffffffffffffffffffffffffffffffff7538dcfb76180000');
    assert.equal(v3.data.slice(-64), 'fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffbfec3');
  });

  it('round-trips Uniswap V2 PairCreated + Sync + Swap on base', () => {
    const pair = seedAddress('pair');
    const [token0, token1] = sortTokens(TOKEN, WETH_BASE);
    const tokenIs0 = token0 === TOKEN;
    const reserves = { token: 5_000_000n * E18, quote: 20n * E18 };
    const out = decode('base', [
      encodePairCreated({ factory: '0x8909dc15e40173ff4699343b6eb8132c65e18ec6', token0, token1, pair }),
      encodeV2Sync({
        pair,
        reserve0: tokenIs0 ? reserves.token : reserves.quote,
        reserve1: tokenIs0 ? reserves.quote : reserves.token,
      }),
      encodeV2Swap({
        pair,
        sender: ROUTER,
        to: TRADER,
        amount0In: tokenIs0 ? 0n : 2n * E18,
        amount1In: tokenIs0 ? 2n * E18 : 0n,
        amount0Out: tokenIs0 ? 100_000n * E18 : 0n,
        amount1Out: tokenIs0 ? 0n : 100_000n * E18,
      }),
    ]);
    assert.deepEqual(out.swaps, [
      swapRecord('base', 42, {
        quoteAsset: WETH_BASE,
        tokenAmount: (100_000n * E18).toString(),
        quoteAmount: (2n * E18).toString(),
        side: 'buy',
        pool: pair,
        dex: 'uniswap-v2',
        reserves: { token: reserves.token.toString(), quote: reserves.quote.toString() },
        fees: { dex: ((2n * E18 * 3000n) / 1_000_000n).toString(), transaction: GAS_FEE },
      }),
    ]);
  });

  it('round-trips PancakeSwap V2 and PancakeSwap V3 on bsc', () => {
    const pair = seedAddress('pcs pair');
    const pool = seedAddress('pcs v3 pool');
    const [token0, token1] = sortTokens(TOKEN, WBNB);
    const tokenIs0 = token0 === TOKEN;
    const tokenIn = 3n * E18;
    const bnbOut = E18 / 4n;
    const out = decode(
      'bsc',
      [
        encodePairCreated({ factory: '0xca143ce32fe78f1f7019d7d551a6402fc5350c73', token0, token1, pair }),
        encodeV2Swap({
          pair,
          sender: ROUTER,
          to: ROUTER,
          amount0In: tokenIs0 ? tokenIn : 0n,
          amount1In: tokenIs0 ? 0n : tokenIn,
          amount0Out: tokenIs0 ? 0n : bnbOut,
          amount1Out: tokenIs0 ? bnbOut : 0n,
        }),
        encodePoolCreated({
          factory: '0x0bfbcf9fa4f9c56b0f40a671ad40e0805a091865',
          token0,
          token1,
          fee: 100,
          tickSpacing: 1,
          pool,
        }),
        encodePancakeV3Swap({
          pool,
          sender: ROUTER,
          recipient: TRADER,
          sqrtPriceX96: 2n ** 96n,
          liquidity: E18,
          tick: 0,
          protocolFeesToken0: 5n,
          protocolFeesToken1: 6n,
          amount0: tokenIs0 ? -tokenIn : bnbOut,
          amount1: tokenIs0 ? bnbOut : -tokenIn,
        }),
      ],
      0,
    );
    assert.deepEqual(out.swaps, [
      swapRecord('bsc', 1, {
        quoteAsset: WBNB,
        tokenAmount: tokenIn.toString(),
        quoteAmount: bnbOut.toString(),
        side: 'sell',
        pool: pair,
        dex: 'pancakeswap-v2',
        fees: { dex: ((bnbOut * 2500n) / 1_000_000n).toString(), transaction: GAS_FEE },
      }),
      swapRecord('bsc', 3, {
        quoteAsset: WBNB,
        tokenAmount: tokenIn.toString(),
        quoteAmount: bnbOut.toString(),
        side: 'buy',
        pool,
        dex: 'pancakeswap-v3',
        fees: { dex: ((bnbOut * 100n) / 1_000_000n).toString() },
      }),
    ]);
  });

  it('round-trips Uniswap V3 PoolCreated + Swap and Aerodrome PoolCreated + Sync + Swap on base', () => {
    const v3Pool = seedAddress('v3 pool');
    const aeroPool = seedAddress('aero pool');
    const [token0, token1] = sortTokens(TOKEN, USDC_BASE);
    const tokenIs0 = token0 === TOKEN;
    const out = decode('base', [
      encodePoolCreated({
        factory: '0x33128a8fc17869897dce68ed026d694621f6fdfd',
        token0,
        token1,
        fee: 10_000,
        tickSpacing: 200,
        pool: v3Pool,
      }),
      encodeV3Swap({
        pool: v3Pool,
        sender: ROUTER,
        recipient: ROUTER,
        sqrtPriceX96: 2n ** 96n,
        liquidity: 1n,
        tick: 0,
        amount0: tokenIs0 ? 7n * E18 : -12_345_678n,
        amount1: tokenIs0 ? -12_345_678n : 7n * E18,
      }),
      encodeAerodromePoolCreated({
        factory: '0x420dd381b31aef6683db6b902084cb0ffece40da',
        token0,
        token1,
        stable: true,
        pool: aeroPool,
      }),
      encodeAerodromeSync({
        pool: aeroPool,
        reserve0: tokenIs0 ? 9n * E18 : 77_000_000n,
        reserve1: tokenIs0 ? 77_000_000n : 9n * E18,
      }),
      encodeAerodromeSwap({
        pool: aeroPool,
        sender: ROUTER,
        to: TRADER,
        amount0In: tokenIs0 ? 0n : 8_000_000n,
        amount1In: tokenIs0 ? 8_000_000n : 0n,
        amount0Out: tokenIs0 ? E18 : 0n,
        amount1Out: tokenIs0 ? 0n : E18,
      }),
    ]);
    assert.deepEqual(out.swaps, [
      swapRecord('base', 41, {
        quoteAsset: USDC_BASE,
        quoteDecimals: 6,
        tokenAmount: (7n * E18).toString(),
        quoteAmount: '12345678',
        side: 'sell',
        pool: v3Pool,
        dex: 'uniswap-v3',
        fees: { dex: ((12_345_678n * 10_000n) / 1_000_000n).toString(), transaction: GAS_FEE },
      }),
      swapRecord('base', 44, {
        quoteAsset: USDC_BASE,
        quoteDecimals: 6,
        tokenAmount: E18.toString(),
        quoteAmount: '8000000',
        side: 'buy',
        pool: aeroPool,
        dex: 'aerodrome',
        reserves: { token: (9n * E18).toString(), quote: '77000000' },
        fees: { dex: ((8_000_000n * 500n) / 1_000_000n).toString() },
      }),
    ]);
  });

  it('round-trips a Uniswap V4 launch (mint + Initialize + Swap) on robinhood', () => {
    const poolManager = seedAddress('robinhood pool manager');
    const key = { currency0: NATIVE, currency1: TOKEN, fee: 2500, tickSpacing: 60, hooks: NATIVE };
    const id = v4PoolId(key);
    const supply = 1_000_000_000n * E18;
    const tokens = createTokenRegistry();
    tokens.registerToken('robinhood', TOKEN, { decimals: 18, name: 'Token', symbol: 'TKN' });
    const pools = createPoolRegistry();
    pools.markLaunchPool('robinhood', id, 'pools.trade');
    const decoder = createEvmDecoder({ chain: 'robinhood', tokens, pools });
    const receipt = buildReceipt({
      transactionHash: TX,
      blockNumber: BLOCK,
      from: TRADER,
      to: ROUTER,
      gasUsed: 150_000n,
      effectiveGasPrice: 3_000_000_000n,
      logs: [
        encodeTransfer({ token: TOKEN, from: NATIVE, to: poolManager, value: supply }),
        encodeV4Initialize({ poolManager, ...key, sqrtPriceX96: 2n ** 96n, tick: 0 }),
        encodeV4Swap({
          poolManager,
          id,
          sender: ROUTER,
          amount0: E18 / 2n,
          amount1: -(1_000n * E18),
          sqrtPriceX96: 2n ** 96n,
          liquidity: 1n,
          tick: 0,
          fee: 2500,
        }),
      ],
    });
    const out = decoder.decodeReceipt(receipt, TIME);
    assert.deepEqual(out.swaps, [
      swapRecord('robinhood', 2, {
        tokenAmount: (1_000n * E18).toString(),
        quoteAmount: (E18 / 2n).toString(),
        side: 'sell',
        pool: id,
        dex: 'uniswap-v4',
        launchpad: 'pools.trade',
        custody: poolManager.toLowerCase(), // the PoolManager that emitted the swap holds the pool's tokens
        fees: { dex: (((E18 / 2n) * 2500n) / 1_000_000n).toString(), transaction: GAS_FEE },
      }),
    ]);
    assert.deepEqual(out.events, [
      {
        ...at('robinhood', 0),
        kind: 'transfer',
        token: TOKEN,
        from: NATIVE,
        to: poolManager,
        amount: supply.toString(),
      },
      {
        ...at('robinhood', 1),
        kind: 'created',
        token: TOKEN,
        name: 'Token',
        symbol: 'TKN',
        uri: '',
        decimals: 18,
        supply: supply.toString(),
        creator: TRADER,
        launchpad: 'pools.trade',
        pool: id,
        quoteAsset: NATIVE,
      },
    ] satisfies TokenEvent[]);
    assert.deepEqual(pools.getPool('robinhood', id), {
      pool: id,
      token0: NATIVE,
      token1: TOKEN,
      dex: 'uniswap-v4',
      fee: 2500,
      launchpad: 'pools.trade',
    });
  });

  it('round-trips every four.meme event (create, V2/V1 trades, liquidity, stop) and graduation on bsc', () => {
    const manager = '0x5c952063c7fc8610ffdb798152d69f0b9550762b';
    const four = seedAddress('four token');
    const pair = seedAddress('four pair');
    const [token0, token1] = sortTokens(four, WBNB);
    const trade = { manager, token: four, account: TRADER, price: 11n, fee: 2n * 10n ** 15n, funds: 3n * E18 };
    const out = decode(
      'bsc',
      [
        encodeFourMemeCreate({
          manager,
          creator: TRADER,
          token: four,
          requestId: 9n,
          name: 'Four Token',
          symbol: 'FOUR',
          totalSupply: 10n ** 27n,
          launchTime: 1_750_000_000n,
        }),
        encodeFourMemePurchase({ ...trade, amount: 200_000_000n * E18, cost: 2n * E18, offers: 600_000_000n * E18 }),
        encodeFourMemeSale({ ...trade, amount: 100_000_000n * E18, cost: E18, offers: 700_000_000n * E18 }),
        encodeFourMemePurchaseV1({ manager, token: four, account: ROUTER, tokenAmount: 5n, etherAmount: 6n }),
        encodeFourMemeSaleV1({ manager, token: four, account: ROUTER, tokenAmount: 7n, etherAmount: 8n }),
        encodeFourMemeLiquidityAdded({
          manager,
          base: four,
          offers: 200_000_000n * E18,
          quote: NATIVE,
          funds: 24n * E18,
        }),
        encodePairCreated({ factory: '0xca143ce32fe78f1f7019d7d551a6402fc5350c73', token0, token1, pair }),
        encodeFourMemeTradeStop({ manager, token: four }),
      ],
      0,
    );
    const curveSwap = (
      eventIndex: number,
      side: 'buy' | 'sell',
      amount: bigint,
      cost: bigint,
      offers: bigint,
      progressPct: string,
    ) =>
      swapRecord('bsc', eventIndex, {
        token: four,
        tokenAmount: amount.toString(),
        quoteAmount: cost.toString(),
        side,
        pool: manager,
        dex: 'fourmeme',
        launchpad: 'fourmeme',
        reserves: { token: offers.toString(), quote: trade.funds.toString() },
        curve: {
          progressPct,
          realTokenReserves: offers.toString(),
          realQuoteReserves: trade.funds.toString(),
          complete: false,
        },
        fees: { platform: trade.fee.toString() },
      });
    const first = curveSwap(1, 'buy', 200_000_000n * E18, 2n * E18, 600_000_000n * E18, '25');
    first.fees = { ...first.fees, transaction: GAS_FEE };
    assert.deepEqual(out.swaps, [
      first,
      curveSwap(2, 'sell', 100_000_000n * E18, E18, 700_000_000n * E18, '12.5'),
      swapRecord('bsc', 3, {
        token: four,
        tokenAmount: '5',
        quoteAmount: '6',
        side: 'buy',
        trader: ROUTER,
        pool: manager,
        dex: 'fourmeme',
        launchpad: 'fourmeme',
      }),
      swapRecord('bsc', 4, {
        token: four,
        tokenAmount: '7',
        quoteAmount: '8',
        side: 'sell',
        trader: ROUTER,
        pool: manager,
        dex: 'fourmeme',
        launchpad: 'fourmeme',
      }),
    ]);
    assert.deepEqual(out.events, [
      {
        ...at('bsc', 0),
        kind: 'created',
        token: four,
        name: 'Four Token',
        symbol: 'FOUR',
        uri: '',
        decimals: 18,
        supply: (10n ** 27n).toString(),
        creator: TRADER,
        launchpad: 'fourmeme',
        pool: manager,
        quoteAsset: NATIVE,
      },
      { ...at('bsc', 5), kind: 'curve', token: four, progressPct: '100', complete: true },
      { ...at('bsc', 6), kind: 'graduated', token: four, pool: pair, dex: 'pancakeswap-v2' },
    ] satisfies TokenEvent[]);
  });
});
