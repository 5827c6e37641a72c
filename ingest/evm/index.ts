// Public surface of the EVM decoders (base, bsc, robinhood, arc) and their encoders.
export {
  createEvmDecoder,
  type EvmDecoder,
  type EvmDecoderDeps,
  type DecodedReceipt,
  type ReceiptInput,
  type TransferMode,
} from './decoder.ts';
export { decodeEvmJson, type DecodeEvmJsonOptions } from './json.ts';
export {
  createPoolRegistry,
  createTokenRegistry,
  type PoolRegistry,
  type PoolInfo,
  type EvmDex,
  type TokenInfoProvider,
  type TokenInfo,
} from './registry.ts';
export { unwrapReceipt, type EvmReceipt, type EvmLog, type EvmTransaction, type Quantity } from './receipt.ts';
export { EVENTS, TOPIC0, eventNameOfTopic, type EventName } from './abi.ts';
export { pickQuote, quoteRank } from './normalize.ts';
export { V2_FEE_PIPS } from './amm.ts';
export { EVM_CONTRACTS, FACTORY_DEX } from './contracts.ts';
export { FOURMEME, FOURMEME_CURVE_TOKENS, fourMemeProgressPct } from './fourmeme.ts';
export * from './encode.ts';
