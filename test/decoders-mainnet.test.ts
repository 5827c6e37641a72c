// Issue 13: the decoders on real mainnet transactions (test/fixtures/mainnet, provenance in each
// file and in docs/decoders.md). Expected values come from the programs' public layouts and are
// cross-checked inside the transaction (token and lamport balance changes), never copied from
// the decoder's output.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'mocha';
import { decodeFunctionData, encodeFunctionResult, parseAbi, type Hex } from 'viem';
import { loadConfig } from '../core/config.ts';
import { createContext } from '../core/context.ts';
import { createLogger } from '../core/logger.ts';
import { createEvmResolver } from '../ingest/sources/evm-resolver.ts';
import { encodeFields } from '../ingest/solana/borsh.ts';
import { DBC_INITIALIZE_PARAMS, PUMP_MIGRATION, PUMP_TRADE, PUMPSWAP_CREATE_POOL } from '../ingest/solana/layouts.ts';
import {
  base58Decode,
  buildTransaction,
  decodeSolanaJson,
  emitEvent,
  PROGRAMS,
  solanaAddress,
  solanaSignature,
  type RpcTokenBalance,
  type SolanaTransaction,
  type TokenBalanceSpec,
} from '../ingest/solana/index.ts';
import {
  buildReceipt,
  createEvmDecoder,
  createPoolRegistry,
  createTokenRegistry,
  encodeAerodromeFees,
  encodeAerodromePoolCreated,
  encodeAerodromeSwap,
  encodeAerodromeSync,
  encodeFourMemePurchaseV1,
  encodeTransfer,
  encodeV4Initialize,
  encodeV4Swap,
  seedAddress,
  seedHash,
  v4PoolId,
} from '../ingest/evm/index.ts';

const FIXTURES = path.join(import.meta.dirname, 'fixtures', 'mainnet', 'solana');
const WSOL = 'So11111111111111111111111111111111111111112';

interface Fixture {
  provenance: { source: string; path: string; commit: string; signature: string };
  result: SolanaTransaction;
}

function fixture(name: string): Fixture {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8')) as Fixture;
}

function keysOf(tx: SolanaTransaction): string[] {
  const loaded = tx.meta?.loadedAddresses;
  const keys = tx.transaction.message.accountKeys.map((k) => (typeof k === 'string' ? k : k.pubkey));
  return loaded ? [...keys, ...loaded.writable, ...loaded.readonly] : keys;
}

/** Change of `owner`'s balance of `mint` over the transaction, from the RPC's pre/post token balances. */
function tokenDelta(tx: SolanaTransaction, owner: string, mint: string): bigint {
  const sum = (list: readonly RpcTokenBalance[] | null | undefined) =>
    (list ?? [])
      .filter((b) => b.owner === owner && b.mint === mint)
      .reduce((total, b) => total + BigInt(b.uiTokenAmount.amount), 0n);
  return sum(tx.meta!.postTokenBalances) - sum(tx.meta!.preTokenBalances);
}

function lamportDelta(tx: SolanaTransaction, account: string): bigint {
  const at = keysOf(tx).indexOf(account);
  assert.ok(at >= 0, `${account} not in the transaction`);
  return BigInt(tx.meta!.postBalances![at]!) - BigInt(tx.meta!.preBalances![at]!);
}

function signersOf(tx: SolanaTransaction): string[] {
  return keysOf(tx).slice(0, tx.transaction.message.header!.numRequiredSignatures);
}

/** Bytes of the self-CPI events (anchor tag e445a52e51cb9a1d ‖ discriminator) of `program`. */
function cpiEvents(tx: SolanaTransaction, program: string, discriminator: string): Buffer[] {
  const keys = keysOf(tx);
  const out: Buffer[] = [];
  for (const group of tx.meta!.innerInstructions ?? [])
    for (const ix of group.instructions) {
      const data = Buffer.from(base58Decode(ix.data));
      if (
        keys[ix.programIdIndex] === program &&
        data.subarray(0, 16).toString('hex') === `e445a52e51cb9a1d${discriminator}`
      )
        out.push(data.subarray(16));
    }
  return out;
}

