// What a whole Solana block tells beyond the DEX events the decoder reads: plain SOL transfers
// (System program Transfer) fund wallets, and token balance changes of tracked mints in any
// transaction (wallet-to-wallet SPL transfers) keep holder balances exact. Input is a
// getBlock transaction with its slot and blockTime attached (the getTransaction shape).
import { tradeId } from '../../core/chains.ts';
import type { TokenEvent } from '../../core/topics.ts';
import type { IngestRecords } from '../publisher.ts';
import { base58Decode } from '../solana/base58.ts';
import type { SolanaCall } from '../solana/build.ts';
import { SYSTEM_PROGRAM, USDC_MINT, WSOL_MINT } from '../solana/constants.ts';
import { accountKeysOf, type SolanaTransaction } from '../solana/transaction.ts';

export const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
/** System program instruction tag of Transfer { lamports: u64 }. */
const SYSTEM_TRANSFER = 2;

export interface SolanaTransferExtractor {
  /** Funding and balance events for one transaction, numbered after what the decoder gave it. */
  extract(tx: SolanaTransaction, decoded: IngestRecords): TokenEvent[];
}

export interface SolanaTransferOptions {
  /** Smaller SOL transfers are not funding (dust, tips): default 0.01 SOL. */
  minFundingLamports?: bigint;
  /** Mints whose balances are followed in every transaction: those seen traded or created, newest kept. */
  maxTrackedMints?: number;
}

/** The lamports of a System Transfer instruction, or null when `data` is another instruction. */
export function systemTransferLamports(data: Uint8Array): bigint | null {
  if (data.length !== 12) return null;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  return view.getUint32(0, true) === SYSTEM_TRANSFER ? view.getBigUint64(4, true) : null;
}

/** A System Transfer call (what a wallet sending SOL signs), for the encoders of whole blocks. */
export function systemTransferCall(from: string, to: string, lamports: bigint): SolanaCall {
  const data = Buffer.alloc(12);
  data.writeUInt32LE(SYSTEM_TRANSFER, 0);
  data.writeBigUInt64LE(lamports, 4);
  return { programId: SYSTEM_PROGRAM, accounts: [from, to], data };
}

export function createSolanaTransferExtractor(options: SolanaTransferOptions = {}): SolanaTransferExtractor {
  const minFunding = options.minFundingLamports ?? 10_000_000n;
  const maxTracked = options.maxTrackedMints ?? 100_000;
  const tracked = new Set<string>();

  function track(mint: string): void {
    // Quote assets move in every swap: their holders are not what the figures count.
    if (tracked.has(mint) || mint === WSOL_MINT || mint === USDC_MINT) return;
    tracked.add(mint);
    if (tracked.size > maxTracked) tracked.delete(tracked.values().next().value as string);
  }

  /** A transaction of System transfers only (compute-budget settings aside): a wallet sending SOL. */
  function plainTransfers(
    tx: SolanaTransaction,
    keys: string[],
  ): Array<{ from: string; to: string; lamports: bigint }> {
    const out: Array<{ from: string; to: string; lamports: bigint }> = [];
    for (const ix of tx.transaction.message.instructions) {
      const program = keys[ix.programIdIndex];
      if (program === COMPUTE_BUDGET_PROGRAM) continue;
      if (program !== SYSTEM_PROGRAM) return [];
      const lamports = systemTransferLamports(base58Decode(ix.data));
      const from = keys[ix.accounts[0] ?? -1];
      const to = keys[ix.accounts[1] ?? -1];
      if (lamports === null || !from || !to) return [];
      if (lamports >= minFunding) out.push({ from, to, lamports });
    }
    return out;
  }

  return {
    extract(tx, decoded) {
      for (const swap of decoded.swaps) track(swap.token);
      for (const event of decoded.events) if (event.kind === 'created') track(event.token);
      const meta = tx.meta;
      if (!meta || (meta.err !== null && meta.err !== undefined)) return [];
      const signature = tx.transaction.signatures[0];
      if (!signature) return [];
      const keys = accountKeysOf(tx);
      let index = 0;
      for (const record of [...decoded.swaps, ...decoded.events]) index = Math.max(index, record.eventIndex + 1);
      const blockTime = (tx.blockTime ?? 0) * 1000;
      const at = () => {
        const eventIndex = index++;
        return {
          id: tradeId('solana', signature, eventIndex),
          chain: 'solana' as const,
          transactionHash: signature,
          eventIndex,
          blockNumber: tx.slot,
          blockTime,
        };
      };
      const out: TokenEvent[] = [];
      for (const transfer of plainTransfers(tx, keys)) {
        out.push({
          ...at(),
          kind: 'funding',
          token: null,
          from: transfer.from,
          to: transfer.to,
          amount: transfer.lamports.toString(),
          fromLabel: null,
        });
      }
      // Balances the decoder already reported (the tokens it saw traded) are not repeated.
      const reported = new Set<string>();
      for (const event of decoded.events) if (event.kind === 'balance') reported.add(`${event.token}|${event.owner}`);
      const totals = new Map<string, { mint: string; owner: string; pre: bigint; post: bigint }>();
      const add = (phase: 'pre' | 'post', balances: typeof meta.postTokenBalances) => {
        for (const balance of balances ?? []) {
          if (!balance.owner || !tracked.has(balance.mint)) continue;
          const key = `${balance.mint}|${balance.owner}`;
          if (reported.has(key)) continue;
          const total = totals.get(key) ?? { mint: balance.mint, owner: balance.owner, pre: 0n, post: 0n };
          total[phase] += BigInt(balance.uiTokenAmount.amount);
          totals.set(key, total);
        }
      };
      add('post', meta.postTokenBalances);
      add('pre', meta.preTokenBalances);
      for (const total of totals.values()) {
        if (total.pre === total.post) continue;
        out.push({ ...at(), kind: 'balance', token: total.mint, owner: total.owner, amount: total.post.toString() });
      }
      return out;
    },
  };
}
