// The label import: a labels file (format.ts) becomes, per wallet, one entry on the compacted
// spot.labels.v1 (the wallet's labels by source) and one walletLabel token event, which the
// aggregator applies live as it always has. Labels of a wallet are the union over the lists that
// name it; importing a list again replaces that list's labels of the wallets it names.
//
// Nothing half-applied: the whole file is parsed first; bad lines are reported and skipped; the
// good ones go out in one publish after every record passed its schema check. Re-importing the
// same file gives the same event ids (chain:labels-<digest>:<n>), so a retried import is idempotent.
import { createHash } from 'node:crypto';
import { tokenKey, tradeId, type Chain } from '../../core/chains.ts';
import type { Context } from '../../core/context.ts';
import type { EventLog } from '../../core/eventlog/types.ts';
import { assertTopicValue, TOPICS, type TokenEvent, type WalletLabelEntry } from '../../core/topics.ts';
import type { IngestPublisher } from '../publisher.ts';
import { parseLabels, type LabelFormat, type LabelLineError } from './format.ts';

export interface LabelImportResult {
  /** Good lines applied. */
  lines: number;
  /** Wallets whose labels were (re)published. */
  wallets: number;
  errors: LabelLineError[];
}

export interface LabelImportOptions {
  format: LabelFormat;
  /** Where the text came from (file name or URL): the source of lines without a source column. */
  origin: string;
  /** Block time of the walletLabel events, unix ms; default now. */
  at?: number;
  /** A feed importing every second (the simulator's) logs each import at debug; default info. */
  logLevel?: 'info' | 'debug';
}

export interface LabelImporter {
  importText(text: string, options: LabelImportOptions): Promise<LabelImportResult>;
}

/** Where a walletLabel event sits: the import's digest of its text, or the simulator's labels line. */
export interface LabelEventPosition {
  chain: Chain;
  transactionHash: string;
  eventIndex: number;
  blockNumber: number;
  blockTime: number;
}

/** The walletLabel token event of a wallet's labels; the one place it is built. */
export function walletLabelEvent(
  position: LabelEventPosition,
  label: { wallet: string; labels: string[]; name: string | null },
): TokenEvent {
  return {
    id: tradeId(position.chain, position.transactionHash, position.eventIndex),
    ...position,
    kind: 'walletLabel',
    token: null,
    ...label,
  };
}

function sameLabels(a: WalletLabelEntry, b: WalletLabelEntry): boolean {
  return (
    a.name === b.name &&
    JSON.stringify(a.sources, Object.keys(a.sources).sort()) ===
      JSON.stringify(b.sources, Object.keys(b.sources).sort())
  );
}

export function createLabelImporter(
  ctx: Context,
  deps: { log: EventLog; publisher: Pick<IngestPublisher, 'publish'> },
): LabelImporter {
  const logger = ctx.logger.child({ component: 'label-import' });
  /** Current entries by chain:wallet, read once from the compacted topic (labelled wallets only). */
  let entries: Map<string, WalletLabelEntry> | null = null;
  let queue: Promise<unknown> = Promise.resolve();

  async function load(): Promise<Map<string, WalletLabelEntry>> {
    if (entries) return entries;
    const loaded = new Map<string, WalletLabelEntry>();
    await deps.log.readToEnd(TOPICS.labels.name, (message) => {
      loaded.set(message.key, JSON.parse(message.value) as WalletLabelEntry);
    });
    entries = loaded;
    return loaded;
  }

  async function importOnce(text: string, options: LabelImportOptions): Promise<LabelImportResult> {
    const parsed = parseLabels(text, options.format);
    for (const error of parsed.errors) logger.warn({ origin: options.origin, ...error }, 'label line skipped');
    const current = await load();
    const at = options.at ?? Date.now();
    // The lines grouped by wallet and source: a source's labels of a wallet are replaced as a whole.
    const bySource = new Map<
      string,
      { chain: Chain; wallet: string; name: string | null; sources: Map<string, Set<string>> }
    >();
    for (const line of parsed.lines) {
      const key = tokenKey(line.chain, line.address);
      const group = bySource.get(key) ?? { chain: line.chain, wallet: line.address, name: null, sources: new Map() };
      const source = line.source ?? options.origin;
      const labels = group.sources.get(source) ?? new Set<string>();
      labels.add(line.label);
      group.sources.set(source, labels);
      group.name = line.name ?? group.name;
      bySource.set(key, group);
    }
    const digest = createHash('sha256').update(text).digest('hex').slice(0, 16);
    const transactionHash = `labels-${digest}`;
    const next: WalletLabelEntry[] = [];
    const events: TokenEvent[] = [];
    for (const [key, group] of bySource) {
      const previous = current.get(key);
      const sources: Record<string, string[]> = { ...(previous?.sources ?? {}) };
      for (const [source, labels] of group.sources) sources[source] = [...labels].sort();
      const labels = [...new Set(Object.values(sources).flat())].sort();
      const entry: WalletLabelEntry = {
        chain: group.chain,
        wallet: group.wallet,
        labels,
        name: group.name ?? previous?.name ?? null,
        sources,
        updatedAt: at,
      };
      // Unchanged wallets (the same list imported again) are not republished.
      if (previous && sameLabels(previous, entry)) continue;
      assertTopicValue(TOPICS.labels, entry);
      next.push(entry);
      const eventIndex = events.length;
      events.push(
        walletLabelEvent(
          { chain: group.chain, transactionHash, eventIndex, blockNumber: 0, blockTime: at },
          { wallet: group.wallet, labels, name: entry.name },
        ),
      );
      assertTopicValue(TOPICS.tokenEvents, events[eventIndex]);
    }
    if (next.length > 0) {
      // The entries first: if the events never make it, importing again republishes them.
      await deps.log.produce(
        TOPICS.labels.name,
        next.map((entry) => ({
          key: tokenKey(entry.chain, entry.wallet),
          value: JSON.stringify(entry),
          timestamp: at,
        })),
      );
      await deps.publisher.publish({ swaps: [], events });
      for (const entry of next) current.set(tokenKey(entry.chain, entry.wallet), entry);
    }
    ctx.metrics.inc('ingest.labels.lines', parsed.lines.length);
    ctx.metrics.inc('ingest.labels.bad_lines', parsed.errors.length);
    logger[options.logLevel ?? 'info'](
      { origin: options.origin, lines: parsed.lines.length, wallets: next.length, skipped: parsed.errors.length },
      'labels imported',
    );
    return { lines: parsed.lines.length, wallets: next.length, errors: parsed.errors };
  }

  return {
    // One import at a time: each merges onto what the previous one applied.
    importText(text, options) {
      const run = queue.then(() => importOnce(text, options));
      queue = run.catch(() => undefined);
      return run;
    },
  };
}
