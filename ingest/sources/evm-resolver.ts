// Fills the EVM decoder's registries before a receipt is decoded: pools it has not seen created
// (token0()/token1()/factory()/fee() on the pool) and tokens without decimals
// (decimals()/symbol()/name()/totalSupply()). A token first seen this way gets a `created`
// event (the aggregator needs its supply) unless the decoder creates it itself.
//
// `prefetch` asks a range's views up front through Multicall3 (a round for unknown pools, a
// round for their tokens and every other new token, ≤ 50 views per eth_call); `prepare` then reads
// those answers and asks the node only for what was not prefetched (a node without Multicall3).
import {
  decodeEventLog,
  decodeFunctionResult,
  encodeFunctionData,
  hexToNumber,
  hexToString,
  parseAbi,
  type Hex,
} from 'viem';
import { EVM_NATIVE_ADDRESS, type Chain } from '../../core/chains.ts';
import type { Context } from '../../core/context.ts';
import type { TokenEvent } from '../../core/topics.ts';
import { tradeId } from '../../core/chains.ts';
import {
  EVENTS,
  FACTORY_DEX,
  FOURMEME,
  V2_FEE_PIPS,
  eventNameOfTopic,
  pickQuote,
  type EventName,
  type EvmDecoder,
  type EvmDex,
  type EvmReceipt,
  type PoolInfo,
} from '../evm/index.ts';
import type { RpcCaller } from './json-rpc.ts';
import { createMulticall, createViewCache, type ViewCall } from './multicall.ts';

const ABI = parseAbi([
  'function token0() view returns (address)',
  'function token1() view returns (address)',
  'function factory() view returns (address)',
  'function fee() view returns (uint24)',
  'function stable() view returns (bool)',
  // Aerodrome PoolFactory: the pool's own fee in bps (custom per pool, else the stable/volatile default).
  'function getFee(address pool, bool stable) view returns (uint256)',
  'function decimals() view returns (uint8)',
  'function symbol() view returns (string)',
  'function name() view returns (string)',
  'function totalSupply() view returns (uint256)',
]);
type ViewName = 'token0' | 'token1' | 'factory' | 'fee' | 'stable' | 'decimals' | 'symbol' | 'name' | 'totalSupply';
const TOKEN_VIEWS: ViewName[] = ['decimals', 'name', 'symbol', 'totalSupply'];
type PoolKind = 'v2' | 'v3' | 'pancakeV3' | 'aerodrome';
/** What resolvePool asks of a pool of each kind (getFee on the factory comes after). */
const POOL_VIEWS: Record<PoolKind, ViewName[]> = {
  v2: ['token0', 'token1', 'factory'],
  v3: ['token0', 'token1', 'factory', 'fee'],
  pancakeV3: ['token0', 'token1', 'factory', 'fee'],
  aerodrome: ['token0', 'token1', 'factory', 'stable'],
};

const POOL_SWAPS: Partial<Record<EventName, PoolKind>> = {
  v2Swap: 'v2',
  v3Swap: 'v3',
  pancakeV3Swap: 'pancakeV3',
  aerodromeSwap: 'aerodrome',
};
const CREATIONS: EventName[] = [
  'pairCreated',
  'v3PoolCreated',
  'aerodromePoolCreated',
  'slipstreamPoolCreated',
  'v4Initialize',
  'infinityClInitialize',
  'infinityBinInitialize',
];
/** Swaps of pools keyed by an id (topic 1) that only their Initialize names: nothing to ask the chain. */
const ID_SWAPS: EventName[] = ['v4Swap', 'infinityClSwap', 'infinityBinSwap'];
const ID_CREATIONS: EventName[] = ['v4Initialize', 'infinityClInitialize', 'infinityBinInitialize'];
const FOURMEME_TRADES: EventName[] = [
  'fourMemePurchase',
  'fourMemeSale',
  'fourMemePurchaseV1',
  'fourMemeSaleV1',
  'fourMemePurchaseV1Fee',
  'fourMemeSaleV1Fee',
];

export interface EvmResolver {
  /** Asks the views `prepare` will need for these receipts (a range's) in few Multicall3 calls. */
  prefetch(receipts: readonly EvmReceipt[]): Promise<void>;
  /** Registers what `receipt` needs; returns `created` events of tokens first seen in it. */
  prepare(receipt: EvmReceipt, blockTime: number): Promise<TokenEvent[]>;
}

interface Log {
  address: string;
  topics: [Hex, ...Hex[]];
  data: Hex;
  logIndex: number;
}

