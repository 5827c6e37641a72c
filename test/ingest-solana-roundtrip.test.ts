// Encoder → decoder round trips: every protocol's encoded transaction decodes back to exactly the
// record the inputs mean (expected values computed here from the inputs, not by the decoder).
import assert from 'node:assert/strict';
import { TOPICS, assertTopicValue, type RawSwap } from '../core/topics.ts';
import {
  associatedTokenAddress,
  base58Decode,
  createSolanaDecoder,
  encodeCalls,
  encodeLaunchLabTrade,
  encodeMeteoraDbcSwap,
  encodePumpComplete,
  encodePumpCreate,
  encodePumpMigration,
  encodePumpSwapBuy,
  encodePumpSwapSell,
  encodePumpTrade,
  encodeRaydiumAmmV4Swap,
  encodeRaydiumClmmSwap,
  encodeRaydiumCpmmSwap,
  pumpBondingCurve,
  pumpCreateCall,
  pumpTradeCall,
  solanaAddress,
  solanaSignature,
  PUMP_TRADE_LAYOUTS,
  type SolanaTransaction,
} from '../ingest/solana/index.ts';

const WSOL = 'So11111111111111111111111111111111111111112';
const ROUTER = 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4';
const decoder = createSolanaDecoder();
const SLOT = 310_000_000;
const BLOCK_TIME = 1_772_000_000;

function decode(tx: SolanaTransaction) {
  const out = decoder.decodeTransaction(JSON.parse(JSON.stringify(tx)) as SolanaTransaction);
  out.swaps.forEach((swap) => assertTopicValue(TOPICS.swaps, swap));
  out.events.forEach((event) => assertTopicValue(TOPICS.tokenEvents, event));
  return out;
}
const position = (tx: SolanaTransaction, eventIndex: number) => {
  const signature = tx.transaction.signatures[0]!;
  return {
    id: `solana:${signature}:${eventIndex}`,
    chain: 'solana' as const,
    transactionHash: signature,
    eventIndex,
    blockNumber: SLOT,
    blockTime: BLOCK_TIME * 1000,
  };
};
const envelope = { slot: SLOT, blockTime: BLOCK_TIME };
const mint = solanaAddress('rt:mint');

/** 3000/793.1 (percent of the curve sold), to 30 places rounded half up, trailing zeros dropped. */
const PROGRESS_3000_OVER_7931 = (() => {
  const scaled = (3000n * 10n ** 31n * 2n + 7931n) / (2n * 7931n);
  const digits = scaled.toString();
  return `${digits.slice(0, -30)}.${digits.slice(-30)}`.replace(/0+$/, '');
})();
const user = solanaAddress('rt:user');

