// Resume of a spot.trades subscription: the trades after a cursor come from the log, then the
// live feed takes over partition by partition with no gap and no duplicate. Per partition the
// log reader covers [cursor, hand-over) and the live feed [hand-over, …); the hand-over is the
// feed's position at the moment the reader reaches it, both decided in one event-loop turn.
// The reader is a consumer of its own (no committed offsets), paced by the subscription's
// outbox so a resume never meets the unsent-frame limit and never holds up other sockets.
import crypto from 'node:crypto';
import { isChain, normalizeAddress, type Chain } from '../core/chains.ts';
import type { Context } from '../core/context.ts';
import type { EventLog } from '../core/eventlog/types.ts';
import type { Trade } from '../core/schemas.ts';
import { TOPICS, isTopicValue, type PricedTradeMessage } from '../core/topics.ts';
import { tradePosition } from './cursor.ts';
import type { TradesSpec } from './protocol.ts';
import type { CatchUp, Subscription } from './subscriptions.ts';
import { updateTail } from './update-frames.ts';

/** Messages a reader hands over per batch; small, so one batch never floods a socket. */
const READ_BATCH = 256;

/** Whether the live feed delivers the trade at `partition`/`offset` to a catching-up subscription. */
export function liveAccepts(catchUp: CatchUp, partition: number, offset: number): boolean {
  if (partition < 0) return true; // routed without a log (route()): nothing to hand over
  const from = catchUp.liveFrom[partition] ?? -1;
  return from >= 0 && offset >= from;
}

/** What the subscription has covered so far, per partition: its cursor position. */
export function coveredPositions(catchUp: CatchUp, feed: readonly number[]): number[] {
  return catchUp.liveFrom.map((from, p) => (from >= 0 ? Math.max(from, feed[p] ?? 0) : catchUp.readerAt[p]!));
}

/** True once every partition is live and the feed has passed every hand-over point. */
export function caughtUp(catchUp: CatchUp, feed: readonly number[]): boolean {
  return catchUp.liveFrom.every((from, p) => from >= 0 && (feed[p] ?? 0) >= from);
}

/** The `data` text of a trade for a subscription: the by-token form leaves out flags and platforms. */
export function tradeText(spec: TradesSpec, trade: Trade): string {
  if (spec.by !== 'token') return JSON.stringify(trade);
  const { flags: _flags, platforms: _platforms, ...byToken } = trade;
  return JSON.stringify(byToken);
}

/** The router's choice, as a predicate: does this trade reach a subscription with `spec`? */
export function tradeMatches(spec: TradesSpec, message: PricedTradeMessage): boolean {
  const trade = message.trade;
  const chain = trade.chain as Chain;
  if (spec.by === 'token') return spec.chain === chain && normalizeAddress(chain, trade.token) === spec.token;
  if (spec.by === 'wallet') return spec.chain === chain && normalizeAddress(chain, trade.trader) === spec.wallet;
  return message.identities.includes(spec.identity) && (spec.chains === null || spec.chains.includes(chain));
}

/**
 * spot.trades.v1 is keyed `chain:token` (the aggregator's tokenKey): a by-token resume skips
 * other tokens' messages without parsing them. A key of another shape is parsed and checked.
 */
function otherTokenByKey(spec: TradesSpec, key: string): boolean {
  if (spec.by !== 'token') return false;
  const split = key.indexOf(':');
  const chain = key.slice(0, split);
  if (split <= 0 || !isChain(chain)) return false;
  return chain !== spec.chain || normalizeAddress(chain, key.slice(split + 1)) !== spec.token;
}

export interface CatchUpDeps {
  log: EventLog;
  sub: Subscription & { spec: TradesSpec };
  /** The live feed's next offset per partition of spot.trades.v1 (read, never written, here). */
  feed: readonly number[];
  from: number[];
  /** Pushes one update (the caller counts and flushes). */
  deliver(sub: Subscription, tail: Buffer): void;
  /** Frames the subscription's connection holds unsent; the reader waits while this is high. */
  unsent(): number;
  /** Below this many unsent frames the reader goes on. */
  resumeBelow: number;
  /** The log no longer holds the start of the range. */
  onGap(): void;
  /** Readers running at once are capped per edge; a resume waits for a slot (gated, not refused). */
  slots: Slots;
}

