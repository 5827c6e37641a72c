// What the chain writer produces: real chain records (a Solana getTransaction result, an EVM
// receipt with its transaction) or, for off-chain knowledge, a line of the labels file.
import type { Chain } from '../../core/chains.ts';
import type { TokenEvent } from '../../core/topics.ts';
import type { EvmReceipt, EvmTransaction } from '../evm/index.ts';
import { walletLabelEvent } from '../labels/import.ts';
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
    };

/**
 * A wallet label of the market: the labels-file line, and the walletLabel event the label import
 * makes of it, which the in-process path publishes as is.
 */
export function labelRecord(
  event: Extract<SimEvent, { type: 'walletLabel' }>,
  transactionHash: string,
  blockNumber: number,
  blockTime: number,
): ChainRecord {
  return {
    kind: 'label',
    chain: event.chain,
    wallet: event.wallet,
    labels: event.labels,
    name: event.name,
    time: blockTime,
    event: walletLabelEvent(
      { chain: event.chain, transactionHash, eventIndex: 0, blockNumber, blockTime },
      { wallet: event.wallet, labels: event.labels, name: event.name },
    ),
  };
}
