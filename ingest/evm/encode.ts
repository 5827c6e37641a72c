// ABI encoders for every log the decoder reads, built with viem (market simulator and tests),
// a receipt builder and deterministic addresses/hashes from seed texts.
import { encodeAbiParameters, keccak256, stringToBytes, type AbiEvent, type AbiParameter, type Hex } from 'viem';
import { EVENTS, TOPIC0 } from './abi.ts';
import type { EvmLog, EvmReceipt } from './receipt.ts';
import { createMemo } from '../../core/memo.ts';

export type Address = `0x${string}`;

/** A log as a node returns it, before the receipt gives it a position. */
export interface EncodedLog {
  address: string;
  topics: Hex[];
  data: Hex;
}

const seedAddresses = createMemo<Address>(100_000);

/** 20 bytes: the first 20 bytes of keccak256(text). Memoised: the simulator reuses its seeds. */
export function seedAddress(text: string): Address {
  return seedAddresses.get(text) ?? seedAddresses.set(text, keccak256(stringToBytes(text)).slice(0, 42) as Address);
}

/** 32 bytes: keccak256(text), e.g. a transaction hash. */
export function seedHash(text: string): Hex {
  return keccak256(stringToBytes(text));
}

/** Uniswap V2/V3 order pools by address: token0 < token1. */
export function sortTokens(a: string, b: string): [Address, Address] {
  const [x, y] = [a.toLowerCase() as Address, b.toLowerCase() as Address];
  return x < y ? [x, y] : [y, x];
}

export interface V4PoolKey {
  currency0: string;
  currency1: string;
  fee: number;
  tickSpacing: number;
  hooks: string;
}

/** PoolId = keccak256(abi.encode(PoolKey)). */
export function v4PoolId(key: V4PoolKey): Hex {
  return keccak256(
    encodeAbiParameters(
      [{ type: 'address' }, { type: 'address' }, { type: 'uint24' }, { type: 'int24' }, { type: 'address' }],
      [key.currency0 as Address, key.currency1 as Address, key.fee, key.tickSpacing, key.hooks as Address],
    ),
  );
}

type Events = typeof EVENTS;

/** Per event, prepared once: topic0 and the indexed / data inputs (encodeEventTopics redid these per log). */
const PREPARED = new Map<keyof Events, { topic0: Hex; indexed: AbiParameter[]; data: AbiParameter[] }>();

function prepared(name: keyof Events) {
  let entry = PREPARED.get(name);
  if (!entry) {
    const event: AbiEvent = EVENTS[name];
    const isIndexed = (input: AbiParameter) => 'indexed' in input && input.indexed === true;
    entry = {
      topic0: TOPIC0[name],
      indexed: event.inputs.filter(isIndexed),
      data: event.inputs.filter((input) => !isIndexed(input)),
    };
    PREPARED.set(name, entry);
  }
  return entry;
}

/**
 * encodeEventTopics for our events (value-type indexed inputs only): topic0, then each given
 * indexed value ABI-encoded as one word; a missing value leaves its topic out.
 */
function build<N extends keyof Events>(
  name: N,
  address: string,
  indexed: Record<string, unknown>,
  data: readonly unknown[],
): EncodedLog {
  const event = prepared(name);
  const topics: Hex[] = [event.topic0];
  for (const input of event.indexed) {
    const value = indexed[input.name!];
    if (value !== undefined && value !== null) topics.push(encodeAbiParameters([input], [value]));
  }
  return { address: address.toLowerCase(), topics, data: encodeAbiParameters(event.data, data) };
}

export interface V2SwapArgs {
  pair: string;
  sender: string;
  to: string;
  amount0In: bigint;
  amount1In: bigint;
  amount0Out: bigint;
  amount1Out: bigint;
}

export function encodeV2Swap(a: V2SwapArgs): EncodedLog {
  return build('v2Swap', a.pair, { sender: a.sender, to: a.to }, [
    a.amount0In,
    a.amount1In,
    a.amount0Out,
    a.amount1Out,
  ]);
}

export function encodeV2Sync(a: { pair: string; reserve0: bigint; reserve1: bigint }): EncodedLog {
  return build('v2Sync', a.pair, {}, [a.reserve0, a.reserve1]);
}

