// Solana decoders against bytes written by hand from the layouts in CHAINS.md §1 (no encoder).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { TOPICS, assertTopicValue, type RawSwap, type TokenEvent } from '../core/topics.ts';
import {
  base58Decode,
  base58Encode,
  createSolanaDecoder,
  decodeSolanaJson,
  findProgramAddress,
  pumpBondingCurve,
  solanaAddress,
  type SolanaTransaction,
} from '../ingest/solana/index.ts';

const PUMP = '6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P';
const PUMPSWAP = 'pAMMBay6oceH9fJKBRHGP5D4bD4sWpmSwMn52FMfXEA';
const LAUNCHLAB = 'LanMV9sAd7wArD4vJFi2qDdfnVhFxYSUg6eADduJ3uj';
const AMM_V4 = '675kPX9MHTjS2zt1qfr1NYHuzeLXfQM9H24wFSUt1Mp8';
const CPMM = 'CPMMoo8L3F4NbTegBCKVNunggL7H1ZpdTHKxQB5qKP1C';
const CLMM = 'CAMMCzo5YL8w4VFF8KVHrK22GGUsp5VTaW7grrKgrWqK';
const DBC = 'dbcij3LWUppWqq96dh6gJWwBifmcGfLSB5D4DuSMaqN';
const WSOL = 'So11111111111111111111111111111111111111112';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const ROUTER = 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4';
const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';

/** Sequential little-endian writer: each test lays bytes out field by field, checking offsets. */
class Bytes {
  private parts: Buffer[] = [];
  get length() {
    return this.parts.reduce((sum, part) => sum + part.length, 0);
  }
  hex(text: string) {
    this.parts.push(Buffer.from(text, 'hex'));
    return this;
  }
  u8(value: number) {
    this.parts.push(Buffer.of(value));
    return this;
  }
  u16(value: number) {
    const b = Buffer.alloc(2);
    b.writeUInt16LE(value);
    this.parts.push(b);
    return this;
  }
  u32(value: number) {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(value);
    this.parts.push(b);
    return this;
  }
  i32(value: number) {
    const b = Buffer.alloc(4);
    b.writeInt32LE(value);
    this.parts.push(b);
    return this;
  }
  u64(value: bigint) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(value);
    this.parts.push(b);
    return this;
  }
  u128(value: bigint) {
    return this.u64(value & ((1n << 64n) - 1n)).u64(value >> 64n);
  }
  key(address: string) {
    this.parts.push(Buffer.from(base58Decode(address)));
    return this;
  }
  str(text: string) {
    const b = Buffer.from(text);
    return this.u32(b.length).raw(b);
  }
  raw(bytes: Uint8Array) {
    this.parts.push(Buffer.from(bytes));
    return this;
  }
  at(offset: number) {
    assert.equal(this.length, offset, 'layout offset');
    return this;
  }
  done() {
    return Buffer.concat(this.parts);
  }
}

const TAG = 'e445a52e51cb9a1d';
const b64 = (bytes: Buffer) => bytes.toString('base64');

interface HandIx {
  program: string;
  accounts: string[];
  data: Uint8Array;
  stackHeight?: number;
}
interface HandBalance {
  account: string;
  mint: string;
  owner: string;
  decimals: number;
  pre?: bigint;
  post?: bigint;
}

/** A getTransaction result assembled by hand. */
function handTx(input: {
  sig: string;
  top: HandIx[];
  inner?: HandIx[][];
  logs: string[];
  balances?: HandBalance[];
  err?: unknown;
  loaded?: string[];
}): SolanaTransaction {
  const keys: string[] = [];
  const loaded = input.loaded ?? [];
  const add = (key: string) => {
    if (!keys.includes(key) && !loaded.includes(key)) keys.push(key);
  };
  const all = [...input.top, ...(input.inner ?? []).flat()];
  all.forEach((ix) => {
    ix.accounts.forEach(add);
    add(ix.program);
  });
  (input.balances ?? []).forEach((b) => add(b.account));
  const full = [...keys, ...loaded];
  const ix = (i: HandIx) => ({
    programIdIndex: full.indexOf(i.program),
    accounts: i.accounts.map((a) => full.indexOf(a)),
    data: base58Encode(i.data),
    ...(i.stackHeight ? { stackHeight: i.stackHeight } : {}),
  });
  const tokenBalances = (phase: 'pre' | 'post') =>
    (input.balances ?? [])
      .filter((b) => b[phase] !== undefined)
      .map((b) => ({
        accountIndex: full.indexOf(b.account),
        mint: b.mint,
        owner: b.owner,
        uiTokenAmount: { amount: String(b[phase]), decimals: b.decimals },
      }));
  return {
    slot: 300_000_000,
    blockTime: 1_771_000_000,
    transaction: { signatures: [input.sig], message: { accountKeys: keys, instructions: input.top.map(ix) } },
    meta: {
      err: input.err ?? null,
      fee: 5000,
      logMessages: input.logs,
      innerInstructions: (input.inner ?? [])
        .map((list, index) => ({ index, instructions: list.map(ix) }))
        .filter((g) => g.instructions.length > 0),
      preTokenBalances: tokenBalances('pre'),
      postTokenBalances: tokenBalances('post'),
      ...(loaded.length ? { loadedAddresses: { writable: loaded, readonly: [] } } : {}),
    },
  };
}

