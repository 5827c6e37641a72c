// EVM decoders from hand-written logs: data words are typed here as hex (two's complement for
// negatives), expected values come from CHAINS.md arithmetic, never from the decoder itself.
import assert from 'node:assert/strict';
import { keccak256, stringToBytes } from 'viem';
import type { Chain } from '../core/chains.ts';
import * as D from '../core/decimal.ts';
import { assertTopicValue, TOPICS, type RawSwap, type TokenEvent } from '../core/topics.ts';
import {
  createEvmDecoder,
  createPoolRegistry,
  createTokenRegistry,
  decodeEvmJson,
  TOPIC0,
  type EvmLog,
  type EvmReceipt,
  type EvmTransaction,
  type PoolRegistry,
  type TokenInfoProvider,
} from '../ingest/evm/index.ts';

// CHAINS.md 2.1, copied verbatim.
const TOPIC_TABLE: Record<string, string> = {
  'Transfer(address,address,uint256)': '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef',
  'Approval(address,address,uint256)': '0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925',
  'Deposit(address,uint256)': '0xe1fffcc4923d04b559f4d29a8bfc6cda04eb5b0d3c460751c2402c5c5cc9109c',
  'Withdrawal(address,uint256)': '0x7fcf532c15f0a6db0bd6d0e038bea71d30d808c7d98cb3bf7268a95bf5081b65',
  'Swap(address,uint256,uint256,uint256,uint256,address)':
    '0xd78ad95fa46c994b6551d0da85fc275fe613ce37657fb8d5e3d130840159d822',
  'Sync(uint112,uint112)': '0x1c411e9a96e071241c2f21f7726b17ae89e3cab4c78be50e062b03a9fffbbad1',
  'PairCreated(address,address,address,uint256)': '0x0d3648bd0f6ba80134a33ba9275ac585d9d315f0ad8355cddefde31afa28d0e9',
  'Mint(address,uint256,uint256)': '0x4c209b5fc8ad50758f13e2e1088ba56a560dff690a1c6fef26394f4c03821c4f',
  'Burn(address,uint256,uint256,address)': '0xdccd412f0b1252819cb1fd330b93224ca42612892bb3f4f789976e6d81936496',
  'Swap(address,address,int256,int256,uint160,uint128,int24)':
    '0xc42079f94a6350d7e6235f29174924f928cc2ac818eb64fed8004e115fbcca67',
  'PoolCreated(address,address,uint24,int24,address)':
    '0x783cca1c0412dd0d695e784568c96da2e9c22ff989357a2e8b1d9b2b4e6b7118',
  'Initialize(uint160,int24)': '0x98636036cb66a9c19a37435efc1e90142190214e8abeb821bdba3f2990dd4c95',
  'Swap(address,address,int256,int256,uint160,uint128,int24,uint128,uint128)':
    '0x19b47279256b2a23a1665c810c8d55a1758940ee09377d4f8d26497a3577dc83',
  'Swap(bytes32,address,int128,int128,uint160,uint128,int24,uint24)':
    '0x40e9cecb9f5f1f1c5b9c97dec2917b7ee92e57ba5563708daca94dd84ad7112f',
  'Initialize(bytes32,address,address,uint24,int24,address,uint160,int24)':
    '0xdd466e674ea557f56295e2d0218a125ea4b4f0f6f3307b95f85e6110838d6438',
  'ModifyLiquidity(bytes32,address,int24,int24,int256,bytes32)':
    '0xf208f4912782fd25c7f114ca3723a2d5dd6f3bcc3ac8db5af63baa85f711d5ec',
  'Swap(bytes32,address,int128,int128,uint160,uint128,int24,uint24,uint16)':
    '0x04206ad2b7c0f463bff3dd4f33c5735b0f2957a351e4f79763a4fa9e775dd237',
  'Swap(bytes32,address,int128,int128,uint24,uint24,uint16)':
    '0x3e8aae37f890eb1f9d63dd4d2062f3f0be757848a0f0760e4f3e53dad556e861',
  'Initialize(bytes32,address,address,address,uint24,bytes32,uint160,int24)':
    '0x426cc62fe6a33a40ba2788c2c87a9c34ee4582b95bc9fa5a7bb7ae70b750b99c',
  'Swap(address,address,uint256,uint256,uint256,uint256)':
    '0xb3e2773606abfd36b5bd91394b3a54d1398336c65005baf7bf7a05efeffaf75b',
  'Sync(uint256,uint256)': '0xcf2aa50876cdfbb541206f89af0ee78d44a2abf8d328e37fa4917f982149848a',
  'PoolCreated(address,address,bool,address,uint256)':
    '0x2128d88d14c80cb081c1252a5acff7a264671bf199ce226b53788fb26065005e',
  'PoolCreated(address,address,int24,address)': '0xab0d57f0df537bb25e80245ef7748fa62353808c54d6e528a9dd20887aed9ac2',
  'TokenPurchase(address,address,uint256,uint256,uint256,uint256,uint256,uint256)':
    '0x7db52723a3b2cdd6164364b3b766e65e540d7be48ffa89582956d8eaebe62942',
  'TokenSale(address,address,uint256,uint256,uint256,uint256,uint256,uint256)':
    '0x0a5575b3648bae2210cee56bf33254cc1ddfbc7bf637c0af2ac18b14fb1bae19',
  'TokenCreate(address,address,uint256,string,string,uint256,uint256,uint256)':
    '0x396d5e902b675b032348d3d2e9517ee8f0c4a926603fbc075d3d282ff00cad20',
  'LiquidityAdded(address,uint256,address,uint256)':
    '0xc18aa71171b358b706fe3dd345299685ba21a5316c66ffa9e319268b033c44b0',
  'TradeStop(address)': '0x8f9ab4bd7eff0d085f91575d50cd83f97aa5258e24ded7630d4fd6739e857132',
  'TokenPurchase(address,address,uint256,uint256)':
    '0x623b3804fa71d67900d064613da8f94b9617215ee90799290593e1745087ad18',
  'TokenSale(address,address,uint256,uint256)': '0x3aa3f154f6bf5e3490d1a7205aa8d1412e76d26f9d186830de86fb9309224040',
};
const T = (signature: string) => TOPIC_TABLE[signature]!;
const SIG = {
  transfer: T('Transfer(address,address,uint256)'),
  v2Swap: T('Swap(address,uint256,uint256,uint256,uint256,address)'),
  v2Sync: T('Sync(uint112,uint112)'),
  pairCreated: T('PairCreated(address,address,address,uint256)'),
  v3Swap: T('Swap(address,address,int256,int256,uint160,uint128,int24)'),
  v3PoolCreated: T('PoolCreated(address,address,uint24,int24,address)'),
  pancakeV3Swap: T('Swap(address,address,int256,int256,uint160,uint128,int24,uint128,uint128)'),
  v4Swap: T('Swap(bytes32,address,int128,int128,uint160,uint128,int24,uint24)'),
  v4Initialize: T('Initialize(bytes32,address,address,uint24,int24,address,uint160,int24)'),
  infinityClSwap: T('Swap(bytes32,address,int128,int128,uint160,uint128,int24,uint24,uint16)'),
  infinityBinSwap: T('Swap(bytes32,address,int128,int128,uint24,uint24,uint16)'),
  infinityClInitialize: T('Initialize(bytes32,address,address,address,uint24,bytes32,uint160,int24)'),
  aerodromeSwap: T('Swap(address,address,uint256,uint256,uint256,uint256)'),
  aerodromeSync: T('Sync(uint256,uint256)'),
  aerodromePoolCreated: T('PoolCreated(address,address,bool,address,uint256)'),
  slipstreamPoolCreated: T('PoolCreated(address,address,int24,address)'),
  fourMemePurchase: T('TokenPurchase(address,address,uint256,uint256,uint256,uint256,uint256,uint256)'),
  fourMemeSale: T('TokenSale(address,address,uint256,uint256,uint256,uint256,uint256,uint256)'),
  fourMemeCreate: T('TokenCreate(address,address,uint256,string,string,uint256,uint256,uint256)'),
  fourMemeLiquidityAdded: T('LiquidityAdded(address,uint256,address,uint256)'),
  fourMemeTradeStop: T('TradeStop(address)'),
  fourMemePurchaseV1: T('TokenPurchase(address,address,uint256,uint256)'),
  fourMemeSaleV1: T('TokenSale(address,address,uint256,uint256)'),
};

