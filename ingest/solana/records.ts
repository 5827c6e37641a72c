// Per-transaction record builder: token-balance lookups, positions (id, index, time) and the
// balance events that close a transaction.
import { tradeId } from '../../core/chains.ts';
import type { RawSwap, TokenEvent } from '../../core/topics.ts';
import { SOL_DECIMALS, USDC_MINT, WSOL_MINT } from './constants.ts';
import type { Instruction, RawEvent, RpcTokenBalance, SolanaTransaction } from './transaction.ts';

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
  /**
   * One trade per venue instruction: another kind of event of the same instruction and pool
   * (Meteora DBC logs EvtSwap and EvtSwap2 for one swap) completes the first record instead of
   * adding a trade. The trader is the wallet that signed: an event naming a non-signer (a router's
   * authority) is booked to the signer whose balance of the token moved, and the outer program
   * becomes `router`. `source` is the event the swap was read from.
   */
  swap(fields: SwapFields, eventSeconds?: bigint, source?: RawEvent): void;
  tokenEvent(fields: TokenEventFields, eventSeconds?: bigint): void;
  finish(): { swaps: RawSwap[]; events: TokenEvent[] };
}

export function createTxRecords(tx: SolanaTransaction, keys: string[]): TxRecords {
  return new TransactionRecords(tx, keys);
}

/** A class, not a closure object: one per transaction, so no per-call method closures. */
class TransactionRecords implements TxRecords {
  readonly feePayer: string;
  private readonly signature: string;
  private readonly accounts = new Map<string, TokenAccount>();
  private readonly decimals = new Map<string, number>([
    [WSOL_MINT, SOL_DECIMALS],
    [USDC_MINT, 6],
  ]);
  private readonly swaps: RawSwap[] = [];
  private readonly events: TokenEvent[] = [];
  private readonly tokensSeen = new Set<string>();
  private readonly poolTokens = new Map<string, string>();
  /** Swaps per venue instruction with the event kinds read for each; built on the first one. */
  private swapsByOrigin: Map<Instruction, { swap: RawSwap; kinds: string[] }[]> | null = null;
  private nextIndex = 0;

  constructor(
    private readonly tx: SolanaTransaction,
    private readonly keys: string[],
  ) {
    this.signature = tx.transaction.signatures[0] ?? '';
    this.feePayer = keys[0] ?? '';
    // Post first: balance events follow postTokenBalances order, then accounts closed by the tx.
    for (const balance of tx.meta?.postTokenBalances ?? []) this.note(balance, 'post');
    for (const balance of tx.meta?.preTokenBalances ?? []) this.note(balance, 'pre');
  }

  private note(balance: RpcTokenBalance, phase: 'pre' | 'post'): void {
    const address = this.keys[balance.accountIndex];
    if (!address) return;
    let entry = this.accounts.get(address);
    if (!entry) {
      entry = {
        mint: balance.mint,
        owner: balance.owner ?? null,
        decimals: balance.uiTokenAmount.decimals,
        pre: null,
        post: null,
      };
      this.accounts.set(address, entry);
    }
    entry[phase] = BigInt(balance.uiTokenAmount.amount);
    entry.owner ??= balance.owner ?? null;
    this.decimals.set(balance.mint, balance.uiTokenAmount.decimals);
  }

  private position(eventSeconds?: bigint) {
    const eventIndex = this.nextIndex++;
    // blockTime is null only for very old or unconfirmed data: fall back to the event's own clock.
    const seconds = this.tx.blockTime ?? (eventSeconds !== undefined && eventSeconds > 0n ? Number(eventSeconds) : 0);
    return {
      id: tradeId('solana', this.signature, eventIndex),
      chain: 'solana' as const,
      transactionHash: this.signature,
      eventIndex,
      blockNumber: this.tx.slot,
      blockTime: seconds * 1000,
    };
  }

  balanceOf(account: string): TokenAccount | null {
    return this.accounts.get(account) ?? null;
  }

  decimalsOf(mint: string): number | null {
    return this.decimals.get(mint) ?? null;
  }

  tokenOfPool(pool: string): string | null {
    return this.poolTokens.get(pool) ?? null;
  }