const decoder = createSolanaDecoder();
function decode(tx: SolanaTransaction) {
  const out = decoder.decodeTransaction(tx);
  out.swaps.forEach((swap) => assertTopicValue(TOPICS.swaps, swap));
  out.events.forEach((event) => assertTopicValue(TOPICS.tokenEvents, event));
  return out;
}
const sig = (seed: string) => base58Encode(createHash('sha512').update(seed).digest());
const positionOf = (signature: string, eventIndex: number) => ({
  id: `solana:${signature}:${eventIndex}`,
  chain: 'solana',
  transactionHash: signature,
  eventIndex,
  blockNumber: 300_000_000,
  blockTime: 1_771_000_000_000,
});

const MINT = solanaAddress('test:mint');
const USER = solanaAddress('test:user');
const FEE_RECIPIENT = solanaAddress('test:fee-recipient');
const CREATOR = solanaAddress('test:creator');
const CURVE = pumpBondingCurve(MINT);

// Vixen buy sample facts: sol_amount 50051224, fee 475487 (95 bps, ceil), creator_fee 150154 (30 bps, ceil);
// post reserves satisfy vSOL − rSOL = 30e9 and vTOK − rTOK = 279.9e12. rTOK = 3/4 of 793.1e12 → 25 % sold.
const SOL_AMOUNT = 50_051_224n;
const FEE = 475_487n;
const CREATOR_FEE = 150_154n;
const TOKEN_AMOUNT = 693_862_088_371n;
const R_TOK = 594_825_000_000_000n;
const V_TOK = R_TOK + 279_900_000_000_000n;
const R_SOL = 21_000_000_000n;
const V_SOL = R_SOL + 30_000_000_000n;

/** pump.fun TradeEvent bytes of a given generation, offsets per CHAINS.md §1.2. */
function pumpTradeBytes(
  generation: number,
  opts: { isBuy?: boolean; quoteMint?: string; quoteAmount?: bigint } = {},
): Buffer {
  const isBuy = opts.isBuy ?? true;
  const w = new Bytes()
    .hex('bddb7fd34ee661ee')
    .at(8)
    .key(MINT)
    .at(40)
    .u64(SOL_AMOUNT)
    .at(48)
    .u64(TOKEN_AMOUNT)
    .at(56)
    .u8(isBuy ? 1 : 0)
    .at(57)
    .key(USER)
    .at(89)
    .u64(1_770_999_999n)
    .at(97)
    .u64(V_SOL)
    .at(105)
    .u64(V_TOK)
    .at(113)
    .u64(R_SOL)
    .at(121)
    .u64(R_TOK)
    .at(129);
  if (generation >= 1)
    w.key(FEE_RECIPIENT)
      .at(161)
      .u64(95n)
      .at(169)
      .u64(FEE)
      .at(177)
      .key(CREATOR)
      .at(209)
      .u64(30n)
      .at(217)
      .u64(CREATOR_FEE)
      .at(225);
  if (generation >= 2) w.u8(1).at(226).u64(5n).u64(6n).u64(7n).u64(1_770_999_000n).at(258);
  if (generation >= 3) w.str(isBuy ? 'buy' : 'sell');
  if (generation >= 4) w.u8(1);
  if (generation >= 5) w.u64(10n).u64(0n);
  if (generation >= 6) {
    w.u64(5n)
      .u64(25_026n)
      .u32(2)
      .key(solanaAddress('holder:a'))
      .u16(6000)
      .key(solanaAddress('holder:b'))
      .u16(4000)
      .key(opts.quoteMint ?? '11111111111111111111111111111111')
      .u64(opts.quoteAmount ?? SOL_AMOUNT)
      .u64(V_SOL)
      .u64(R_SOL);
  }
  return w.done();
}

function pumpBuyIx(): HandIx {
  return {
    program: PUMP,
    accounts: [solanaAddress('global'), FEE_RECIPIENT, MINT, CURVE, USER],
    data: Buffer.from('66063d1201daebea', 'hex'),
  };
}
const eventCpi = (program: string, bytes: Buffer, stackHeight = 2): HandIx => ({
  program,
  accounts: [solanaAddress(`authority:${program}`)],
  data: Buffer.concat([Buffer.from(TAG, 'hex'), bytes]),
  stackHeight,
});

function expectedPumpSwap(signature: string, extra: Partial<RawSwap>): RawSwap {
  return {
    ...positionOf(signature, 0),
    token: MINT,
    quoteAsset: WSOL,
    tokenAmount: TOKEN_AMOUNT.toString(),
    tokenDecimals: 6,
    quoteAmount: SOL_AMOUNT.toString(),
    quoteDecimals: 9,
    side: 'buy',
    trader: USER,
    pool: CURVE,
    dex: 'pumpfun',
    launchpad: 'pumpfun',
    reserves: { token: R_TOK.toString(), quote: R_SOL.toString() },
    curve: {
      progressPct: '25',
      virtualTokenReserves: V_TOK.toString(),
      virtualQuoteReserves: V_SOL.toString(),
      realTokenReserves: R_TOK.toString(),
      realQuoteReserves: R_SOL.toString(),
      complete: false,
    },
    fees: { transaction: '5000' },
    ...extra,
  } as RawSwap;
}