// Words of a log, by hand: non-negative numbers in hex, addresses left-padded.
const word = (n: bigint) => n.toString(16).padStart(64, '0');
const addrWord = (a: string) => a.slice(2).toLowerCase().padStart(64, '0');
const topic = (a: string) => `0x${addrWord(a)}`;
const data = (...words: string[]) => `0x${words.join('')}`;
const ZERO_WORD = word(0n);
const E18 = 10n ** 18n;

const TX = '0x' + 'ab'.repeat(32);
const TRADER = '0x9999999999999999999999999999999999999999';
const ROUTER = '0x7777777777777777777777777777777777777777';
const TOKEN_A = '0x1111111111111111111111111111111111111111';
const TOKEN_C = '0xcccccccccccccccccccccccccccccccccccccccc';
const FOUR_TOKEN = '0xabcdef0000000000000000000000000000004444';
const WETH_BASE = '0x4200000000000000000000000000000000000006';
const USDC_BASE = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';
const WBNB = '0xbb4cdb9cbd36b01bd1cbaebf2de08d9173bc095c';
const WETH_ROBINHOOD = '0x0bd7d308f8e1639fab988df18a8011f41eacad73';
const NATIVE = '0x0000000000000000000000000000000000000000';
const PAIR = '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const POOL = '0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const POOL_MANAGER = '0x498581ff718922c3f8e6a244956af099b2652b2b';
const POOL_ID = '0x' + '5d'.repeat(32);
const UNI_V2_FACTORY = '0x8909dc15e40173ff4699343b6eb8132c65e18ec6';
const PANCAKE_V2_FACTORY = '0xca143ce32fe78f1f7019d7d551a6402fc5350c73';
const PANCAKE_V3_FACTORY = '0x0bfbcf9fa4f9c56b0f40a671ad40e0805a091865';
const UNI_V3_FACTORY_BASE = '0x33128a8fc17869897dce68ed026d694621f6fdfd';
const AERO_FACTORY = '0x420dd381b31aef6683db6b902084cb0ffece40da';
const FOUR_MANAGER = '0x5c952063c7fc8610ffdb798152d69f0b9550762b';
const BLOCK_TIME = 1_700_000_000_000;
const TX_FEE = '21000000000000'; // 0x5208 gas · 0x3b9aca00 wei

function receipt(logs: Omit<EvmLog, 'logIndex'>[], extra: Partial<EvmReceipt> = {}): EvmReceipt {
  return {
    transactionHash: TX,
    blockNumber: '0x10',
    status: '0x1',
    from: TRADER,
    to: ROUTER,
    gasUsed: '0x5208',
    effectiveGasPrice: '0x3b9aca00',
    logs: logs.map((log, index) => ({ ...log, logIndex: `0x${index.toString(16)}` })),
    ...extra,
  };
}

const at = (chain: Chain, eventIndex: number) => ({
  id: `${chain}:${TX}:${eventIndex}`,
  chain,
  transactionHash: TX,
  eventIndex,
  blockNumber: 16,
  blockTime: BLOCK_TIME,
});

function setup(chain: Chain, decimals: Record<string, number> = {}) {
  const tokens: TokenInfoProvider = createTokenRegistry();
  for (const [address, places] of Object.entries(decimals)) tokens.registerToken(chain, address, { decimals: places });
  const pools: PoolRegistry = createPoolRegistry();
  const decoder = createEvmDecoder({ chain, tokens, pools });
  return { tokens, pools, decoder };
}

function valid(result: { swaps: RawSwap[]; events: TokenEvent[] }) {
  for (const swap of result.swaps) assertTopicValue(TOPICS.swaps, swap);
  for (const event of result.events) assertTopicValue(TOPICS.tokenEvents, event);
  return result;
}

