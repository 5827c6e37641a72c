// Reads the chain facts the security rules need and publishes `security` token events, off the
// ingest path (bounded work queue). Solana: the mint account (getAccountInfo). EVM: the bytecode's
// selectors (eth_getCode), owner(), a transfer out of the pool simulated with eth_simulateV1
// (eth_call where the node lacks it), and the V2 pair's LP supply held by burn addresses. The
// plain views (owner, balances, supplies) go out as one Multicall3 aggregate3 where the chain has it.
import { decodeFunctionData, decodeFunctionResult, encodeFunctionData, parseAbi, type Hex } from 'viem';
import { isEvmAddress, type Chain } from '../../core/chains.ts';
import type { Context } from '../../core/context.ts';
import type { RawSwap, TokenEvent } from '../../core/topics.ts';
import { decodeMintAccount, type MintFacts } from '../solana/mint-account.ts';
import type { MintChange } from '../solana/spl-token.ts';
import { JsonRpcError, type RpcCaller } from '../sources/json-rpc.ts';
import {
  createMulticall,
  createViewCache,
  type Multicall,
  type ViewCache,
  type ViewCall,
} from '../sources/multicall.ts';
import {
  evmContractSecurity,
  bytecodeSelectors,
  solanaMintSecurity,
  lpBurntPct,
  type EvmContractFacts,
  type SecurityFields,
  type SimulatedTransfer,
} from './security-rules.ts';
import { createWorkQueue } from './work-queue.ts';

export type SecurityEvent = Extract<TokenEvent, { kind: 'security' }>;
type Positioned = Pick<TokenEvent, 'id' | 'chain' | 'transactionHash' | 'eventIndex' | 'blockNumber' | 'blockTime'>;

const ABI = parseAbi([
  'function owner() view returns (address)',
  'function getOwner() view returns (address)',
  'function balanceOf(address) view returns (uint256)',
  'function totalSupply() view returns (uint256)',
  'function transfer(address to, uint256 amount) returns (bool)',
]);
const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
/** Receives the simulated transfers: an address no contract can have special-cased. */
const PROBE_RECIPIENT = '0x5ec0000000000000000000000000000000005ec0';
const EVM_BURN = ['0x000000000000000000000000000000000000dEaD', '0x0000000000000000000000000000000000000000'];

/** base64 account data of getAccountInfo, or null when the account does not exist. */
export async function readAccount(rpc: RpcCaller, address: string): Promise<Uint8Array | null> {
  const result = await rpc.call<{ value: { data: [string, string] } | null }>('getAccountInfo', [
    address,
    { encoding: 'base64', commitment: 'confirmed' },
  ]);
  const data = result?.value?.data;
  return Array.isArray(data) && typeof data[0] === 'string' ? Buffer.from(data[0], 'base64') : null;
}

export async function readSolanaMint(rpc: RpcCaller, mint: string): Promise<MintFacts | null> {
  const data = await readAccount(rpc, mint);
  return data ? decodeMintAccount(data) : null;
}

type ViewName = 'owner' | 'getOwner' | 'totalSupply' | 'balanceOf';

function viewCall(to: string, functionName: Exclude<ViewName, 'balanceOf'>): ViewCall;
function viewCall(to: string, functionName: 'balanceOf', args: [Hex]): ViewCall;
function viewCall(to: string, functionName: ViewName, args: unknown[] = []): ViewCall {
  return { to, data: encodeFunctionData({ abi: ABI, functionName, args } as never) };
}

/** The view's decoded result (the function named by the call's selector); throws when it failed. */
async function view<T>(views: ViewCache, call: ViewCall): Promise<T> {
  const data = await views.call(call);
  return decodeFunctionResult({
    abi: ABI,
    data,
    functionName: decodeFunctionData({ abi: ABI, data: call.data }).functionName,
  } as never) as T;
}