describe('solana primitives', () => {
  it('base58 matches known vectors and round-trips', () => {
    assert.equal(base58Encode(Buffer.from('hello world')), 'StV1DL6CwTryKyV');
    assert.equal(base58Encode(new Uint8Array(32)), '11111111111111111111111111111111');
    assert.deepEqual(Buffer.from(base58Decode('StV1DL6CwTryKyV')).toString(), 'hello world');
    const bytes = Buffer.from('0000ff01020304', 'hex');
    assert.deepEqual(Buffer.from(base58Decode(base58Encode(bytes))), bytes);
    assert.throws(() => base58Decode('0OIl'));
    assert.equal(base58Decode(WSOL).length, 32);
  });

  it('derives the documented PDAs', () => {
    assert.equal(findProgramAddress(['global'], PUMP), '4wTV1YmiEkRvAtNtsSGPtUrqRYQMe5SKy2uB4Jjaxnjf');
    assert.equal(findProgramAddress(['__event_authority'], PUMP), 'Ce6TQqeHC9p8KetsN6JsjHK7UTZk7nasjjnr7XxXp9F1');
    assert.equal(findProgramAddress(['global_config'], PUMPSWAP), 'ADyA8hdefvWN2dbGGWFotbzWxrAvLW83WG6QCVXvJKqw');
  });

  it('discriminators are sha256("event:<Name>")[0..8]', () => {
    const disc = (name: string) => createHash('sha256').update(`event:${name}`).digest().subarray(0, 8).toString('hex');
    assert.equal(disc('TradeEvent'), 'bddb7fd34ee661ee');
    assert.equal(disc('CreateEvent'), '1b72a94ddeeb6376');
    assert.equal(disc('BuyEvent'), '67f4521f2cf57777');
    assert.equal(disc('SwapEvent'), '40c6cde8260871e2');
    assert.equal(disc('EvtSwap2'), 'bd4233a826507599');
    // EVENT_IX_TAG is the u64 0x1d9acb512ea545e4 (sha256("anchor:event")[0..8] read big-endian) written little-endian.
    assert.equal(
      Buffer.from(createHash('sha256').update('anchor:event').digest().subarray(0, 8)).reverse().toString('hex'),
      TAG,
    );
  });

  it('the vixen fee facts hold for the sample numbers', () => {
    assert.equal((SOL_AMOUNT * 95n + 9999n) / 10000n, FEE);
    assert.equal((SOL_AMOUNT * 30n + 9999n) / 10000n, CREATOR_FEE);
  });
});