describe('decoders on real mainnet transactions (issue 13)', () => {
  it('defect 1: Meteora DBC logs EvtSwap and EvtSwap2 for one swap; it is one trade (23BXcBmn)', () => {
    const { provenance, result: tx } = fixture('meteora-dbc-swap-evtswap-and-evtswap2-23BXcBmn.json');
    assert.equal(provenance.signature, tx.transaction.signatures[0]);
    const dbc = 'dbcij3LWUppWqq96dh6gJWwBifmcGfLSB5D4DuSMaqN';
    // Both events are really there, once each, in the same instruction.
    assert.equal(cpiEvents(tx, dbc, '1b3c15d58aaabb93').length, 1);
    const [swap2] = cpiEvents(tx, dbc, 'bd4233a826507599');
    assert.ok(swap2);
    // EvtSwap2 layout (IDL): pool 32, config 32, direction u8, has_referral u8, swap_parameters
    // (u64, u64, u8), swap_result: included_fee_input @83, excluded_fee_input @91, amount_left @99,
    // output @107, next_sqrt_price u128 @115, trading_fee @131, protocol_fee @139, referral_fee @147.
    const u64 = (at: number) => swap2.readBigUInt64LE(at);
    assert.equal(swap2[64], 0, 'BaseToQuote: a sell');
    assert.equal(u64(83), u64(91), 'fee not taken on the input: taken from the quote output');
    const fees = u64(131) + u64(139) + u64(147);
    const user = signersOf(tx)[0]!;
    const token = 'EeXMYKCMjVLU1PrjAi4o2fMpC37h9RpuU3y7k4WHBQN9';
    const sold = -tokenDelta(tx, user, token);
    const vaultOut = -tokenDelta(tx, 'FhVo3mqL8PW5pH5U2CN4XE33DokiyZnUwuGpH2hmHLuM', WSOL);
    // The quote vault paid the user exactly the event's output (the user also paid the tx fee).
    assert.equal(vaultOut, u64(107));
    assert.equal(lamportDelta(tx, user), vaultOut - BigInt(tx.meta!.fee));

    const { swaps } = decodeSolanaJson(fixture('meteora-dbc-swap-evtswap-and-evtswap2-23BXcBmn.json'));
    assert.equal(swaps.length, 1, 'one trade, not two');
    const [swap] = swaps;
    assert.equal(swap!.side, 'sell');
    assert.equal(swap!.tokenAmount, sold.toString());
    // Defect 5: one convention, the curve amount before fees; the fees apart.
    assert.equal(swap!.quoteAmount, (vaultOut + fees).toString());
    assert.equal(swap!.fees?.platform, fees.toString());
    assert.equal(swap!.trader, user);
    assert.ok(swap!.curve, 'the richer EvtSwap2 completes the record (curve progress)');
  });

  it('defect 2: pump.fun fees are fee + creator_fee, what the buyer pays on top of sol_amount (22K6ixTV)', () => {
    // This Oct-2025 buy predates the buyback fields (no public 2026 transaction with them was
    // found); it pins the rule the buyback fix keeps: the buyer's total is sol_amount + fee +
    // creator_fee, nothing more. The May-2026 buyback layout itself is tested from the published
    // IDL in ingest-solana.test.ts.
    const { result: tx } = fixture('pumpfun-buy-22K6ixTV.json');
    const [swap] = decodeSolanaJson(fixture('pumpfun-buy-22K6ixTV.json')).swaps;
    const user = signersOf(tx)[0]!;
    const curve = 'DzEuwnKqiZxfZgeo7MjpZ3FWfZzt5ERRzjkNpx856Ram';
    const protocolFeeRecipient = '62qc2CNXwrYqQScmEdiZFFAnJR262PxWEuNQtxfafNgV';
    const creatorVault = '7FhRRP9jfFpXykS8kQ6RE1e4jubtSBE2yFWp2Np4kVGH';
    const intoCurve = lamportDelta(tx, curve);
    const fees = lamportDelta(tx, protocolFeeRecipient) + lamportDelta(tx, creatorVault);
    assert.equal(swap!.quoteAmount, intoCurve.toString());
    assert.equal(swap!.fees?.platform, fees.toString());
    assert.equal(swap!.tokenAmount, tokenDelta(tx, user, swap!.token).toString());
    // The user's lamports: curve amount + fees + the new token account's rent + the tx fee + the
    // tips sent to three accounts by the calling program. Nothing else was charged.
    const rent = lamportDelta(tx, 'GPSeSxAH9jWG2RekmeSzZaAtud8AvzgWK4koptWKqyr9');
    const tips = [
      '7toBU3inhmrARGngC7z6SjyP85HgGMmCTEwGNRAcYnEK',
      'J5XGHmzrRmnYWbmw45DbYkdZAU2bwERFZ11qCDXPvFB5',
      'DoAsxPQgiyAxyaJNvpAAUb2ups6rbJRdYrCPyWxwRxBb',
    ]
      .map((a) => lamportDelta(tx, a))
      .reduce((a, b) => a + b, 0n);
    assert.equal(-lamportDelta(tx, user), intoCurve + fees + rent + BigInt(tx.meta!.fee) + tips);
    // pump.fun ran inside top-level instruction 4, program FJsZbftB…: kept as the router.
    assert.equal(swap!.router, 'FJsZbftBqRLfF7uqUKpm4s2goDr6xsQ5Q3mN7AFJB6hK');
    assert.equal(swap!.trader, user);
  });

  it('defect 3: an Aerodrome pool charging 1 % books its own fee from the Fees log, not the 0.3 % default (published layout)', () => {
    // No public receipt of a custom-fee Aerodrome pool was found: built from Pool.sol's events
    // (Fees(sender, amount0, amount1) = amountIn·fee/1e4, emitted before Sync and Swap).
    const chain = 'base';
    const token = seedAddress('aero token');
    const weth = '0x4200000000000000000000000000000000000006';
    const pool = seedAddress('aero pool');
    const [token0, token1] = token < weth ? [token, weth] : [weth, token];
    const wethIs0 = token0 === weth;
    const tokens = createTokenRegistry();
    tokens.registerToken(chain, token, { decimals: 18, name: 'T', symbol: 'T' });
    const decoder = createEvmDecoder({ chain, tokens, pools: createPoolRegistry() });
    const amountIn = 2_000_000_000_000_000_000n; // 2 WETH in
    const fee = (amountIn * 100n) / 10_000n; // the pool's 100 bps
    const receipt = buildReceipt({
      transactionHash: seedHash('aero tx'),
      blockNumber: 1,
      from: seedAddress('wallet'),
      to: seedAddress('router'),
      gasUsed: 1n,
      effectiveGasPrice: 1n,
      logs: [
        encodeAerodromePoolCreated({
          factory: '0x420dd381b31aef6683db6b902084cb0ffece40da',
          token0,
          token1,
          stable: false,
          pool,
        }),
        encodeAerodromeFees({
          pool,
          sender: seedAddress('router'),
          amount0: wethIs0 ? fee : 0n,
          amount1: wethIs0 ? 0n : fee,
        }),
        encodeAerodromeSync({ pool, reserve0: 1n, reserve1: 1n }),
        encodeAerodromeSwap({
          pool,
          sender: seedAddress('router'),
          to: seedAddress('router'),
          amount0In: wethIs0 ? amountIn : 0n,
          amount1In: wethIs0 ? 0n : amountIn,
          amount0Out: wethIs0 ? 0n : 5n,
          amount1Out: wethIs0 ? 5n : 0n,
        }),
      ],
    });
    const [swap] = decoder.decodeReceipt(JSON.parse(JSON.stringify(receipt)), 0).swaps;
    assert.equal(swap!.fees?.dex, fee.toString(), '1 % of the input, not the 0.3 % factory default');
    assert.equal(swap!.trader, seedAddress('wallet').toLowerCase(), 'the sender, not the router');
  });

  it('defect 4: a PumpSwap sell routed through OKX is booked to the signer, OKX kept as router (5gtu6ARV)', () => {
    const { result: tx } = fixture('pumpswap-sell-via-okx-router-5gtu6ARV.json');
    const [swap] = decodeSolanaJson(fixture('pumpswap-sell-via-okx-router-5gtu6ARV.json')).swaps;
    const [signer] = signersOf(tx);
    const okxAuthority = 'HV1KXxWFaSeriyFvXyx48FqG9BoFbfinB8njCJonqP7K'; // the SellEvent's `user`
    assert.equal(signersOf(tx).length, 1);
    assert.notEqual(signer, okxAuthority);
    const mint = 'CzdpPoGiyWHg62uSziwNswjN2STE4xXDGsVTKZ2BQKGk';
    assert.equal(tokenDelta(tx, okxAuthority, mint), 0n, 'the router authority holds nothing after the trade');
    assert.equal(swap!.trader, signer);
    assert.equal(swap!.tokenAmount, (-tokenDelta(tx, signer!, mint)).toString());
    assert.equal(swap!.router, '6m2CDdhRgxpH4WjvdzxAYbGxwdGUz5MziiL5jek2kBma');
    // Defect 5 on PumpSwap: quote_amount_out before fees = what left the pool's quote vault plus
    // the LP fee that stayed in it; protocol + creator fees are what their accounts received.
    const pool = '34oYd3R5oM6ymwD4ofskhWtTs3U7hYsDapqVb2ueTrPi';
    const lpFee = BigInt(swap!.fees!.dex!);
    assert.equal(swap!.quoteAmount, (-tokenDelta(tx, pool, WSOL) + lpFee).toString());
    const protocol = tokenDelta(tx, '62qc2CNXwrYqQScmEdiZFFAnJR262PxWEuNQtxfafNgV', WSOL);
    const creator = tokenDelta(tx, '8AHf9HUdTDp3jy8xMb6c1mqia4A2fNK6AmzQNhzqX3TS', WSOL);
    assert.equal(swap!.fees?.platform, (protocol + creator).toString());
  });

  it('defect 5: one quote convention (before fees, fees apart) on a PumpSwap buy and a LaunchLab buy', () => {
    const pumpswap = fixture('pumpswap-buy-4pCgZ28W.json').result;
    const [buy] = decodeSolanaJson(fixture('pumpswap-buy-4pCgZ28W.json')).swaps;
    const poolIn = tokenDelta(pumpswap, '89aDWhVE39VYX8XCYT9PSNh7A7txWmkKLXZiSBs9D7ur', WSOL);
    // The pool's vault got the curve amount plus the LP fee; the user paid the protocol and creator fees on top.
    assert.equal(BigInt(buy!.quoteAmount) + BigInt(buy!.fees!.dex!), poolIn);
    const protocol = tokenDelta(pumpswap, 'FWsW1xNtWscwNmKv6wVsU1iTzRN6wmmk3MjxRP5tT7hz', WSOL);
    const creator = tokenDelta(pumpswap, 'BFAjfLyd58XxSRSUSP9qN7kMbQUfsrnUmBYoNUKAspBs', WSOL);
    assert.equal(buy!.fees?.platform, (protocol + creator).toString());

    const launch = fixture('launchlab-create-and-buy-5LzhiGZB.json').result;
    const [ll] = decodeSolanaJson(fixture('launchlab-create-and-buy-5LzhiGZB.json')).swaps;
    // amount_in = the quote vault's gain + platform fee (to the platform's account) + creator fee;
    // the protocol fee stays in the vault. Before fees = vault gain − protocol fee.
    const vault = tokenDelta(launch, 'WLHv2UAZm6z4KyaaELi5pjdbJh6RESMva1Rnn8pJVVh', WSOL);
    const platform = tokenDelta(launch, '56XVRVAsgWv6ADaxzoNnbL38LMoWKM5WiSAhrAWUbd2p', WSOL);
    const creatorFee = tokenDelta(launch, '9sHpTfmVpCfP2zexRNK6j38NBchMv1RWpdXPK5NEcZan', WSOL);
    const total = BigInt(ll!.quoteAmount) + BigInt(ll!.fees!.platform!);
    assert.equal(total, vault + platform + creatorFee, 'what the buyer put in');
    assert.equal(ll!.tokenAmount, tokenDelta(launch, signersOf(launch)[0]!, ll!.token).toString());
  });
});

