// Multicall3 on the EVM read path: the resolver asks a range's views in a few aggregate3 calls
// (allowFailure keeps reverting views and bytes32 symbols handled as before), falls back to one
// eth_call per view on a node without Multicall3, and the simulator node answers aggregate3 and
// eth_getBlockReceipts as a real node does.
import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import {
  decodeFunctionData,
  decodeFunctionResult,
  encodeFunctionData,
  encodeFunctionResult,
  parseAbi,
  stringToHex,
  toFunctionSelector,
  type Hex,
} from 'viem';
import { CHAIN_INFO } from '../core/chains.ts';
import { loadConfig } from '../core/config.ts';
import { createContext } from '../core/context.ts';
import { createLogger } from '../core/logger.ts';
import type { TokenEvent } from '../core/topics.ts';
import {
  buildReceipt,
  createEvmDecoder,
  createPoolRegistry,
  createTokenRegistry,
  encodeAerodromeSwap,
  encodePairCreated,
  encodeV2Swap,
  seedAddress,
  seedHash,
  type EvmReceipt,
} from '../ingest/evm/index.ts';
import { readEvmContract } from '../ingest/enrichment/security-resolver.ts';
import { createEvmNodeChain, NodeFault } from '../ingest/simulator/node-chains.ts';
import { createEvmResolver } from '../ingest/sources/evm-resolver.ts';
import { JsonRpcError, type RpcCaller } from '../ingest/sources/json-rpc.ts';
import { createMulticall, MULTICALL3_ABI, MULTICALL3_ADDRESS } from '../ingest/sources/multicall.ts';

const chain = 'base' as const;
const WETH = CHAIN_INFO.base.native.wrapped.toLowerCase();
const V2_FACTORY = '0x8909dc15e40173ff4699343b6eb8132c65e18ec6';
const ABI = parseAbi([
  'function token0() view returns (address)',
  'function token1() view returns (address)',
  'function factory() view returns (address)',
  'function decimals() view returns (uint8)',
  'function symbol() view returns (string)',
  'function name() view returns (string)',
  'function totalSupply() view returns (uint256)',
  'function owner() view returns (address)',
  'function balanceOf(address) view returns (uint256)',
  'function stable() view returns (bool)',
  'function getFee(address pool, bool stable) view returns (uint256)',
]);
type Views = Record<string, Hex>;
const answer = (functionName: string, result: unknown) =>
  encodeFunctionResult({ abi: ABI, functionName, result } as never) as Hex;
const sel = (signature: string) => toFunctionSelector(signature);

function erc20(name: string, symbol: string, supply: bigint): Views {
  return {
    [sel('decimals()')]: answer('decimals', 18),
    [sel('name()')]: answer('name', name),
    [sel('symbol()')]: answer('symbol', symbol),
    [sel('totalSupply()')]: answer('totalSupply', supply),
  };
}

/**
 * A node over a table of contracts (address → calldata or selector → return data); a missing view reverts.
 * With `multicall`, Multicall3 is deployed: aggregate3 runs each sub-call against the table.
 * Without, its address has no code: eth_call there answers "0x", as a real node does.
 */
function tableNode(contracts: Record<string, Views>, multicall: boolean) {
  const calls: Array<{ to: string; subCalls?: number }> = [];
  const run = (to: string, data: Hex): Hex => {
    const views = contracts[to.toLowerCase()];
    const result = views?.[data] ?? views?.[data.slice(0, 10)];
    if (!result) throw new JsonRpcError('eth_call', 3, 'execution reverted');
    return result;
  };
  const rpc: RpcCaller = {
    async call<T>(method: string, params?: unknown): Promise<T> {
      assert.equal(method, 'eth_call');
      const [{ to, data }] = params as [{ to: string; data: Hex }];
      if (to.toLowerCase() !== MULTICALL3_ADDRESS) {
        calls.push({ to: to.toLowerCase() });
        return run(to, data) as T;
      }
      if (!multicall) {
        calls.push({ to: MULTICALL3_ADDRESS });
        return '0x' as T;
      }
      const [subCalls] = decodeFunctionData({ abi: MULTICALL3_ABI, data }).args;
      calls.push({ to: MULTICALL3_ADDRESS, subCalls: subCalls.length });
      const results = subCalls.map((sub) => {
        try {
          return { success: true, returnData: run(sub.target, sub.callData) };
        } catch (error) {
          if (!sub.allowFailure) throw error; // Multicall3 reverts the whole call
          return { success: false, returnData: '0x' as Hex };
        }
      });
      return encodeFunctionResult({ abi: MULTICALL3_ABI, functionName: 'aggregate3', result: results }) as T;
    },
  };
  return { rpc, calls };
}

const ctx = () => createContext(loadConfig({ SPOT_LOG_LEVEL: 'silent' }), createLogger('silent'));