export function encodePairCreated(a: {
  factory: string;
  token0: string;
  token1: string;
  pair: string;
  allPairsLength?: bigint;
}): EncodedLog {
  return build('pairCreated', a.factory, { token0: a.token0, token1: a.token1 }, [a.pair, a.allPairsLength ?? 1n]);
}

export interface V3SwapArgs {
  pool: string;
  sender: string;
  recipient: string;
  amount0: bigint;
  amount1: bigint;
  sqrtPriceX96: bigint;
  liquidity: bigint;
  tick: number;
}

/** amount0/amount1 from the pool's side: positive = the pool received it. */
export function encodeV3Swap(a: V3SwapArgs): EncodedLog {
  return build('v3Swap', a.pool, { sender: a.sender, recipient: a.recipient }, [
    a.amount0,
    a.amount1,
    a.sqrtPriceX96,
    a.liquidity,
    a.tick,
  ]);
}

export function encodePancakeV3Swap(
  a: V3SwapArgs & { protocolFeesToken0?: bigint; protocolFeesToken1?: bigint },
): EncodedLog {
  return build('pancakeV3Swap', a.pool, { sender: a.sender, recipient: a.recipient }, [
    a.amount0,
    a.amount1,
    a.sqrtPriceX96,
    a.liquidity,
    a.tick,
    a.protocolFeesToken0 ?? 0n,
    a.protocolFeesToken1 ?? 0n,
  ]);
}

export function encodePoolCreated(a: {
  factory: string;
  token0: string;
  token1: string;
  fee: number;
  tickSpacing: number;
  pool: string;
}): EncodedLog {
  return build('v3PoolCreated', a.factory, { token0: a.token0, token1: a.token1, fee: a.fee }, [a.tickSpacing, a.pool]);
}

/** amount0/amount1 are the swapper's delta: negative = the swapper paid (opposite of V3). */
export function encodeV4Swap(a: {
  poolManager: string;
  id: Hex;
  sender: string;
  amount0: bigint;
  amount1: bigint;
  sqrtPriceX96: bigint;
  liquidity: bigint;
  tick: number;
  fee: number;
}): EncodedLog {
  return build('v4Swap', a.poolManager, { id: a.id, sender: a.sender }, [
    a.amount0,
    a.amount1,
    a.sqrtPriceX96,
    a.liquidity,
    a.tick,
    a.fee,
  ]);
}

/** The pool id is computed from the key unless given. */
export function encodeV4Initialize(
  a: V4PoolKey & { poolManager: string; sqrtPriceX96: bigint; tick: number; id?: Hex },
): EncodedLog {
  const id = a.id ?? v4PoolId(a);
  return build('v4Initialize', a.poolManager, { id, currency0: a.currency0, currency1: a.currency1 }, [
    a.fee,
    a.tickSpacing,
    a.hooks,
    a.sqrtPriceX96,
    a.tick,
  ]);
}

export function encodeAerodromeSwap(a: {
  pool: string;
  sender: string;
  to: string;
  amount0In: bigint;
  amount1In: bigint;
  amount0Out: bigint;
  amount1Out: bigint;
}): EncodedLog {
  return build('aerodromeSwap', a.pool, { sender: a.sender, to: a.to }, [
    a.amount0In,
    a.amount1In,
    a.amount0Out,
    a.amount1Out,
  ]);
}

export function encodeAerodromeFees(a: { pool: string; sender: string; amount0: bigint; amount1: bigint }): EncodedLog {
  return build('aerodromeFees', a.pool, { sender: a.sender }, [a.amount0, a.amount1]);
}

export function encodeAerodromeSync(a: { pool: string; reserve0: bigint; reserve1: bigint }): EncodedLog {
  return build('aerodromeSync', a.pool, {}, [a.reserve0, a.reserve1]);
}

export function encodeAerodromePoolCreated(a: {
  factory: string;
  token0: string;
  token1: string;
  stable: boolean;
  pool: string;
  length?: bigint;
}): EncodedLog {
  return build('aerodromePoolCreated', a.factory, { token0: a.token0, token1: a.token1, stable: a.stable }, [
    a.pool,
    a.length ?? 1n,
  ]);
}