describe('pump.fun TradeEvent', () => {
  const generations = [
    { name: 'Dec-2024', generation: 0, length: 129, extra: {} },
    {
      name: 'May-2025 fees and creator',
      generation: 1,
      length: 225,
      extra: { fees: { platform: '625641', transaction: '5000' } },
    },
    {
      name: 'Aug-2025 track_volume',
      generation: 2,
      length: 258,
      extra: { fees: { platform: '625641', transaction: '5000' } },
    },
    {
      name: 'Oct-2025 ix_name',
      generation: 3,
      length: 265,
      extra: { fees: { platform: '625641', transaction: '5000' } },
    },
    {
      name: 'Jan-2026 mayhem_mode (vixen length 266)',
      generation: 4,
      length: 266,
      extra: { fees: { platform: '625641', transaction: '5000' }, mayhemMode: true },
    },
    {
      name: 'Feb-2026 cashback',
      generation: 5,
      length: 282,
      extra: { fees: { platform: '625641', transaction: '5000' }, mayhemMode: true },
    },
    // buyback_fee 25026 is a share of the protocol fee already in `fee` (issue 13), not an extra charge.
    {
      name: 'May-2026 buyback and quote mint',
      generation: 6,
      length: 282 + 16 + 4 + 68 + 32 + 24,
      extra: { fees: { platform: '625641', transaction: '5000' }, mayhemMode: true },
    },
  ];
  for (const { name, generation, length, extra } of generations) {
    it(`decodes the ${name} layout from a Program data line`, () => {
      const bytes = pumpTradeBytes(generation);
      assert.equal(bytes.length, length);
      const signature = sig(name);
      const tx = handTx({
        sig: signature,
        top: [pumpBuyIx()],
        logs: [
          `Program ${PUMP} invoke [1]`,
          'Program log: Instruction: Buy',
          `Program data: ${b64(bytes)}`,
          `Program ${PUMP} success`,
        ],
      });
      const { swaps } = decode(tx);
      assert.deepEqual(swaps, [expectedPumpSwap(signature, extra)]);
    });
  }

  it('ignores trailing bytes past the newest known field', () => {
    const bytes = Buffer.concat([pumpTradeBytes(4), Buffer.from('deadbeefdeadbeefdead', 'hex')]);
    const signature = sig('trailing');
    const { swaps } = decode(
      handTx({
        sig: signature,
        top: [pumpBuyIx()],
        logs: [`Program ${PUMP} invoke [1]`, `Program data: ${b64(bytes)}`, `Program ${PUMP} success`],
      }),
    );
    assert.equal(swaps.length, 1);
    assert.equal(swaps[0]!.mayhemMode, true);
  });

  it('reads a sell and a USDC-paired May-2026 trade', () => {
    const sell = decode(
      handTx({
        sig: sig('sell'),
        top: [pumpBuyIx()],
        logs: [
          `Program ${PUMP} invoke [1]`,
          `Program data: ${b64(pumpTradeBytes(3, { isBuy: false }))}`,
          `Program ${PUMP} success`,
        ],
      }),
    );
    assert.equal(sell.swaps[0]!.side, 'sell');
    const usdc = decode(
      handTx({
        sig: sig('usdc'),
        top: [pumpBuyIx()],
        logs: [
          `Program ${PUMP} invoke [1]`,
          `Program data: ${b64(pumpTradeBytes(6, { quoteMint: USDC, quoteAmount: 7_000_000n }))}`,
          `Program ${PUMP} success`,
        ],
      }),
    );
    assert.equal(usdc.swaps[0]!.quoteAsset, USDC);
    assert.equal(usdc.swaps[0]!.quoteAmount, '7000000');
    assert.equal(usdc.swaps[0]!.quoteDecimals, 6);
  });

  it('counts an event present as self-CPI and as a log line once', () => {
    const bytes = pumpTradeBytes(4);
    const signature = sig('both');
    const tx = handTx({
      sig: signature,
      top: [pumpBuyIx()],
      inner: [[eventCpi(PUMP, bytes)]],
      logs: [
        `Program ${PUMP} invoke [1]`,
        `Program data: ${b64(bytes)}`,
        `Program ${PUMP} invoke [2]`,
        `Program ${PUMP} success`,
        `Program ${PUMP} success`,
      ],
    });
    const { swaps } = decode(tx);
    assert.equal(swaps.length, 1);
    assert.equal(swaps[0]!.id, `solana:${signature}:0`);
  });

  it('decodes the self-CPI copy when the log is truncated', () => {
    const bytes = pumpTradeBytes(4);
    const signature = sig('truncated');
    const tx = handTx({
      sig: signature,
      top: [pumpBuyIx()],
      inner: [[eventCpi(PUMP, bytes)]],
      logs: [`Program ${PUMP} invoke [1]`, 'Log truncated'],
    });
    assert.deepEqual(decode(tx).swaps, [
      expectedPumpSwap(signature, { fees: { platform: '625641', transaction: '5000' }, mayhemMode: true }),
    ]);
  });

  it('skips failed transactions', () => {
    const tx = handTx({
      sig: sig('failed'),
      top: [pumpBuyIx()],
      err: { InstructionError: [0, { Custom: 6002 }] },
      logs: [
        `Program ${PUMP} invoke [1]`,
        `Program data: ${b64(pumpTradeBytes(4))}`,
        `Program ${PUMP} failed: custom program error: 0x1772`,
      ],
    });
    assert.deepEqual(decode(tx), { swaps: [], events: [] });
  });

  it('attributes Program data to the innermost open invoke frame', () => {
    const bytes = pumpTradeBytes(0);
    const signature = sig('frames');
    // A router line carrying the same bytes must not count: only the pump frame's line does.
    const tx = handTx({
      sig: signature,
      top: [{ program: ROUTER, accounts: [USER, PUMP], data: Buffer.of(1) }],
      inner: [
        [
          { ...pumpBuyIx(), stackHeight: 2 },
          { program: TOKEN_PROGRAM, accounts: [USER], data: Buffer.of(3), stackHeight: 3 },
        ],
      ],
      logs: [
        `Program ${ROUTER} invoke [1]`,
        `Program ${PUMP} invoke [2]`,
        `Program ${TOKEN_PROGRAM} invoke [3]`,
        `Program ${TOKEN_PROGRAM} success`,
        `Program data: ${b64(bytes)}`,
        `Program ${PUMP} success`,
        `Program data: ${b64(bytes)}`,
        `Program ${ROUTER} success`,
      ],
    });
    const { swaps } = decode(tx);
    // The router that invoked pump.fun is kept as the trade's router; the trader stays the user.
    assert.deepEqual(swaps, [expectedPumpSwap(signature, { router: ROUTER })]);
  });

  it('orders several events by appearance and gives each its own index', () => {
    const first = pumpTradeBytes(0);
    const second = pumpTradeBytes(0, { isBuy: false });
    const signature = sig('order');
    const tx = handTx({
      sig: signature,
      top: [pumpBuyIx(), pumpBuyIx()],
      inner: [[eventCpi(PUMP, first)], [eventCpi(PUMP, second)]],
      logs: [
        `Program ${PUMP} invoke [1]`,
        `Program ${PUMP} invoke [2]`,
        `Program ${PUMP} success`,
        `Program ${PUMP} success`,
        `Program ${PUMP} invoke [1]`,
        `Program ${PUMP} invoke [2]`,
        `Program ${PUMP} success`,
        `Program ${PUMP} success`,
      ],
    });
    const { swaps } = decode(tx);
    assert.deepEqual(
      swaps.map((s) => [s.eventIndex, s.side]),
      [
        [0, 'buy'],
        [1, 'sell'],
      ],
    );
    assert.equal(swaps[1]!.fees, undefined, 'transaction fee only on the first swap');
  });
});

