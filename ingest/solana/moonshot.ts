// Moonshot bonding curve: TradeEvent → swaps, token_mint → created, migrate_funds → curve complete (CHAINS.md §1.8; IDL in
// carbon's moonshot decoder). The event's amounts are the curve's; dex and helio fees are paid
// on top of a buy's collateral and out of a sell's, and reported apart.
import { decodeFields } from './borsh.ts';
import { DEFAULT_PUBKEY, DISC, IX, SOL_DECIMALS, WSOL_MINT } from './constants.ts';
import { MOONSHOT_TOKEN_MINT_PARAMS, MOONSHOT_TRADE, type MoonshotTradeEvent } from './layouts.ts';
import type { TxRecords } from './records.ts';
import type { Instruction, RawEvent } from './transaction.ts';

const discOf = (bytes: Uint8Array) => Buffer.from(bytes.subarray(0, 8)).toString('hex');

/** Buy/sell accounts: sender, sender_token_account, curve_account, curve_token_account, dex_fee, helio_fee, mint, … */
export function decodeMoonshotEvent(records: TxRecords, event: RawEvent): void {
  if (event.kind !== 'anchor' || discOf(event.bytes) !== DISC.moonshotTrade) return;
  const t = decodeFields(MOONSHOT_TRADE, event.bytes.subarray(8)) as unknown as MoonshotTradeEvent;
  const accounts = event.instruction?.accounts;
  if (!accounts || accounts.length < 7 || accounts[2] !== t.curve)
    throw new RangeError(`moonshot curve ${t.curve}: trade instruction accounts not found`);
  const mint = accounts[6]!;
  const tokenDecimals = records.decimalsOf(mint);
  const quoteAsset = t.costToken === DEFAULT_PUBKEY ? WSOL_MINT : t.costToken;
  const quoteDecimals = quoteAsset === WSOL_MINT ? SOL_DECIMALS : records.decimalsOf(quoteAsset);
  if (tokenDecimals === null || quoteDecimals === null) throw new RangeError(`moonshot ${mint}: unknown decimals`);
  records.swap(
    {
      token: mint,
      quoteAsset,
      tokenAmount: t.amount.toString(),
      tokenDecimals,
      quoteAmount: t.collateralAmount.toString(),
      quoteDecimals,
      side: t.tradeType === 0 ? 'buy' : 'sell',
      trader: t.sender,
      pool: t.curve,
      dex: 'moonshot',
      launchpad: 'moonshot',
      fees: { platform: (t.dexFee + t.helioFee).toString() },
    },
    undefined,
    event,
  );
}

/** token_mint accounts: sender, backend_authority, curve_account, mint, mint_metadata, curve_token_account, config, … */
export function decodeMoonshotInstruction(records: TxRecords, ix: Instruction): void {
  const disc = discOf(ix.data);
  // migrate_funds (backend_authority, migration_authority, curve_account, curve_token_account,
  // migration_authority_token_account, mint, …) ends the curve; the DEX pool is made later, elsewhere.
  if (disc === IX.moonshotMigrateFunds && ix.accounts.length > 5)
    return records.tokenEvent({ kind: 'curve', token: ix.accounts[5]!, progressPct: '100', complete: true });
  if (disc !== IX.moonshotTokenMint || ix.accounts.length < 7) return;
  const p = decodeFields(MOONSHOT_TOKEN_MINT_PARAMS, ix.data.subarray(8)) as {
    name: string;
    symbol: string;
    uri: string;
    decimals: number;
    collateralCurrency: number;
    amount: bigint;
  };
  records.tokenEvent({
    kind: 'created',
    token: ix.accounts[3]!,
    name: p.name,
    symbol: p.symbol,
    uri: p.uri,
    decimals: p.decimals,
    supply: p.amount.toString(),
    creator: ix.accounts[0]!,
    launchpad: 'moonshot',
    pool: ix.accounts[2]!,
    // CollateralCurrency 0 = SOL; other currencies are not named by the IDL's enum here.
    quoteAsset: p.collateralCurrency === 0 ? WSOL_MINT : null,
  });
}