export interface FourMemeTradeArgs {
  manager: string;
  token: string;
  account: string;
  price: bigint;
  amount: bigint;
  cost: bigint;
  fee: bigint;
  offers: bigint;
  funds: bigint;
}

const fourMemeWords = (a: FourMemeTradeArgs) =>
  [a.token, a.account, a.price, a.amount, a.cost, a.fee, a.offers, a.funds] as const;

export function encodeFourMemePurchase(a: FourMemeTradeArgs): EncodedLog {
  return build('fourMemePurchase', a.manager, {}, fourMemeWords(a));
}

export function encodeFourMemeSale(a: FourMemeTradeArgs): EncodedLog {
  return build('fourMemeSale', a.manager, {}, fourMemeWords(a));
}

export interface FourMemeV1TradeArgs {
  manager: string;
  token: string;
  account: string;
  tokenAmount: bigint;
  etherAmount: bigint;
  /** Given: the lite ABI's five-word event; absent: the four-word form of the API doc. */
  fee?: bigint;
}

export function encodeFourMemePurchaseV1(a: FourMemeV1TradeArgs): EncodedLog {
  if (a.fee !== undefined)
    return build('fourMemePurchaseV1Fee', a.manager, {}, [a.token, a.account, a.tokenAmount, a.etherAmount, a.fee]);
  return build('fourMemePurchaseV1', a.manager, {}, [a.token, a.account, a.tokenAmount, a.etherAmount]);
}

export function encodeFourMemeSaleV1(a: FourMemeV1TradeArgs): EncodedLog {
  if (a.fee !== undefined)
    return build('fourMemeSaleV1Fee', a.manager, {}, [a.token, a.account, a.tokenAmount, a.etherAmount, a.fee]);
  return build('fourMemeSaleV1', a.manager, {}, [a.token, a.account, a.tokenAmount, a.etherAmount]);
}

export function encodeFourMemeCreate(a: {
  manager: string;
  creator: string;
  token: string;
  requestId?: bigint;
  name: string;
  symbol: string;
  totalSupply: bigint;
  launchTime: bigint;
  launchFee?: bigint;
}): EncodedLog {
  return build('fourMemeCreate', a.manager, {}, [
    a.creator,
    a.token,
    a.requestId ?? 0n,
    a.name,
    a.symbol,
    a.totalSupply,
    a.launchTime,
    a.launchFee ?? 0n,
  ]);
}

export function encodeFourMemeLiquidityAdded(a: {
  manager: string;
  base: string;
  offers: bigint;
  quote: string;
  funds: bigint;
}): EncodedLog {
  return build('fourMemeLiquidityAdded', a.manager, {}, [a.base, a.offers, a.quote, a.funds]);
}

export function encodeFourMemeTradeStop(a: { manager: string; token: string }): EncodedLog {
  return build('fourMemeTradeStop', a.manager, {}, [a.token]);
}

export function encodeTransfer(a: { token: string; from: string; to: string; value: bigint }): EncodedLog {
  return build('transfer', a.token, { from: a.from, to: a.to }, [a.value]);
}

const hex = (value: bigint | number) => `0x${value.toString(16)}`;

/** A receipt shaped like eth_getTransactionReceipt's result; logs are numbered from firstLogIndex. */
export function buildReceipt(a: {
  transactionHash: string;
  blockNumber: number | bigint;
  from: string;
  to: string | null;
  logs: EncodedLog[];
  gasUsed?: bigint;
  effectiveGasPrice?: bigint;
  status?: 0 | 1;
  firstLogIndex?: number;
}): EvmReceipt {
  const blockNumber = hex(a.blockNumber);
  const logs: EvmLog[] = a.logs.map((log, index) => ({
    address: log.address,
    topics: [...log.topics],
    data: log.data,
    logIndex: hex((a.firstLogIndex ?? 0) + index),
    blockNumber,
    transactionHash: a.transactionHash,
    removed: false,
  }));
  return {
    transactionHash: a.transactionHash,
    blockNumber,
    logs,
    status: hex(a.status ?? 1),
    from: a.from.toLowerCase(),
    to: a.to === null ? null : a.to.toLowerCase(),
    gasUsed: hex(a.gasUsed ?? 21_000n),
    effectiveGasPrice: hex(a.effectiveGasPrice ?? 1_000_000_000n),
  };
}
