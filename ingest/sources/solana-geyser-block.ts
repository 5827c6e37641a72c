// A Yellowstone (Geyser) block message turned into the getBlock shape (json encoding, version 0)
// the block source checks and the decoders read: byte fields become base58 strings, u64 strings
// numbers, the "none" flags nulls. The mapping follows Solana's own json encoder (which the
// package ships as txEncode; test/solana-geyser-block.test.ts compares the two on a recorded message).
import {
  txErrDecode,
  type SubscribeUpdateBlock,
  type SubscribeUpdateTransactionInfo,
} from '@triton-one/yellowstone-grpc';
import { base58Encode } from '../solana/base58.ts';
import type { RpcInstruction, RpcTokenBalance, SolanaTransaction } from '../solana/transaction.ts';
import { MalformedAnswerError } from './json-rpc.ts';
import { checkBlock, type RpcBlock } from './solana-blocks.ts';

type Meta = NonNullable<SubscribeUpdateTransactionInfo['meta']>;
type ProtoTokenBalance = Meta['preTokenBalances'][number];

function u64(value: string, what: string): number {
  const parsed = Number(value);
  if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(parsed)) throw new MalformedAnswerError(`${what}: "${value}"`);
  return parsed;
}

/** Top-level instructions run at stack height 1; inner ones carry theirs (null on old ledgers). */
const instruction = (
  ix: { programIdIndex: number; accounts: Uint8Array; data: Uint8Array; stackHeight?: number | undefined },
  topLevel = false,
): RpcInstruction => ({
  programIdIndex: ix.programIdIndex,
  accounts: [...ix.accounts],
  data: base58Encode(ix.data),
  stackHeight: topLevel ? 1 : (ix.stackHeight ?? null),
});

function tokenBalance(balance: ProtoTokenBalance): RpcTokenBalance {
  const amount = balance.uiTokenAmount;
  if (!amount) throw new MalformedAnswerError('geyser: a token balance lacks its amount');
  return {
    accountIndex: balance.accountIndex,
    mint: balance.mint,
    // Solana's encoder leaves out what the protobuf holds as empty (older ledgers).
    ...(balance.owner ? { owner: balance.owner } : {}),
    ...(balance.programId ? { programId: balance.programId } : {}),
    uiTokenAmount: {
      amount: amount.amount,
      decimals: amount.decimals,
      uiAmount: amount.uiAmount === 0 ? null : amount.uiAmount,
      uiAmountString: amount.uiAmountString,
    },
  };
}

/** The transaction error as getTransaction shows it (bincode in the protobuf); the raw bytes if it cannot be read. */
function transactionError(err: Uint8Array): unknown {
  try {
    return txErrDecode.decode(err);
  } catch {
    return { undecoded: Buffer.from(err).toString('base64') };
  }
}

/** One Geyser transaction as the `transactions[]` entry of getBlock (json encoding). */
export function geyserTransaction(info: SubscribeUpdateTransactionInfo): Omit<SolanaTransaction, 'slot' | 'blockTime'> {
  const message = info.transaction?.message;
  const meta = info.meta;
  if (!info.transaction || !message?.header || !meta)
    throw new MalformedAnswerError('geyser: a transaction lacks message, header or meta');
  return {
    version: message.versioned ? 0 : 'legacy',
    transaction: {
      signatures: info.transaction.signatures.map(base58Encode),
      message: {
        header: {
          numRequiredSignatures: message.header.numRequiredSignatures,
          numReadonlySignedAccounts: message.header.numReadonlySignedAccounts,
          numReadonlyUnsignedAccounts: message.header.numReadonlyUnsignedAccounts,
        },
        accountKeys: message.accountKeys.map(base58Encode),
        recentBlockhash: base58Encode(message.recentBlockhash),
        instructions: message.instructions.map((ix) => instruction(ix, true)),
        ...(message.versioned
          ? {
              addressTableLookups: message.addressTableLookups.map((lookup) => ({
                accountKey: base58Encode(lookup.accountKey),
                writableIndexes: [...lookup.writableIndexes],
                readonlyIndexes: [...lookup.readonlyIndexes],
              })),
            }
          : {}),
      },
    },
    meta: {
      err: meta.err ? transactionError(meta.err.err) : null,
      fee: u64(meta.fee, 'geyser: fee'),
      preBalances: meta.preBalances.map((lamports) => u64(lamports, 'geyser: preBalances')),
      postBalances: meta.postBalances.map((lamports) => u64(lamports, 'geyser: postBalances')),
      innerInstructions: meta.innerInstructionsNone
        ? null
        : meta.innerInstructions.map((inner) => ({
            index: inner.index,
            instructions: inner.instructions.map((ix) => instruction(ix)),
          })),
      logMessages: meta.logMessagesNone ? null : meta.logMessages,
      preTokenBalances: meta.preTokenBalances.map(tokenBalance),
      postTokenBalances: meta.postTokenBalances.map(tokenBalance),
      loadedAddresses: {
        writable: meta.loadedWritableAddresses.map(base58Encode),
        readonly: meta.loadedReadonlyAddresses.map(base58Encode),
      },
    },
  };
}

/**
 * A Geyser block as getBlock answers it, checked like a fetched block. Vote transactions are left
 * out (no decoder reads them; they are most of a mainnet block); the others keep their block order.
 */
export function geyserBlock(update: SubscribeUpdateBlock): { slot: number; block: RpcBlock } {
  const slot = u64(update.slot, 'geyser: block slot');
  const transactions = update.transactions
    .filter((info) => !info.isVote)
    .sort((a, b) => u64(a.index, 'geyser: transaction index') - u64(b.index, 'geyser: transaction index'))
    .map(geyserTransaction);
  const block = {
    blockhash: update.blockhash,
    previousBlockhash: update.parentBlockhash,
    parentSlot: u64(update.parentSlot, `geyser: block ${slot} parentSlot`),
    blockTime: update.blockTime ? u64(update.blockTime.timestamp, `geyser: block ${slot} blockTime`) : null,
    transactions,
  };
  if (!block.blockhash || !block.previousBlockhash)
    throw new MalformedAnswerError(`geyser: block ${slot} lacks its hashes`);
  return { slot, block: checkBlock(block, slot) };
}