export interface Slots {
  /** Resolves with the slot's release once one is free. */
  acquire(): Promise<() => void>;
}

/** At most `limit` holders at once; the others wait in arrival order. */
export function createSlots(limit: number): Slots {
  let free = limit;
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else free++;
  };
  return {
    acquire() {
      if (free > 0) {
        free--;
        return Promise.resolve(once(release));
      }
      return new Promise((resolve) => waiting.push(() => resolve(once(release))));
    },
  };
}

function once(fn: () => void): () => void {
  let called = false;
  return () => {
    if (called) return;
    called = true;
    fn();
  };
}

export interface CatchUpRun {
  /** Resolves when the subscription is live on every partition, was cancelled, or hit a gap. */
  done: Promise<void>;
  cancel(): void;
}

/** Starts the log reader for `deps.sub`; sets `sub.catchUp` until the hand-over is complete. */
export function startCatchUp(ctx: Context, deps: CatchUpDeps): CatchUpRun {
  const log = ctx.logger.child({ component: 'stream-resume' });
  const { sub, feed, from } = deps;
  const state: CatchUp = {
    liveFrom: from.map((offset, p) => (offset >= (feed[p] ?? 0) ? offset : -1)),
    readerAt: [...from],
  };
  sub.catchUp = state;
  const needed = () => state.liveFrom.some((f) => f < 0);
  if (!needed()) return { done: Promise.resolve(), cancel() {} };

  let cancelled = false;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const waitForRoom = async () => {
    while (!cancelled && !sub.outbox.closed && deps.unsent() >= deps.resumeBelow)
      await new Promise((r) => setTimeout(r, 5));
  };

  const run = async () => {
    const release = await deps.slots.acquire();
    try {
      if (!cancelled) await read();
    } finally {
      release();
    }
  };

  const read = async () => {
    const consumer = deps.log.consumer({
      group: `stream-resume-${crypto.randomUUID()}`,
      topics: [TOPICS.trades.name],
      start: 'earliest',
      commit: 'manual',
      maxBatchSize: READ_BATCH,
    });
    for (let p = 0; p < from.length; p++) {
      // Partitions already live are read from the feed's position and ignored.
      await consumer.seek(TOPICS.trades.name, p, state.liveFrom[p]! >= 0 ? (feed[p] ?? 0) : from[p]!);
    }
    const running = consumer.run(async (batch) => {
      const p = batch.partition;
      if (cancelled || sub.outbox.closed || state.liveFrom[p]! >= 0) return;
      const first = batch.messages[0];
      if (first && first.offset > state.readerAt[p]!) {
        cancelled = true;
        deps.onGap();
        finish();
        return;
      }
      for (const message of batch.messages) {
        if (message.offset < state.readerAt[p]!) continue;
        if (message.offset >= feed[p]!) break; // the live feed delivers from here
        state.readerAt[p] = message.offset + 1;
        if (otherTokenByKey(sub.spec, message.key)) continue;
        let value: unknown;
        try {
          value = JSON.parse(message.value);
        } catch {
          continue;
        }
        if (!isTopicValue(TOPICS.trades, value) || !tradeMatches(sub.spec, value)) continue;
        const position = tradePosition(coveredPositions(state, feed), Date.now());
        deps.deliver(sub, updateTail(tradeText(sub.spec, value.trade), position));
      }
      // Same turn as the check above: the feed has routed exactly [.., feed[p]) so far.
      if (state.readerAt[p]! >= feed[p]!) state.liveFrom[p] = feed[p]!;
      if (!needed()) {
        finish();
        return;
      }
      await waitForRoom();
    });
    running.catch((error) => {
      log.warn({ err: error }, 'resume reader stopped');
      finish();
    });
    await finished;
    await consumer.stop().catch(() => undefined);
  };

  const done = run().catch((error) => log.warn({ err: error }, 'resume reader failed'));
  return {
    done,
    cancel() {
      cancelled = true;
      finish();
    },
  };
}
