// The spot.discovery channel: the boards of POST /v1/discovery, ranked by the same code (the hot
// views' discovery index) on a fixed beat. A subscription's first update is the whole ranked set
// of each requested column (the REST body); each later beat sends only what changed since the
// last update: items that entered, moved or changed, and `rank: null` for those that left.
// Ranking is on a timer, not per token message: a board is a screen, and a busy chain changes
// tokens thousands of times a second.
import crypto from 'node:crypto';
import type { Column } from '../core/schemas.ts';
import type { DiscoveryIndex } from '../query-api/discovery.ts';
import type { DiscoverySpec } from './protocol.ts';
import type { Subscription } from './subscriptions.ts';

/** Conflation: a board is ranked and its delta sent at most once per this many ms. */
export const DISCOVERY_INTERVAL_MS = 1000;

export type DiscoverySubscription = Subscription & { spec: DiscoverySpec };

interface RankedItem {
  chain: string;
  address: string;
  rank: number;
  data: unknown;
}

/** Per column, `chain:address` -> rank and a digest of the token JSON as last sent (not the JSON: memory). */
type Board = Map<Column, Map<string, { rank: number; digest: string }>>;

const digestOf = (text: string) => crypto.createHash('sha1').update(text).digest('base64');

export interface DiscoveryChannel {
  /** The whole ranked set now: the subscription's first update (`data` JSON text). */
  first(sub: DiscoverySubscription): string;
  /** The delta since the last update of `sub`, or null when nothing changed. */
  delta(sub: DiscoverySubscription): string | null;
  /** Starts a beat: boards ranked from here on are shared by subscriptions with equal filters. */
  beat(): void;
  remove(sub: DiscoverySubscription): void;
}

export function createDiscoveryChannel(deps: { discovery: DiscoveryIndex; now: () => number }): DiscoveryChannel {
  const boards = new WeakMap<DiscoverySubscription, Board>();
  // One ranking per distinct filter set per beat, however many subscriptions share it; a board
  // (immutable once made) is shared by them too.
  let ranked = new Map<
    string,
    { text: string; columns: Array<{ column: Column; deltas: RankedItem[] }>; board: Board }
  >();

  const rank = (spec: DiscoverySpec) => {
    const key = JSON.stringify(spec);
    let result = ranked.get(key);
    if (!result) {
      const text = deps.discovery.rank(spec.chains, spec.columns, deps.now()).toString('utf8');
      const body = JSON.parse(text) as { columns: Array<{ column: Column; deltas: RankedItem[] }> };
      result = { text, columns: body.columns, board: boardOf(body.columns) };
      ranked.set(key, result);
    }
    return result;
  };

  const boardOf = (columns: Array<{ column: Column; deltas: RankedItem[] }>): Board => {
    const board: Board = new Map();
    for (const { column, deltas } of columns) {
      const items = new Map<string, { rank: number; digest: string }>();
      for (const item of deltas)
        items.set(`${item.chain}:${item.address}`, { rank: item.rank, digest: digestOf(JSON.stringify(item.data)) });
      board.set(column, items);
    }
    return board;
  };

  return {
    first(sub) {
      // Outside a beat: rank now, not from a board of an earlier moment.
      ranked.delete(JSON.stringify(sub.spec));
      const { text, board } = rank(sub.spec);
      boards.set(sub, board);
      return text;
    },
    beat() {
      ranked = new Map();
    },
    delta(sub) {
      const previous = boards.get(sub);
      const { columns, board: next } = rank(sub.spec);
      boards.set(sub, next);
      let changed = false;
      const out: string[] = [];
      for (const { column, deltas } of columns) {
        const before = previous?.get(column) ?? new Map();
        const now = next.get(column)!;
        const items: string[] = [];
        for (const item of deltas) {
          const key = `${item.chain}:${item.address}`;
          const was = before.get(key);
          if (was && was.rank === item.rank && was.digest === now.get(key)!.digest) continue;
          items.push(JSON.stringify(item));
        }
        for (const key of before.keys()) {
          if (now.has(key)) continue;
          const split = key.indexOf(':');
          items.push(
            `{"chain":${JSON.stringify(key.slice(0, split))},"address":${JSON.stringify(key.slice(split + 1))},"rank":null,"data":null}`,
          );
        }
        if (items.length) changed = true;
        out.push(`{"column":"${column}","deltas":[${items.join(',')}]}`);
      }
      return changed ? `{"columns":[${out.join(',')}]}` : null;
    },
    remove(sub) {
      boards.delete(sub);
    },
  };
}