describe('pump.fun lifecycle events', () => {
  const createBytes = (generation: 'legacy' | 'may2026') => {
    const w = new Bytes()
      .hex('1b72a94ddeeb6376')
      .str('Dog Coin')
      .str('DOG')
      .str('https://ipfs.io/x')
      .key(MINT)
      .key(CURVE)
      .key(USER);
    if (generation === 'may2026') {
      w.key(CREATOR)
        .u64(1_770_999_000n)
        .u64(1_073_000_000_000_000n)
        .u64(30_000_000_000n)
        .u64(793_100_000_000_000n)
        .u64(1_000_000_000_000_000n)
        .key(TOKEN_PROGRAM)
        .u8(1)
        .u8(0)
        .key(USDC)
        .u64(5_000_000_000n);
    }
    return w.done();
  };

  it('reads CreateEvent of the oldest and newest generations', () => {
    for (const generation of ['legacy', 'may2026'] as const) {
      const signature = sig(`create-${generation}`);
      const { events } = decode(
        handTx({ sig: signature, top: [pumpBuyIx()], inner: [[eventCpi(PUMP, createBytes(generation))]], logs: [] }),
      );
      const expected: TokenEvent = {
        ...positionOf(signature, 0),
        kind: 'created',
        token: MINT,
        name: 'Dog Coin',
        symbol: 'DOG',
        uri: 'https://ipfs.io/x',
        decimals: 6,
        supply: '1000000000000000',
        creator: generation === 'legacy' ? USER : CREATOR,
        launchpad: 'pumpfun',
        pool: CURVE,
        quoteAsset: generation === 'legacy' ? WSOL : USDC,
        ...(generation === 'may2026' ? { mayhemMode: true } : {}),
      } as TokenEvent;
      assert.deepEqual(events, [expected]);
    }
  });

  it('turns CompleteEvent into a complete curve and the migration into a graduation', () => {
    const pool = solanaAddress('pumpswap:pool');
    const complete = new Bytes().hex('5f72619cd42e9808').key(USER).key(MINT).key(CURVE).u64(1_771_000_000n).done();
    const migration = new Bytes()
      .hex('bde95db95c94ea94')
      .key(USER)
      .key(MINT)
      .u64(206_900_000_000_000n)
      .u64(84_990_359_057n)
      .u64(15_000_001n)
      .key(CURVE)
      .u64(1_771_000_000n)
      .key(pool)
      .done();
    const signature = sig('lifecycle');
    const tx = handTx({
      sig: signature,
      top: [pumpBuyIx(), pumpBuyIx()],
      logs: [
        `Program ${PUMP} invoke [1]`,
        `Program data: ${b64(complete)}`,
        `Program ${PUMP} success`,
        `Program ${PUMP} invoke [1]`,
        `Program data: ${b64(migration)}`,
        `Program ${PUMP} success`,
      ],
    });
    assert.deepEqual(decode(tx).events, [
      { ...positionOf(signature, 0), kind: 'curve', token: MINT, progressPct: '100', complete: true },
      { ...positionOf(signature, 1), kind: 'graduated', token: MINT, pool, dex: 'pumpswap' },
    ]);
  });

  it('emits post-trade balances of the traded token per owner', () => {
    const ata = solanaAddress('user-ata');
    const signature = sig('balances');
    const tx = handTx({
      sig: signature,
      top: [pumpBuyIx()],
      logs: [`Program ${PUMP} invoke [1]`, `Program data: ${b64(pumpTradeBytes(0))}`, `Program ${PUMP} success`],
      balances: [
        { account: ata, mint: MINT, owner: USER, decimals: 6, post: TOKEN_AMOUNT },
        { account: solanaAddress('other'), mint: USDC, owner: USER, decimals: 6, pre: 5n, post: 4n },
        { account: solanaAddress('closed'), mint: MINT, owner: CREATOR, decimals: 6, pre: 9n },
      ],
    });
    assert.deepEqual(decode(tx).events, [
      { ...positionOf(signature, 1), kind: 'balance', token: MINT, owner: USER, amount: TOKEN_AMOUNT.toString() },
      { ...positionOf(signature, 2), kind: 'balance', token: MINT, owner: CREATOR, amount: '0' },
    ]);
  });
});

describe('PumpSwap', () => {
  const pool = solanaAddress('ps:pool');
  const userBase = solanaAddress('ps:user-base');
  const userQuote = solanaAddress('ps:user-quote');
  const accountsTail = (w: Bytes) =>
    w.key(pool).key(USER).key(userBase).key(userQuote).key(solanaAddress('ps:fee')).key(solanaAddress('ps:fee-ata'));
  const balances: HandBalance[] = [
    { account: userBase, mint: MINT, owner: USER, decimals: 6, pre: 0n, post: 1_000_000n },
    { account: userQuote, mint: WSOL, owner: USER, decimals: 9, pre: 0n, post: 0n },
  ];
  const ix: HandIx = { program: PUMPSWAP, accounts: [pool, USER], data: Buffer.from('66063d1201daebea', 'hex') };

  it('reads the Apr-2025 BuyEvent (312 bytes) and computes post-trade reserves', () => {
    // quote 1 000 000 lamports: lp fee ceil(·20/1e4) = 2000, protocol ceil(·5/1e4) = 500.
    const w = new Bytes()
      .hex('67f4521f2cf57777')
      .u64(1_771_000_000n)
      .at(16)
      .u64(3_000_000n)
      .u64(1_002_500n)
      .u64(0n)
      .u64(0n)
      .at(48)
      .u64(100_000_000_000n)
      .u64(40_000_000_000n)
      .at(64)
      .u64(1_000_000n)
      .u64(20n)
      .at(80)
      .u64(2000n)
      .u64(5n)
      .at(96)
      .u64(500n)
      .u64(1_002_000n)
      .at(112)
      .u64(1_002_500n)
      .at(120);
    const bytes = accountsTail(w).at(312).done();
    const signature = sig('ps-buy');
    const { swaps } = decode(
      handTx({ sig: signature, top: [ix], inner: [[eventCpi(PUMPSWAP, bytes)]], logs: [], balances }),
    );
    assert.deepEqual(swaps, [
      {
        ...positionOf(signature, 0),
        token: MINT,
        quoteAsset: WSOL,
        tokenAmount: '3000000',
        tokenDecimals: 6,
        quoteAmount: '1000000',
        quoteDecimals: 9,
        side: 'buy',
        trader: USER,
        pool,
        dex: 'pumpswap',
        launchpad: null,
        reserves: { token: String(100_000_000_000 - 3_000_000), quote: String(40_000_000_000 + 1_002_000) },
        fees: { dex: '2000', platform: '500', transaction: '5000' },
      },
    ]);
  });

  it('reads a SellEvent with the coin-creator fee', () => {
    const w = new Bytes()
      .hex('3e2f370aa503dc2a')
      .u64(1_771_000_000n)
      .u64(3_000_000n)
      .u64(0n)
      .u64(0n)
      .u64(0n)
      .u64(100_000_000_000n)
      .u64(40_000_000_000n)
      .u64(1_000_000n)
      .u64(20n)
      .u64(2000n)
      .u64(5n)
      .u64(500n)
      .u64(998_000n)
      .u64(997_000n);
    const bytes = accountsTail(w).at(312).key(CREATOR).u64(5n).u64(500n).done();
    const signature = sig('ps-sell');
    const { swaps } = decode(
      handTx({
        sig: signature,
        top: [ix],
        logs: [`Program ${PUMPSWAP} invoke [1]`, `Program data: ${b64(bytes)}`, `Program ${PUMPSWAP} success`],
        balances,
      }),
    );
    assert.equal(swaps.length, 1);
    assert.deepEqual(
      {
        side: swaps[0]!.side,
        tokenAmount: swaps[0]!.tokenAmount,
        quoteAmount: swaps[0]!.quoteAmount,
        reserves: swaps[0]!.reserves,
        fees: swaps[0]!.fees,
      },
      {
        side: 'sell',
        tokenAmount: '3000000',
        quoteAmount: '1000000',
        reserves: { token: '100003000000', quote: String(40_000_000_000 - 998_000) },
        fees: { dex: '2000', platform: '1000', transaction: '5000' },
      },
    );
  });
});

