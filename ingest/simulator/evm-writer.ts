// SimEvents on base, bsc, robinhood and arc → transaction receipts built with ingest/evm's
// encoders: Uniswap V4 launches (Initialize + mint Transfer) and swaps, four.meme curve trades and
// its graduation to a PancakeSwap V2 pair, V3 reference pools, ERC-20 Transfers of the token
// legs, plain value transfers for funding. Wallet labels are off-chain: emitted as events.
import { CHAIN_INFO, EVM_NATIVE_ADDRESS } from '../../core/chains.ts';
import {
  buildReceipt,
  encodeFourMemeCreate,
  encodeFourMemeLiquidityAdded,
  encodeFourMemePurchase,
  encodeFourMemeSale,
  encodeFourMemeTradeStop,
  encodePairCreated,
  encodePancakeV3Swap,
  encodeTransfer,
  encodeV2Swap,
  encodeV2Sync,
  encodeV3Swap,
  encodeV4Initialize,
  encodeV4Swap,
  EVM_CONTRACTS,
  seedAddress,
  seedHash,
  sortTokens,
  type EncodedLog,
} from '../evm/index.ts';
import { simEvmRouter } from '../enrichment/sim-platforms.ts';
import { EVM_SETUP, launchPoolKey, type EvmChain } from './addresses.ts';
import { blockAt } from './clock.ts';
import { isqrt, sqrtPriceX96, tickOf, type PoolState } from './curves.ts';
import type { SimEvent, SimToken } from './model.ts';
import { labelRecord, type ChainRecord, type TokenMetadata } from './records.ts';
import { poolFeePips } from './venues.ts';

type Trade = Extract<SimEvent, { type: 'trade' }>;

const FOURMEME_MANAGER = EVM_CONTRACTS.fourMemeTokenManager2.bsc;
const PANCAKE_V2_FACTORY = EVM_CONTRACTS.pancakeV2Factory.bsc;
/** Gas price per chain (wei): what the fee of a transaction is computed with. */
const GAS_PRICE: Record<EvmChain, bigint> = {
  base: 10_000_000n,
  bsc: 100_000_000n,
  robinhood: 20_000_000n,
  arc: 20_000_000_000n,
};
const fixed = (text: string) => seedAddress(`spot-sim/${text}`);
const ROUTER = fixed('evm/router');
const LAUNCHER = fixed('evm/launcher');
const MIGRATOR = fixed('bsc/fourmeme-migrator');

/** Pool state in token0/token1 order, with sqrtPriceX96, liquidity and tick. */
function poolPrice(token0IsToken: boolean, pool: PoolState) {
  const [reserve0, reserve1] = token0IsToken ? [pool.token, pool.quote] : [pool.quote, pool.token];
  return {
    reserve0,
    reserve1,
    sqrtPriceX96: sqrtPriceX96(reserve0, reserve1),
    liquidity: isqrt(reserve0 * reserve1),
    tick: tickOf(reserve0, reserve1),
  };
}

