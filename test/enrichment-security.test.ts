import assert from 'node:assert/strict';
import {
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionResult,
  pad,
  parseAbi,
  toFunctionSelector,
  type Hex,
} from 'viem';
import { loadConfig } from '../core/config.ts';
import { createContext } from '../core/context.ts';
import { createLogger } from '../core/logger.ts';
import { isTopicValue, TOPICS, type TokenEvent } from '../core/topics.ts';
import { evmContractSecurity, lpBurntPct, solanaMintSecurity } from '../ingest/enrichment/security-rules.ts';
import { bytecodeSelectors, EVM_PRIVILEGES } from '../ingest/enrichment/security-rules.ts';
import { createSecurityResolver, readEvmContract, type SecurityEvent } from '../ingest/enrichment/security-resolver.ts';
import { base58Decode, base58Encode } from '../ingest/solana/base58.ts';
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from '../ingest/solana/constants.ts';
import {
  decodeMetaplexMetadata,
  decodeMintAccount,
  encodeMetaplexMetadata,
  encodeMintAccount,
  metaplexMetadataAddress,
} from '../ingest/solana/mint-account.ts';
import { decodeMintChange, TOKEN_IX } from '../ingest/solana/spl-token.ts';
import type { Instruction } from '../ingest/solana/transaction.ts';
import { JsonRpcError, type RpcCaller } from '../ingest/sources/json-rpc.ts';

const key = (n: number) => base58Encode(new Uint8Array(32).fill(n));
const MINT = key(7);
const AUTH = key(9);