describe('ingest/evm topics', () => {
  it('recomputes every topic0 of CHAINS.md 2.1 as keccak256 of its signature', () => {
    for (const [signature, expected] of Object.entries(TOPIC_TABLE)) {
      assert.equal(keccak256(stringToBytes(signature)), expected, signature);
    }
  });

  it('uses the CHAINS.md topic0 for every event it decodes', () => {
    for (const [name, expected] of Object.entries(SIG))
      assert.equal(TOPIC0[name as keyof typeof TOPIC0], expected, name);
  });
});

describe('ingest/evm decoder', () => {
  it('decodes a Uniswap V2 buy on base with Sync reserves, LP fee and transaction fee', () => {
    const { decoder } = setup('base', { [TOKEN_A]: 18 });
    const reserve0 = 99_000n * E18;
    const reserve1 = 11n * E18;
    const out = valid(
      decoder.decodeReceipt(
        receipt([
          {
            address: UNI_V2_FACTORY,
            topics: [SIG.pairCreated, topic(TOKEN_A), topic(WETH_BASE)],
            data: data(addrWord(PAIR), word(1n)),
          },
          { address: PAIR, topics: [SIG.v2Sync], data: data(word(reserve0), word(reserve1)) },
          {
            address: PAIR,
            topics: [SIG.v2Swap, topic(ROUTER), topic(ROUTER)],
            data: data(
              ZERO_WORD,
              '0000000000000000000000000000000000000000000000000de0b6b3a7640000',
              word(1000n * E18),
              ZERO_WORD,
            ),
          },
        ]),
        BLOCK_TIME,
      ),
    );
    assert.deepEqual(out.swaps, [
      {
        ...at('base', 2),
        token: TOKEN_A,
        quoteAsset: WETH_BASE,
        tokenAmount: '1000000000000000000000',
        tokenDecimals: 18,
        quoteAmount: '1000000000000000000',
        quoteDecimals: 18,
        side: 'buy',
        trader: TRADER,
        pool: PAIR,
        dex: 'uniswap-v2',
        launchpad: null,
        reserves: { token: '99000000000000000000000', quote: '11000000000000000000' },
        fees: { dex: '3000000000000000', transaction: TX_FEE }, // 0.3 % of 1 WETH in
      },
    ]);
  });

  it('decodes a PancakeSwap V2 sell on bsc (WBNB is token0) with the 0.25 % fee', () => {
    const { decoder } = setup('bsc', { [TOKEN_C]: 18 });
    const out = valid(
      decoder.decodeReceipt(
        receipt([
          {
            address: PANCAKE_V2_FACTORY,
            topics: [SIG.pairCreated, topic(WBNB), topic(TOKEN_C)],
            data: data(addrWord(PAIR), word(7n)),
          },
          {
            address: PAIR,
            topics: [SIG.v2Swap, topic(ROUTER), topic(TRADER)],
            data: data(
              ZERO_WORD,
              word(500n * E18),
              '000000000000000000000000000000000000000000000000016345785d8a0000',
              ZERO_WORD,
            ),
          },
        ]),
        BLOCK_TIME,
      ),
    );
    const swap = out.swaps[0]!;
    assert.equal(swap.side, 'sell');
    assert.equal(swap.token, TOKEN_C);
    assert.equal(swap.quoteAsset, WBNB);
    assert.equal(swap.tokenAmount, '500000000000000000000');
    assert.equal(swap.quoteAmount, '100000000000000000'); // 0x16345785d8a0000 = 0.1 BNB
    assert.equal(swap.dex, 'pancakeswap-v2');
    assert.deepEqual(swap.fees, { dex: '250000000000000', transaction: TX_FEE });
    assert.equal(swap.reserves, undefined, 'no Sync, no reserves');
  });

  it('tells Uniswap V2 from PancakeSwap V2 on bsc by the factory', () => {
    const { decoder } = setup('bsc', { [TOKEN_C]: 18 });
    const out = decoder.decodeReceipt(
      receipt([
        {
          address: UNI_V2_FACTORY,
          topics: [SIG.pairCreated, topic(WBNB), topic(TOKEN_C)],
          data: data(addrWord(PAIR), word(1n)),
        },
        {
          address: PAIR,
          topics: [SIG.v2Swap, topic(ROUTER), topic(TRADER)],
          data: data(word(E18), ZERO_WORD, ZERO_WORD, word(10n * E18)),
        },
      ]),
      BLOCK_TIME,
    );
    assert.equal(out.swaps[0]!.dex, 'uniswap-v2');
    assert.equal(out.swaps[0]!.side, 'buy');
    assert.equal(out.swaps[0]!.fees!.dex, '3000000000000000');
  });

  it('decodes a Uniswap V3 buy whose amounts match the sqrtPriceX96 price identity', () => {
    const { decoder } = setup('base', { [TOKEN_A]: 18 });
    const sqrtPriceX96 = 0x218def416bdb1a6d698fn; // floor(2^96 · sqrt(4e-12)): 4 USDC per token
    const out = valid(
      decoder.decodeReceipt(
        receipt([
          {
            address: UNI_V3_FACTORY_BASE,
            topics: [SIG.v3PoolCreated, topic(TOKEN_A), topic(USDC_BASE), `0x${word(500n)}`],
            data: data(word(10n), addrWord(POOL)),
          },
          {
            address: POOL,
            topics: [SIG.v3Swap, topic(ROUTER), topic(ROUTER)],
            data: data(
              'ffffffffffffffffffffffffffffffffffffffffffffffff7538dcfb76180000', // −10e18 token0: the pool paid it
              word(40_000_000n), // +40 USDC: the pool received it
              word(sqrtPriceX96),
              word(E18),
              'fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffbfec3', // tick −262461
            ),
          },
        ]),
        BLOCK_TIME,
      ),
    );
    const swap = out.swaps[0]!;
    assert.equal(swap.side, 'buy');
    assert.equal(swap.token, TOKEN_A);
    assert.equal(swap.quoteAsset, USDC_BASE);
    assert.equal(swap.tokenAmount, '10000000000000000000');
    assert.equal(swap.quoteAmount, '40000000');
    assert.equal(swap.quoteDecimals, 6);
    assert.equal(swap.dex, 'uniswap-v3');
    assert.equal(swap.fees!.dex, '20000'); // 40 USDC · 500 / 1e6
    // price of token0 in token1 = sqrtPriceX96² / 2^192 · 10^(dec0 − dec1)
    const spot = D.div(D.fromInt(sqrtPriceX96 * sqrtPriceX96 * 10n ** 12n), D.fromInt(2n ** 192n));
    const execution = D.div(
      D.fromUnits(swap.quoteAmount, swap.quoteDecimals),
      D.fromUnits(swap.tokenAmount, swap.tokenDecimals),
    );
    assert.equal(D.decToString(execution), '4');
    assert.ok(D.abs(D.sub(spot, execution)) < D.parse('0.000000001'), `spot ${D.decToString(spot)}`);
    assert.ok(Math.abs(1.0001 ** -262461 / 4e-12 - 1) < 1e-3, 'the tick agrees with the price');
  });

  it('reads V3 amounts as the pool delta and V4 amounts as the swapper delta', () => {
    const amount0 = 'fffffffffffffffffffffffffffffffffffffffffffffffff21f494c589c0000'; // −1e18
    const amount1 = word(1000n * E18);
    const { decoder, pools } = setup('robinhood', { [TOKEN_A]: 18 });
    pools.registerPool('robinhood', {
      pool: POOL,
      token0: WETH_ROBINHOOD,
      token1: TOKEN_A,
      dex: 'uniswap-v3',
      fee: 3000,
    });
    const out = valid(
      decoder.decodeReceipt(
        receipt([
          {
            address: POOL,
            topics: [SIG.v3Swap, topic(ROUTER), topic(ROUTER)],
            data: data(amount0, amount1, word(2n ** 96n), word(E18), ZERO_WORD),
          },
          {
            address: POOL_MANAGER,
            topics: [SIG.v4Initialize, POOL_ID, topic(NATIVE), topic(TOKEN_A)],
            data: data(word(3000n), word(60n), ZERO_WORD, word(2n ** 96n), ZERO_WORD),
          },
          {
            address: POOL_MANAGER,
            topics: [SIG.v4Swap, POOL_ID, topic(ROUTER)],
            data: data(amount0, amount1, word(2n ** 96n), word(E18), ZERO_WORD, word(3000n)),
          },
        ]),
        BLOCK_TIME,
      ),
    );
    const [v3, v4] = out.swaps;
    // V3: the pool paid 1 ETH and received 1000 tokens: the trader sold.
    assert.equal(v3!.side, 'sell');
    assert.equal(v3!.quoteAsset, WETH_ROBINHOOD);
    // V4: the swapper paid 1 ETH (negative) and received 1000 tokens: a buy, native quote 0x0.
    assert.equal(v4!.side, 'buy');
    assert.equal(v4!.quoteAsset, NATIVE);
    assert.equal(v4!.pool, POOL_ID);
    assert.equal(v4!.dex, 'uniswap-v4');
    assert.equal(v4!.custody, POOL_MANAGER, "the PoolManager holds V4 pools' tokens");
    assert.equal(v3!.custody, undefined, 'a V3 pool holds its own tokens');
    for (const swap of [v3!, v4!]) {
      assert.equal(swap.tokenAmount, '1000000000000000000000');
      assert.equal(swap.quoteAmount, '1000000000000000000');
      assert.equal(swap.fees!.dex, '3000000000000000');
    }
    assert.equal(v3!.fees!.transaction, TX_FEE, 'transaction fee on the first swap only');
    assert.equal(v4!.fees!.transaction, undefined);
  });

  it('decodes PancakeSwap Infinity CL and Bin swaps as the swapper delta, pools named by their Initialize', () => {
    // Not in CHAINS.md 2.1: the Bin pool manager's Initialize (IBinPoolManager), keccak256 of its signature.
    const binInitialize = keccak256(stringToBytes('Initialize(bytes32,address,address,address,uint24,bytes32,uint24)'));
    assert.equal(TOPIC0.infinityBinInitialize, binInitialize);
    const CL_ID = '0x' + 'c1'.repeat(32);
    const BIN_ID = '0x' + 'b1'.repeat(32);
    const CL_MANAGER = '0xa0ffb9c1ce1fe56963b0321b32e7a0302114058b';
    const BIN_MANAGER = '0xc697d2898e0d09264376196696c51d7abbbaa4a9';
    const minusOne = 'fffffffffffffffffffffffffffffffffffffffffffffffff21f494c589c0000'; // −1e18
    const minusThousand = 'ffffffffffffffffffffffffffffffffffffffffffffffc9ca36523a21600000'; // −1000e18
    const { decoder } = setup('bsc', { [TOKEN_C]: 18 });
    const out = valid(
      decoder.decodeReceipt(
        receipt([
          // CL: native BNB (0x0) against TOKEN_C; fee 2500 pips, parameters word, sqrt price 1, tick 0.
          {
            address: CL_MANAGER,
            topics: [SIG.infinityClInitialize, CL_ID, topic(NATIVE), topic(TOKEN_C)],
            data: data(ZERO_WORD, word(2500n), word(0x10000n), word(2n ** 96n), ZERO_WORD),
          },
          // The swapper paid 1 BNB (negative) and received 1000 tokens: a buy.
          {
            address: CL_MANAGER,
            topics: [SIG.infinityClSwap, CL_ID, topic(ROUTER)],
            data: data(minusOne, word(1000n * E18), word(2n ** 96n), word(E18), ZERO_WORD, word(2500n), ZERO_WORD),
          },
          // Bin: WBNB against TOKEN_C, active bin 2^23.
          {
            address: BIN_MANAGER,
            topics: [TOPIC0.infinityBinInitialize, BIN_ID, topic(WBNB), topic(TOKEN_C)],
            data: data(ZERO_WORD, word(3000n), word(0x10000n), word(2n ** 23n)),
          },
          // The swapper received 1 WBNB and paid 1000 tokens (negative): a sell.
          {
            address: BIN_MANAGER,
            topics: [SIG.infinityBinSwap, BIN_ID, topic(ROUTER)],
            data: data(word(E18), minusThousand, word(2n ** 23n), word(3000n), ZERO_WORD),
          },
        ]),
        BLOCK_TIME,
      ),
    );
    assert.equal(out.swaps.length, 2);
    const [cl, bin] = out.swaps;
    assert.equal(cl!.side, 'buy');
    assert.equal(cl!.dex, 'pancakeswap-infinity-cl');
    assert.equal(cl!.pool, CL_ID);
    assert.equal(cl!.quoteAsset, NATIVE);
    assert.equal(cl!.fees!.dex, '2500000000000000'); // 1 BNB · 2500 / 1e6
    assert.equal(bin!.side, 'sell');
    assert.equal(bin!.dex, 'pancakeswap-infinity-bin');
    assert.equal(bin!.pool, BIN_ID);
    assert.equal(bin!.quoteAsset, WBNB);
    assert.equal(bin!.fees!.dex, '3000000000000000'); // 1 WBNB · 3000 / 1e6
    for (const swap of [cl!, bin!]) {
      assert.equal(swap.token, TOKEN_C);
      assert.equal(swap.tokenAmount, '1000000000000000000000');
      assert.equal(swap.quoteAmount, '1000000000000000000');
      assert.equal(swap.trader, TRADER, 'the transaction sender, not the router');
    }
  });

  it('learns Aerodrome Slipstream pools from the CLFactory PoolCreated; their V3 swaps count as aerodrome, fee unknown', () => {
    const CL_FACTORY = '0x5e7bb104d84c7cb9b682aac2f3d509f5f406809a';
    const { decoder } = setup('base', { [TOKEN_A]: 18 });
    const out = valid(
      decoder.decodeReceipt(
        receipt([
          // tickSpacing 200 is the third topic; the pool is the only data word.
          {
            address: CL_FACTORY,
            topics: [SIG.slipstreamPoolCreated, topic(WETH_BASE), topic(TOKEN_A), `0x${word(200n)}`],
            data: data(addrWord(POOL)),
          },
          // Pool's view: it received 1 WETH and paid 1000 tokens: a buy.
          {
            address: POOL,
            topics: [SIG.v3Swap, topic(ROUTER), topic(ROUTER)],
            data: data(
              word(E18),
              'ffffffffffffffffffffffffffffffffffffffffffffffc9ca36523a21600000',
              word(2n ** 96n),
              word(E18),
              ZERO_WORD,
            ),
          },
        ]),
        BLOCK_TIME,
      ),
    );
    assert.equal(out.swaps.length, 1);
    const [swap] = out.swaps;
    assert.equal(swap!.dex, 'aerodrome');
    assert.equal(swap!.side, 'buy');
    assert.equal(swap!.pool, POOL);
    assert.equal(swap!.quoteAsset, WETH_BASE);
    assert.equal(swap!.tokenAmount, '1000000000000000000000');
    assert.equal(swap!.fees?.dex, undefined, 'no fee is assumed');
  });

  it('skips Infinity swaps of pools whose Initialize was never seen', () => {
    const { decoder } = setup('bsc', { [TOKEN_C]: 18 });
    const out = decoder.decodeReceipt(
      receipt([
        {
          address: '0xa0ffb9c1ce1fe56963b0321b32e7a0302114058b',
          topics: [SIG.infinityClSwap, '0x' + 'c2'.repeat(32), topic(ROUTER)],
          data: data(word(E18), word(E18), word(2n ** 96n), word(E18), ZERO_WORD, word(2500n), ZERO_WORD),
        },
      ]),
      BLOCK_TIME,
    );
    assert.deepEqual(out.swaps, []);
    assert.equal(decoder.metrics.get('ingest.evm.bsc.skipped_unknown_pool'), 1);
  });

  it('decodes PancakeSwap V3 swaps (7 words, own topic) and never as Uniswap V3', () => {
    const { decoder, pools } = setup('bsc', { [TOKEN_C]: 18 });
    const pancakeWords = [
      word(E18),
      'ffffffffffffffffffffffffffffffffffffffffffffffff7538dcfb76180000',
      word(2n ** 96n),
      word(E18),
      ZERO_WORD,
      word(100n),
      ZERO_WORD,
    ];
    const out = valid(
      decoder.decodeReceipt(
        receipt([
          {
            address: PANCAKE_V3_FACTORY,
            topics: [SIG.v3PoolCreated, topic(WBNB), topic(TOKEN_C), `0x${word(2500n)}`],
            data: data(word(50n), addrWord(POOL)),
          },
          { address: POOL, topics: [SIG.pancakeV3Swap, topic(ROUTER), topic(ROUTER)], data: data(...pancakeWords) },
          // The Pancake topic with the 5-word Uniswap layout does not decode.
          {
            address: POOL,
            topics: [SIG.pancakeV3Swap, topic(ROUTER), topic(ROUTER)],
            data: data(...pancakeWords.slice(0, 5)),
          },
        ]),
        BLOCK_TIME,
      ),
    );
    assert.equal(out.swaps.length, 1);
    const swap = out.swaps[0]!;
    assert.equal(swap.dex, 'pancakeswap-v3');
    assert.equal(swap.side, 'buy');
    assert.equal(swap.token, TOKEN_C);
    assert.equal(swap.tokenAmount, '10000000000000000000');
    assert.equal(swap.quoteAmount, '1000000000000000000');
    assert.equal(swap.fees!.dex, '2500000000000000');
    assert.equal(decoder.metrics.get('ingest.evm.bsc.skipped_undecodable'), 1);
    assert.equal(pools.getPool('bsc', POOL)!.dex, 'pancakeswap-v3');
  });

  it('decodes an Aerodrome classic sell with Sync reserves and the volatile fee', () => {
    const aeroPool = '0xaeaeaeaeaeaeaeaeaeaeaeaeaeaeaeaeaeaeaeae';
    const { decoder } = setup('base', { [TOKEN_A]: 18 });
    const out = valid(
      decoder.decodeReceipt(
        receipt([
          {
            address: AERO_FACTORY,
            topics: [SIG.aerodromePoolCreated, topic(TOKEN_A), topic(USDC_BASE), `0x${ZERO_WORD}`],
            data: data(addrWord(aeroPool), word(3n)),
          },
          { address: aeroPool, topics: [SIG.aerodromeSync], data: data(word(1000n * E18), word(3_750_000_000n)) },
          {
            address: aeroPool,
            topics: [SIG.aerodromeSwap, topic(ROUTER), topic(TRADER)],
            data: data(word(2n * E18), ZERO_WORD, ZERO_WORD, word(7_500_000n)),
          },
        ]),
        BLOCK_TIME,
      ),
    );
    assert.deepEqual(out.swaps, [
      {
        ...at('base', 2),
        token: TOKEN_A,
        quoteAsset: USDC_BASE,
        tokenAmount: '2000000000000000000',
        tokenDecimals: 18,
        quoteAmount: '7500000',
        quoteDecimals: 6,
        side: 'sell',
        trader: TRADER,
        pool: aeroPool,
        dex: 'aerodrome',
        launchpad: null,
        reserves: { token: '1000000000000000000000', quote: '3750000000' },
        fees: { dex: '22500', transaction: TX_FEE },
      },
    ]);
  });

  it('skips swaps in unknown pools, with unknown decimals and in reverted receipts', () => {
    const { decoder, pools } = setup('base');
    const swapLog = {
      address: PAIR,
      topics: [SIG.v2Swap, topic(ROUTER), topic(TRADER)],
      data: data(word(E18), ZERO_WORD, ZERO_WORD, word(5n)),
    };
    assert.deepEqual(decoder.decodeReceipt(receipt([swapLog]), BLOCK_TIME), { swaps: [], events: [] });
    assert.equal(decoder.metrics.get('ingest.evm.base.skipped_unknown_pool'), 1);

    const created = {
      address: UNI_V2_FACTORY,
      topics: [SIG.pairCreated, topic(TOKEN_A), topic(WETH_BASE)],
      data: data(addrWord(PAIR), word(1n)),
    };
    const reverted = decoder.decodeReceipt(receipt([created, swapLog], { status: '0x0' }), BLOCK_TIME);
    assert.deepEqual(reverted, { swaps: [], events: [] });
    assert.equal(pools.size(), 0, 'a reverted receipt teaches nothing');
    assert.equal(decoder.metrics.get('ingest.evm.base.skipped_reverted'), 1);

    // TOKEN_A's decimals are unknown: the pool is learned, the swap skipped.
    assert.deepEqual(decoder.decodeReceipt(receipt([created, swapLog]), BLOCK_TIME).swaps, []);
    assert.equal(decoder.metrics.get('ingest.evm.base.skipped_unknown_decimals'), 1);
    assert.equal(pools.getPool('base', PAIR)!.token0, TOKEN_A);
  });

  it('decodes four.meme TokenCreate and TokenPurchase with exact curve progress', () => {
    const { decoder, tokens } = setup('bsc');
    const moon = '4d6f6f6e'.padEnd(64, '0');
    const MOON = '4d4f4f4e'.padEnd(64, '0');
    const offers = 799_999_999n * E18; // one token sold of 800M
    const out = valid(
      decoder.decodeReceipt(
        receipt([
          {
            address: FOUR_MANAGER,
            topics: [SIG.fourMemeCreate],
            data: data(
              addrWord(TRADER),
              addrWord(FOUR_TOKEN),
              word(1n),
              word(0x100n),
              word(0x140n),
              word(1_000_000_000n * E18),
              word(1_700_000_000n),
              ZERO_WORD,
              word(4n),
              moon,
              word(4n),
              MOON,
            ),
          },
          {
            address: FOUR_MANAGER,
            topics: [SIG.fourMemePurchase],
            data: data(
              addrWord(FOUR_TOKEN),
              addrWord(TRADER),
              word(30_000_000_000n),
              word(E18),
              word(30_000_000_000n),
              word(300_000_000n),
              word(offers),
              word(30_000_000_000n),
            ),
          },
        ]),
        BLOCK_TIME,
      ),
    );
    assert.deepEqual(out.events, [
      {
        ...at('bsc', 0),
        kind: 'created',
        token: FOUR_TOKEN,
        name: 'Moon',
        symbol: 'MOON',
        uri: '',
        decimals: 18,
        supply: '1000000000000000000000000000',
        creator: TRADER,
        launchpad: 'fourmeme',
        pool: FOUR_MANAGER,
        quoteAsset: NATIVE,
      },
    ]);
    assert.deepEqual(out.swaps, [
      {
        ...at('bsc', 1),
        token: FOUR_TOKEN,
        quoteAsset: NATIVE,
        tokenAmount: '1000000000000000000',
        tokenDecimals: 18,
        quoteAmount: '30000000000',
        quoteDecimals: 18,
        side: 'buy',
        trader: TRADER,
        pool: FOUR_MANAGER,
        dex: 'fourmeme',
        launchpad: 'fourmeme',
        reserves: { token: offers.toString(), quote: '30000000000' },
        curve: {
          progressPct: '0.000000125',
          realTokenReserves: offers.toString(),
          realQuoteReserves: '30000000000',
          complete: false,
        },
        fees: { platform: '300000000', transaction: TX_FEE },
      },
    ]);
    assert.equal(tokens.getToken('bsc', FOUR_TOKEN)!.launchpad, 'fourmeme');
  });

  it('decodes four.meme sales (V2 progress, V1 without curve data)', () => {
    const { decoder } = setup('bsc', { [FOUR_TOKEN]: 18 });
    const out = valid(
      decoder.decodeReceipt(
        receipt([
          {
            address: FOUR_MANAGER,
            topics: [SIG.fourMemeSale],
            data: data(
              addrWord(FOUR_TOKEN),
              addrWord(TRADER),
              word(1n),
              word(5n * E18),
              word(E18),
              word(10n),
              word(600_000_000n * E18),
              word(4n * E18),
            ),
          },
          {
            address: '0xec4549cadce5da21df6e6422d448034b5233bfbc',
            topics: [SIG.fourMemeSaleV1],
            data: data(addrWord(FOUR_TOKEN), addrWord(TRADER), word(7n), word(3n)),
          },
        ]),
        BLOCK_TIME,
      ),
    );
    assert.equal(out.swaps[0]!.side, 'sell');
    assert.equal(out.swaps[0]!.curve!.progressPct, '25'); // (800M − 600M) / 800M
    assert.equal(out.swaps[1]!.side, 'sell');
    assert.equal(out.swaps[1]!.tokenAmount, '7');
    assert.equal(out.swaps[1]!.quoteAmount, '3');
    assert.equal(out.swaps[1]!.curve, undefined);
    assert.equal(out.swaps[1]!.launchpad, 'fourmeme');
  });

  it('graduates a four.meme token to the pair created in the same receipt', () => {
    const { decoder } = setup('bsc', { [FOUR_TOKEN]: 18 });
    const out = valid(
      decoder.decodeReceipt(
        receipt([
          { address: FOUR_MANAGER, topics: [SIG.fourMemeTradeStop], data: data(addrWord(FOUR_TOKEN)) },
          {
            address: PANCAKE_V2_FACTORY,
            topics: [SIG.pairCreated, topic(FOUR_TOKEN), topic(WBNB)],
            data: data(addrWord(PAIR), word(9n)),
          },
          {
            address: FOUR_MANAGER,
            topics: [SIG.fourMemeLiquidityAdded],
            data: data(addrWord(FOUR_TOKEN), word(200_000_000n * E18), addrWord(NATIVE), word(24n * E18)),
          },
        ]),
        BLOCK_TIME,
      ),
    );
    assert.deepEqual(out.events, [
      { ...at('bsc', 0), kind: 'curve', token: FOUR_TOKEN, progressPct: '100', complete: true },
      { ...at('bsc', 1), kind: 'graduated', token: FOUR_TOKEN, pool: PAIR, dex: 'pancakeswap-v2' },
    ]);
  });

  it('graduates later when the pair appears in another receipt', () => {
    const { decoder } = setup('bsc', { [FOUR_TOKEN]: 18 });
    const first = valid(
      decoder.decodeReceipt(
        receipt([{ address: FOUR_MANAGER, topics: [SIG.fourMemeTradeStop], data: data(addrWord(FOUR_TOKEN)) }]),
        BLOCK_TIME,
      ),
    );
    assert.deepEqual(
      first.events.map((event) => event.kind),
      ['curve'],
    );
    const second = valid(
      decoder.decodeReceipt(
        receipt([
          {
            address: PANCAKE_V3_FACTORY,
            topics: [SIG.v3PoolCreated, topic(FOUR_TOKEN), topic(WBNB), `0x${word(2500n)}`],
            data: data(word(50n), addrWord(POOL)),
          },
        ]),
        BLOCK_TIME + 3000,
      ),
    );
    assert.deepEqual(second.events, [
      {
        ...at('bsc', 0),
        blockTime: BLOCK_TIME + 3000,
        kind: 'graduated',
        token: FOUR_TOKEN,
        pool: POOL,
        dex: 'pancakeswap-v3',
      },
    ]);
    // Graduated once: another pool for the token is just a pool.
    const third = decoder.decodeReceipt(
      receipt([
        {
          address: PANCAKE_V2_FACTORY,
          topics: [SIG.pairCreated, topic(FOUR_TOKEN), topic(WBNB)],
          data: data(addrWord(PAIR), word(9n)),
        },
      ]),
      BLOCK_TIME + 6000,
    );
    assert.deepEqual(third.events, []);
  });

  it('creates a token from a V4 launch (hooks of a launchpad, mint in the same receipt)', () => {
    const hooks = '0xd60d6b218116cfd801e28f78d011a203d2b068cc';
    const launchToken = '0x5555555555555555555555555555555555555555';
    const { decoder, pools, tokens } = setup('base');
    tokens.registerToken('base', launchToken, { decimals: 18, name: 'Launch', symbol: 'LNCH' });
    pools.registerLaunchHooks('base', hooks, 'clanker');
    const supply = 100_000_000_000n * E18;
    const out = valid(
      decoder.decodeReceipt(
        receipt([
          {
            address: launchToken,
            topics: [SIG.transfer, topic(NATIVE), topic(POOL_MANAGER)],
            data: data(word(supply)),
          },
          {
            address: POOL_MANAGER,
            topics: [SIG.v4Initialize, POOL_ID, topic(WETH_BASE), topic(launchToken)],
            data: data(word(0x800000n), word(200n), addrWord(hooks), word(2n ** 96n), ZERO_WORD),
          },
          {
            address: POOL_MANAGER,
            topics: [SIG.v4Swap, POOL_ID, topic(ROUTER)],
            data: data(
              'fffffffffffffffffffffffffffffffffffffffffffffffff21f494c589c0000',
              word(1000n * E18),
              word(2n ** 96n),
              word(E18),
              ZERO_WORD,
              word(10_000n),
            ),
          },
        ]),
        BLOCK_TIME,
      ),
    );
    assert.deepEqual(out.events, [
      {
        ...at('base', 0),
        kind: 'transfer',
        token: launchToken,
        from: NATIVE,
        to: POOL_MANAGER,
        amount: supply.toString(),
      },
      {
        ...at('base', 1),
        kind: 'created',
        token: launchToken,
        name: 'Launch',
        symbol: 'LNCH',
        uri: '',
        decimals: 18,
        supply: supply.toString(),
        creator: TRADER,
        launchpad: 'clanker',
        pool: POOL_ID,
        quoteAsset: WETH_BASE,
      },
    ]);
    assert.equal(out.swaps[0]!.launchpad, 'clanker');
    assert.equal(out.swaps[0]!.side, 'buy');
    assert.equal(out.swaps[0]!.fees!.dex, '10000000000000000', 'dynamic-fee pool: the Swap event fee (1 %)');
    assert.equal(tokens.getToken('base', launchToken)!.launchpad, 'clanker');
  });

  it('uses a pre-marked launch pool id (robinhood) and native USDC decimals on arc', () => {
    const token = '0x5555555555555555555555555555555555555555';
    const rh = setup('robinhood', { [token]: 18 });
    rh.pools.markLaunchPool('robinhood', POOL_ID, 'pools.trade');
    const swapData = data(
      'fffffffffffffffffffffffffffffffffffffffffffffffff21f494c589c0000',
      word(1000n * E18),
      word(2n ** 96n),
      word(E18),
      ZERO_WORD,
      word(2500n),
    );
    const logs = [
      { address: token, topics: [SIG.transfer, topic(NATIVE), topic(ROUTER)], data: data(word(E18 * 1_000_000_000n)) },
      {
        address: POOL_MANAGER,
        topics: [SIG.v4Initialize, POOL_ID, topic(NATIVE), topic(token)],
        data: data(word(2500n), word(60n), ZERO_WORD, word(2n ** 96n), ZERO_WORD),
      },
      { address: POOL_MANAGER, topics: [SIG.v4Swap, POOL_ID, topic(ROUTER)], data: swapData },
    ];
    const out = valid(rh.decoder.decodeReceipt(receipt(logs), BLOCK_TIME));
    const created = out.events.find((event) => event.kind === 'created');
    assert.ok(created && created.kind === 'created');
    assert.equal(created.launchpad, 'pools.trade');
    assert.equal(created.quoteAsset, NATIVE);
    assert.equal(out.swaps[0]!.launchpad, 'pools.trade');
    assert.equal(out.swaps[0]!.fees!.dex, '2500000000000000');

    const arc = setup('arc', { [token]: 18 });
    const arcOut = valid(arc.decoder.decodeReceipt(receipt(logs.slice(1)), BLOCK_TIME));
    assert.equal(arcOut.swaps[0]!.quoteAsset, NATIVE);
    assert.equal(arcOut.swaps[0]!.quoteDecimals, 18, 'native USDC accounting');
    assert.equal(arcOut.swaps[0]!.launchpad, null);
    assert.equal(
      arc.tokens.getDecimals('arc', '0x3600000000000000000000000000000000000000'),
      6,
      'USDC ERC-20 interface',
    );
  });

  it('emits transfers of tracked tokens only, never ERC-721 transfers', () => {
    const { decoder } = setup('base', { [TOKEN_A]: 18 });
    const out = valid(
      decoder.decodeReceipt(
        receipt([
          { address: TOKEN_A, topics: [SIG.transfer, topic(TRADER), topic(ROUTER)], data: data(word(5n)) },
          { address: TOKEN_C, topics: [SIG.transfer, topic(TRADER), topic(ROUTER)], data: data(word(5n)) },
          { address: WETH_BASE, topics: [SIG.transfer, topic(TRADER), topic(ROUTER)], data: data(word(5n)) },
          { address: TOKEN_A, topics: [SIG.transfer, topic(TRADER), topic(ROUTER), `0x${word(1n)}`], data: '0x' },
        ]),
        BLOCK_TIME,
      ),
    );
    assert.deepEqual(out.events, [
      { ...at('base', 0), kind: 'transfer', token: TOKEN_A, from: TRADER, to: ROUTER, amount: '5' },
    ]);
    const all = createEvmDecoder({ chain: 'base', tokens: createTokenRegistry(), transfers: 'all' });
    assert.equal(
      all.decodeReceipt(
        receipt([{ address: TOKEN_C, topics: [SIG.transfer, topic(TRADER), topic(ROUTER)], data: data(word(5n)) }]),
        BLOCK_TIME,
      ).events.length,
      1,
    );
  });

  it('turns a plain value transfer into a funding event', () => {
    const { decoder } = setup('bsc');
    const wallet = '0x3333333333333333333333333333333333333333';
    const funding: EvmTransaction = { from: TRADER, to: wallet, value: '0xde0b6b3a7640000', input: '0x' };
    const out = valid(decoder.decodeReceipt(receipt([], { to: wallet }), BLOCK_TIME, funding));
    assert.deepEqual(out.events, [
      {
        ...at('bsc', 0),
        kind: 'funding',
        token: null,
        from: TRADER,
        to: wallet,
        amount: '1000000000000000000',
        fromLabel: null,
      },
    ]);
    assert.deepEqual(
      decoder.decodeReceipt(receipt([]), BLOCK_TIME, { ...funding, input: '0xa9059cbb' }).events,
      [],
      'a contract call',
    );
    assert.deepEqual(decoder.decodeReceipt(receipt([]), BLOCK_TIME, { ...funding, value: 0 }).events, [], 'no value');
  });
});

