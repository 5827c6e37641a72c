// Public surface of the EVM decoders (base, bsc, robinhood, arc) and their encoders.
export {
  createEvmDecoder,
  type EvmDecoder,
} from './decoder.ts';
export { decodeEvmJson } from './json.ts';
export {
  createPoolRegistry,
  createTokenRegistry,
  type PoolRegistry,
  type PoolInfo,
  type EvmDex,
  type TokenInfoProvider,
} from './registry.ts';
export { type EvmReceipt, type EvmLog, type EvmTransaction } from './receipt.ts';
export { EVENTS, TOPIC0, eventNameOfTopic, type EventName } from './abi.ts';
export { pickQuote } from './normalize.ts';
export { V2_FEE_PIPS } from './amm.ts';
export { EVM_CONTRACTS, FACTORY_DEX } from './contracts.ts';
export { FOURMEME } from './fourmeme.ts';
export * from './encode.ts';
