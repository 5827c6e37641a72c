// Public surface of the Solana ingest: decoder, encoders (simulator, tests) and helpers.
export { createSolanaDecoder, decodeSolanaJson, DECODED_PROGRAMS } from './decoder.ts';
export type { SolanaDecoder, SolanaDecoderDeps, DecodedTransaction } from './decoder.ts';
export type { SolanaTransaction, RpcInstruction, RpcTokenBalance, RpcAccountKey } from './transaction.ts';
export { base58Encode, base58Decode } from './base58.ts';
export { solanaAddress, solanaSignature } from './address.ts';
export { findProgramAddress, pumpBondingCurve, isOnCurve } from './pda.ts';
export { PROGRAMS, DISC, WSOL_MINT, USDC_MINT, DEFAULT_PUBKEY, EVENT_IX_TAG } from './constants.ts';
export { pumpCurvePct } from './pumpfun.ts';
export { buildTransaction, emitEvent, eventCpiData } from './build.ts';
export type { SolanaCall, TokenBalanceSpec, BuildTransactionInput, EmitMode } from './build.ts';
export { encodeCalls, associatedTokenAddress, ceilFee } from './encode-common.ts';
export type { TxEnvelope, CallPart } from './encode-common.ts';
export {
  encodePumpTrade,
  encodePumpCreate,
  encodePumpComplete,
  encodePumpMigration,
  encodePumpSwapBuy,
  encodePumpSwapSell,
  pumpTradeCall,
  pumpCreateCall,
  pumpSwapBuyCall,
  pumpSwapSellCall,
  pumpTradeEvent,
  pumpTradeEventBytes,
} from './encode.ts';
export type {
  PumpTradeInput,
  PumpCreateInput,
  PumpCompleteInput,
  PumpMigrationInput,
  PumpSwapTradeInput,
} from './encode.ts';
export {
  encodeLaunchLabTrade,
  encodeMeteoraDbcSwap,
  encodeRaydiumAmmV4Swap,
  encodeRaydiumCpmmSwap,
  encodeRaydiumClmmSwap,
  launchLabCreateCall,
  launchLabMigrateToCpswapCall,
  launchLabTradeCall,
  meteoraDbcCreateCall,
  meteoraDbcSwapCall,
  raydiumAmmV4SwapCall,
  raydiumCpmmSwapCall,
  raydiumClmmSwapCall,
} from './encode-dex.ts';
export type {
  LaunchLabTradeInput,
  MeteoraDbcSwapInput,
  RaydiumAmmV4SwapInput,
  RaydiumCpmmSwapInput,
  RaydiumClmmSwapInput,
} from './encode-dex.ts';
export {
  PUMP_TRADE_LAYOUTS,
  PUMP_CREATE_LAYOUTS,
  PUMPSWAP_BUY_LAYOUTS,
  PUMPSWAP_SELL_LAYOUTS,
  CPMM_SWAP_LAYOUTS,
} from './layouts.ts';
export type { PumpTradeLayout, PumpCreateLayout, PumpSwapLayout } from './layouts.ts';
