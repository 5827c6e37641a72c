// Meteora DAMM v2 (cp-amm) swaps (issue 15): the real EvtSwap of N2jtQtjj (rpcpool/yellowstone-vixen,
// provenance in the fixture) checked against its own balance changes, and EvtSwap2 written byte by
// byte at the offsets of MeteoraAg/damm-v2's event.rs (no public EvtSwap2 transaction was found).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'mocha';
import {
  base58Decode,
  buildTransaction,
  decodeSolanaJson,
  emitEvent,
  encodeMeteoraDammV2Swap,
  findProgramAddress,
  PROGRAMS,
  solanaAddress,
  solanaSignature,
  WSOL_MINT,
  type RpcTokenBalance,
  type SolanaTransaction,
} from '../ingest/solana/index.ts';

const DAMM = 'cpamdpZCGKUy5JxQXB4dcpGPiikHawvSWAd6mEn1sGG';
const FIXTURE = path.join(import.meta.dirname, 'fixtures', 'mainnet', 'solana', 'meteora-damm-v2-swap-N2jtQtjj.json');

function realSwap(): { tx: SolanaTransaction; signature: string } {
  const { provenance, result } = JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as {
    provenance: { signature: string };
    result: SolanaTransaction;
  };
  return { tx: result, signature: provenance.signature };
}

function tokenDelta(tx: SolanaTransaction, owner: string, mint: string): bigint {
  const sum = (list: readonly RpcTokenBalance[] | null | undefined) =>
    (list ?? [])
      .filter((b) => b.owner === owner && b.mint === mint)
      .reduce((total, b) => total + BigInt(b.uiTokenAmount.amount), 0n);
  return sum(tx.meta!.postTokenBalances) - sum(tx.meta!.preTokenBalances);
}

/** The swap instruction's accounts and the payload of its self-CPI event (after tag and discriminator). */
function swapOf(tx: SolanaTransaction): { accounts: string[]; event: Buffer; disc: string } {
  const keys = tx.transaction.message.accountKeys as string[];
  const at = tx.transaction.message.instructions.findIndex((ix) => keys[ix.programIdIndex] === DAMM);
  const accounts = tx.transaction.message.instructions[at]!.accounts.map((i) => keys[i]!);
  const inner = tx.meta!.innerInstructions!.find((group) => group.index === at)!.instructions;
  const cpi = inner.find((ix) => keys[ix.programIdIndex] === DAMM)!;
  const data = Buffer.from(base58Decode(cpi.data));
  assert.equal(data.subarray(0, 8).toString('hex'), 'e445a52e51cb9a1d', 'anchor EVENT_IX_TAG');
  return { accounts, event: data.subarray(16), disc: data.subarray(8, 16).toString('hex') };
}