function receiptOf(logs: Parameters<typeof buildReceipt>[0]['logs'], tag: string): EvmReceipt {
  return JSON.parse(
    JSON.stringify(
      buildReceipt({
        transactionHash: seedHash(`multicall-test:${tag}`),
        blockNumber: 7,
        from: seedAddress('multicall-test:wallet'),
        to: seedAddress('multicall-test:router'),
        logs,
      }),
    ),
  );
}

/** A range: a swap on a pair nobody saw created (a bytes32-symbol token), a swap on a contract that is no pool, a new pair of a normal token and a non-ERC-20. */
function scenario() {
  const old = seedAddress('mc old-style token').toLowerCase();
  const pair = seedAddress('mc unknown pair').toLowerCase();
  const notPool = seedAddress('mc not a pool').toLowerCase();
  const fresh = seedAddress('mc fresh token').toLowerCase();
  const odd = seedAddress('mc non-erc20').toLowerCase();
  const newPair = seedAddress('mc new pair').toLowerCase();
  const [p0, p1] = old < WETH ? [old, WETH] : [WETH, old];
  const contracts: Record<string, Views> = {
    [pair]: {
      [sel('token0()')]: answer('token0', p0),
      [sel('token1()')]: answer('token1', p1),
      [sel('factory()')]: answer('factory', V2_FACTORY),
    },
    // MKR-style: name and symbol are bytes32, not strings.
    [old]: {
      ...erc20('', '', 10n ** 24n),
      [sel('name()')]: stringToHex('Old Token', { size: 32 }),
      [sel('symbol()')]: stringToHex('OLD', { size: 32 }),
    },
    [fresh]: erc20('Fresh', 'FRSH', 10n ** 27n),
    // no views at all: every call reverts (odd, notPool)
  };
  const swap = (on: string) =>
    encodeV2Swap({
      pair: on,
      sender: seedAddress('r'),
      to: seedAddress('t'),
      amount0In: 1n,
      amount1In: 0n,
      amount0Out: 0n,
      amount1Out: 1n,
    });
  const [n0, n1] = fresh < odd ? [fresh, odd] : [odd, fresh];
  const receipts = [
    receiptOf([swap(pair)], 'swap'),
    receiptOf([swap(notPool)], 'not a pool'),
    receiptOf([encodePairCreated({ factory: V2_FACTORY, token0: n0, token1: n1, pair: newPair })], 'created'),
  ];
  return { contracts, receipts, old, pair, fresh, odd };
}

async function resolveRange(rpc: RpcCaller, receipts: EvmReceipt[]) {
  const decoder = createEvmDecoder({ chain, tokens: createTokenRegistry(), pools: createPoolRegistry() });
  const resolver = createEvmResolver(ctx(), { chain, rpc, decoder });
  await resolver.prefetch(receipts);
  const events: TokenEvent[] = [];
  for (const receipt of receipts) events.push(...(await resolver.prepare(receipt, 1_000)));
  return { decoder, resolver, events };
}

const created = (events: TokenEvent[]) =>
  events.map((event) => (event.kind === 'created' ? [event.token, event.name, event.symbol, event.supply] : []));