describe('solana encoders round trip', () => {
  it('makes deterministic 32-byte addresses and 64-byte signatures', () => {
    assert.equal(solanaAddress('x'), solanaAddress('x'));
    assert.notEqual(solanaAddress('x'), solanaAddress('y'));
    assert.equal(base58Decode(solanaSignature('x')).length, 64);
    assert.equal(base58Decode(solanaAddress('x')).length, 32);
  });

  for (const layout of Object.keys(PUMP_TRADE_LAYOUTS) as (keyof typeof PUMP_TRADE_LAYOUTS)[]) {
    for (const emit of ['both', 'cpi', 'log'] as const) {
      it(`pump.fun trade, ${layout} layout, emitted by ${emit}`, () => {
        const isBuy = layout !== 'oct2025';
        const input = {
          layout,
          mint,
          user,
          isBuy,
          solAmount: 1_000_000_000n,
          tokenAmount: 30_000_000_000_000n,
          timestamp: 1_772_000_000n,
          virtualSolReserves: 31_000_000_000n,
          virtualTokenReserves: 1_043_000_000_000_000n,
          realSolReserves: 1_000_000_000n,
          realTokenReserves: 763_100_000_000_000n,
          ...(layout === 'jan2026' ? { mayhemMode: true } : {}),
        };
        const tx = encodePumpTrade({ ...input, ...envelope, emit });
        const generation = PUMP_TRADE_LAYOUTS[layout];
        // Default fees: 95 bps and 30 bps of the curve amount, rounded up.
        const fees =
          generation >= 16 ? { platform: String(9_500_000 + 3_000_000), transaction: '5000' } : { transaction: '5000' };
        const expected: RawSwap = {
          ...position(tx, 0),
          token: mint,
          quoteAsset: WSOL,
          tokenAmount: '30000000000000',
          tokenDecimals: 6,
          quoteAmount: '1000000000',
          quoteDecimals: 9,
          side: isBuy ? 'buy' : 'sell',
          trader: user,
          pool: pumpBondingCurve(mint),
          dex: 'pumpfun',
          launchpad: 'pumpfun',
          reserves: { token: '763100000000000', quote: '1000000000' },
          curve: {
            // (793.1e12 − 763.1e12) / 793.1e12 · 100 = 3000/793.1 %
            progressPct: PROGRESS_3000_OVER_7931,
            virtualTokenReserves: '1043000000000000',
            virtualQuoteReserves: '31000000000',
            realTokenReserves: '763100000000000',
            realQuoteReserves: '1000000000',
            complete: false,
          },
          fees,
          ...(generation >= 23 ? { mayhemMode: layout === 'jan2026' } : {}),
        };
        const { swaps, events } = decode(tx);
        assert.deepEqual(swaps, [expected]);
        assert.deepEqual(
          events.map((e) => e.kind),
          ['balance', 'balance'],
        );
      });
    }
  }

  it('pump.fun create + dev buy + complete in one routed v0 transaction', () => {
    const create = pumpCreateCall({
      layout: 'feb2026',
      name: 'Cat',
      symbol: 'CAT',
      uri: 'https://x/cat.json',
      mint,
      user,
      timestamp: 1n,
      isMayhemMode: true,
    });
    const buy = pumpTradeCall({
      layout: 'feb2026',
      mint,
      user,
      isBuy: true,
      solAmount: 85_005_359_057n,
      tokenAmount: 793_100_000_000_000n,
      timestamp: 1n,
      virtualSolReserves: 115_005_359_057n,
      virtualTokenReserves: 279_900_000_000_000n,
      realSolReserves: 85_005_359_057n,
      realTokenReserves: 0n,
      complete: true,
    });
    const tx = encodeCalls({ ...envelope, router: ROUTER, loadedAddresses: { readonly: [pumpBondingCurve(mint)] } }, [
      create,
      buy,
    ]);
    const { swaps, events } = decode(tx);
    assert.deepEqual(events.slice(0, 1), [
      {
        ...position(tx, 0),
        kind: 'created',
        token: mint,
        name: 'Cat',
        symbol: 'CAT',
        uri: 'https://x/cat.json',
        decimals: 6,
        supply: '1000000000000000',
        creator: user,
        launchpad: 'pumpfun',
        pool: pumpBondingCurve(mint),
        quoteAsset: WSOL,
        mayhemMode: true,
      },
    ]);
    assert.equal(swaps.length, 1);
    assert.deepEqual([swaps[0]!.eventIndex, swaps[0]!.curve!.progressPct, swaps[0]!.curve!.complete], [1, '100', true]);
    assert.deepEqual(events[1], { ...position(tx, 2), kind: 'curve', token: mint, progressPct: '100', complete: true });
    // The user holds the 793.1 M bought; the curve keeps the 206.9 M never sold.
    assert.deepEqual(
      events.slice(2).map((e) => e.kind === 'balance' && [e.owner, e.amount]),
      [
        [pumpBondingCurve(mint), '206900000000000'],
        [user, '793100000000000'],
      ],
    );
  });

  it('pump.fun standalone create, complete and migration', () => {
    const created = decode(
      encodePumpCreate({ ...envelope, layout: 'legacy', name: 'A', symbol: 'A', uri: '', mint, user, timestamp: 5n }),
    );
    assert.equal(created.events[0]!.kind, 'created');
    const complete = encodePumpComplete({ ...envelope, user, mint, timestamp: 5n });
    assert.deepEqual(decode(complete).events, [
      { ...position(complete, 0), kind: 'curve', token: mint, progressPct: '100', complete: true },
    ]);
    const pool = solanaAddress('rt:pumpswap-pool');
    const migration = encodePumpMigration({ ...envelope, user, mint, timestamp: 5n, pool });
    assert.deepEqual(decode(migration).events, [
      { ...position(migration, 0), kind: 'graduated', token: mint, pool, dex: 'pumpswap' },
    ]);
  });

  for (const layout of ['apr2025', 'may2025', 'oct2025', 'may2026'] as const) {
    it(`PumpSwap buy and sell, ${layout} layout`, () => {
      const pool = solanaAddress('rt:pool');
      const common = {
        ...envelope,
        layout,
        pool,
        user,
        baseMint: mint,
        timestamp: 9n,
        baseAmount: 2_000_000_000n,
        quoteAmount: 10_000_000n,
        poolBaseTokenReserves: 200_000_000_000_000n,
        poolQuoteTokenReserves: 100_000_000_000n,
      };
      // Fees: lp ceil(1e7·20/1e4) = 20 000, protocol 5 000, creator 5 000 (only from May 2025).
      const creator = layout === 'apr2025' ? 0 : 5000;
      const buy = encodePumpSwapBuy(common);
      assert.deepEqual(decode(buy).swaps, [
        {
          ...position(buy, 0),
          token: mint,
          quoteAsset: WSOL,
          tokenAmount: '2000000000',
          tokenDecimals: 6,
          quoteAmount: '10000000',
          quoteDecimals: 9,
          side: 'buy',
          trader: user,
          pool,
          dex: 'pumpswap',
          launchpad: null,
          reserves: {
            token: String(200_000_000_000_000 - 2_000_000_000),
            quote: String(100_000_000_000 + 10_000_000 + 20_000),
          },
          fees: { dex: '20000', platform: String(5000 + creator), transaction: '5000' },
        },
      ]);
      const sell = encodePumpSwapSell({ ...common, emit: 'log' });
      const [swap] = decode(sell).swaps;
      assert.deepEqual(
        [swap!.side, swap!.reserves],
        [
          'sell',
          { token: String(200_000_000_000_000 + 2_000_000_000), quote: String(100_000_000_000 - 10_000_000 + 20_000) },
        ],
      );
    });
  }

  it('LaunchLab buy and the completing trade', () => {
    const poolState = solanaAddress('rt:ll');
    const base = {
      ...envelope,
      poolState,
      payer: user,
      baseMint: mint,
      totalBaseSell: 800_000_000_000_000n,
      virtualBase: 1_073_000_000_000_000n,
      virtualQuote: 30_000_000_000n,
      protocolFee: 250_000n,
      platformFee: 1_000_000n,
      creatorFee: 50_000n,
      shareFee: 0n,
    };
    const tx = encodeLaunchLabTrade({
      ...base,
      side: 'buy',
      poolStatus: 0,
      realBaseBefore: 0n,
      realQuoteBefore: 0n,
      realBaseAfter: 200_000_000_000_000n,
      realQuoteAfter: 98_700_000n,
      amountIn: 100_000_000n,
      amountOut: 200_000_000_000_000n,
    });
    assert.deepEqual(decode(tx).swaps, [
      {
        ...position(tx, 0),
        token: mint,
        quoteAsset: WSOL,
        tokenAmount: '200000000000000',
        tokenDecimals: 6,
        quoteAmount: '98700000',
        quoteDecimals: 9,
        side: 'buy',
        trader: user,
        pool: poolState,
        dex: 'raydium-launchlab',
        launchpad: 'launchlab',
        reserves: { token: '600000000000000', quote: '98700000' },
        curve: {
          progressPct: '25',
          virtualTokenReserves: '873000000000000',
          virtualQuoteReserves: '30098700000',
          realTokenReserves: '600000000000000',
          realQuoteReserves: '98700000',
          complete: false,
        },
        fees: { platform: '1300000', transaction: '5000' },
      },
    ]);
    const last = encodeLaunchLabTrade({
      ...base,
      side: 'sell',
      poolStatus: 1,
      realBaseBefore: 800_000_000_000_000n,
      realQuoteBefore: 85_000_000_000n,
      realBaseAfter: 800_000_000_000_000n,
      realQuoteAfter: 85_000_000_000n,
      amountIn: 1n,
      amountOut: 0n,
      emit: 'log',
    });
    const decoded = decode(last);
    assert.equal(decoded.swaps[0]!.curve!.complete, true);
    assert.deepEqual(decoded.events[0], {
      ...position(last, 1),
      kind: 'curve',
      token: mint,
      progressPct: '100',
      complete: true,
    });
  });

  it('Meteora DBC EvtSwap2 with curve completion', () => {
    const pool = solanaAddress('rt:dbc');
    const tx = encodeMeteoraDbcSwap({
      ...envelope,
      version: 2,
      pool,
      payer: user,
      baseMint: mint,
      side: 'buy',
      amountIn: 1_000_000_000n,
      amountOut: 5_000_000_000n,
      tradingFee: 10_000_000n,
      protocolFee: 2_000_000n,
      currentTimestamp: 3n,
      quoteReserveAmount: 85_000_000_000n,
      migrationThreshold: 85_000_000_000n,
      curveComplete: { baseReserve: 1n, quoteReserve: 85_000_000_000n },
    });
    const { swaps, events } = decode(tx);
    assert.deepEqual(swaps, [
      {
        ...position(tx, 0),
        token: mint,
        quoteAsset: WSOL,
        tokenAmount: '5000000000',
        tokenDecimals: 6,
        // Before fees: 1 SOL paid in, 0.012 SOL of it fees.
        quoteAmount: '988000000',
        quoteDecimals: 9,
        side: 'buy',
        trader: user,
        pool,
        dex: 'meteora-dbc',
        launchpad: 'meteora-dbc',
        curve: { progressPct: '100', realQuoteReserves: '85000000000', complete: true },
        fees: { platform: '12000000', transaction: '5000' },
      },
    ]);
    assert.deepEqual(events[0], { ...position(tx, 1), kind: 'curve', token: mint, progressPct: '100', complete: true });
    const v1 = encodeMeteoraDbcSwap({
      ...envelope,
      version: 1,
      pool,
      payer: user,
      baseMint: mint,
      side: 'sell',
      amountIn: 7n,
      amountOut: 3n,
      tradingFee: 0n,
      protocolFee: 0n,
      currentTimestamp: 3n,
    });
    assert.deepEqual(
      decode(v1).swaps.map((s) => [s.side, s.tokenAmount, s.quoteAmount]),
      [['sell', '7', '3']],
    );
  });

  for (const accountCount of [18, 17, 8] as const) {
    it(`Raydium AMM v4 (${accountCount} accounts) swap base in and out`, () => {
      const amm = solanaAddress(`rt:amm:${accountCount}`);
      const common = {
        ...envelope,
        amm,
        owner: user,
        coinMint: mint,
        pcMint: WSOL,
        coinDecimals: 6,
        pcDecimals: 9,
        poolCoin: 10_000_000_000_000n,
        poolPc: 500_000_000_000n,
        accountCount,
        router: ROUTER,
      };
      const buy = encodeRaydiumAmmV4Swap({
        ...common,
        kind: 'swapBaseIn',
        direction: 'pcToCoin',
        amountIn: 1_000_000_000n,
        amountOut: 19_900_000_000n,
      });
      assert.deepEqual(decode(buy).swaps, [
        {
          ...position(buy, 0),
          token: mint,
          quoteAsset: WSOL,
          tokenAmount: '19900000000',
          tokenDecimals: 6,
          quoteAmount: '1000000000',
          quoteDecimals: 9,
          side: 'buy',
          trader: user,
          pool: amm,
          dex: 'raydium-amm-v4',
          launchpad: null,
          reserves: { token: String(10_000_000_000_000 - 19_900_000_000), quote: '501000000000' },
          fees: { transaction: '5000' },
          router: ROUTER,
        },
      ]);
      const sell = encodeRaydiumAmmV4Swap({
        ...common,
        kind: 'swapBaseOut',
        direction: 'coinToPc',
        amountIn: 20_100_000_000n,
        amountOut: 1_000_000_000n,
      });
      assert.deepEqual(
        decode(sell).swaps.map((s) => [s.side, s.tokenAmount, s.quoteAmount, s.reserves]),
        [['sell', '20100000000', '1000000000', { token: '10020100000000', quote: '499000000000' }]],
      );
    });
  }

  it('Raydium CPMM (both layouts) and CLMM', () => {
    const poolId = solanaAddress('rt:cpmm');
    for (const layout of ['v1', 'v2'] as const) {
      const tx = encodeRaydiumCpmmSwap({
        ...envelope,
        layout,
        poolId,
        payer: user,
        inputMint: mint,
        outputMint: WSOL,
        inputDecimals: 6,
        outputDecimals: 9,
        inputVaultBefore: 1_000_000_000n,
        outputVaultBefore: 50_000_000_000n,
        inputAmount: 100_000_000n,
        outputAmount: 4_500_000_000n,
        tradeFee: 250_000n,
      });
      assert.deepEqual(decode(tx).swaps, [
        {
          ...position(tx, 0),
          token: mint,
          quoteAsset: WSOL,
          tokenAmount: '100000000',
          tokenDecimals: 6,
          quoteAmount: '4500000000',
          quoteDecimals: 9,
          side: 'sell',
          trader: user,
          pool: poolId,
          dex: 'raydium-cpmm',
          launchpad: null,
          reserves: { token: '1100000000', quote: '45500000000' },
          // The trade fee is in the input (token) units, so not reported as a quote fee; creator fee 0 is on the input too.
          fees: { transaction: '5000' },
        },
      ]);
    }
    const poolState = solanaAddress('rt:clmm');
    const tx = encodeRaydiumClmmSwap({
      ...envelope,
      poolState,
      sender: user,
      mint0: WSOL,
      mint1: mint,
      decimals0: 9,
      decimals1: 6,
      amount0: 2_000_000_000n,
      amount1: 70_000_000_000n,
      zeroForOne: true,
    });
    assert.deepEqual(decode(tx).swaps, [
      {
        ...position(tx, 0),
        token: mint,
        quoteAsset: WSOL,
        tokenAmount: '70000000000',
        tokenDecimals: 6,
        quoteAmount: '2000000000',
        quoteDecimals: 9,
        side: 'buy',
        trader: user,
        pool: poolState,
        dex: 'raydium-clmm',
        launchpad: null,
        fees: { transaction: '5000' },
      },
    ]);
    const balances = decode(tx).events;
    assert.deepEqual(
      balances.map((e) => e.kind === 'balance' && [e.token, e.owner, e.amount]),
      [[mint, user, '70000000000']],
    );
    assert.equal(associatedTokenAddress(user, mint).length > 30, true);
  });

  it('truncated logs keep the self-CPI copies; a failed transaction yields nothing', () => {
    const input = {
      ...envelope,
      layout: 'jan2026' as const,
      mint,
      user,
      isBuy: true,
      solAmount: 1n,
      tokenAmount: 1n,
      timestamp: 1n,
      virtualSolReserves: 30_000_000_001n,
      virtualTokenReserves: 1n,
      realSolReserves: 1n,
      realTokenReserves: 793_099_999_999_999n,
    };
    assert.equal(decode(encodePumpTrade({ ...input, truncateLogsAfter: 1 })).swaps.length, 1);
    assert.equal(decode(encodePumpTrade({ ...input, emit: 'log', truncateLogsAfter: 1 })).swaps.length, 0);
    assert.deepEqual(decode(encodePumpTrade({ ...input, err: { InstructionError: [0, 'Custom'] } })), {
      swaps: [],
      events: [],
    });
  });
});
