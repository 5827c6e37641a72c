// Public surface of the Solana ingest: decoder, encoders (simulator, tests) and helpers.
export { createSolanaDecoder, decodeSolanaJson } from './decoder.ts';
export type { SolanaDecoder } from './decoder.ts';
export type { SolanaTransaction, RpcTokenBalance } from './transaction.ts';
export { base58Encode, base58Decode } from './base58.ts';
export { solanaAddress, solanaSignature } from './address.ts';
export { findProgramAddress, pumpBondingCurve } from './pda.ts';
export { PROGRAMS, WSOL_MINT, USDC_MINT } from './constants.ts';
export { buildTransaction, emitEvent } from './build.ts';
export type { TokenBalanceSpec, EmitMode } from './build.ts';
export { encodeCalls, associatedTokenAddress } from './encode-common.ts';
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
} from './encode.ts';
export {
  encodeLaunchLabTrade,
  encodeMeteoraDammV2Swap,
  encodeMeteoraDbcSwap,
  encodeRaydiumAmmV4Swap,
  encodeRaydiumCpmmSwap,
  encodeRaydiumClmmSwap,
  launchLabCreateCall,
  launchLabMigrateToCpswapCall,
  launchLabTradeCall,
  meteoraDammV2SwapCall,
  meteoraDbcCreateCall,
  meteoraDbcMigrateDammV2Call,
  meteoraDbcSwapCall,
  raydiumCpmmSwapCall,
} from './encode-dex.ts';
export { PUMP_TRADE_LAYOUTS } from './layouts.ts';
export type { PumpTradeLayout, PumpCreateLayout, PumpSwapLayout } from './layouts.ts';
export type { DammV2Events } from './encode-dex.ts';