export function createEvmWriter(seed: string, chain: EvmChain) {
  const setup = EVM_SETUP[chain];
  const wrapped = CHAIN_INFO[chain].native.wrapped.toLowerCase();
  // Log indexes run through a block, as nodes number them.
  let block = -1;
  let nextLogIndex = 0;

  function receipt(
    event: SimEvent,
    from: string,
    to: string | null,
    logs: EncodedLog[],
    gasUsed: bigint,
    tokens: TokenMetadata[] = [],
    value?: bigint,
  ): ChainRecord {
    const position = blockAt(chain, event.time);
    if (position.number !== block) {
      block = position.number;
      nextLogIndex = 0;
    }
    const transactionHash = seedHash(`spot-sim/${seed}/${event.tx}`);
    const built = buildReceipt({
      transactionHash,
      blockNumber: position.number,
      from,
      to,
      logs,
      gasUsed,
      effectiveGasPrice: GAS_PRICE[chain],
      firstLogIndex: nextLogIndex,
    });
    nextLogIndex += logs.length;
    // Object.assign, not `{ ...built, … }`: V8 makes a hidden class per property added after a leading spread.
    const record: ChainRecord = {
      kind: 'evm',
      chain,
      receipt: Object.assign(built, { blockTimestamp: `0x${Math.floor(position.timeMs / 1000).toString(16)}` }),
      blockTimeMs: position.timeMs,
      tokens,
    };
    if (value !== undefined) record.transaction = { from, to, value: `0x${value.toString(16)}`, input: '0x' };
    return record;
  }

  const metadata = (token: SimToken): TokenMetadata => ({
    address: token.address,
    decimals: token.decimals,
    name: token.name,
    symbol: token.symbol,
    supply: token.supply.toString(),
  });

  function reference(event: Extract<SimEvent, { type: 'reference' }>): ChainRecord {
    const ref = setup.reference;
    if (!ref) throw new RangeError(`${chain} has no reference pool`);
    const [token0] = sortTokens(wrapped, ref.stable);
    const nativeIs0 = token0 === wrapped;
    // The pool's view: positive = received. A buy of native pays stable in and native out.
    const nativeDelta = event.side === 'buy' ? -event.nativeAmount : event.nativeAmount;
    const stableDelta = event.side === 'buy' ? event.stableAmount : -event.stableAmount;
    const price = poolPrice(nativeIs0, { token: event.reserves.native, quote: event.reserves.stable });
    const swap = {
      pool: ref.pool,
      sender: ROUTER,
      recipient: event.trader,
      amount0: nativeIs0 ? nativeDelta : stableDelta,
      amount1: nativeIs0 ? stableDelta : nativeDelta,
      sqrtPriceX96: price.sqrtPriceX96,
      liquidity: price.liquidity,
      tick: price.tick,
    };
    return receipt(
      event,
      event.trader,
      ROUTER,
      [ref.dex === 'pancakeswap-v3' ? encodePancakeV3Swap(swap) : encodeV3Swap(swap)],
      130_000n,
    );
  }

  function launch(event: Extract<SimEvent, { type: 'launch' }>): ChainRecord {
    const { token } = event;
    if (token.launchpad === 'fourmeme') {
      return receipt(
        event,
        token.creator,
        FOURMEME_MANAGER,
        [
          encodeFourMemeCreate({
            manager: FOURMEME_MANAGER,
            creator: token.creator,
            token: token.address,
            requestId: BigInt(token.id),
            name: token.name,
            symbol: token.symbol,
            totalSupply: token.supply,
            launchTime: BigInt(Math.floor(event.time / 1000)),
          }),
          encodeTransfer({ token: token.address, from: EVM_NATIVE_ADDRESS, to: FOURMEME_MANAGER, value: token.supply }),
        ],
        2_000_000n,
      );
    }
    const key = launchPoolKey(chain, token.address);
    const price = poolPrice(key.currency0 === token.address, token.pool ?? { token: token.supply, quote: 1n });
    return receipt(
      event,
      token.creator,
      LAUNCHER,
      [
        encodeV4Initialize({
          ...key,
          poolManager: setup.poolManager,
          sqrtPriceX96: price.sqrtPriceX96,
          tick: price.tick,
        }),
        encodeTransfer({ token: token.address, from: EVM_NATIVE_ADDRESS, to: setup.poolManager, value: token.supply }),
      ],
      3_000_000n,
      [metadata(token)],
    );
  }

  /** The token leg of a trade: from the venue to the trader on a buy, back on a sell. */
  function tokenLeg(event: Trade, venue: string): EncodedLog {
    const [from, to] = event.side === 'buy' ? [venue, event.trader] : [event.trader, venue];
    return encodeTransfer({ token: event.token.address, from, to, value: event.tokenAmount });
  }

  function trade(event: Trade): ChainRecord {
    const { token } = event;
    const isBuy = event.side === 'buy';
    // About 40 % of trades are sent to a terminal's trade contract instead (sim-platforms.ts).
    const platform = simEvmRouter(chain, event.tx);
    if (event.venue === 'curve') {
      const curve = event.curve!;
      const args = {
        manager: FOURMEME_MANAGER,
        token: token.address,
        account: event.trader,
        price: (event.quoteAmount * 10n ** 18n) / event.tokenAmount,
        amount: event.tokenAmount,
        cost: event.quoteAmount,
        fee: event.platformFee,
        offers: curve.realToken,
        funds: curve.realQuote,
      };
      return receipt(
        event,
        event.trader,
        platform ?? FOURMEME_MANAGER,
        [isBuy ? encodeFourMemePurchase(args) : encodeFourMemeSale(args), tokenLeg(event, FOURMEME_MANAGER)],
        180_000n,
      );
    }
    const pool = event.pool!;
    if (event.dex === 'uniswap-v4') {
      const key = launchPoolKey(chain, token.address);
      const tokenIs0 = key.currency0 === token.address;
      // V4 reports the swapper's delta: negative = paid.
      const tokenDelta = isBuy ? event.tokenAmount : -event.tokenAmount;
      const quoteDelta = isBuy ? -event.quoteAmount : event.quoteAmount;
      const price = poolPrice(tokenIs0, pool);
      return receipt(
        event,
        event.trader,
        platform ?? ROUTER,
        [
          encodeV4Swap({
            poolManager: setup.poolManager,
            id: event.poolAddress as `0x${string}`,
            sender: platform ?? ROUTER,
            amount0: tokenIs0 ? tokenDelta : quoteDelta,
            amount1: tokenIs0 ? quoteDelta : tokenDelta,
            sqrtPriceX96: price.sqrtPriceX96,
            liquidity: price.liquidity,
            tick: price.tick,
            fee: Number(poolFeePips(token.launchpad, 'uniswap-v4')),
          }),
          tokenLeg(event, setup.poolManager),
        ],
        160_000n,
      );
    }
    // PancakeSwap V2 pair of a graduated four.meme token, quoted in WBNB.
    const [token0] = sortTokens(token.address, wrapped);
    const tokenIs0 = token0 === token.address;
    const [tokenIn, tokenOut] = isBuy ? [0n, event.tokenAmount] : [event.tokenAmount, 0n];
    const [quoteIn, quoteOut] = isBuy ? [event.quoteAmount, 0n] : [0n, event.quoteAmount];
    const price = poolPrice(tokenIs0, pool);
    return receipt(
      event,
      event.trader,
      platform ?? ROUTER,
      [
        tokenLeg(event, event.poolAddress),
        encodeV2Sync({ pair: event.poolAddress, reserve0: price.reserve0, reserve1: price.reserve1 }),
        encodeV2Swap({
          pair: event.poolAddress,
          sender: platform ?? ROUTER,
          to: event.trader,
          amount0In: tokenIs0 ? tokenIn : quoteIn,
          amount1In: tokenIs0 ? quoteIn : tokenIn,
          amount0Out: tokenIs0 ? tokenOut : quoteOut,
          amount1Out: tokenIs0 ? quoteOut : tokenOut,
        }),
      ],
      140_000n,
    );
  }

  /** four.meme ends the curve and adds the liquidity to a new PancakeSwap V2 pair. */
  function graduate(event: Extract<SimEvent, { type: 'graduate' }>): ChainRecord {
    const { token, reserves } = event;
    const [token0, token1] = sortTokens(token.address, wrapped);
    const price = poolPrice(token0 === token.address, reserves);
    return receipt(
      event,
      MIGRATOR,
      FOURMEME_MANAGER,
      [
        encodeFourMemeTradeStop({ manager: FOURMEME_MANAGER, token: token.address }),
        encodeFourMemeLiquidityAdded({
          manager: FOURMEME_MANAGER,
          base: token.address,
          offers: reserves.token,
          quote: EVM_NATIVE_ADDRESS,
          funds: reserves.quote,
        }),
        encodePairCreated({
          factory: PANCAKE_V2_FACTORY,
          token0,
          token1,
          pair: event.pool,
          allPairsLength: BigInt(token.id + 1_000_000),
        }),
        encodeTransfer({ token: token.address, from: FOURMEME_MANAGER, to: event.pool, value: reserves.token }),
        encodeV2Sync({ pair: event.pool, reserve0: price.reserve0, reserve1: price.reserve1 }),
      ],
      3_500_000n,
    );
  }

  function funding(event: Extract<SimEvent, { type: 'funding' }>): ChainRecord {
    // On arc a native USDC move also shows as a Transfer of its 6-decimal ERC-20 interface.
    const logs =
      chain === 'arc'
        ? [
            encodeTransfer({
              token: CHAIN_INFO.arc.native.wrapped,
              from: event.from,
              to: event.to,
              value: event.amount / 10n ** 12n,
            }),
          ]
        : [];
    return receipt(event, event.from, event.to, logs, 21_000n, [], event.amount);
  }

  return {
    write(event: SimEvent): ChainRecord[] {
      switch (event.type) {
        case 'walletLabel': {
          const position = blockAt(chain, event.time);
          return [labelRecord(event, seedHash(`spot-sim/${seed}/${event.tx}`), position.number, position.timeMs)];
        }
        case 'funding':
          return [funding(event)];
        case 'reference':
          return [reference(event)];
        case 'launch':
          return [launch(event)];
        case 'trade':
          return [trade(event)];
        case 'graduate':
          return [graduate(event)];
      }
    },
  };
}
