// The simulator's token contracts and mint accounts, answered in real JSON-RPC shapes (the reads
// the security resolver makes): getAccountInfo for Solana mints, eth_getCode / eth_call /
// eth_simulateV1 for EVM tokens and V2 pairs. Each token's setup is drawn once from the seed and
// its address, with shares like a launchpad-heavy market: most mints revoked and plain, a few with
// live authorities, Token-2022 extensions, owner powers, transfer taxes, max-tx limits, burnt LP.
import { createHash } from 'node:crypto';
import {
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionResult,
  pad,
  parseAbi,
  toFunctionSelector,
  type Hex,
} from 'viem';
import { encodeMintAccount, type MintAccountSpec } from '../solana/mint-account.ts';
import { solanaAddress } from '../solana/address.ts';
import { JsonRpcError, type RpcCaller } from '../sources/json-rpc.ts';
import { MULTICALL3_ABI, MULTICALL3_ADDRESS } from '../sources/multicall.ts';

const ABI = parseAbi([
  'function owner() view returns (address)',
  'function balanceOf(address) view returns (uint256)',
  'function totalSupply() view returns (uint256)',
  'function transfer(address to, uint256 amount) returns (bool)',
]);
const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const DEAD = '0x000000000000000000000000000000000000dead';
const SUPPLY = 10n ** 27n;

function draw(seed: number, address: string, salt: string): number {
  return createHash('sha256').update(`${seed}:${salt}:${address.toLowerCase()}`).digest().readUInt32BE(0) / 2 ** 32;
}

/** The mint a simulated Solana token was created with. */
export function simMintSpec(seed: number, mint: string): MintAccountSpec {
  const r = draw(seed, mint, 'mint');
  const authority = solanaAddress(`sim-authority:${mint}`);
  const spec: MintAccountSpec = { supply: 10n ** 15n, decimals: 6 };
  if (r < 0.8) return spec; // launchpad mint: both authorities revoked
  if (r < 0.86) return { ...spec, mintAuthority: authority };
  if (r < 0.91) return { ...spec, freezeAuthority: authority };
  if (r < 0.95) return { ...spec, transferFeeBps: 100 + Math.floor(draw(seed, mint, 'fee') * 5) * 100 };
  if (r < 0.97) return { ...spec, permanentDelegate: authority };
  if (r < 0.98) return { ...spec, defaultFrozen: true, freezeAuthority: authority };
  if (r < 0.99) return { ...spec, transferHookProgram: solanaAddress(`sim-hook:${mint}`) };
  return { ...spec, pausable: true };
}

export interface SimContractSpec {
  functions: string[];
  owner: string;
  /** Recipient's share of a transfer, bps. */
  receivedBps: number;
  /** Transfers above this revert; null: no limit. */
  maxTx: bigint | null;
}

/** The ERC-20 a simulated EVM token was deployed as. */
export function simContractSpec(seed: number, token: string): SimContractSpec {
  const r = draw(seed, token, 'contract');
  const renounced = draw(seed, token, 'renounced') < 0.6;
  const owner = renounced ? DEAD : `0x${createHash('sha256').update(`owner:${token}`).digest('hex').slice(0, 40)}`;
  const base = ['transfer(address,uint256)', 'balanceOf(address)', 'totalSupply()', 'owner()'];
  const plain: SimContractSpec = { functions: base, owner, receivedBps: 10_000, maxTx: null };
  if (r < 0.82) return { ...plain, owner: DEAD };
  if (r < 0.87) return { ...plain, functions: [...base, 'mint(address,uint256)'] };
  if (r < 0.91) return { ...plain, functions: [...base, 'blacklist(address)', 'isBlacklisted(address)'] };
  if (r < 0.93) return { ...plain, functions: [...base, 'pause()', 'paused()'] };
  if (r < 0.97) return { ...plain, receivedBps: 10_000 - 100 * (1 + Math.floor(draw(seed, token, 'tax') * 5)) };
  return { ...plain, maxTx: SUPPLY / 200n };
}