/** A transfer of `amount` from `from`, simulated; null when the node can simulate nothing. */
async function simulateTransfer(
  rpc: RpcCaller,
  token: string,
  from: string,
  amount: bigint,
): Promise<SimulatedTransfer | null> {
  const data = encodeFunctionData({ abi: ABI, functionName: 'transfer', args: [PROBE_RECIPIENT, amount] });
  try {
    const blocks = await rpc.call<
      Array<{ calls: Array<{ status: Hex; logs?: Array<{ address: string; topics: Hex[]; data: Hex }> }> }>
    >('eth_simulateV1', [{ blockStateCalls: [{ calls: [{ from, to: token, data }] }], validation: false }, 'latest']);
    const call = blocks?.[0]?.calls?.[0];
    if (!call) return null;
    if (call.status !== '0x1') return { reverted: true, sent: amount, received: 0n };
    let received = 0n;
    for (const log of call.logs ?? []) {
      if (log.address.toLowerCase() !== token.toLowerCase() || log.topics[0]?.toLowerCase() !== TRANSFER_TOPIC)
        continue;
      if (`0x${log.topics[2]?.slice(26) ?? ''}`.toLowerCase() === PROBE_RECIPIENT.toLowerCase())
        received += BigInt(log.data);
    }
    return { reverted: false, sent: amount, received };
  } catch (error) {
    if (!(error instanceof JsonRpcError) || error.code !== -32601) throw error;
  }
  // No eth_simulateV1: eth_call tells a revert, not the amount received.
  try {
    await rpc.call<Hex>('eth_call', [{ from, to: token, data }, 'latest']);
    return null;
  } catch (error) {
    if (error instanceof JsonRpcError) return { reverted: true, sent: amount, received: 0n };
    throw error;
  }
}

/** The facts of an ERC-20 `token` whose liquidity sits at `holder` (pool, pair or custody). */
export async function readEvmContract(
  rpc: RpcCaller,
  token: string,
  holder: string | null,
  multicall?: Multicall,
): Promise<EvmContractFacts> {
  const code = await rpc.call<Hex>('eth_getCode', [token, 'latest']);
  const selectors = bytecodeSelectors(code);
  const pair = holder && isEvmAddress(holder) ? holder : null;
  const owners = [viewCall(token, 'owner'), viewCall(token, 'getOwner')];
  const holdings = pair ? [viewCall(token, 'balanceOf', [pair as Hex]), viewCall(token, 'totalSupply')] : [];
  const lpCalls = pair
    ? [viewCall(pair, 'totalSupply'), ...EVM_BURN.map((a) => viewCall(pair, 'balanceOf', [a as Hex]))]
    : [];
  const views = createViewCache(rpc, multicall);
  await views.prefetch([...owners, ...holdings, ...lpCalls]);
  let owner: string | undefined;
  for (const getter of owners) {
    try {
      owner = await view<string>(views, getter);
      break;
    } catch {
      // no such getter (revert or empty answer)
    }
  }
  const facts: EvmContractFacts = { selectors, owner, smallTransfer: null, largeTransfer: null, lp: null };
  if (!pair) return facts;
  const [balance, supply] = (await Promise.all(holdings.map((call) => view<bigint>(views, call)))) as [bigint, bigint];
  const small = supply / 100_000n; // 0.001% of supply: under any sane max-tx limit
  if (balance > small && small > 0n) facts.smallTransfer = await simulateTransfer(rpc, token, pair, small);
  const large = supply / 50n;
  if (facts.smallTransfer && !facts.smallTransfer.reverted && balance >= large && large > small)
    facts.largeTransfer = await simulateTransfer(rpc, token, pair, large);
  facts.lp = await readPairLp(views, lpCalls);
  return facts;
}

/** A V2 pair is its own LP token: issued = totalSupply + burnt to zero, burnt = held by burn addresses. */
async function readPairLp(
  views: ViewCache,
  [supplyCall, ...burntCalls]: ViewCall[],
): Promise<{ issued: bigint; burnt: bigint } | null> {
  try {
    const supply = await view<bigint>(views, supplyCall!);
    const held = await Promise.all(burntCalls.map((call) => view<bigint>(views, call)));
    return { issued: supply, burnt: held.reduce((a, b) => a + b, 0n) };
  } catch {
    return null; // not an ERC-20 pool (V3/V4 positions are NFTs): no LP share to burn
  }
}