describe('ingest/evm decodeEvmJson', () => {
  it('decodes a JSON-RPC response with PairCreated + Swap standalone', () => {
    const body = receipt([
      {
        address: UNI_V2_FACTORY,
        topics: [SIG.pairCreated, topic(TOKEN_A), topic(WETH_BASE)],
        data: data(addrWord(PAIR), word(1n)),
      },
      {
        address: PAIR,
        topics: [SIG.v2Swap, topic(ROUTER), topic(TRADER)],
        data: data(word(E18), ZERO_WORD, ZERO_WORD, word(2n * E18)),
      },
    ]);
    const text = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      result: body,
      blockTimestamp: '0x6553f100',
      decimals: { [TOKEN_A]: 18 },
    });
    const out = valid(decodeEvmJson('base', text));
    assert.equal(out.swaps.length, 1);
    assert.equal(out.swaps[0]!.blockTime, 1_700_000_000_000);
    assert.equal(out.swaps[0]!.side, 'sell');
    assert.equal(out.swaps[0]!.tokenAmount, '1000000000000000000');
    // Without decimals the swap is skipped, and a missing timestamp gives blockTime 0.
    assert.deepEqual(decodeEvmJson('base', { result: body }).swaps, []);
    assert.equal(
      decodeEvmJson('base', body, {
        tokens: (() => {
          const t = createTokenRegistry();
          t.registerToken('base', TOKEN_A, { decimals: 18 });
          return t;
        })(),
      }).swaps[0]!.blockTime,
      0,
    );
  });

  it('requires a block time in decodeReceipt and rejects non-receipts', () => {
    const { decoder } = setup('base');
    assert.throws(() => decoder.decodeReceipt(receipt([])), /block timestamp/);
    assert.equal(decoder.decodeReceipt({ ...receipt([]), blockTimestamp: 5 }).swaps.length, 0);
    assert.throws(() => decodeEvmJson('base', { hello: 1 }), /receipt/);
  });
});