/** Share of a simulated V2 pair's LP tokens sent to the dead address, in bps. */
export function simLpBurntBps(seed: number, pair: string): bigint {
  const r = draw(seed, pair, 'lp');
  return r < 0.5 ? 10_000n : r < 0.7 ? 9_990n : 0n;
}

const bytecodeOf = (functions: string[]) =>
  `0x6080604052${functions.map((f) => `63${toFunctionSelector(f).slice(2)}14`).join('')}` as Hex;

/** An RpcCaller over the simulated chains' token state. */
export function createSimChainState(seed: number): RpcCaller {
  const state: RpcCaller = {
    async call<T>(method: string, params: unknown = []): Promise<T> {
      const list = params as unknown[];
      const target = (list[0] as { to?: string } | undefined)?.to;
      if (method === 'eth_call' && target?.toLowerCase() === MULTICALL3_ADDRESS) {
        // Multicall3 aggregate3: each sub-call as its own eth_call; one that reverts is (false, 0x).
        const [calls] = decodeFunctionData({ abi: MULTICALL3_ABI, data: (list[0] as { data: Hex }).data }).args;
        const results = [];
        for (const call of calls) {
          try {
            results.push({
              success: true,
              returnData: await state.call<Hex>('eth_call', [{ to: call.target, data: call.callData }]),
            });
          } catch {
            if (!call.allowFailure) throw new JsonRpcError(method, 3, 'execution reverted: Multicall3: call failed');
            results.push({ success: false, returnData: '0x' as Hex });
          }
        }
        return encodeFunctionResult({ abi: MULTICALL3_ABI, functionName: 'aggregate3', result: results }) as T;
      }
      if (method === 'getAccountInfo') {
        const address = String(list[0]);
        const data = encodeMintAccount(simMintSpec(seed, address)).toString('base64');
        return { context: { slot: 0 }, value: { data: [data, 'base64'], executable: false, lamports: 1_461_600 } } as T;
      }
      if (method === 'eth_getCode') return bytecodeOf(simContractSpec(seed, String(list[0])).functions) as T;
      const call = (
        method === 'eth_simulateV1'
          ? (list[0] as { blockStateCalls: [{ calls: [unknown] }] }).blockStateCalls[0].calls[0]
          : list[0]
      ) as { from?: string; to: string; data: Hex };
      const spec = simContractSpec(seed, call.to);
      const { functionName, args } = decodeFunctionData({ abi: ABI, data: call.data });
      const answer = (value: unknown) => encodeFunctionResult({ abi: ABI, functionName, result: value } as never) as T;
      if (functionName === 'transfer') {
        const [to, amount] = args as [Hex, bigint];
        const reverts = spec.maxTx !== null && amount > spec.maxTx;
        if (method === 'eth_call') {
          if (reverts) throw new JsonRpcError(method, 3, 'execution reverted');
          return answer(true);
        }
        if (reverts) return [{ calls: [{ status: '0x0', returnData: '0x', logs: [] }] }] as T;
        const received = (amount * BigInt(spec.receivedBps)) / 10_000n;
        const log = (recipient: string, value: bigint) => ({
          address: call.to,
          topics: [TRANSFER_TOPIC, pad(call.from as Hex), pad(recipient as Hex)],
          data: encodeAbiParameters([{ type: 'uint256' }], [value]),
        });
        const logs = [log(to, received), ...(received < amount ? [log(call.to, amount - received)] : [])];
        return [{ calls: [{ status: '0x1', returnData: answer(true), logs }] }] as T;
      }
      if (functionName === 'owner') return answer(spec.owner);
      if (functionName === 'totalSupply') return answer(SUPPLY);
      if (functionName === 'balanceOf') {
        // asked of a pool (as its V2 pair's LP token) for the burn addresses, of a token for its pool
        const holder = String((args as [string])[0]).toLowerCase();
        if (holder === DEAD) return answer((SUPPLY * simLpBurntBps(seed, call.to)) / 10_000n);
        if (holder === '0x0000000000000000000000000000000000000000') return answer(0n);
        return answer(SUPPLY / 10n);
      }
      throw new JsonRpcError(method, -32601, `the simulator does not answer ${method}`);
    },
  };
  return state;
}