/** Named arguments of `log` decoded as the event `name` (viem, strict); throws when it does not fit. */
function decodeAs(name: EventName, log: Log): Record<string, any> {
  return decodeEventLog({ abi: [EVENTS[name]], topics: log.topics, data: log.data, strict: true }).args as Record<
    string,
    any
  >;
}

const quantity = (value: unknown): number =>
  typeof value === 'string' && value.startsWith('0x') ? hexToNumber(value as Hex) : Number(value);

/** The receipt's logs as the decoder reads them: lower-case, numbered, removed ones dropped. */
function logsOf(receipt: EvmReceipt): Log[] {
  return receipt.logs
    .filter((log) => !log.removed && log.topics.length > 0)
    .map((log, position) => ({
      address: log.address.toLowerCase(),
      topics: log.topics.map((topic) => topic.toLowerCase()) as [Hex, ...Hex[]],
      data: (log.data || '0x').toLowerCase() as Hex,
      logIndex: log.logIndex === undefined || log.logIndex === null ? position : quantity(log.logIndex),
    }));
}

interface Seen {
  logIndex: number;
  pool: string;
  other: string | null;
  launchpad: string | null;
}

export function createEvmResolver(
  ctx: Context,
  options: { chain: Chain; rpc: RpcCaller; decoder: EvmDecoder },
): EvmResolver {
  const { chain, rpc, decoder } = options;
  const logger = ctx.logger.child({ component: 'evm-resolver', chain });
  /** Contracts whose views failed (not a pool, not an ERC-20): not asked again. */
  const unresolvable = new Set<string>();
  /** The current range's prefetched answers; cleared by the next prefetch. */
  const views = createViewCache(rpc, createMulticall(ctx, { chain, rpc }));

  const viewCall = (to: string, name: ViewName): ViewCall => ({
    to,
    data: encodeFunctionData({ abi: ABI, functionName: name }),
  });
  const feeCall = (factory: string, pool: string, stable: boolean): ViewCall => ({
    to: factory,
    data: encodeFunctionData({ abi: ABI, functionName: 'getFee', args: [pool as Hex, stable] }),
  });

  async function view(address: string, name: ViewName): Promise<unknown> {
    const result = await views.call(viewCall(address, name));
    if (name === 'symbol' || name === 'name') return decodeText(result, name);
    return decodeFunctionResult({ abi: ABI, functionName: name, data: result });
  }

  /** ERC-20 name/symbol are strings, or bytes32 on old tokens (MKR). */
  function decodeText(result: Hex, name: 'symbol' | 'name'): string {
    try {
      return decodeFunctionResult({ abi: ABI, functionName: name, data: result });
    } catch {
      return result.length === 66 ? hexToString(result, { size: 32 }).replace(/\0+$/, '') : '';
    }
  }

  async function aerodromePoolFee(factory: string, pool: string, stable: boolean): Promise<bigint | undefined> {
    try {
      const result = await views.call(feeCall(factory, pool, stable));
      return decodeFunctionResult({ abi: ABI, functionName: 'getFee', data: result });
    } catch {
      return undefined;
    }
  }

  async function optionalView(address: string, name: ViewName): Promise<unknown> {
    try {
      return await view(address, name);
    } catch {
      return undefined;
    }
  }

  async function resolvePool(pool: string, kind: PoolKind): Promise<PoolInfo | undefined> {
    if (unresolvable.has(pool)) return undefined;
    try {
      const [token0, token1] = (await Promise.all([view(pool, 'token0'), view(pool, 'token1')])) as [string, string];
      const factory = (await optionalView(pool, 'factory')) as string | undefined;
      const known = factory ? FACTORY_DEX[`${chain}:${factory.toLowerCase()}`] : undefined;
      let dex: EvmDex;
      let fee: number | null;
      if (kind === 'aerodrome') {
        dex = 'aerodrome';
        const stable = (await optionalView(pool, 'stable')) === true;
        const bps = factory ? await aerodromePoolFee(factory, pool, stable) : undefined;
        // Once per pool: the registry keeps the answer (each swap's Fees log states the fee paid anyway).
        fee =
          bps === undefined
            ? stable
              ? V2_FEE_PIPS.aerodromeStable
              : V2_FEE_PIPS.aerodromeVolatile
            : Number(bps) * 100;
      } else if (kind === 'v2') {
        dex = known ?? (chain === 'bsc' ? 'pancakeswap-v2' : 'uniswap-v2');
        fee = V2_FEE_PIPS[dex === 'pancakeswap-v2' ? 'pancakeswap-v2' : 'uniswap-v2'];
      } else {
        dex = known ?? (kind === 'pancakeV3' || chain === 'bsc' ? 'pancakeswap-v3' : 'uniswap-v3');
        const pips = await optionalView(pool, 'fee');
        fee = typeof pips === 'number' ? pips : null;
      }
      const info: PoolInfo = { pool, token0: token0.toLowerCase(), token1: token1.toLowerCase(), dex, fee };
      decoder.pools.registerPool(chain, info);
      ctx.metrics.inc(`ingest.evm.${chain}.pools_resolved`);
      return decoder.pools.getPool(chain, pool);
    } catch (error) {
      unresolvable.add(pool);
      logger.debug({ pool, err: (error as Error).message }, 'not a resolvable pool');
      return undefined;
    }
  }

  async function resolveToken(
    token: string,
    launchpad: string | null,
  ): Promise<{ decimals: number; name: string; symbol: string; supply: bigint } | undefined> {
    if (unresolvable.has(token)) return undefined;
    try {
      const decimals = Number(await view(token, 'decimals'));
      const [name, symbol, supply] = await Promise.all([
        optionalView(token, 'name'),
        optionalView(token, 'symbol'),
        view(token, 'totalSupply'),
      ]);
      const meta = {
        decimals,
        name: (name as string | undefined) ?? '',
        symbol: (symbol as string | undefined) ?? '',
        supply: supply as bigint,
      };
      decoder.tokens.registerToken(chain, token, {
        decimals,
        name: meta.name,
        symbol: meta.symbol,
        ...(launchpad ? { launchpad } : {}),
      });
      ctx.metrics.inc(`ingest.evm.${chain}.tokens_resolved`);
      return meta;
    } catch (error) {
      unresolvable.add(token);
      ctx.metrics.inc(`ingest.evm.${chain}.tokens_unresolvable`);
      logger.debug({ token, err: (error as Error).message }, 'not a resolvable ERC-20');
      return undefined;
    }
  }

  function tryDecode<T>(run: () => T): T | undefined {
    try {
      return run();
    } catch {
      return undefined;
    }
  }

  /** A prefetched view, decoded; undefined when it failed or was not asked. */
  function answered(to: string, name: ViewName): unknown {
    const answer = views.answer(viewCall(to, name));
    return answer?.ok
      ? tryDecode(() => decodeFunctionResult({ abi: ABI, functionName: name, data: answer.data }))
      : undefined;
  }

  return {
    async prefetch(receipts) {
      views.clear();
      const pools = new Map<string, PoolKind>();
      const created = new Set<string>();
      const tokens = new Set<string>();
      const wantToken = (token: string) => {
        if (
          token !== EVM_NATIVE_ADDRESS &&
          !unresolvable.has(token) &&
          decoder.tokens.getDecimals(chain, token) === undefined
        )
          tokens.add(token);
      };
      const wantPair = (info: { token0: string; token1: string } | undefined) => {
        if (info) for (const token of [info.token0, info.token1]) wantToken(token.toLowerCase());
      };
      for (const receipt of receipts) {
        if (receipt.status !== undefined && receipt.status !== null && quantity(receipt.status) === 0) continue;
        for (const log of logsOf(receipt)) {
          const name = eventNameOfTopic(log.topics[0]);
          if (!name) continue;
          const kind = POOL_SWAPS[name];
          if (kind) {
            const info = decoder.pools.getPool(chain, log.address);
            if (info) wantPair(info);
            else pools.set(log.address, kind);
          } else if (ID_SWAPS.includes(name)) {
            wantPair(decoder.pools.getPool(chain, log.topics[1] ?? ''));
          } else if (CREATIONS.includes(name)) {
            const pair = tryDecode(() => creationTokens(name, log));
            if (pair) created.add(pair.pool);
            wantPair(pair);
          } else if (FOURMEME_TRADES.includes(name)) {
            const token = tryDecode(() => (decodeAs(name, log).token as string).toLowerCase());
            if (token) wantToken(token);
          }
        }
      }
      for (const pool of pools.keys()) if (created.has(pool) || unresolvable.has(pool)) pools.delete(pool);
      const tokenCalls = () => [...tokens].flatMap((token) => TOKEN_VIEWS.map((name) => viewCall(token, name)));
      const poolCalls = [...pools].flatMap(([pool, kind]) => POOL_VIEWS[kind].map((name) => viewCall(pool, name)));
      if (!(await views.prefetch([...poolCalls, ...tokenCalls()])) || pools.size === 0) return;
      // Second round: the tokens the new pools named, and Aerodrome's fee (needs factory and stable).
      const feeCalls: ViewCall[] = [];
      for (const [pool, kind] of pools) {
        const [token0, token1] = [answered(pool, 'token0'), answered(pool, 'token1')];
        if (typeof token0 === 'string' && typeof token1 === 'string') wantPair({ token0, token1 });
        const factory = answered(pool, 'factory');
        if (kind === 'aerodrome' && typeof factory === 'string')
          feeCalls.push(feeCall(factory, pool, answered(pool, 'stable') === true));
      }
      await views.prefetch([...feeCalls, ...tokenCalls()]);
    },
    async prepare(receipt, blockTime) {
      if (receipt.status !== undefined && receipt.status !== null && quantity(receipt.status) === 0) return [];
      const logs = logsOf(receipt);
      const transactionHash = receipt.transactionHash.toLowerCase();
      const blockNumber = quantity(receipt.blockNumber);
      const sender = receipt.from ? receipt.from.toLowerCase() : null;
      const created = new Map<string, { pool: string; token0: string; token1: string }>();
      for (const log of logs) {
        const name = eventNameOfTopic(log.topics[0]);
        const pair = name && CREATIONS.includes(name) ? tryDecode(() => creationTokens(name, log)) : undefined;
        if (pair) created.set(pair.pool, pair);
      }
      const seen = new Map<string, Seen>();
      const note = (token: string, entry: Seen) => {
        if (token !== EVM_NATIVE_ADDRESS && !seen.has(token)) seen.set(token, entry);
      };
      const notePair = (pool: string, token0: string, token1: string, logIndex: number) => {
        const { token, quote } = pickQuote(chain, token0, token1);
        note(token, { logIndex, pool, other: quote, launchpad: null });
        note(quote, { logIndex, pool, other: token, launchpad: null });
      };
      for (const log of logs) {
        const name = eventNameOfTopic(log.topics[0]);
        if (!name) continue;
        const kind = POOL_SWAPS[name];
        if (kind) {
          const pool = log.address;
          const info = decoder.pools.getPool(chain, pool) ?? created.get(pool) ?? (await resolvePool(pool, kind));
          if (info) notePair(pool, info.token0, info.token1, log.logIndex);
        } else if (ID_SWAPS.includes(name)) {
          const info = decoder.pools.getPool(chain, log.topics[1] ?? '') ?? created.get(log.topics[1] ?? '');
          if (info) notePair(info.pool ?? log.topics[1], info.token0, info.token1, log.logIndex);
        } else if (CREATIONS.includes(name)) {
          const pair = tryDecode(() => creationTokens(name, log));
          if (pair) notePair(pair.pool, pair.token0, pair.token1, log.logIndex);
        } else if (FOURMEME_TRADES.includes(name)) {
          const token = tryDecode(() => (decodeAs(name, log).token as string).toLowerCase());
          if (token) note(token, { logIndex: log.logIndex, pool: log.address, other: null, launchpad: FOURMEME });
        }
      }
      const events: TokenEvent[] = [];
      for (const [token, entry] of seen) {
        if (decoder.tokens.getDecimals(chain, token) !== undefined) continue;
        const meta = await resolveToken(token, entry.launchpad);
        if (!meta) continue;
        const quote = entry.launchpad
          ? (decoder.tokens.getToken(chain, token)?.curveQuote?.toLowerCase() ?? EVM_NATIVE_ADDRESS)
          : entry.other;
        events.push({
          id: tradeId(chain, transactionHash, entry.logIndex),
          chain,
          transactionHash,
          eventIndex: entry.logIndex,
          blockNumber,
          blockTime,
          kind: 'created',
          token,
          name: meta.name,
          symbol: meta.symbol,
          uri: '',
          decimals: meta.decimals,
          supply: meta.supply.toString(),
          // Not a launch we watched: the sender of the transaction we first saw it in stands in.
          creator: sender ?? entry.pool,
          launchpad: entry.launchpad,
          pool: entry.pool,
          quoteAsset: quote,
        });
      }
      return events;
    },
  };
}

function creationTokens(name: EventName, log: Log): { pool: string; token0: string; token1: string } {
  const args = decodeAs(name, log);
  if (ID_CREATIONS.includes(name))
    return { pool: args.id.toLowerCase(), token0: args.currency0.toLowerCase(), token1: args.currency1.toLowerCase() };
  const pool = (name === 'pairCreated' ? args.pair : args.pool) as string;
  return { pool: pool.toLowerCase(), token0: args.token0.toLowerCase(), token1: args.token1.toLowerCase() };
}
