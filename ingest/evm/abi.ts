// Event ABIs of every protocol the EVM decoder reads, and their topic0 computed by viem.
import { parseAbiItem, toEventSelector, type AbiEvent, type Hex } from 'viem';

export const EVENTS = {
  transfer: parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)'),
  v2Swap: parseAbiItem(
    'event Swap(address indexed sender, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out, address indexed to)',
  ),
  v2Sync: parseAbiItem('event Sync(uint112 reserve0, uint112 reserve1)'),
  pairCreated: parseAbiItem(
    'event PairCreated(address indexed token0, address indexed token1, address pair, uint256 allPairsLength)',
  ),
  v3Swap: parseAbiItem(
    'event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick)',
  ),
  pancakeV3Swap: parseAbiItem(
    'event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint128 protocolFeesToken0, uint128 protocolFeesToken1)',
  ),
  v3PoolCreated: parseAbiItem(
    'event PoolCreated(address indexed token0, address indexed token1, uint24 indexed fee, int24 tickSpacing, address pool)',
  ),
  v4Swap: parseAbiItem(
    'event Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint24 fee)',
  ),
  v4Initialize: parseAbiItem(
    'event Initialize(bytes32 indexed id, address indexed currency0, address indexed currency1, uint24 fee, int24 tickSpacing, address hooks, uint160 sqrtPriceX96, int24 tick)',
  ),
  // PancakeSwap Infinity (BSC): CL and Bin pool managers, pools keyed by a bytes32 id like V4.
  infinityClSwap: parseAbiItem(
    'event Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint24 fee, uint16 protocolFee)',
  ),
  infinityClInitialize: parseAbiItem(
    'event Initialize(bytes32 indexed id, address indexed currency0, address indexed currency1, address hooks, uint24 fee, bytes32 parameters, uint160 sqrtPriceX96, int24 tick)',
  ),
  infinityBinSwap: parseAbiItem(
    'event Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1, uint24 activeId, uint24 fee, uint16 protocolFee)',
  ),
  infinityBinInitialize: parseAbiItem(
    'event Initialize(bytes32 indexed id, address indexed currency0, address indexed currency1, address hooks, uint24 fee, bytes32 parameters, uint24 activeId)',
  ),
  aerodromeSwap: parseAbiItem(
    'event Swap(address indexed sender, address indexed to, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out)',
  ),
  // Aerodrome Slipstream CLFactory: the tick spacing in place of V3's fee; its pools emit the V3 Swap.
  slipstreamPoolCreated: parseAbiItem(
    'event PoolCreated(address indexed token0, address indexed token1, int24 indexed tickSpacing, address pool)',
  ),
  aerodromeSync: parseAbiItem('event Sync(uint256 reserve0, uint256 reserve1)'),
  // Aerodrome Pool: the fee it took from the swap's input (amountIn·pool fee/1e4), emitted before Sync and Swap.
  aerodromeFees: parseAbiItem('event Fees(address indexed sender, uint256 amount0, uint256 amount1)'),
  aerodromePoolCreated: parseAbiItem(
    'event PoolCreated(address indexed token0, address indexed token1, bool indexed stable, address pool, uint256 length)',
  ),
  fourMemePurchase: parseAbiItem(
    'event TokenPurchase(address token, address account, uint256 price, uint256 amount, uint256 cost, uint256 fee, uint256 offers, uint256 funds)',
  ),
  fourMemeSale: parseAbiItem(
    'event TokenSale(address token, address account, uint256 price, uint256 amount, uint256 cost, uint256 fee, uint256 offers, uint256 funds)',
  ),
  fourMemeCreate: parseAbiItem(
    'event TokenCreate(address creator, address token, uint256 requestId, string name, string symbol, uint256 totalSupply, uint256 launchTime, uint256 launchFee)',
  ),
  fourMemeLiquidityAdded: parseAbiItem(
    'event LiquidityAdded(address base, uint256 offers, address quote, uint256 funds)',
  ),
  fourMemeTradeStop: parseAbiItem('event TradeStop(address token)'),
  fourMemePurchaseV1: parseAbiItem(
    'event TokenPurchase(address token, address account, uint256 tokenAmount, uint256 etherAmount)',
  ),
  fourMemeSaleV1: parseAbiItem(
    'event TokenSale(address token, address account, uint256 tokenAmount, uint256 etherAmount)',
  ),
  // V1 as four.meme's TokenManager.lite.abi declares it (with the fee; its API doc prose omits it).
  fourMemePurchaseV1Fee: parseAbiItem(
    'event TokenPurchase(address token, address account, uint256 tokenAmount, uint256 etherAmount, uint256 fee)',
  ),
  fourMemeSaleV1Fee: parseAbiItem(
    'event TokenSale(address token, address account, uint256 tokenAmount, uint256 etherAmount, uint256 fee)',
  ),
} as const satisfies Record<string, AbiEvent>;

export type EventName = keyof typeof EVENTS;

/** topic0 of every event, computed from its canonical signature. */
export const TOPIC0 = Object.fromEntries(
  Object.entries(EVENTS).map(([name, item]) => [name, toEventSelector(item)]),
) as Record<EventName, Hex>;

const BY_TOPIC0 = new Map<string, EventName>(
  (Object.entries(TOPIC0) as [EventName, Hex][]).map(([name, topic]) => [topic, name]),
);

/** The event a topic0 names, or undefined for topics the decoder ignores. */
export function eventNameOfTopic(topic0: string | undefined): EventName | undefined {
  return topic0 === undefined ? undefined : BY_TOPIC0.get(topic0.toLowerCase());
}