interface InstructionFixture {
  provenance: { source: string; path: string; commit: string; signature: string };
  instruction: { program_id: string; accounts: { pubkey: string }[]; data: string };
}

/** A real instruction (carbon's fixture: accounts and hex data) run alone in a built transaction. */
function txOfInstruction(name: string): { tx: SolanaTransaction; accounts: string[] } {
  const file = path.join(import.meta.dirname, 'fixtures', 'mainnet', 'solana-instructions', name);
  const { instruction } = JSON.parse(fs.readFileSync(file, 'utf8')) as InstructionFixture;
  const accounts = instruction.accounts.map((a) => a.pubkey);
  const tx = buildTransaction({
    signature: solanaSignature(name),
    slot: 1,
    blockTime: 1,
    instructions: [{ programId: instruction.program_id, accounts, data: Buffer.from(instruction.data, 'hex') }],
  });
  return { tx, accounts };
}

describe('AMM pools on real transactions: amounts are what crossed the pool (vault balance changes)', () => {
  const cases = [
    // [fixture, pool vault owner (authority), expected side]
    ['raydium-amm-v4-swap-54MFrVcf.json', '5Q544fKrFoe6tsEbD7S8EmxGTJYAKtTVhAW5Q5pge4j1', 'buy'],
    ['raydium-cpmm-swap-4RoVbE9H.json', 'GpMZbSM2GgvTKHJirzeGfMFoaZ8UR2X7F4v8vHTvxFbL', 'sell'],
    ['raydium-clmm-swap-nexzRp8Z.json', '94KAY4LgDHjFggk4hL1QQZ4fMdfvQDsbdRk35iq1HJ9T', 'buy'],
  ] as const;
  for (const [name, vaults, side] of cases) {
    it(name, () => {
      const { result: tx } = fixture(name);
      const [swap, ...more] = decodeSolanaJson(fixture(name)).swaps;
      assert.equal(more.length, 0);
      assert.equal(swap!.side, side);
      const quoteIn = tokenDelta(tx, vaults, WSOL);
      const tokenIn = tokenDelta(tx, vaults, swap!.token);
      assert.equal(swap!.quoteAmount, (side === 'buy' ? quoteIn : -quoteIn).toString());
      assert.equal(swap!.tokenAmount, (side === 'buy' ? -tokenIn : tokenIn).toString());
      const [signer] = signersOf(tx);
      assert.equal(swap!.trader, signer);
      assert.equal(tokenDelta(tx, signer!, swap!.token), -tokenIn, 'the signer got what the pool gave');
    });
  }
});