describe('enrichment: security facts', () => {
  describe('solana mint accounts', () => {
    const rule = (spec: Parameters<typeof encodeMintAccount>[0]) =>
      solanaMintSecurity(decodeMintAccount(encodeMintAccount(spec)));

    it('a launchpad mint (authorities revoked) is mint-disabled, not blockable, no fee', () => {
      assert.deepEqual(rule({ supply: 10n ** 15n }), {
        mintDisabled: true,
        transferBlockable: false,
        transferFeeBps: 0,
      });
    });
    it('a live mint authority means minting is possible; a freeze authority makes transfers blockable', () => {
      assert.equal(rule({ mintAuthority: AUTH }).mintDisabled, false);
      assert.equal(rule({ freezeAuthority: AUTH }).transferBlockable, true);
      const facts = decodeMintAccount(
        encodeMintAccount({ mintAuthority: AUTH, freezeAuthority: key(3), decimals: 9, supply: 5n }),
      );
      assert.equal(facts.mintAuthority, AUTH);
      assert.equal(facts.freezeAuthority, key(3));
      assert.equal(facts.decimals, 9);
      assert.equal(facts.supply, 5n);
    });
    it('Token-2022 transfer fee gives transferFeeBps and alone does not block transfers', () => {
      assert.deepEqual(rule({ transferFeeBps: 250 }), {
        mintDisabled: true,
        transferBlockable: false,
        transferFeeBps: 250,
      });
    });
    it('the fee in effect is the older one until the newer fee epoch', () => {
      const data = encodeMintAccount({ transferFeeBps: 300 });
      const value = 166 + 4; // first TLV value
      data.writeBigUInt64LE(500n, value + 90); // newer fee from epoch 500
      data.writeUInt16LE(100, value + 88); // older fee 1%
      assert.equal(decodeMintAccount(data, 499n).transferFeeBps, 100);
      assert.equal(decodeMintAccount(data, 500n).transferFeeBps, 300);
    });
    for (const [name, spec] of [
      ['permanent delegate', { permanentDelegate: AUTH }],
      ['default frozen state', { defaultFrozen: true }],
      ['transfer hook', { transferHookProgram: AUTH }],
      ['non-transferable', { nonTransferable: true }],
      ['pausable', { pausable: true }],
    ] as const) {
      it(`Token-2022 ${name} makes transfers blockable`, () => {
        assert.equal(rule(spec).transferBlockable, true);
      });
    }
    it('reads the Token-2022 metadata extension and the Metaplex metadata account', () => {
      const metadata = { mint: MINT, name: 'Moo Deng', symbol: 'MOODENG', uri: 'https://ipfs.io/ipfs/Qm1' };
      assert.deepEqual(decodeMintAccount(encodeMintAccount({ transferFeeBps: 5, metadata })).metadata, {
        name: 'Moo Deng',
        symbol: 'MOODENG',
        uri: 'https://ipfs.io/ipfs/Qm1',
      });
      assert.deepEqual(decodeMetaplexMetadata(encodeMetaplexMetadata(metadata)), metadata, 'NUL padding dropped');
      assert.throws(() => decodeMetaplexMetadata(Buffer.alloc(10)), RangeError);
      assert.throws(() => decodeMintAccount(Buffer.alloc(40)), RangeError);
    });
    it('derives the Metaplex metadata PDA of a real mint', () => {
      // Public fact: the metadata account of USDC (EPjF…Dt1v), as shown by explorers.
      assert.equal(
        metaplexMetadataAddress('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'),
        '5x38Kp4hvdomTCnCrAny4UtMUt5rQBdB6px2K1Ui45Wq',
      );
    });
  });

  describe('solana token-program instructions', () => {
    const ix = (programId: string, data: number[], accounts: string[]): Instruction => ({
      programId,
      accounts,
      data: Uint8Array.from(data),
      top: 0,
      inner: -1,
      stackHeight: null,
    });
    const bytes = (k: string) => [...base58Decode(k)];

    it('InitializeMint2, SetAuthority (revoke) and BurnChecked', () => {
      const init = decodeMintChange(
        ix(TOKEN_2022_PROGRAM, [TOKEN_IX.initializeMint2, 6, ...bytes(AUTH), 1, ...bytes(key(3))], [MINT]),
      );
      assert.deepEqual(init, { kind: 'initializeMint', mint: MINT, mintAuthority: AUTH, freezeAuthority: key(3) });
      const revoke = decodeMintChange(ix(TOKEN_PROGRAM, [TOKEN_IX.setAuthority, 0, 0], [MINT, AUTH]));
      assert.deepEqual(revoke, { kind: 'setAuthority', mint: MINT, authority: 'mint', newAuthority: null });
      const amount = Buffer.alloc(8);
      amount.writeBigUInt64LE(123_456n);
      const burn = decodeMintChange(ix(TOKEN_PROGRAM, [TOKEN_IX.burnChecked, ...amount, 9], [key(1), MINT, AUTH]));
      assert.deepEqual(burn, { kind: 'burn', mint: MINT, amount: 123_456n });
      assert.equal(
        decodeMintChange(ix(key(5), [TOKEN_IX.burn, ...amount], [key(1), MINT])),
        null,
        'other programs ignored',
      );
      assert.equal(decodeMintChange(ix(TOKEN_PROGRAM, [TOKEN_IX.burn, 1], [key(1), MINT])), null, 'truncated');
    });
  });

  describe('LP burnt share', () => {
    it('is burnt / issued in percent, 2 decimals, capped', () => {
      assert.equal(lpBurntPct(0n, 100n), '0');
      assert.equal(lpBurntPct(1n, 3n), '33.33');
      assert.equal(lpBurntPct(500n, 100n), '100');
      assert.equal(lpBurntPct(5n, 0n), '0');
    });
  });

  describe('evm contracts', () => {
    const ABI = parseAbi([
      'function owner() view returns (address)',
      'function balanceOf(address) view returns (uint256)',
      'function totalSupply() view returns (uint256)',
      'function transfer(address to, uint256 amount) returns (bool)',
    ]);
    const TOKEN = '0x1000000000000000000000000000000000000001';
    const PAIR = '0x2000000000000000000000000000000000000002';
    const OWNER = '0x3000000000000000000000000000000000000003';
    const DEAD = '0x000000000000000000000000000000000000dEaD';
    const sel = (s: string) => toFunctionSelector(s).slice(2);
    /** A dispatcher: PUSH4 <selector> per function, and a PUSH32 whose operand holds a fake PUSH4. */
    const bytecode = (sigs: string[]) =>
      `0x6080604052${sigs.map((s) => `63${sel(s)}14`).join('')}7f63${sel('pause()')}${'00'.repeat(27)}` as Hex;

    interface Contract {
      code: Hex;
      owner: string | null;
      supply: bigint;
      pairBalance: bigint;
      /** recipient's share of a transfer in bps; null: transfers of more than maxTx revert */
      receivedBps: number;
      maxTx: bigint | null;
      revertAll?: boolean;
      simulate?: boolean;
      lp?: { supply: bigint; dead: bigint };
    }
    const transferLog = (from: string, to: string, amount: bigint) => ({
      address: TOKEN,
      topics: ['0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef', pad(from as Hex), pad(to as Hex)],
      data: encodeAbiParameters([{ type: 'uint256' }], [amount]),
    });
    const node = (c: Contract): RpcCaller & { calls: string[] } => {
      const calls: string[] = [];
      const reverts = (amount: bigint) => c.revertAll === true || (c.maxTx !== null && amount > c.maxTx);
      return {
        calls,
        async call<T>(method: string, params: unknown = []): Promise<T> {
          calls.push(method);
          const [arg] = params as [{ to: string; from?: string; data: Hex }];
          if (method === 'eth_getCode') return c.code as T;
          if (method === 'eth_simulateV1') {
            if (c.simulate === false)
              throw new JsonRpcError(method, -32601, 'the method eth_simulateV1 does not exist');
            const call = (arg as unknown as { blockStateCalls: [{ calls: [{ from: string; data: Hex }] }] })
              .blockStateCalls[0].calls[0];
            const { args } = decodeFunctionData({ abi: ABI, data: call.data });
            const [to, amount] = args as [string, bigint];
            if (reverts(amount)) return [{ calls: [{ status: '0x0', logs: [] }] }] as T;
            const received = (amount * BigInt(c.receivedBps)) / 10_000n;
            const logs = [transferLog(call.from, to, received)];
            if (received < amount) logs.push(transferLog(call.from, TOKEN, amount - received));
            return [{ calls: [{ status: '0x1', logs }] }] as T;
          }
          if (method !== 'eth_call') throw new JsonRpcError(method, -32601, 'no such method');
          const { functionName, args } = decodeFunctionData({ abi: ABI, data: arg.data });
          const answer = (value: unknown) =>
            encodeFunctionResult({ abi: ABI, functionName, result: value } as never) as T;
          if (arg.to.toLowerCase() === PAIR.toLowerCase()) {
            if (!c.lp) throw new JsonRpcError(method, 3, 'execution reverted');
            if (functionName === 'totalSupply') return answer(c.lp.supply);
            if (functionName === 'balanceOf')
              return answer((args![0] as string).toLowerCase() === DEAD.toLowerCase() ? c.lp.dead : 0n);
          }
          if (functionName === 'owner') {
            if (c.owner === null) throw new JsonRpcError(method, 3, 'execution reverted');
            return answer(c.owner);
          }
          if (functionName === 'totalSupply') return answer(c.supply);
          if (functionName === 'balanceOf') return answer(c.pairBalance);
          if (functionName === 'transfer') {
            if (reverts((args as [string, bigint])[1])) throw new JsonRpcError(method, 3, 'execution reverted');
            return answer(true);
          }
          throw new JsonRpcError(method, 3, 'execution reverted');
        },
      };
    };
    const base: Contract = {
      code: bytecode(['transfer(address,uint256)', 'balanceOf(address)', 'owner()']),
      owner: OWNER,
      supply: 10n ** 27n,
      pairBalance: 10n ** 26n,
      receivedBps: 10_000,
      maxTx: null,
    };
    const security = async (c: Contract) => evmContractSecurity(await readEvmContract(node(c), TOKEN, PAIR));

    it('reads selectors from PUSH4 operands only (a PUSH32 operand is data)', () => {
      const selectors = bytecodeSelectors(bytecode(['mint(address,uint256)']));
      assert.ok(selectors.has(EVM_PRIVILEGES.mint[0]!));
      assert.ok(!selectors.has(sel('pause()')));
    });
    it('a plain token: minting off, transfers free, no fee', async () => {
      assert.deepEqual(await security(base), { mintDisabled: true, transferBlockable: false, transferFeeBps: 0 });
    });
    it('mint callable by a live owner; renounced (dead) owner disables it', async () => {
      const code = bytecode(['mint(address,uint256)', 'owner()']);
      assert.equal((await security({ ...base, code })).mintDisabled, false);
      assert.equal((await security({ ...base, code, owner: DEAD })).mintDisabled, true);
      assert.equal(
        (await security({ ...base, code, owner: '0x0000000000000000000000000000000000000000' })).mintDisabled,
        true,
      );
      assert.equal(
        (await security({ ...base, code, owner: null })).mintDisabled,
        false,
        'no owner getter: not renounced',
      );
    });
    it('blacklist or pause with a live owner makes transfers blockable; renounced does not', async () => {
      for (const fn of ['blacklist(address)', 'isBlacklisted(address)', 'pause()']) {
        const code = bytecode([fn, 'owner()']);
        assert.equal((await security({ ...base, code })).transferBlockable, true, fn);
        assert.equal((await security({ ...base, code, owner: DEAD })).transferBlockable, false, fn);
      }
    });
    it('fee-on-transfer from the simulated transfer: the recipient got 95% → 500 bps', async () => {
      assert.equal((await security({ ...base, receivedBps: 9_500 })).transferFeeBps, 500);
    });
    it('a max-transaction limit (small passes, 2% of supply reverts) and a honeypot (all revert) are blockable', async () => {
      assert.equal((await security({ ...base, maxTx: 10n ** 24n })).transferBlockable, true);
      const honeypot = await security({ ...base, revertAll: true });
      assert.equal(honeypot.transferBlockable, true);
      assert.equal(honeypot.transferFeeBps, undefined);
    });
    it('without eth_simulateV1 the eth_call fallback still sees reverts (and claims no fee)', async () => {
      const hp = await security({ ...base, revertAll: true, simulate: false });
      assert.equal(hp.transferBlockable, true);
      const plain = await security({ ...base, simulate: false, receivedBps: 9_000 });
      assert.equal(plain.transferFeeBps, undefined, 'a fee it cannot measure is not reported');
    });
    it('LP tokens of the V2 pair sent to burn addresses give lpBurntPct', async () => {
      assert.equal((await security({ ...base, lp: { supply: 1000n, dead: 990n } })).lpBurntPct, '99');
      assert.equal((await security(base)).lpBurntPct, undefined, 'no fungible LP: not claimed');
    });
  });

  describe('resolver', () => {
    const ctx = () => createContext(loadConfig({}), createLogger('silent'));
    it('publishes schema-valid security events for created tokens and LP burns at graduation', async () => {
      const lpMint = key(20);
      const accounts = new Map<string, Buffer>([
        [MINT, encodeMintAccount({ transferFeeBps: 100, freezeAuthority: AUTH })],
        [lpMint, encodeMintAccount({ supply: 10n })],
      ]);
      const rpc: RpcCaller = {
        async call<T>(method: string, params: unknown = []) {
          assert.equal(method, 'getAccountInfo');
          const data = accounts.get((params as [string])[0]);
          return { value: data ? { data: [data.toString('base64'), 'base64'] } : null } as T;
        },
      };
      const published: SecurityEvent[] = [];
      const resolver = createSecurityResolver({
        ctx: ctx(),
        rpc: { solana: rpc },
        publish: (e) => void published.push(e),
      });
      const at = {
        id: 'solana:sig:0',
        chain: 'solana' as const,
        transactionHash: 'sig',
        eventIndex: 0,
        blockNumber: 5,
        blockTime: 1000,
      };
      const created: TokenEvent = {
        ...at,
        kind: 'created',
        token: MINT,
        name: 'A',
        symbol: 'A',
        uri: '',
        decimals: 6,
        supply: '1',
        creator: AUTH,
        launchpad: null,
        pool: null,
        quoteAsset: null,
      };
      resolver.submit([created]);
      resolver.observeMintChanges({ ...at, id: 'solana:sig2:0' }, [{ kind: 'burn', mint: lpMint, amount: 990n }], MINT);
      await resolver.idle();
      assert.equal(published.length, 2);
      for (const e of published) assert.ok(isTopicValue(TOPICS.tokenEvents, e));
      const sec = published.find((e) => e.transferFeeBps !== undefined)!;
      assert.deepEqual([sec.mintDisabled, sec.transferBlockable, sec.transferFeeBps], [true, true, 100]);
      assert.equal(published.find((e) => e.lpBurntPct !== undefined)!.lpBurntPct, '99');
    });
  });
});