describe('Raydium and Meteora', () => {
  const poolState = solanaAddress('ll:pool');
  const base = solanaAddress('ll:base');
  const launchLabIx: HandIx = {
    program: LAUNCHLAB,
    accounts: [
      USER,
      solanaAddress('a1'),
      solanaAddress('a2'),
      solanaAddress('a3'),
      poolState,
      solanaAddress('a5'),
      solanaAddress('a6'),
      solanaAddress('a7'),
      solanaAddress('a8'),
      base,
      WSOL,
    ],
    data: Buffer.from('faea0d7bd59c13ec', 'hex'),
  };
  const baseBalance: HandBalance = {
    account: solanaAddress('a5'),
    mint: base,
    owner: USER,
    decimals: 6,
    pre: 0n,
    post: 1n,
  };

  it('decodes TradeEvent under the LaunchLab program as LaunchLab (discriminator shared with pump.fun)', () => {
    // 1 SOL in, fees 0.25 % + 1 % + 0.05 % = 13 000 000; 600e12 of 793.1e12... progress = after/total.
    const bytes = new Bytes()
      .hex('bddb7fd34ee661ee')
      .key(poolState)
      .u64(800_000_000_000_000n)
      .u64(1_073_025_605_596_382n)
      .u64(30_000_852_951n)
      .u64(600_000_000_000_000n)
      .u64(60_000_000_000n)
      .u64(610_000_000_000_000n)
      .u64(60_987_000_000n)
      .u64(1_000_000_000n)
      .u64(10_000_000_000_000n)
      .u64(2_500_000n)
      .u64(10_000_000n)
      .u64(500_000n)
      .u64(0n)
      .u8(0)
      .u8(0)
      .u8(1)
      .done();
    const signature = sig('launchlab');
    const { swaps } = decode(
      handTx({
        sig: signature,
        top: [launchLabIx],
        inner: [[eventCpi(LAUNCHLAB, bytes)]],
        logs: [],
        balances: [baseBalance],
      }),
    );
    assert.deepEqual(swaps, [
      {
        ...positionOf(signature, 0),
        token: base,
        quoteAsset: WSOL,
        tokenAmount: '10000000000000',
        tokenDecimals: 6,
        quoteAmount: '987000000',
        quoteDecimals: 9,
        side: 'buy',
        trader: USER,
        pool: poolState,
        dex: 'raydium-launchlab',
        launchpad: 'launchlab',
        reserves: { token: '190000000000000', quote: '60987000000' },
        curve: {
          progressPct: '76.25',
          virtualTokenReserves: String(1_073_025_605_596_382n - 610_000_000_000_000n),
          virtualQuoteReserves: String(30_000_852_951n + 60_987_000_000n),
          realTokenReserves: '190000000000000',
          realQuoteReserves: '60987000000',
          complete: false,
        },
        fees: { platform: '13000000', transaction: '5000' },
      },
    ]);
  });

  it('decodes a ray_log SwapBaseIn with mints from the vault balances (18-account form)', () => {
    const amm = solanaAddress('amm');
    const [coinVault, pcVault, source, dest] = ['cv', 'pv', 'src', 'dst'].map((s) => solanaAddress(`ray:${s}`)) as [
      string,
      string,
      string,
      string,
    ];
    const filler = (n: number) => Array.from({ length: n }, (_, i) => solanaAddress(`fill:${i}`));
    const accounts = [TOKEN_PROGRAM, amm, ...filler(3), coinVault, pcVault, ...filler(8), source, dest, USER];
    assert.equal(accounts.length, 18);
    // SwapBaseIn, direction 1 = PC2Coin: 2 SOL in, 5e9 coin out; pre reserves coin 1e12, pc 4e11.
    const log = new Bytes()
      .u8(3)
      .u64(2_000_000_000n)
      .u64(4_900_000_000n)
      .u64(1n)
      .u64(9n)
      .u64(1_000_000_000_000n)
      .u64(400_000_000_000n)
      .u64(5_000_000_000n)
      .at(57)
      .done();
    const signature = sig('raylog');
    const tx = handTx({
      sig: signature,
      top: [{ program: ROUTER, accounts: [USER], data: Buffer.of(1) }],
      inner: [[{ program: AMM_V4, accounts, data: Buffer.of(9), stackHeight: 2 }]],
      logs: [
        `Program ${ROUTER} invoke [1]`,
        `Program ${AMM_V4} invoke [2]`,
        `Program log: ray_log: ${b64(log)}`,
        `Program ${AMM_V4} success`,
        `Program ${ROUTER} success`,
      ],
      balances: [
        {
          account: coinVault,
          mint: MINT,
          owner: solanaAddress('auth'),
          decimals: 6,
          pre: 1_000_000_000_000n,
          post: 995_000_000_000n,
        },
        {
          account: pcVault,
          mint: WSOL,
          owner: solanaAddress('auth'),
          decimals: 9,
          pre: 400_000_000_000n,
          post: 402_000_000_000n,
        },
      ],
    });
    assert.deepEqual(decode(tx).swaps, [
      {
        ...positionOf(signature, 0),
        token: MINT,
        quoteAsset: WSOL,
        tokenAmount: '5000000000',
        tokenDecimals: 6,
        quoteAmount: '2000000000',
        quoteDecimals: 9,
        side: 'buy',
        trader: USER,
        pool: amm,
        dex: 'raydium-amm-v4',
        launchpad: null,
        reserves: { token: '995000000000', quote: '402000000000' },
        fees: { transaction: '5000' },
        router: ROUTER,
      },
    ]);
  });

  it('decodes a ray_log SwapBaseOut on the 8-account form from the user token accounts', () => {
    const amm = solanaAddress('amm2');
    const [source, dest] = [solanaAddress('src2'), solanaAddress('dst2')];
    const accounts = [
      TOKEN_PROGRAM,
      amm,
      solanaAddress('auth'),
      solanaAddress('cv2'),
      solanaAddress('pv2'),
      source,
      dest,
      USER,
    ];
    // SwapBaseOut, direction 2 = Coin2PC: max_in 7e6, amount_out 1e9 pc, deduct_in 6e6 coin.
    const log = new Bytes()
      .u8(4)
      .u64(7_000_000n)
      .u64(1_000_000_000n)
      .u64(2n)
      .u64(9n)
      .u64(500_000_000n)
      .u64(80_000_000_000n)
      .u64(6_000_000n)
      .done();
    const { swaps } = decode(
      handTx({
        sig: sig('raylog2'),
        top: [{ program: AMM_V4, accounts, data: Buffer.of(11) }],
        logs: [`Program ${AMM_V4} invoke [1]`, `Program log: ray_log: ${b64(log)}`, `Program ${AMM_V4} success`],
        balances: [
          { account: source, mint: MINT, owner: USER, decimals: 6, pre: 6_000_000n, post: 0n },
          { account: dest, mint: WSOL, owner: USER, decimals: 9, post: 1_000_000_000n },
        ],
      }),
    );
    assert.deepEqual(
      [swaps[0]!.side, swaps[0]!.token, swaps[0]!.tokenAmount, swaps[0]!.quoteAmount, swaps[0]!.reserves],
      ['sell', MINT, '6000000', '1000000000', { token: '506000000', quote: '79000000000' }],
    );
  });

  it('dispatches SwapEvent on the program: CPMM and CLMM layouts differ', () => {
    const pool = solanaAddress('cp:pool');
    const cpmmBytes = new Bytes()
      .hex('40c6cde8260871e2')
      .key(pool)
      .u64(50_000_000_000n)
      .u64(9_000_000_000_000n)
      .u64(1_000_000_000n)
      .u64(170_000_000_000n)
      .u64(0n)
      .u64(0n)
      .u8(1)
      .key(WSOL)
      .key(MINT)
      .u64(2_500_000n)
      .u64(0n)
      .u8(1)
      .done();
    const cpmmIx: HandIx = {
      program: CPMM,
      accounts: [USER, solanaAddress('c1'), solanaAddress('c2'), pool],
      data: Buffer.of(1),
    };
    const mintBalance: HandBalance = {
      account: solanaAddress('user-mint'),
      mint: MINT,
      owner: USER,
      decimals: 6,
      post: 170_000_000_000n,
    };
    const cp = decode(
      handTx({
        sig: sig('cpmm'),
        top: [cpmmIx],
        inner: [[eventCpi(CPMM, cpmmBytes)]],
        logs: [],
        balances: [mintBalance],
      }),
    );
    assert.deepEqual(
      [
        cp.swaps[0]!.dex,
        cp.swaps[0]!.side,
        cp.swaps[0]!.tokenAmount,
        cp.swaps[0]!.quoteAmount,
        cp.swaps[0]!.reserves,
        cp.swaps[0]!.fees,
        cp.swaps[0]!.trader,
      ],
      [
        'raydium-cpmm',
        'buy',
        '170000000000',
        '1000000000',
        { token: '8830000000000', quote: '51000000000' },
        { dex: '2500000', platform: '0', transaction: '5000' },
        USER,
      ],
    );

    const account0 = solanaAddress('cl:acc0');
    const account1 = solanaAddress('cl:acc1');
    const clmmBytes = new Bytes()
      .hex('40c6cde8260871e2')
      .key(pool)
      .key(USER)
      .key(account0)
      .key(account1)
      .u64(2_000_000_000n)
      .u64(0n)
      .u64(300_000_000n)
      .u64(0n)
      .u8(1)
      .u128(1n << 64n)
      .u128(123n)
      .i32(-5)
      .done();
    const cl = decode(
      handTx({
        sig: sig('clmm'),
        top: [{ program: CLMM, accounts: [USER, solanaAddress('k1'), pool], data: Buffer.of(2) }],
        logs: [`Program ${CLMM} invoke [1]`, `Program data: ${b64(clmmBytes)}`, `Program ${CLMM} success`],
        balances: [
          { account: account0, mint: WSOL, owner: USER, decimals: 9, pre: 2_000_000_000n, post: 0n },
          { account: account1, mint: USDC, owner: USER, decimals: 6, post: 300_000_000n },
        ],
      }),
    );
    // SOL→USDC (zero_for_one): SOL is the token priced in USDC, sold.
    assert.deepEqual(
      [
        cl.swaps[0]!.dex,
        cl.swaps[0]!.token,
        cl.swaps[0]!.quoteAsset,
        cl.swaps[0]!.side,
        cl.swaps[0]!.tokenAmount,
        cl.swaps[0]!.quoteAmount,
        cl.swaps[0]!.pool,
      ],
      ['raydium-clmm', WSOL, USDC, 'sell', '2000000000', '300000000', pool],
    );
  });

  it('decodes Meteora DBC EvtSwap, EvtSwap2 and EvtCurveComplete', () => {
    const pool = solanaAddress('dbc:pool');
    const config = solanaAddress('dbc:config');
    const dbcIx: HandIx = {
      program: DBC,
      accounts: [
        solanaAddress('d0'),
        config,
        pool,
        solanaAddress('d3'),
        solanaAddress('d4'),
        solanaAddress('d5'),
        solanaAddress('d6'),
        base,
        WSOL,
        USER,
      ],
      data: Buffer.of(1),
    };
    const swap1 = new Bytes()
      .hex('1b3c15d58aaabb93')
      .key(pool)
      .key(config)
      .u8(1)
      .u8(0)
      .u64(1_000_000_000n)
      .u64(0n)
      .u64(1_000_000_000n)
      .u64(35_000_000_000_000n)
      .u128(5n << 64n)
      .u64(10_000_000n)
      .u64(2_000_000n)
      .u64(0n)
      .u64(1_000_000_000n)
      .u64(1_771_000_000n)
      .done();
    const swap2 = new Bytes()
      .hex('bd4233a826507599')
      .key(pool)
      .key(config)
      .u8(0)
      .u8(0)
      .u64(35_000_000_000_000n)
      .u64(0n)
      .u8(0)
      .u64(35_000_000_000_000n)
      .u64(35_000_000_000_000n)
      .u64(0n)
      .u64(990_000_000n)
      .u128(5n << 64n)
      .u64(9_000_000n)
      .u64(1_000_000n)
      .u64(0n)
      .u64(21_000_000_000n)
      .u64(84_000_000_000n)
      .u64(1_771_000_000n)
      .done();
    const complete = new Bytes()
      .hex('e5e756549c864b18')
      .key(pool)
      .key(config)
      .u64(200_000_000_000_000n)
      .u64(84_000_000_000n)
      .done();
    const signature = sig('dbc');
    const { swaps, events } = decode(
      handTx({
        sig: signature,
        top: [dbcIx, dbcIx, dbcIx],
        inner: [[eventCpi(DBC, swap1)], [eventCpi(DBC, swap2)], [eventCpi(DBC, complete)]],
        logs: [],
        balances: [baseBalance],
      }),
    );
    assert.deepEqual(
      swaps.map((s) => [
        s.side,
        s.tokenAmount,
        s.quoteAmount,
        s.fees?.platform,
        s.curve?.progressPct ?? null,
        s.trader,
        s.dex,
      ]),
      [
        // Curve amounts before fees (docs/decoders.md): the buy's input less its fees, the
        // sell's output (fee taken on the quote output: included = excluded input) plus them.
        ['buy', '35000000000000', '988000000', '12000000', null, USER, 'meteora-dbc'],
        ['sell', '35000000000000', '1000000000', '10000000', '25', USER, 'meteora-dbc'],
      ],
    );
    assert.deepEqual(
      events.filter((e) => e.kind === 'curve'),
      [{ ...positionOf(signature, 2), kind: 'curve', token: base, progressPct: '100', complete: true }],
    );
  });
});