describe('Multicall3 on the EVM read path', () => {
  it('resolves a range’s new pools and tokens in two aggregate3 calls, with bytes32 symbols and reverting views handled', async () => {
    const { contracts, receipts, old, pair, fresh, odd } = scenario();
    const node = tableNode(contracts, true);
    const { decoder, events } = await resolveRange(node.rpc, receipts);
    assert.deepEqual(
      node.calls.map((call) => call.to),
      [MULTICALL3_ADDRESS, MULTICALL3_ADDRESS],
      'round 1: pools and the tokens already named; round 2: the tokens the pools named; no eth_call per view',
    );
    assert.deepEqual(created(events), [
      [old, 'Old Token', 'OLD', (10n ** 24n).toString()],
      [fresh, 'Fresh', 'FRSH', (10n ** 27n).toString()],
    ]);
    assert.equal(decoder.pools.getPool(chain, pair)?.token0, old < WETH ? old : WETH);
    assert.equal(decoder.pools.getPool(chain, pair)?.dex, 'uniswap-v2');
    assert.equal(decoder.tokens.getDecimals(chain, odd), undefined, 'the non-ERC-20 is not registered');
  });

  it('a node without Multicall3 gives the same answers through one eth_call per view, and is not asked aggregate3 again', async () => {
    const { contracts, receipts } = scenario();
    const withMulticall = await resolveRange(tableNode(contracts, true).rpc, receipts);
    const node = tableNode(contracts, false);
    const decoder = createEvmDecoder({ chain, tokens: createTokenRegistry(), pools: createPoolRegistry() });
    const resolver = createEvmResolver(ctx(), { chain, rpc: node.rpc, decoder });
    const events: TokenEvent[] = [];
    await resolver.prefetch(receipts);
    for (const receipt of receipts) events.push(...(await resolver.prepare(receipt, 1_000)));
    assert.deepEqual(events, withMulticall.events);
    assert.equal(node.calls.filter((call) => call.to === MULTICALL3_ADDRESS).length, 1, 'asked once');
    assert.ok(node.calls.length > 10, 'then per view');
    await resolver.prefetch(receipts);
    assert.equal(node.calls.filter((call) => call.to === MULTICALL3_ADDRESS).length, 1, 'remembered');
  });

  it("asks an unknown Aerodrome pool's fee (PoolFactory.getFee, needs its factory and stable) in the second round", async () => {
    const factory = '0x420dd381b31aef6683db6b902084cb0ffece40da';
    const pool = seedAddress('mc aero pool').toLowerCase();
    const coin = seedAddress('mc aero coin').toLowerCase();
    const [token0, token1] = coin < WETH ? [coin, WETH] : [WETH, coin];
    const getFee = encodeFunctionData({ abi: ABI, functionName: 'getFee', args: [pool as Hex, false] });
    const node = tableNode(
      {
        [pool]: {
          [sel('token0()')]: answer('token0', token0),
          [sel('token1()')]: answer('token1', token1),
          [sel('factory()')]: answer('factory', factory),
          [sel('stable()')]: answer('stable', false),
        },
        [coin]: erc20('Coin', 'C', 10n ** 27n),
        // bps for this pool and this stable flag only
        [factory]: { [getFee]: answer('getFee', 100n) },
      },
      true,
    );
    const swap = encodeAerodromeSwap({
      pool,
      sender: seedAddress('r'),
      to: seedAddress('t'),
      amount0In: 1n,
      amount1In: 0n,
      amount0Out: 0n,
      amount1Out: 1n,
    });
    const { decoder, events } = await resolveRange(node.rpc, [receiptOf([swap], 'aero')]);
    assert.equal(decoder.pools.getPool(chain, pool)?.fee, 10_000, '100 bps');
    assert.deepEqual(created(events), [[coin, 'Coin', 'C', (10n ** 27n).toString()]]);
    assert.deepEqual(
      node.calls.map((call) => [call.to, call.subCalls]),
      [
        [MULTICALL3_ADDRESS, 4],
        [MULTICALL3_ADDRESS, 5],
      ],
      'pool views; then getFee and the coin',
    );
  });

  it('splits many views into aggregate3 calls of at most 50', async () => {
    const contracts: Record<string, Views> = {};
    const logs = [];
    for (let i = 0; i < 30; i++) {
      const token = seedAddress(`mc many ${i}`).toLowerCase();
      contracts[token] = erc20(`T${i}`, `T${i}`, 1n);
      const [token0, token1] = token < WETH ? [token, WETH] : [WETH, token];
      logs.push(encodePairCreated({ factory: V2_FACTORY, token0, token1, pair: seedAddress(`mc many pair ${i}`) }));
    }
    const node = tableNode(contracts, true);
    const { events } = await resolveRange(node.rpc, [receiptOf(logs, 'many')]);
    assert.equal(events.length, 30, 'WETH is known already');
    assert.deepEqual(
      node.calls.map((call) => call.subCalls),
      [50, 50, 20],
      '30 tokens × 4 views',
    );
  });

  it('a transport failure of aggregate3 is thrown (the range is retried), not taken for a node without Multicall3', async () => {
    let failing = true;
    const rpc: RpcCaller = {
      async call() {
        if (failing) throw new Error('socket hang up');
        return '0x' as never;
      },
    };
    const multicall = createMulticall(ctx(), { chain, rpc });
    await assert.rejects(multicall.aggregate([{ to: WETH, data: sel('decimals()') }]), /socket hang up/);
    assert.equal(multicall.available, true);
    failing = false;
    assert.equal(await multicall.aggregate([{ to: WETH, data: sel('decimals()') }]), null, '"0x": no contract');
    assert.equal(multicall.available, false);
  });

  it('the security reader asks its plain views in one aggregate3', async () => {
    const token = seedAddress('mc security token').toLowerCase();
    const pair = seedAddress('mc security pair').toLowerCase();
    const dead = '0x000000000000000000000000000000000000dead';
    const owner = seedAddress('mc owner');
    const table = tableNode(
      {
        [token]: {
          [sel('owner()')]: answer('owner', owner),
          [sel('balanceOf(address)')]: answer('balanceOf', 0n),
          [sel('totalSupply()')]: answer('totalSupply', 10n ** 27n),
        },
        [pair]: { [sel('totalSupply()')]: answer('totalSupply', 1000n) },
      },
      true,
    );
    // The pair's balanceOf answers by holder: 990 held by the dead address.
    const rpc: RpcCaller = {
      async call<T>(method: string, params?: unknown): Promise<T> {
        if (method === 'eth_getCode') return '0x6001' as T;
        const [{ to, data }] = params as [{ to: string; data: Hex }];
        if (to.toLowerCase() === MULTICALL3_ADDRESS) {
          const [subCalls] = decodeFunctionData({ abi: MULTICALL3_ABI, data }).args;
          const lp = subCalls.map((sub) =>
            sub.target.toLowerCase() === pair && sub.callData.startsWith(sel('balanceOf(address)'))
              ? {
                  success: true,
                  returnData: answer(
                    'balanceOf',
                    (decodeFunctionData({ abi: ABI, data: sub.callData }).args![0] as string).toLowerCase() === dead
                      ? 990n
                      : 0n,
                  ),
                }
              : null,
          );
          const rest = await table.rpc.call<Hex>(method, params);
          const results = decodeFunctionResult({ abi: MULTICALL3_ABI, functionName: 'aggregate3', data: rest });
          return encodeFunctionResult({
            abi: MULTICALL3_ABI,
            functionName: 'aggregate3',
            result: results.map((result, i) => lp[i] ?? result),
          }) as T;
        }
        return table.rpc.call<T>(method, params);
      },
    };
    const facts = await readEvmContract(rpc, token, pair, createMulticall(ctx(), { chain, rpc }));
    assert.equal(facts.owner?.toLowerCase(), owner.toLowerCase());
    assert.deepEqual(facts.lp, { issued: 1000n, burnt: 990n });
    assert.deepEqual(
      table.calls.map((call) => [call.to, call.subCalls]),
      [[MULTICALL3_ADDRESS, 7]],
      'owner, getOwner, balanceOf, totalSupply, pair totalSupply, two burn balances: one call',
    );
  });
});

