// Outputs an aggregator instance computed for partitions it does not own (yet): kept until the
// owner's durable position passes them, re-emitted when this instance takes the partition over.
// Every sink is idempotent, so re-emitting what the previous owner also wrote is harmless.
import type { ProduceMessage } from '../core/eventlog/types.ts';
import type { Token } from '../core/schemas.ts';
import type { BalanceRow, CandleRow, TokenEventRow, TradeRow, WalletLabelRow } from '../clickhouse/types.ts';

/** What a flush writes, in the aggregator's order: the sinks, then the topics. */
export interface Outputs {
  trades: TradeRow[];
  candles: CandleRow[];
  tokens: Token[];
  tokenEvents: TokenEventRow[];
  labels: WalletLabelRow[];
  balances: BalanceRow[];
  /** Messages per output topic, in produce order. */
  messages: Map<string, ProduceMessage[]>;
}

export type SinkKind = Exclude<keyof Outputs, 'messages'>;

export function emptyOutputs(): Outputs {
  return { trades: [], candles: [], tokens: [], tokenEvents: [], labels: [], balances: [], messages: new Map() };
}

/** Positions are counts of processed input messages: every instance runs the same merge. */
interface Entry {
  position: number;
  outputs: Outputs;
  size: number;
}

/** Key that a later row of the same kind replaces (latest wins), or null to keep every row. */
const REPLACE_KEY: Record<SinkKind, (row: never) => string> = {
  trades: (r: TradeRow) => r.id,
  candles: (r: CandleRow) => `${r.chain}:${r.token}:${r.granularity}:${r.time}`,
  tokens: (r: Token) => `${r.chain}:${r.address}`,
  tokenEvents: (r: TokenEventRow) => r.id,
  labels: (r: WalletLabelRow) => `${r.chain}:${r.wallet}`,
  balances: (r: BalanceRow) => `${r.chain}:${r.token}:${r.wallet}`,
};

function latestByKey<T>(rows: T[], key: (row: T) => string): T[] {
  const map = new Map<string, T>();
  for (const row of rows) {
    const k = key(row);
    map.delete(k); // re-insert so the order is that of the latest version
    map.set(k, row);
  }
  return [...map.values()];
}

export interface Journal {
  /** Rows computed from the first `position` processed messages (an upper bound). */
  add(partition: number, position: number, kind: SinkKind, rows: unknown[]): void;
  addMessages(partition: number, position: number, topic: string, messages: ProduceMessage[]): void;
  /** Drops the entries the durable position covers. */
  trim(partition: number, durable: number): void;
  /** A partition's entries merged into one write (latest version per key); clear() them once written. */
  collect(partition: number, compactedTopics: ReadonlySet<string>): Outputs | null;
  size(partition: number): number;
  partitions(): number[];
  clear(partition: number): void;
  /** Every entry, for a file written beside the snapshot (v8-serialisable). */
  dump(): JournalDump;
  load(dump: JournalDump): void;
}

export type JournalDump = Array<[number, Array<{ position: number; outputs: Outputs; size: number }>]>;

export function createJournal(): Journal {
  const entries = new Map<number, Entry[]>();

  function entryFor(partition: number, position: number): Entry {
    let list = entries.get(partition);
    if (!list) entries.set(partition, (list = []));
    const last = list.at(-1);
    if (last && last.position === position) return last;
    const entry = { position, outputs: emptyOutputs(), size: 0 };
    list.push(entry);
    return entry;
  }

  return {
    add(partition, position, kind, rows) {
      const entry = entryFor(partition, position);
      (entry.outputs[kind] as unknown[]).push(...rows);
      entry.size += rows.length;
    },
    addMessages(partition, position, topic, messages) {
      const entry = entryFor(partition, position);
      let list = entry.outputs.messages.get(topic);
      if (!list) entry.outputs.messages.set(topic, (list = []));
      list.push(...messages);
      entry.size += messages.length;
    },
    trim(partition, durable) {
      const list = entries.get(partition);
      if (!list) return;
      let drop = 0;
      while (drop < list.length && list[drop]!.position <= durable) drop++;
      if (drop > 0) list.splice(0, drop);
    },
    collect(partition, compactedTopics) {
      const list = entries.get(partition);
      if (!list || list.length === 0) return null;
      const merged = emptyOutputs();
      for (const { outputs } of list) {
        for (const kind of Object.keys(REPLACE_KEY) as SinkKind[]) (merged[kind] as unknown[]).push(...outputs[kind]);
        for (const [topic, messages] of outputs.messages) {
          const into = merged.messages.get(topic) ?? [];
          into.push(...messages);
          merged.messages.set(topic, into);
        }
      }
      for (const kind of Object.keys(REPLACE_KEY) as SinkKind[]) {
        (merged[kind] as unknown[]) = latestByKey(merged[kind] as never[], REPLACE_KEY[kind]);
      }
      for (const [topic, messages] of merged.messages) {
        if (compactedTopics.has(topic)) merged.messages.set(topic, latestByKey(messages, (m) => m.key));
      }
      return merged;
    },
    partitions() {
      return [...entries].filter(([, list]) => list.length > 0).map(([p]) => p);
    },
    size(partition) {
      let total = 0;
      for (const entry of entries.get(partition) ?? []) total += entry.size;
      return total;
    },
    clear(partition) {
      entries.delete(partition);
    },
    dump() {
      return [...entries].filter(([, list]) => list.length > 0);
    },
    load(dump) {
      entries.clear();
      for (const [partition, list] of dump) entries.set(partition, list);
    },
  };
}