describe('transaction shapes', () => {
  it('resolves v0 loaded addresses and jsonParsed-like account keys', () => {
    const bytes = pumpTradeBytes(0);
    const signature = sig('v0');
    const tx = handTx({
      sig: signature,
      top: [pumpBuyIx()],
      inner: [[eventCpi(PUMP, bytes)]],
      logs: [],
      loaded: [FEE_RECIPIENT, CURVE],
    });
    tx.transaction.message.accountKeys = tx.transaction.message.accountKeys.map((key) => ({
      pubkey: key as string,
      signer: false,
      writable: true,
    }));
    assert.deepEqual(decode(tx).swaps, [expectedPumpSwap(signature, {})]);
  });

  it('decodeSolanaJson accepts a JSON-RPC response or a bare result', () => {
    const signature = sig('json');
    const tx = handTx({ sig: signature, top: [pumpBuyIx()], inner: [[eventCpi(PUMP, pumpTradeBytes(0))]], logs: [] });
    const wrapped = decodeSolanaJson(JSON.parse(JSON.stringify({ jsonrpc: '2.0', id: 1, result: tx })));
    assert.deepEqual(wrapped.swaps, [expectedPumpSwap(signature, {})]);
    assert.deepEqual(decodeSolanaJson(JSON.stringify(tx)), wrapped);
    assert.throws(() => decodeSolanaJson({ hello: 'world' }), TypeError);
  });
});
