// What the chain writer produces: real chain records (a Solana getTransaction result, an EVM
// receipt with its transaction) or, for off-chain knowledge, token events as they are.
import { tradeId, type Chain } from '../../core/chains.ts';
import type { TokenEvent } from '../../core/topics.ts';
import type { EvmReceipt, EvmTransaction } from '../evm/index.ts';
import type { SolanaTransaction } from '../solana/index.ts';
import type { EvmChain } from './addresses.ts';
import type { SimEvent } from './model.ts';

/** What an RPC source's resolver (eth_call decimals/name/symbol) would answer for a token. */
export interface TokenMetadata {
  address: string;
  decimals: number;
  name: string;
  symbol: string;
  /** totalSupply(), base units (what the simulator node answers to eth_call). */
  supply?: string;
}

export type ChainRecord =
  | { kind: 'solana'; chain: 'solana'; transaction: SolanaTransaction }
  | {
      kind: 'evm';
      chain: EvmChain;
      receipt: EvmReceipt;
      blockTimeMs: number;
      /** Present for plain value transfers (funding). */
      transaction?: EvmTransaction;
      /** Tokens the receipt touches whose metadata the source would resolve over RPC. */
      tokens: TokenMetadata[];
    }
  /** Off-chain knowledge: a line of the simulator's labels file, applied through the label import. */
  | {
      kind: 'label';
      chain: Chain;
      wallet: string;
      labels: string[];
      name: string | null;
      time: number;
      event: TokenEvent;
    }
  /** What the decoders cannot read yet (LaunchLab / Meteora DBC creation and migration): emitted as is. */
  | { kind: 'events'; chain: Chain; events: TokenEvent[] };

type PositionKey = 'id' | 'chain' | 'transactionHash' | 'eventIndex' | 'blockNumber' | 'blockTime';
export type EventFields = TokenEvent extends infer T ? (T extends unknown ? Omit<T, PositionKey> : never) : never;

/** A token event at eventIndex 0 of a (synthetic) transaction. */
export function directEvent(
  chain: Chain,
  transactionHash: string,
  blockNumber: number,
  blockTime: number,
  fields: EventFields,
): TokenEvent {
  return {
    id: tradeId(chain, transactionHash, 0),
    chain,
    transactionHash,
    eventIndex: 0,
    blockNumber,
    blockTime,
    ...fields,
  } as TokenEvent;
}

/** A wallet label of the market: the labels-file line, and the walletLabel event it stood for in-process. */
export function labelRecord(
  event: Extract<SimEvent, { type: 'walletLabel' }>,
  transactionHash: string,
  blockNumber: number,
  blockTime: number,
): ChainRecord {
  const fields = {
    kind: 'walletLabel',
    token: null,
    wallet: event.wallet,
    labels: event.labels,
    name: event.name,
  } as const;
  return {
    kind: 'label',
    chain: event.chain,
    wallet: event.wallet,
    labels: event.labels,
    name: event.name,
    time: blockTime,
    event: directEvent(event.chain, transactionHash, blockNumber, blockTime, fields),
  };
}