describe('the simulator node answers aggregate3 and eth_getBlockReceipts', () => {
  const start = Date.UTC(2026, 0, 1);
  function nodeWithToken() {
    const node = createEvmNodeChain({ seed: 'multicall-test', chain, start });
    const token = seedAddress('mc sim token').toLowerCase();
    const receipt = receiptOf([], 'sim');
    node.append({
      kind: 'evm',
      chain,
      receipt: { ...receipt, blockNumber: `0x${(node.first + 1).toString(16)}` },
      blockTimeMs: start,
      tokens: [{ address: token, decimals: 9, name: 'Sim', symbol: 'SIM', supply: '1000' }],
    });
    node.seal(start + 3_600_000);
    return { node, token, receipt };
  }
  const aggregate = (calls: Array<{ target: string; allowFailure: boolean; callData: Hex }>) =>
    encodeFunctionData({ abi: MULTICALL3_ABI, functionName: 'aggregate3', args: [calls as never] });

  it('dispatches each sub-call to its eth_call answer; a failing one is success=false', () => {
    const { node, token } = nodeWithToken();
    const data = aggregate([
      { target: token, allowFailure: true, callData: sel('decimals()') },
      { target: token, allowFailure: true, callData: sel('symbol()') },
      { target: seedAddress('nobody'), allowFailure: true, callData: sel('decimals()') },
    ]);
    const result = node.call('eth_call', [{ to: MULTICALL3_ADDRESS, data }, 'latest']) as Hex;
    const [decimals, symbol, missing] = decodeFunctionResult({
      abi: MULTICALL3_ABI,
      functionName: 'aggregate3',
      data: result,
    });
    assert.deepEqual(decimals, { success: true, returnData: answer('decimals', 9) });
    assert.deepEqual(symbol, { success: true, returnData: answer('symbol', 'SIM') });
    assert.deepEqual(missing, { success: false, returnData: '0x' });
    const strict = aggregate([{ target: seedAddress('nobody'), allowFailure: false, callData: sel('decimals()') }]);
    assert.throws(
      () => node.call('eth_call', [{ to: MULTICALL3_ADDRESS, data: strict }, 'latest']),
      (error: unknown) => error instanceof NodeFault && error.code === 3,
      'allowFailure=false reverts the whole call',
    );
  });

  it('eth_getBlockReceipts answers the block’s receipts as eth_getTransactionReceipt does, null past the tip', () => {
    const { node, receipt } = nodeWithToken();
    const n = node.first + 1;
    const receipts = node.call('eth_getBlockReceipts', [`0x${n.toString(16)}`]) as EvmReceipt[];
    assert.equal(receipts.length, 1);
    assert.deepEqual(receipts[0], node.call('eth_getTransactionReceipt', [receipt.transactionHash]));
    assert.deepEqual(node.call('eth_getBlockReceipts', [`0x${(n + 1).toString(16)}`]), []);
    assert.equal(node.call('eth_getBlockReceipts', [`0x${(node.tip + 1).toString(16)}`]), null);
  });
});