  // Object.assign onto the fresh position, not `{ ...a, ...b }`: V8 (Node 20) builds a new
  // hidden class for every property added after a leading spread, ~2 µs each.
  swap(fields: SwapFields, eventSeconds?: bigint, source?: RawEvent): void {
    const origin = source?.instruction ?? null;
    const kind = source ? Buffer.from(source.bytes.buffer, source.bytes.byteOffset, 8).toString('latin1') : '';
    const earlier = origin
      ? this.swapsByOrigin?.get(origin)?.find((entry) => entry.swap.pool === fields.pool && !entry.kinds.includes(kind))
      : undefined;
    if (earlier) {
      // The same trade told by another event: the later (richer) one completes the record, one trade.
      const { fees, ...rest } = fields;
      const swap = earlier.swap;
      Object.assign(swap, rest);
      const transaction = swap.fees?.transaction;
      if (fees) swap.fees = Object.assign({}, fees, transaction === undefined ? {} : { transaction });
      earlier.kinds.push(kind);
      this.attribute(swap, origin);
      return;
    }
    const record = Object.assign(this.position(eventSeconds), fields) as RawSwap;
    const meta = this.tx.meta;
    if (this.swaps.length === 0 && meta)
      record.fees = Object.assign({}, record.fees, { transaction: String(meta.fee) });
    this.attribute(record, origin);
    this.swaps.push(record);
    if (origin) {
      this.swapsByOrigin ??= new Map();
      const list = this.swapsByOrigin.get(origin);
      const entry = { swap: record, kinds: [kind] };
      if (list) list.push(entry);
      else this.swapsByOrigin.set(origin, [entry]);
    }
    this.tokensSeen.add(record.token);
    this.poolTokens.set(record.pool, record.token);
  }

  /** Trader = a signer (a router's authority named by the event is not one); router = the outer program. */
  private attribute(record: RawSwap, origin: Instruction | null): void {
    if (origin && origin.inner >= 0) {
      const outer = this.keys[this.tx.transaction.message.instructions[origin.top]?.programIdIndex ?? -1];
      if (outer && outer !== origin.programId) record.router = outer;
    }
    if (this.isSigner(record.trader)) return;
    record.trader = this.signerWhoseBalanceMoved(record.token) ?? record.trader;
  }

  /** jsonParsed keys say whether they signed; json keys sign when among the first numRequiredSignatures. */
  private isSigner(address: string): boolean {
    const message = this.tx.transaction.message;
    const keys = message.accountKeys;
    const count = message.header?.numRequiredSignatures ?? 1;
    for (let at = 0; at < keys.length; at++) {
      const key = keys[at]!;
      if (typeof key === 'string') {
        if (at >= count) return false;
        if (key === address) return true;
      } else if (key.pubkey === address) return key.signer === true;
    }
    return false;
  }

  private signerWhoseBalanceMoved(mint: string): string | null {
    for (const account of this.accounts.values()) {
      if (account.mint !== mint || !account.owner || !this.isSigner(account.owner)) continue;
      if ((account.pre ?? 0n) !== (account.post ?? 0n)) return account.owner;
    }
    return null;
  }

  tokenEvent(fields: TokenEventFields, eventSeconds?: bigint): void {
    // One graduation per token and pool: the launchpad's migration and the AMM's pool creation both say it.
    if (
      fields.kind === 'graduated' &&
      this.events.some((e) => e.kind === 'graduated' && e.token === fields.token && e.pool === fields.pool)
    )
      return;
    const record = Object.assign(this.position(eventSeconds), fields) as TokenEvent;
    if (record.kind === 'created') this.tokensSeen.add(record.token);
    this.events.push(record);
  }

  finish(): { swaps: RawSwap[]; events: TokenEvent[] } {
    // Absolute balances after the transaction, per owner and mint, for the tokens it traded.
    const totals = new Map<string, { mint: string; owner: string; amount: bigint }>();
    for (const account of this.accounts.values()) {
      if (!account.owner || !this.tokensSeen.has(account.mint)) continue;
      const key = `${account.mint}|${account.owner}`;
      const total = totals.get(key);
      const amount = account.post ?? 0n; // a closed account (pre only) now holds nothing
      if (total) total.amount += amount;
      else totals.set(key, { mint: account.mint, owner: account.owner, amount });
    }
    for (const total of totals.values()) {
      this.events.push(
        Object.assign(this.position(), {
          kind: 'balance' as const,
          token: total.mint,
          owner: total.owner,
          amount: total.amount.toString(),
        }),
      );
    }
    return { swaps: this.swaps, events: this.events };
  }
}