describe('records that were missing (issue 13)', () => {
  it('Raydium LaunchLab PoolCreateEvent → created, on a real create + buy (5LzhiGZB)', () => {
    const { result: tx } = fixture('launchlab-create-and-buy-5LzhiGZB.json');
    const { swaps, events } = decodeSolanaJson(fixture('launchlab-create-and-buy-5LzhiGZB.json'));
    const created = events.find((e) => e.kind === 'created');
    assert.ok(created && created.kind === 'created');
    const mint = swaps[0]!.token;
    assert.equal(created.token, mint);
    // Every base unit minted sits in the tx's post balances: the curve vault and the creator's buy.
    const minted = (tx.meta!.postTokenBalances ?? [])
      .filter((b) => b.mint === mint)
      .reduce((total, b) => total + BigInt(b.uiTokenAmount.amount), 0n);
    assert.equal(created.supply, minted.toString());
    assert.equal(created.decimals, tx.meta!.postTokenBalances!.find((b) => b.mint === mint)!.uiTokenAmount.decimals);
    assert.equal(created.pool, swaps[0]!.pool, 'the pool the first buy trades on');
    assert.equal(created.creator, signersOf(tx)[0]);
    assert.equal(created.launchpad, 'launchlab');
    assert.equal(created.quoteAsset, WSOL);
    assert.ok(created.eventIndex < swaps[0]!.eventIndex, 'created before the dev buy');
    // The event's metadata strings, as the log line carries them (base64 of the borsh payload).
    const line = tx.meta!.logMessages!.find((l) => l.startsWith('Program data: l9fiCXah'))!;
    const payload = Buffer.from(line.slice('Program data: '.length), 'base64');
    assert.ok(payload.includes(Buffer.from(created.name)) && payload.includes(Buffer.from(created.uri)));
  });

  it('Moonshot TradeEvent → a swap, amounts before fees, on a real buy (5UWcde33)', () => {
    const { result: tx } = fixture('moonshot-buy-5UWcde33.json');
    const [swap] = decodeSolanaJson(fixture('moonshot-buy-5UWcde33.json')).swaps;
    const sender = signersOf(tx)[0]!;
    const curve = 'Hn7KyhXmojuLe7Z3EovB2JXDAUJniyQEXhoviJwAJrNo';
    const fees =
      lamportDelta(tx, '3udvfL24waJcLhskRAsStNMoNUvtyXdxrWQz4hgi953N') +
      lamportDelta(tx, '5K5RtTWzzLp4P8Npi84ocf7F1vBsAu29N1irG4iiUnzt');
    assert.equal(swap!.side, 'buy');
    assert.equal(swap!.quoteAmount, lamportDelta(tx, curve).toString());
    assert.equal(swap!.fees?.platform, fees.toString());
    assert.equal(-lamportDelta(tx, sender), BigInt(swap!.quoteAmount) + fees + BigInt(tx.meta!.fee));
    assert.equal(swap!.tokenAmount, tokenDelta(tx, sender, swap!.token).toString());
    assert.equal(swap!.pool, curve);
    assert.equal(swap!.dex, 'moonshot');
  });

  it('Moonshot token_mint → created, from a real instruction (carbon fixture of 4C9hua8F)', () => {
    const { tx, accounts } = txOfInstruction('moonshot-token-mint-4C9hua8F.json');
    const [created] = decodeSolanaJson(tx).events.filter((e) => e.kind === 'created');
    // TokenMintParams (IDL): name "Gamestop", symbol "$GME", uri, decimals 09, collateral 00 (SOL),
    // amount 0x0de0b6b3a7640000 = 1e18 (1e9 tokens of 9 decimals), as the hex data spells them.
    assert.ok(created && created.kind === 'created');
    assert.deepEqual(
      [created.token, created.name, created.symbol, created.decimals, created.supply, created.creator, created.pool],
      [accounts[3], 'Gamestop', '$GME', 9, (10n ** 18n).toString(), accounts[0], accounts[2]],
    );
    assert.equal(created.quoteAsset, WSOL);
    assert.ok(created.token.endsWith('moon'));
  });

  it('Moonshot migrate_funds → curve complete, from a real instruction (carbon fixture of 5Ups7YKw)', () => {
    const { tx, accounts } = txOfInstruction('moonshot-migrate-funds-5Ups7YKw.json');
    const curves = decodeSolanaJson(tx).events.filter((e) => e.kind === 'curve');
    assert.deepEqual(
      curves.map((e) => e.kind === 'curve' && [e.token, e.progressPct, e.complete]),
      [[accounts[5], '100', true]],
    );
  });
});

