// Per-transaction record builder: token-balance lookups, positions (id, index, time) and the
// balance events that close a transaction.
import { tradeId } from '../../core/chains.ts';
import type { RawSwap, TokenEvent } from '../../core/topics.ts';
import { SOL_DECIMALS, USDC_MINT, WSOL_MINT } from './constants.ts';
import type { RpcTokenBalance, SolanaTransaction } from './transaction.ts';

type PositionKey = 'id' | 'chain' | 'transactionHash' | 'eventIndex' | 'blockNumber' | 'blockTime';
type WithoutPosition<T> = T extends unknown ? Omit<T, PositionKey> : never;
export type SwapFields = WithoutPosition<RawSwap>;
export type TokenEventFields = WithoutPosition<TokenEvent>;

export interface TokenAccount {
  mint: string;
  owner: string | null;
  decimals: number;
  pre: bigint | null;
  post: bigint | null;
}

export interface TxRecords {
  readonly feePayer: string;
  balanceOf(account: string): TokenAccount | null;
  /** Decimals of a mint from the transaction's token balances, or the known SOL/USDC ones. */
  decimalsOf(mint: string): number | null;
  /** Token of the latest swap on a pool in this transaction (for events that name only the pool). */
  tokenOfPool(pool: string): string | null;
  swap(fields: SwapFields, eventSeconds?: bigint): void;
  tokenEvent(fields: TokenEventFields, eventSeconds?: bigint): void;
  finish(): { swaps: RawSwap[]; events: TokenEvent[] };
}

export function createTxRecords(tx: SolanaTransaction, keys: string[]): TxRecords {
  const signature = tx.transaction.signatures[0] ?? '';
  const accounts = new Map<string, TokenAccount>();
  const decimals = new Map<string, number>([[WSOL_MINT, SOL_DECIMALS], [USDC_MINT, 6]]);
  const note = (balance: RpcTokenBalance, phase: 'pre' | 'post') => {
    const address = keys[balance.accountIndex];
    if (!address) return;
    const entry = accounts.get(address) ?? { mint: balance.mint, owner: balance.owner ?? null, decimals: balance.uiTokenAmount.decimals, pre: null, post: null };
    entry[phase] = BigInt(balance.uiTokenAmount.amount);
    entry.owner ??= balance.owner ?? null;
    accounts.set(address, entry);
    decimals.set(balance.mint, balance.uiTokenAmount.decimals);
  };
  // Post first: balance events follow postTokenBalances order, then accounts closed by the tx.
  for (const balance of tx.meta?.postTokenBalances ?? []) note(balance, 'post');
  for (const balance of tx.meta?.preTokenBalances ?? []) note(balance, 'pre');

  const swaps: RawSwap[] = [];
  const events: TokenEvent[] = [];
  const tokensSeen = new Set<string>();
  const poolTokens = new Map<string, string>();
  let nextIndex = 0;

  const position = (eventSeconds?: bigint) => {
    const eventIndex = nextIndex++;
    // blockTime is null only for very old or unconfirmed data: fall back to the event's own clock.
    const seconds = tx.blockTime ?? (eventSeconds !== undefined && eventSeconds > 0n ? Number(eventSeconds) : 0);
    return {
      id: tradeId('solana', signature, eventIndex),
      chain: 'solana' as const,
      transactionHash: signature,
      eventIndex,
      blockNumber: tx.slot,
      blockTime: seconds * 1000,
    };
  };

  return {
    feePayer: keys[0] ?? '',
    balanceOf: (account) => accounts.get(account) ?? null,
    decimalsOf: (mint) => decimals.get(mint) ?? null,
    tokenOfPool: (pool) => poolTokens.get(pool) ?? null,
    swap(fields, eventSeconds) {
      const record = { ...position(eventSeconds), ...fields } as RawSwap;
      if (swaps.length === 0 && tx.meta) record.fees = { ...record.fees, transaction: String(tx.meta.fee) };
      swaps.push(record);
      tokensSeen.add(record.token);
      poolTokens.set(record.pool, record.token);
    },
    tokenEvent(fields, eventSeconds) {
      const record = { ...position(eventSeconds), ...fields } as TokenEvent;
      if (record.kind === 'created') tokensSeen.add(record.token);
      events.push(record);
    },
    finish() {
      // Absolute balances after the transaction, per owner and mint, for the tokens it traded.
      const totals = new Map<string, { mint: string; owner: string; amount: bigint }>();
      for (const account of accounts.values()) {
        if (!account.owner || !tokensSeen.has(account.mint)) continue;
        const key = `${account.mint}|${account.owner}`;
        const total = totals.get(key) ?? { mint: account.mint, owner: account.owner, amount: 0n };
        total.amount += account.post ?? 0n; // a closed account (pre only) now holds nothing
        totals.set(key, total);
      }
      for (const total of totals.values()) {
        events.push({ ...position(), kind: 'balance', token: total.mint, owner: total.owner, amount: total.amount.toString() });
      }
      return { swaps, events };
    },
  };
}