/** Placed at the chain fact that triggered the check; the id names the token (one transaction may touch several). */
export function securityEvent(at: Positioned, token: string, fields: SecurityFields, tag = 'security'): SecurityEvent {
  return {
    id: `${at.id}:${tag}:${token}`,
    chain: at.chain,
    transactionHash: at.transactionHash,
    eventIndex: at.eventIndex,
    blockNumber: at.blockNumber,
    blockTime: at.blockTime,
    kind: 'security',
    token,
    ...fields,
  };
}

export interface SecurityResolver {
  /** Queues a check of every token created, graduated or first traded in the batch; returns at once. */
  submit(events: readonly TokenEvent[], swaps?: readonly RawSwap[]): void;
  /** Solana: authority changes re-read the mint; LP burns at a graduation give the LP burnt share. */
  observeMintChanges(at: Positioned, changes: readonly MintChange[], graduatedToken: string | null): void;
  idle(): Promise<void>;
}

export function createSecurityResolver(deps: {
  ctx: Context;
  rpc: Partial<Record<Chain, RpcCaller>>;
  publish(event: SecurityEvent): void | Promise<void>;
  concurrency?: number;
  maxQueued?: number;
  /** Tokens remembered as checked (first-trade trigger); oldest forgotten first. */
  maxRemembered?: number;
}): SecurityResolver {
  const { ctx } = deps;
  const work = createWorkQueue(ctx, {
    name: 'enrichment_security',
    concurrency: deps.concurrency,
    maxQueued: deps.maxQueued,
  });
  const maxRemembered = deps.maxRemembered ?? 100_000;
  const checked = new Set<string>();
  /** One Multicall3 reader per chain: a node found without it is remembered. */
  const multicalls = new Map<Chain, Multicall>();
  const multicallOf = (chain: Chain, rpc: RpcCaller) => {
    if (!multicalls.has(chain)) multicalls.set(chain, createMulticall(ctx, { chain, rpc }));
    return multicalls.get(chain)!;
  };
  const remember = (key: string) => {
    checked.add(key);
    if (checked.size > maxRemembered) checked.delete(checked.values().next().value!);
  };

  const publish = async (at: Positioned, token: string, fields: SecurityFields, tag?: string) => {
    ctx.metrics.inc('enrichment_security_published');
    await deps.publish(securityEvent(at, token, fields, tag));
  };

  function check(at: Positioned, token: string, holder: string | null): void {
    const rpc = deps.rpc[at.chain];
    if (!rpc) return;
    const key = `${at.chain}:${token}`;
    remember(key);
    work.submit(`${key}:${holder ?? ''}`, async () => {
      if (at.chain === 'solana') {
        const facts = await readSolanaMint(rpc, token);
        if (facts) await publish(at, token, solanaMintSecurity(facts));
      } else {
        const facts = await readEvmContract(rpc, token, holder, multicallOf(at.chain, rpc));
        await publish(at, token, evmContractSecurity(facts));
      }
    });
  }

  return {
    submit(events, swaps = []) {
      for (const e of events) {
        if (e.kind === 'created') check(e, e.token, e.pool);
        else if (e.kind === 'graduated') check(e, e.token, e.pool);
      }
      for (const s of swaps) if (!checked.has(`${s.chain}:${s.token}`)) check(s, s.token, s.custody ?? s.pool);
    },
    observeMintChanges(at, changes, graduatedToken) {
      const rpc = deps.rpc[at.chain];
      if (!rpc) return;
      const touched = new Set<string>();
      for (const change of changes) if (change.kind !== 'burn') touched.add(change.mint);
      for (const mint of touched) check(at, mint, null);
      if (!graduatedToken) return;
      // LP burnt at migration: the burn of an LP mint in the graduation transaction
      for (const change of changes) {
        if (change.kind !== 'burn' || change.mint === graduatedToken) continue;
        work.submit(`${at.chain}:${change.mint}:lp`, async () => {
          const lp = await readSolanaMint(rpc, change.mint);
          if (!lp) return;
          await publish(at, graduatedToken, { lpBurntPct: lpBurntPct(change.amount, lp.supply + change.amount) }, 'lp');
        });
      }
    },
    idle: () => work.idle(),
  };
}