describe('missing records from the published layouts (no public transaction found)', () => {
  const payer = solanaAddress('layout:payer');
  const mint = solanaAddress('layout:mint');
  const newPool = solanaAddress('layout:new-pool');
  const ix = (disc: string, args: Buffer = Buffer.alloc(0)) => Buffer.concat([Buffer.from(disc, 'hex'), args]);
  const filler = (n: number, tag: string) => Array.from({ length: n }, (_, i) => solanaAddress(`${tag}:${i}`));
  const decodeOne = (programId: string, accounts: string[], data: Buffer, tokenBalances: TokenBalanceSpec[] = []) =>
    decodeSolanaJson(
      buildTransaction({
        signature: solanaSignature(`layout:${programId}:${data.toString('hex').slice(0, 16)}`),
        slot: 1,
        blockTime: 1,
        feePayer: payer,
        instructions: [{ programId, accounts, data }],
        tokenBalances,
      }),
    ).events.filter((e) => e.kind !== 'balance');

  it('Meteora DBC initialize_virtual_pool_with_spl_token → created (metadata from the args, supply from the base vault)', () => {
    // Accounts (IDL): config, pool_authority, creator, base_mint, quote_mint, pool, base_vault, …
    const [config, authority, pool, vault] = filler(4, 'dbc');
    const accounts = [config!, authority!, payer, mint, WSOL, pool!, vault!, ...filler(8, 'dbc-rest')];
    const args = encodeFields(DBC_INITIALIZE_PARAMS, { name: 'Name', symbol: 'SYM', uri: 'https://u' });
    const events = decodeOne(PROGRAMS.meteoraDbc, accounts, ix('8c55d7b06636684f', args), [
      { account: vault!, mint, owner: authority!, decimals: 6, pre: null, post: 1_000_000_000_000_000n },
    ]);
    assert.deepEqual(
      events.map(
        (e) =>
          e.kind === 'created' && [
            e.token,
            e.name,
            e.symbol,
            e.uri,
            e.decimals,
            e.supply,
            e.creator,
            e.pool,
            e.quoteAsset,
          ],
      ),
      [[mint, 'Name', 'SYM', 'https://u', 6, '1000000000000000', payer, pool, WSOL]],
    );
  });

  it('Meteora DBC migrate_meteora_damm and migration_damm_v2 → graduated', () => {
    const v1 = [...filler(4, 'm1'), newPool, ...filler(2, 'm1b'), mint, WSOL, ...filler(20, 'm1c')];
    assert.deepEqual(
      decodeOne(PROGRAMS.meteoraDbc, v1, ix('1b013016b43f76d9')).map(
        (e) => e.kind === 'graduated' && [e.token, e.pool, e.dex],
      ),
      [[mint, newPool, 'meteora-damm']],
    );
    const v2 = [...filler(4, 'm2'), newPool, ...filler(8, 'm2b'), mint, WSOL, ...filler(9, 'm2c')];
    assert.deepEqual(
      decodeOne(PROGRAMS.meteoraDbc, v2, ix('9ca9e66735e45040')).map(
        (e) => e.kind === 'graduated' && [e.token, e.pool, e.dex],
      ),
      [[mint, newPool, 'meteora-damm-v2']],
    );
  });

  it('Raydium LaunchLab migrate_to_cpswap and migrate_to_amm → graduated', () => {
    const cp = [payer, mint, WSOL, ...filler(2, 'cp'), newPool, ...filler(22, 'cp-rest')];
    assert.deepEqual(
      decodeOne(PROGRAMS.launchlab, cp, ix('885cc8671cda908c')).map(
        (e) => e.kind === 'graduated' && [e.token, e.pool, e.dex],
      ),
      [[mint, newPool, 'raydium-cpmm']],
    );
    const amm = [payer, mint, WSOL, ...filler(10, 'amm'), newPool, ...filler(18, 'amm-rest')];
    assert.deepEqual(
      decodeOne(PROGRAMS.launchlab, amm, ix('cf52c091fecf91df')).map(
        (e) => e.kind === 'graduated' && [e.token, e.pool, e.dex],
      ),
      [[mint, newPool, 'raydium-amm-v4']],
    );
  });

  it('two events of the same kind from one instruction stay two trades (only another kind of event completes a trade)', () => {
    const trade = (tokenAmount: bigint) =>
      encodeFields(
        PUMP_TRADE,
        {
          mint,
          solAmount: 1_000n,
          tokenAmount,
          isBuy: true,
          user: payer,
          timestamp: 1n,
          virtualSolReserves: 30_000_000_000n,
          virtualTokenReserves: 1_000_000_000_000_000n,
          realSolReserves: 1n,
          realTokenReserves: 700_000_000_000_000n,
        },
        10,
      );
    const tx = buildTransaction({
      signature: solanaSignature('layout:two-trades'),
      slot: 1,
      blockTime: 1,
      feePayer: payer,
      instructions: [
        {
          programId: PROGRAMS.pumpfun,
          accounts: [payer, mint],
          data: Buffer.from('66063d1201daebea', 'hex'),
          body: [...emitEvent(PROGRAMS.pumpfun, trade(5n), 'cpi'), ...emitEvent(PROGRAMS.pumpfun, trade(7n), 'cpi')],
        },
      ],
    });
    assert.deepEqual(
      decodeSolanaJson(tx).swaps.map((swap) => swap.tokenAmount),
      ['5', '7'],
    );
  });

  it('PumpSwap CreatePoolEvent inside pump.fun migrate: one graduation with CompletePumpAmmMigrationEvent', () => {
    const created = encodeFields(PUMPSWAP_CREATE_POOL, {
      timestamp: 5n,
      index: 0,
      creator: payer,
      baseMint: mint,
      quoteMint: WSOL,
      baseMintDecimals: 6,
      quoteMintDecimals: 9,
      baseAmountIn: 1n,
      quoteAmountIn: 1n,
      poolBaseAmount: 1n,
      poolQuoteAmount: 1n,
      minimumLiquidity: 1n,
      initialLiquidity: 1n,
      lpTokenAmountOut: 1n,
      poolBump: 255,
      pool: newPool,
      lpMint: solanaAddress('lp'),
      userBaseTokenAccount: solanaAddress('uba'),
      userQuoteTokenAccount: solanaAddress('uqa'),
      coinCreator: payer,
      isMayhemMode: false,
    });
    const migrated = encodeFields(
      PUMP_MIGRATION,
      {
        user: payer,
        mint,
        mintAmount: 1n,
        solAmount: 1n,
        poolMigrationFee: 1n,
        bondingCurve: solanaAddress('curve'),
        timestamp: 5n,
        pool: newPool,
      },
      8,
    );
    const tx = buildTransaction({
      signature: solanaSignature('layout:pump-migrate'),
      slot: 1,
      blockTime: 1,
      feePayer: payer,
      instructions: [
        {
          programId: PROGRAMS.pumpfun,
          accounts: [payer, mint],
          data: Buffer.from('9beae792ec9ea21e', 'hex'),
          body: [
            {
              programId: PROGRAMS.pumpswap,
              accounts: [newPool],
              data: Buffer.from('e992d18ecf6840bc', 'hex'),
              body: emitEvent(PROGRAMS.pumpswap, created, 'cpi'),
            },
            ...emitEvent(PROGRAMS.pumpfun, migrated, 'cpi'),
          ],
        },
      ],
    });
    const graduations = decodeSolanaJson(tx).events.filter((e) => e.kind === 'graduated');
    assert.deepEqual(
      graduations.map((e) => e.kind === 'graduated' && [e.token, e.pool, e.dex]),
      [[mint, newPool, 'pumpswap']],
    );
  });
});

