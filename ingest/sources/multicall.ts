// Multicall3: many contract views answered by one eth_call (`aggregate3`, allowFailure per view),
// so resolving a range's new pools and tokens costs a few calls, not several per token.
// Deployed at the same address on every chain this service reads (docs/sources.md, "Multicall3").
// A node where the answer is not Multicall3's (no code there: "0x", or a refusal) is remembered
// and the caller falls back to one eth_call per view.
import { decodeFunctionResult, encodeFunctionData, parseAbi, type Hex } from 'viem';
import type { Chain } from '../../core/chains.ts';
import type { Context } from '../../core/context.ts';
import { JsonRpcError, type RpcCaller } from './json-rpc.ts';

export const MULTICALL3_ADDRESS = '0xca11bde05977b3631167028862be2a173976ca11';

export const MULTICALL3_ABI = parseAbi([
  'struct Call3 { address target; bool allowFailure; bytes callData; }',
  'struct Result { bool success; bytes returnData; }',
  'function aggregate3(Call3[] calls) payable returns (Result[] returnData)',
]);

/**
 * Chains whose Multicall3 is at MULTICALL3_ADDRESS: viem 2.57's chain definitions (base from
 * block 5,022, bsc from 15,921,452, robinhood, arc from genesis) and mds1/multicall3's
 * deployments.json (base 8453, bsc 56). A chain set false here is read with plain eth_calls.
 */
export const MULTICALL3_CHAINS: Record<Chain, boolean> = {
  solana: false,
  base: true,
  bsc: true,
  robinhood: true,
  arc: true,
};

/** Sub-calls per aggregate3: bounds the call's gas and answer size on any node. */
export const MULTICALL_MAX_CALLS = 50;

export interface ViewCall {
  to: string;
  data: Hex;
}

/** One view's outcome: its return data, or failed (reverted, not a contract). */
export type ViewAnswer = { ok: true; data: Hex } | { ok: false };

export interface Multicall {
  /** Answers in request order (one aggregate3 per MULTICALL_MAX_CALLS views); null when the node has no Multicall3. */
  aggregate(calls: readonly ViewCall[]): Promise<ViewAnswer[] | null>;
  readonly available: boolean;
}

export function createMulticall(ctx: Context, options: { chain: Chain; rpc: RpcCaller; maxCalls?: number }): Multicall {
  const { chain, rpc } = options;
  const maxCalls = options.maxCalls ?? MULTICALL_MAX_CALLS;
  const logger = ctx.logger.child({ component: 'multicall', chain });
  let available = MULTICALL3_CHAINS[chain];

  async function chunk(calls: readonly ViewCall[]): Promise<ViewAnswer[] | null> {
    const data = encodeFunctionData({
      abi: MULTICALL3_ABI,
      functionName: 'aggregate3',
      args: [calls.map((call) => ({ target: call.to as Hex, allowFailure: true, callData: call.data }))],
    });
    let answer: Hex;
    try {
      answer = await rpc.call<Hex>('eth_call', [{ to: MULTICALL3_ADDRESS, data }, 'latest']);
    } catch (error) {
      if (error instanceof JsonRpcError) return unavailable(error.message);
      throw error; // transport: the caller's range is retried
    }
    let results: readonly { success: boolean; returnData: Hex }[];
    try {
      results = decodeFunctionResult({ abi: MULTICALL3_ABI, functionName: 'aggregate3', data: answer });
    } catch {
      return unavailable(`answer is not aggregate3's (${answer.length} chars)`);
    }
    if (results.length !== calls.length) return unavailable(`${results.length} results for ${calls.length} calls`);
    ctx.metrics.inc(`ingest.evm.${chain}.multicalls`);
    return results.map((result) => (result.success ? { ok: true, data: result.returnData } : { ok: false }));
  }

  function unavailable(reason: string): null {
    available = false;
    logger.warn({ address: MULTICALL3_ADDRESS, reason }, 'no Multicall3 on this node: one eth_call per view');
    return null;
  }

  return {
    get available() {
      return available;
    },
    async aggregate(calls) {
      if (!available) return null;
      const out: ViewAnswer[] = [];
      for (let start = 0; start < calls.length; start += maxCalls) {
        const answers = await chunk(calls.slice(start, start + maxCalls));
        if (!answers) return null;
        out.push(...answers);
      }
      return out;
    },
  };
}

/** Views asked together by `prefetch`, then read one by one; one not prefetched (or with no Multicall3) is an eth_call. */
export interface ViewCache {
  /** Asks the calls not answered yet in one round of aggregate3; false when the node has no Multicall3. */
  prefetch(calls: readonly ViewCall[]): Promise<boolean>;
  /** The prefetched answer, undefined when not prefetched. */
  answer(call: ViewCall): ViewAnswer | undefined;
  /** The view's return data; throws when it failed, like a reverted eth_call. */
  call(call: ViewCall): Promise<Hex>;
  clear(): void;
}

export function createViewCache(rpc: RpcCaller, multicall?: Multicall): ViewCache {
  let answers = new Map<string, ViewAnswer>();
  const keyOf = (call: ViewCall) => `${call.to.toLowerCase()}:${call.data}`;
  return {
    async prefetch(calls) {
      if (!multicall?.available) return false;
      const fresh = [...new Map(calls.map((call) => [keyOf(call), call])).values()].filter(
        (call) => !answers.has(keyOf(call)),
      );
      if (fresh.length === 0) return true;
      const answered = await multicall.aggregate(fresh);
      if (!answered) return false;
      fresh.forEach((call, i) => answers.set(keyOf(call), answered[i]!));
      return true;
    },
    answer: (call) => answers.get(keyOf(call)),
    async call(call) {
      const answer = answers.get(keyOf(call));
      if (!answer) return rpc.call<Hex>('eth_call', [call, 'latest']);
      if (!answer.ok) throw new Error(`${call.data.slice(0, 10)} on ${call.to} failed (multicall)`);
      return answer.data;
    },
    clear() {
      answers = new Map();
    },
  };
}
