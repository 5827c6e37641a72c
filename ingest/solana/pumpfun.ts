// pump.fun bonding-curve events → swaps and token lifecycle events (CHAINS.md §1.2).
import { fromInt, pct, decToString } from '../../core/decimal.ts';
import { decodeFields } from './borsh.ts';
import {
  DEFAULT_PUBKEY,
  DISC,
  PUMP_DECIMALS,
  PUMP_INITIAL_REAL_TOKEN_RESERVES,
  PUMP_TOTAL_SUPPLY,
  SOL_DECIMALS,
  WSOL_MINT,
} from './constants.ts';
import {
  PUMP_COMPLETE,
  PUMP_CREATE,
  PUMP_MIGRATION,
  PUMP_TRADE,
  type PumpCompleteEvent,
  type PumpCreateEvent,
  type PumpMigrationEvent,
  type PumpTradeEvent,
} from './layouts.ts';
import { pumpBondingCurve } from './pda.ts';
import type { SwapFields, TxRecords } from './records.ts';
import type { RawEvent } from './transaction.ts';

/** Curve % = (793.1e12 − real_token_reserves) / 793.1e12 · 100, exact, clamped to 0..100. */
export function pumpCurvePct(realTokenReserves: bigint): string {
  const sold = PUMP_INITIAL_REAL_TOKEN_RESERVES - realTokenReserves;
  if (sold <= 0n) return '0';
  if (realTokenReserves <= 0n) return '100';
  return decToString(pct(fromInt(sold), fromInt(PUMP_INITIAL_REAL_TOKEN_RESERVES)));
}

/** A pump coin's quote: SOL unless the May-2026 quote_mint names another mint (USDC pairs). */
function quoteMintOf(quoteMint: string | undefined): string {
  return quoteMint && quoteMint !== DEFAULT_PUBKEY ? quoteMint : WSOL_MINT;
}

function onTrade(records: TxRecords, t: PumpTradeEvent, event: RawEvent): void {
  const quoteAsset = quoteMintOf(t.quoteMint);
  const solQuoted = quoteAsset === WSOL_MINT;
  const quoteDecimals = solQuoted ? SOL_DECIMALS : records.decimalsOf(quoteAsset);
  if (quoteDecimals === null) throw new RangeError(`unknown decimals of quote mint ${quoteAsset}`);
  const quoteAmount = solQuoted ? t.solAmount : (t.quoteAmount ?? t.solAmount);
  const virtualQuote = solQuoted ? t.virtualSolReserves : (t.virtualQuoteReserves ?? t.virtualSolReserves);
  const realQuote = solQuoted ? t.realSolReserves : (t.realQuoteReserves ?? t.realSolReserves);
  // Fees the trader paid on top of (buy) or out of (sell) the curve amount. The 2026 buyback fee
  // is a share of the protocol fee already in `fee` (the buyer's total checks out without it).
  const platformFee = t.fee === undefined ? undefined : t.fee + (t.creatorFee ?? 0n);
  const fields: SwapFields = {
    token: t.mint,
    quoteAsset,
    tokenAmount: t.tokenAmount.toString(),
    tokenDecimals: PUMP_DECIMALS,
    quoteAmount: quoteAmount.toString(),
    quoteDecimals,
    side: t.isBuy ? 'buy' : 'sell',
    trader: t.user,
    pool: pumpBondingCurve(t.mint),
    dex: 'pumpfun',
    launchpad: 'pumpfun',
    reserves: { token: t.realTokenReserves.toString(), quote: realQuote.toString() },
    curve: {
      progressPct: pumpCurvePct(t.realTokenReserves),
      virtualTokenReserves: t.virtualTokenReserves.toString(),
      virtualQuoteReserves: virtualQuote.toString(),
      realTokenReserves: t.realTokenReserves.toString(),
      realQuoteReserves: realQuote.toString(),
      complete: t.realTokenReserves === 0n,
    },
  };
  if (platformFee !== undefined) fields.fees = { platform: platformFee.toString() };
  if (t.mayhemMode !== undefined) fields.mayhemMode = t.mayhemMode;
  records.swap(fields, t.timestamp, event);
}

function onCreate(records: TxRecords, c: PumpCreateEvent): void {
  records.tokenEvent(
    {
      kind: 'created',
      token: c.mint,
      name: c.name,
      symbol: c.symbol,
      uri: c.uri,
      decimals: PUMP_DECIMALS,
      supply: (c.tokenTotalSupply ?? PUMP_TOTAL_SUPPLY).toString(),
      creator: c.creator ?? c.user,
      launchpad: 'pumpfun',
      pool: c.bondingCurve,
      quoteAsset: quoteMintOf(c.quoteMint),
      ...(c.isMayhemMode === undefined ? {} : { mayhemMode: c.isMayhemMode }),
    },
    c.timestamp,
  );
}

export function decodePumpEvent(records: TxRecords, event: RawEvent): void {
  if (event.kind !== 'anchor') return;
  const disc = Buffer.from(event.bytes.subarray(0, 8)).toString('hex');
  const payload = event.bytes.subarray(8);
  switch (disc) {
    case DISC.pumpTrade:
      return onTrade(records, decodeFields(PUMP_TRADE, payload) as unknown as PumpTradeEvent, event);
    case DISC.pumpCreate:
      return onCreate(records, decodeFields(PUMP_CREATE, payload) as unknown as PumpCreateEvent);
    case DISC.pumpComplete: {
      const c = decodeFields(PUMP_COMPLETE, payload) as unknown as PumpCompleteEvent;
      return records.tokenEvent({ kind: 'curve', token: c.mint, progressPct: '100', complete: true }, c.timestamp);
    }
    case DISC.pumpMigration: {
      const m = decodeFields(PUMP_MIGRATION, payload) as unknown as PumpMigrationEvent;
      return records.tokenEvent({ kind: 'graduated', token: m.mint, pool: m.pool, dex: 'pumpswap' }, m.timestamp);
    }
  }
}