describe('EVM records checked against public ABIs and deployments (issue 13)', () => {
  const receiptOf = (logs: Parameters<typeof buildReceipt>[0]['logs'], from = seedAddress('wallet')) =>
    JSON.parse(
      JSON.stringify(
        buildReceipt({
          transactionHash: seedHash(`tx:${logs.length}:${from}`),
          blockNumber: 1,
          from,
          to: seedAddress('router'),
          gasUsed: 1n,
          effectiveGasPrice: 1n,
          logs,
        }),
      ),
    );

  it("four.meme V1 trades in the lite ABI's five-word form (with fee) decode, fee reported", () => {
    // TokenManager.lite.abi (four.meme's ABI file for V1): TokenPurchase(address token, address
    // account, uint256 tokenAmount, uint256 etherAmount, uint256 fee), topic0 0x00fe0e12…; the API
    // doc's prose lists four fields (topic0 0x623b3804…). Both are decoded.
    const tokens = createTokenRegistry();
    const token = '0xabcdef0000000000000000000000000000004444';
    tokens.registerToken('bsc', token, { decimals: 18 });
    const decoder = createEvmDecoder({ chain: 'bsc', tokens, pools: createPoolRegistry() });
    const manager = '0xec4549cadce5da21df6e6422d448034b5233bfbc';
    const log = encodeFourMemePurchaseV1({
      manager,
      token,
      account: seedAddress('buyer'),
      tokenAmount: 7n,
      etherAmount: 5n,
      fee: 1n,
    });
    assert.equal(log.topics[0], '0x00fe0e12b43090c1fc19a34aefa5cc138a4eeafc60ab800f855c730b3fb9480e');
    const [swap] = decoder.decodeReceipt(receiptOf([log]), 0).swaps;
    assert.deepEqual(
      [swap!.side, swap!.tokenAmount, swap!.quoteAmount, swap!.fees?.platform, swap!.trader, swap!.launchpad],
      ['buy', '7', '5', '1', seedAddress('buyer').toLowerCase(), 'fourmeme'],
    );
  });

  it("Zora's V4 hooks (ourzora/zora-protocol deployments) make a launchpad: created + swaps tagged zora", () => {
    const hooks = '0x9ea932730a7787000042e34390b8e435dd839040'; // ZORA_V4_COIN_HOOK, addresses/8453.json
    const poolManager = '0x498581ff718922c3f8e6a244956af099b2652b2b';
    const coin = seedAddress('zora coin').toLowerCase();
    const zora = '0x1111111111166b7fe7bd91427724b487980afc69'; // $ZORA, a content coin's usual pair
    const [currency0, currency1] = coin < zora ? [coin, zora] : [zora, coin];
    const key = { currency0, currency1, fee: 10_000, tickSpacing: 200, hooks };
    const tokens = createTokenRegistry();
    tokens.registerToken('base', coin, { decimals: 18, name: 'Coin', symbol: 'C' });
    tokens.registerToken('base', zora, { decimals: 18, name: 'Zora', symbol: 'ZORA' });
    const decoder = createEvmDecoder({ chain: 'base', tokens, pools: createPoolRegistry() });
    const supply = 1_000_000_000n * 10n ** 18n;
    const coinIs0 = currency0 === coin;
    const out = decoder.decodeReceipt(
      receiptOf([
        encodeTransfer({
          token: coin,
          from: '0x0000000000000000000000000000000000000000',
          to: poolManager,
          value: supply,
        }),
        encodeV4Initialize({ poolManager, ...key, sqrtPriceX96: 2n ** 96n, tick: 0 }),
        encodeV4Swap({
          poolManager,
          id: v4PoolId(key),
          sender: seedAddress('router'),
          amount0: coinIs0 ? 1000n : -5n,
          amount1: coinIs0 ? -5n : 1000n,
          sqrtPriceX96: 2n ** 96n,
          liquidity: 1n,
          tick: 0,
          fee: 10_000,
        }),
      ]),
      0,
    );
    const created = out.events.find((e) => e.kind === 'created');
    assert.ok(created && created.kind === 'created');
    assert.equal(created.launchpad, 'zora');
    assert.equal(created.supply, supply.toString());
    assert.ok(out.swaps.length === 1 && out.swaps[0]!.launchpad === 'zora');
    assert.equal(out.swaps[0]!.token, coin, 'the coin is the token, $ZORA the quote');
    assert.equal(out.swaps[0]!.side, 'buy');
  });

  it("the RPC resolver books an Aerodrome pool's own fee (PoolFactory.getFee), asked once per pool", async () => {
    const chain = 'base';
    const factory = '0x420dd381b31aef6683db6b902084cb0ffece40da';
    const pool = seedAddress('aero 1% pool').toLowerCase();
    const token = seedAddress('aero coin').toLowerCase();
    const weth = '0x4200000000000000000000000000000000000006';
    const abi = parseAbi([
      'function token0() view returns (address)',
      'function token1() view returns (address)',
      'function factory() view returns (address)',
      'function stable() view returns (bool)',
      'function getFee(address pool, bool stable) view returns (uint256)',
      'function decimals() view returns (uint8)',
      'function name() view returns (string)',
      'function symbol() view returns (string)',
      'function totalSupply() view returns (uint256)',
    ]);
    // What a node's eth_call answers for these contracts (PoolFactory.getFee returns bps: 100 = 1 %).
    const answers: Record<string, (args: readonly unknown[]) => unknown> = {
      [`${pool}:token0`]: () => (token < weth ? token : weth),
      [`${pool}:token1`]: () => (token < weth ? weth : token),
      [`${pool}:factory`]: () => factory,
      [`${pool}:stable`]: () => false,
      [`${factory}:getFee`]: (args) => (args[0] === pool && args[1] === false ? 100n : 30n),
      [`${token}:decimals`]: () => 18,
      [`${token}:name`]: () => 'Coin',
      [`${token}:symbol`]: () => 'C',
      [`${token}:totalSupply`]: () => 10n ** 27n,
    };
    const calls: string[] = [];
    const rpc = {
      async call<T>(method: string, params?: unknown): Promise<T> {
        assert.equal(method, 'eth_call');
        const [{ to, data }] = params as [{ to: string; data: Hex }];
        const { functionName, args } = decodeFunctionData({ abi, data });
        const key = `${to.toLowerCase()}:${functionName}`;
        calls.push(key);
        const answer = answers[key];
        if (!answer) throw new Error('execution reverted');
        const value = answer((args ?? []).map((a) => (typeof a === 'string' ? a.toLowerCase() : a)));
        return encodeFunctionResult({ abi, functionName, result: value } as never) as T;
      },
    };
    const ctx = createContext(loadConfig({ SPOT_LOG_LEVEL: 'silent' }), createLogger('silent'));
    const decoder = createEvmDecoder({ chain, tokens: createTokenRegistry(), pools: createPoolRegistry() });
    const resolver = createEvmResolver(ctx, { chain, rpc, decoder });
    const swapLog = encodeAerodromeSwap({
      pool,
      sender: seedAddress('router'),
      to: seedAddress('router'),
      amount0In: token < weth ? 0n : 10n ** 18n,
      amount1In: token < weth ? 10n ** 18n : 0n,
      amount0Out: token < weth ? 5n : 0n,
      amount1Out: token < weth ? 0n : 5n,
    });
    const receipt = receiptOf([swapLog]);
    await resolver.prepare(receipt, 0);
    assert.equal(decoder.pools.getPool(chain, pool)?.fee, 10_000, '100 bps = 10 000 pips, not the 3 000 default');
    await resolver.prepare(receiptOf([swapLog, swapLog]), 0);
    assert.equal(calls.filter((c) => c.endsWith(':getFee')).length, 1, 'cached: asked once');
    // Without a Fees log the pool's fee prices the LP fee: 1 % of the 1 WETH paid in.
    const [swap] = decoder.decodeReceipt(receipt, 0).swaps;
    assert.equal(swap!.fees?.dex, (10n ** 16n).toString());
  });
});