describe('Meteora DAMM v2 swaps (issue 15)', () => {
  it('the real EvtSwap of N2jtQtjj: a sell of token B for SOL, amounts = what crossed the pool', () => {
    const { tx, signature } = realSwap();
    assert.equal(tx.transaction.signatures[0], signature);
    const { accounts, event, disc } = swapOf(tx);
    assert.equal(disc, '1b3c15d58aaabb93', 'sha256("event:EvtSwap")[0..8], the same as DBC: dispatch by program');
    // EvtSwap (event.rs to 0.1.6): pool 32, trade_direction u8 @32, has_referral @33, params
    // {amount_in @34, minimum_amount_out @42}, swap_result {output @50, next_sqrt_price u128 @58,
    // lp_fee @74, protocol_fee @82, partner_fee @90, referral_fee @98}, actual_amount_in @106,
    // current_timestamp @114: 122 bytes.
    assert.equal(event.length, 122);
    const u64 = (at: number) => event.readBigUInt64LE(at);
    assert.equal(base58Decode(accounts[1]!).toString(), new Uint8Array(event.subarray(0, 32)).toString(), 'pool');
    assert.equal(event[32], 1, 'BtoA: token B in, token A out');
    const [mintA, mintB, payer] = [accounts[6]!, accounts[7]!, accounts[8]!];
    assert.equal(mintA, WSOL_MINT);
    const sold = -tokenDelta(tx, payer, mintB);
    const authority = accounts[0]!;
    const vaultPaid = -tokenDelta(tx, authority, WSOL_MINT);
    assert.equal(u64(106), sold, 'actual_amount_in = what the trader sold');
    assert.equal(tokenDelta(tx, authority, mintB), sold, 'and what the pool received');
    assert.equal(u64(50), vaultPaid, 'output = what the SOL vault paid');
    const fee = u64(74) + u64(82) + u64(90) + u64(98);
    // The fee is exactly ceil(25 bps of the input): taken on the input, in token B (OnlyB).
    assert.equal(fee, (sold * 25n + 9_999n) / 10_000n);

    const { swaps } = decodeSolanaJson(tx);
    assert.equal(swaps.length, 1);
    const swap = swaps[0]!;
    assert.deepEqual(
      [swap.token, swap.quoteAsset, swap.side, swap.tokenAmount, swap.quoteAmount, swap.trader, swap.pool, swap.dex],
      [mintB, WSOL_MINT, 'sell', sold.toString(), vaultPaid.toString(), payer, accounts[1], 'meteora-damm-v2'],
    );
    assert.equal(swap.launchpad, null);
    assert.equal(swap.tokenDecimals, 6);
    // A fee in the token is valued at the execution price.
    assert.equal(swap.fees?.dex, ((fee * vaultPaid) / sold).toString());
  });

  it("the encoder's accounts are the program's PDAs, as in the real swap (pool authority, vaults, event authority)", () => {
    const { tx } = realSwap();
    const { accounts } = swapOf(tx);
    const [pool, mintA, mintB] = [accounts[1]!, accounts[6]!, accounts[7]!];
    const built = encodeMeteoraDammV2Swap({
      slot: 1,
      blockTime: 1,
      events: 'v1',
      pool,
      payer: accounts[8]!,
      tokenAMint: mintA,
      tokenBMint: mintB,
      decimalsA: 9,
      decimalsB: 6,
      aToB: false,
      amountIn: 1000n,
      amountOut: 10n,
      tradingFee: 2n,
      protocolFee: 1n,
      feeOnInput: true,
      currentTimestamp: 1n,
    });
    const keys = built.transaction.message.accountKeys as string[];
    const ix = built.transaction.message.instructions[0]!;
    const builtAccounts = ix.accounts.map((i) => keys[i]!);
    for (const at of [0, 1, 4, 5, 6, 7, 11, 12, 13]) assert.equal(builtAccounts[at], accounts[at], `account ${at}`);
    assert.equal(findProgramAddress(['__event_authority'], DAMM), accounts[12]);
  });

  describe('EvtSwap2 at the offsets of event.rs (releases 0.1.5 on)', () => {
    const token = solanaAddress('damm2:token');
    const pool = solanaAddress('damm2:pool');
    const payer = solanaAddress('damm2:payer');

    interface Swap2Bytes {
      direction: number;
      feeMode: number;
      included: bigint;
      excluded: bigint;
      output: bigint;
      fees: [trading: bigint, protocol: bigint, partner: bigint, referral: bigint];
      reserves: [a: bigint, b: bigint];
    }

    /**
     * pool @0, trade_direction @32, collect_fee_mode @33, has_referral @34, params {amount_0 @35,
     * amount_1 @43, swap_mode @51}, swap_result {included_fee_input @52, excluded_fee_input @60,
     * amount_left @68, output @76, next_sqrt_price u128 @84, trading_fee @100, protocol_fee @108,
     * partner_fee @116, referral_fee @124}, included_transfer_fee_in @132, included_transfer_fee_out
     * @140, excluded_transfer_fee_out @148, current_timestamp @156, reserve_a @164, reserve_b @172.
     */
    function evtSwap2(s: Swap2Bytes): Buffer {
      const out = Buffer.alloc(8 + 180);
      Buffer.from('bd4233a826507599', 'hex').copy(out, 0);
      const p = out.subarray(8);
      Buffer.from(base58Decode(pool)).copy(p, 0);
      p[32] = s.direction;
      p[33] = s.feeMode;
      p.writeBigUInt64LE(s.included, 35);
      const u64s: [number, bigint][] = [
        [52, s.included],
        [60, s.excluded],
        [76, s.output],
        [100, s.fees[0]],
        [108, s.fees[1]],
        [116, s.fees[2]],
        [124, s.fees[3]],
        [132, s.included],
        [140, s.output],
        [148, s.output],
        [156, 1_700_000_000n],
        [164, s.reserves[0]],
        [172, s.reserves[1]],
      ];
      for (const [at, value] of u64s) p.writeBigUInt64LE(value, at);
      p.writeBigUInt64LE(1n, 92); // next_sqrt_price = 2^64 (high word)
      return out;
    }

    /** A swap2 instruction of a DBC-migrated pool (token A = the token, token B = SOL) emitting `events`. */
    function decode(events: Buffer[], direction: number) {
      const buy = direction === 1;
      const [userIn, userOut] = [solanaAddress('damm2:user-in'), solanaAddress('damm2:user-out')];
      const tx = buildTransaction({
        signature: solanaSignature(`damm2:${events.map((e) => e.toString('hex')).join()}`),
        slot: 1,
        blockTime: 1_700_000_000,
        feePayer: payer,
        instructions: [
          {
            programId: PROGRAMS.meteoraDammV2,
            accounts: [
              solanaAddress('damm2:authority'),
              pool,
              userIn,
              userOut,
              solanaAddress('damm2:vault-a'),
              solanaAddress('damm2:vault-b'),
              token,
              WSOL_MINT,
              payer,
              solanaAddress('token-program'),
              solanaAddress('token-program'),
              DAMM,
              findProgramAddress(['__event_authority'], DAMM),
              DAMM,
            ],
            data: Buffer.from('414b3f4ceb5b5b88', 'hex'),
            body: events.flatMap((event) => emitEvent(DAMM, event, 'cpi')),
          },
        ],
        tokenBalances: [{ account: buy ? userOut : userIn, mint: token, owner: payer, decimals: 6, pre: 0n, post: 0n }],
      });
      return decodeSolanaJson(tx).swaps;
    }

    it('a buy in an OnlyB pool: the fee off the SOL input; amounts are the pool in/out, reserves by mint', () => {
      const [swap, ...more] = decode(
        [
          evtSwap2({
            direction: 1,
            feeMode: 1,
            included: 1_000_000_000n,
            excluded: 997_500_000n,
            output: 123_456_789n,
            fees: [1_800_000n, 450_000n, 0n, 250_000n],
            reserves: [5_000_000_000n, 90_000_000_000n],
          }),
        ],
        1,
      );
      assert.equal(more.length, 0);
      assert.deepEqual(
        [swap!.side, swap!.token, swap!.quoteAsset, swap!.tokenAmount, swap!.quoteAmount, swap!.pool, swap!.trader],
        ['buy', token, WSOL_MINT, '123456789', '1000000000', pool, payer],
      );
      assert.equal(swap!.fees?.dex, '2500000');
      assert.deepEqual(swap!.reserves, { token: '5000000000', quote: '90000000000' });
    });

    it('a buy in a BothToken pool: the fee off the token output, valued at the execution price', () => {
      const [swap] = decode(
        [
          evtSwap2({
            direction: 1,
            feeMode: 0,
            included: 2_000_000_000n,
            excluded: 2_000_000_000n,
            output: 400_000_000n,
            fees: [800_000n, 200_000n, 0n, 0n],
            reserves: [1n, 1n],
          }),
        ],
        1,
      );
      assert.equal(swap!.quoteAmount, '2000000000');
      assert.equal(swap!.tokenAmount, '400000000');
      assert.equal(swap!.fees?.dex, ((1_000_000n * 2_000_000_000n) / 400_000_000n).toString());
    });

    it('a sell in an OnlyB pool (AtoB): the fee off the SOL output', () => {
      const [swap] = decode(
        [
          evtSwap2({
            direction: 0,
            feeMode: 1,
            included: 50_000_000n,
            excluded: 50_000_000n,
            output: 997_500n,
            fees: [2_000n, 500n, 0n, 0n],
            reserves: [7n, 8n],
          }),
        ],
        0,
      );
      assert.deepEqual([swap!.side, swap!.tokenAmount, swap!.quoteAmount], ['sell', '50000000', '997500']);
      assert.equal(swap!.fees?.dex, '2500');
      assert.deepEqual(swap!.reserves, { token: '7', quote: '8' });
    });

    it('releases 0.1.5–0.1.6 emit EvtSwap then EvtSwap2 for one swap: one trade, completed by EvtSwap2', () => {
      const swap2 = evtSwap2({
        direction: 1,
        feeMode: 0,
        included: 2_000_000_000n,
        excluded: 2_000_000_000n,
        output: 400_000_000n,
        fees: [800_000n, 200_000n, 0n, 0n],
        reserves: [3n, 4n],
      });
      // The same swap as EvtSwap: pool, direction, has_referral, params, swap_result, actual_amount_in, timestamp.
      const swap1 = Buffer.alloc(8 + 122);
      Buffer.from('1b3c15d58aaabb93', 'hex').copy(swap1, 0);
      Buffer.from(base58Decode(pool)).copy(swap1, 8);
      swap1[8 + 32] = 1;
      swap1.writeBigUInt64LE(2_000_000_000n, 8 + 34);
      swap1.writeBigUInt64LE(400_000_000n, 8 + 50);
      swap1.writeBigUInt64LE(800_000n, 8 + 74);
      swap1.writeBigUInt64LE(200_000n, 8 + 82);
      swap1.writeBigUInt64LE(2_000_000_000n, 8 + 106);
      const swaps = decode([swap1, swap2], 1);
      assert.equal(swaps.length, 1, 'one trade, not two');
      // EvtSwap alone reads the fee as OnlyB (off the SOL input); EvtSwap2 says it came off the token output.
      assert.equal(swaps[0]!.fees?.dex, '5000000');
      assert.deepEqual(swaps[0]!.reserves, { token: '3', quote: '4' });
      assert.equal(decode([swap1], 1)[0]!.fees?.dex, '1000000');
    });

    it("an EvtSwap2 whose pool is not the instruction's is not booked (decode error, no trade)", () => {
      const other = evtSwap2({
        direction: 1,
        feeMode: 1,
        included: 10n,
        excluded: 9n,
        output: 1n,
        fees: [1n, 0n, 0n, 0n],
        reserves: [1n, 1n],
      });
      Buffer.from(base58Decode(solanaAddress('damm2:other-pool'))).copy(other, 8);
      assert.deepEqual(decode([other], 1), []);
    });
  });
});
