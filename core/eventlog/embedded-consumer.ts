// Consumers of the embedded log. Members of one group in this process share its partitions
// (round-robin per topic); a partition changes hands only after its owner finished the batch in
// flight and released it, so two members never work on one partition at once.
// Commits of delivered batches are gathered and written in one transaction (each commit alone is
// a WAL write of a whole page): at most COMMIT_EVERY_MS apart, also when the consumer went idle
// (a timer, not a commit per idle pass: live traffic idles after nearly every batch, and those
// commits were ~80% of the log's write transactions), and at once when a partition is released,
// committed() is read or the consumer stops.
import type { Logger } from '../logger.ts';
import { createSlicer, slicersWaiting, waitForTurn } from '../slices.ts';
import type { Batch, Consumer, ConsumerOptions, TopicPartition } from './types.ts';
import type { CommitPosition, EmbeddedStore, TopicMeta } from './embedded-store.ts';
import type { Notifier } from './notifier.ts';

const DEFAULT_MAX_BATCH = 1000;
const COMMIT_EVERY_MS = 100;

interface Member {
  id: number;
  topics: string[];
  wake(): void;
}

interface Group {
  members: Member[];
  /** `topic/partition` -> member id currently working on it. */
  owners: Map<string, number>;
  /** Counts joins, leaves and releases: the only events that change what a member may hold. */
  changes: number;
}

export interface GroupCoordinator {
  join(group: string, member: Member): void;
  leave(group: string, member: Member): void;
  /** Changes to the group's members and owners so far; unchanged, a settled member's partitions stand. */
  changes(group: string): number;
  /** Partitions `member` should hold now (round-robin over the group's subscribers of each topic). */
  target(group: string, member: Member, partitionsOf: (topic: string) => number): TopicPartition[];
  claim(group: string, member: Member, tp: TopicPartition): boolean;
  release(group: string, member: Member, tp: TopicPartition): void;
}

const tpKey = (tp: TopicPartition) => `${tp.topic}/${tp.partition}`;

export function createGroupCoordinator(): GroupCoordinator {
  const groups = new Map<string, Group>();
  const wakeAll = (group: Group) => group.members.forEach((m) => m.wake());
  return {
    join(name, member) {
      let group = groups.get(name);
      if (!group) groups.set(name, (group = { members: [], owners: new Map(), changes: 0 }));
      group.members.push(member);
      group.changes++;
      wakeAll(group);
    },
    leave(name, member) {
      const group = groups.get(name);
      if (!group) return;
      group.members = group.members.filter((m) => m !== member);
      group.changes++;
      for (const [key, owner] of group.owners) if (owner === member.id) group.owners.delete(key);
      if (group.members.length === 0) groups.delete(name);
      else wakeAll(group);
    },
    changes: (name) => groups.get(name)?.changes ?? -1,
    target(name, member, partitionsOf) {
      const group = groups.get(name);
      if (!group) return [];
      const wanted: TopicPartition[] = [];
      for (const topic of member.topics) {
        const subscribers = group.members.filter((m) => m.topics.includes(topic));
        const slot = subscribers.indexOf(member);
        const count = partitionsOf(topic);
        for (let p = slot; p < count; p += subscribers.length) wanted.push({ topic, partition: p });
      }
      return wanted;
    },
    claim(name, member, tp) {
      const owners = groups.get(name)?.owners;
      if (!owners) return false;
      const owner = owners.get(tpKey(tp));
      if (owner !== undefined && owner !== member.id) return false;
      owners.set(tpKey(tp), member.id);
      return true;
    },
    release(name, member, tp) {
      const group = groups.get(name);
      if (!group || group.owners.get(tpKey(tp)) !== member.id) return;
      group.owners.delete(tpKey(tp));
      group.changes++;
      wakeAll(group);
    },
  };
}

export interface EmbeddedConsumerDeps {
  store: EmbeddedStore;
  notifier: Notifier;
  coordinator: GroupCoordinator;
  logger: Logger;
  /** Sleep between empty polls, for producers in other processes; undefined: sleep until notified. */
  pollMs?: number;
  topicFor(name: string): TopicMeta;
}

let nextMemberId = 1;

export function createEmbeddedConsumer(deps: EmbeddedConsumerDeps, options: ConsumerOptions): Consumer {
  const { store, notifier, coordinator } = deps;
  const logger = deps.logger.child({ group: options.group });
  const maxBatch = options.maxBatchSize ?? DEFAULT_MAX_BATCH;
  const manual = options.commit === 'manual';
  const owned = new Map<string, TopicPartition & { position: number }>();
  /** Seeks not yet applied to an owned partition's position (already committed, unless manual). */
  const pendingSeeks = new Map<string, number>();
  let wakeUp = () => {};
  /** Set by wake-ups (seek, group change) that land while the loop is busy, so it does not sleep through them. */
  let signalled = false;
  let stopping = false;
  let loop: Promise<void> | null = null;
  const wake = () => {
    signalled = true;
    wakeUp();
  };
  const member: Member = { id: nextMemberId++, topics: options.topics, wake };

  const topics = options.topics.map((name) => deps.topicFor(name));
  const topicNames = topics.map((topic) => topic.name);
  const metaOf = (name: string) => topics.find((t) => t.name === name) ?? deps.topicFor(name);

  /** Positions after batches whose handler resolved, not yet written; by `topic/partition`. */
  const uncommitted = new Map<string, CommitPosition>();
  let lastCommitAt = 0;
  let idleCommit: ReturnType<typeof setTimeout> | null = null;
  function commitPending(): void {
    if (idleCommit) {
      clearTimeout(idleCommit);
      idleCommit = null;
    }
    lastCommitAt = performance.now();
    if (uncommitted.size === 0) return;
    const positions = [...uncommitted.values()];
    uncommitted.clear();
    store.commitMany(options.group, positions);
  }
  /** Idle with positions not yet written: they are written COMMIT_EVERY_MS after the last commit. */
  function commitLater(): void {
    if (idleCommit || uncommitted.size === 0) return;
    idleCommit = setTimeout(
      () => {
        idleCommit = null;
        if (store.db.open) commitPending();
      },
      Math.max(0, lastCommitAt + COMMIT_EVERY_MS - performance.now()),
    );
  }

  function seek(topic: string, partition: number, offset: number): void {
    uncommitted.delete(tpKey({ topic, partition })); // the seek's offset is the one to keep
    if (!manual) store.commit(options.group, metaOf(topic), partition, offset);
    pendingSeeks.set(tpKey({ topic, partition }), offset);
    wake();
  }

  /** The group's change count when this member last held every partition of its target. */
  let settledAt: number | null = null;

  async function rebalance(): Promise<void> {
    // Every pass asks; only a join, leave or release can change the answer (each pass rebuilt it).
    const changes = coordinator.changes(options.group);
    if (changes === settledAt) return;
    const target = coordinator.target(options.group, member, (name) => metaOf(name).partitions);
    const targetKeys = new Set(target.map(tpKey));
    const revoked = [...owned.values()].filter((tp) => !targetKeys.has(tpKey(tp)));
    if (revoked.length > 0) {
      commitPending(); // the next owner starts where this one stopped
      const released = revoked.map(({ topic, partition }) => ({ topic, partition }));
      await options.onRevoke?.(released);
      for (const tp of released) {
        owned.delete(tpKey(tp));
        coordinator.release(options.group, member, tp);
      }
    }
    const claimed = target.filter((tp) => !owned.has(tpKey(tp)) && coordinator.claim(options.group, member, tp));
    if (owned.size + claimed.length === target.length) settledAt = changes;
    if (claimed.length === 0) return;
    for (const tp of claimed) {
      const meta = metaOf(tp.topic);
      const committed = store.committed(options.group, meta).get(tp.partition);
      const start = options.start === 'latest' ? (store.endOffsets(meta).get(tp.partition) ?? 0) : 0;
      owned.set(tpKey(tp), { ...tp, position: pendingSeeks.get(tpKey(tp)) ?? committed ?? start });
      pendingSeeks.delete(tpKey(tp));
    }
    await options.onAssign?.(claimed);
  }

  async function consume(eachBatch: (batch: Batch) => Promise<void>): Promise<void> {
    while (!stopping) {
      signalled = false;
      await rebalance();
      const seen = notifier.stamp(topicNames);
      let delivered = false;
      // End offsets per topic, read once a pass (after `seen`): partitions with nothing new cost no fetch.
      const ends = new Map<string, Map<number, number>>();
      const slicer = options.sliceMs === undefined ? null : createSlicer(options.sliceMs);
      for (const [key, tp] of owned) {
        if (stopping) break;
        if (slicer?.due()) {
          await slicer.pause();
          if (stopping || !owned.has(key)) continue;
        }
        const seekTo = pendingSeeks.get(key);
        if (seekTo !== undefined) {
          tp.position = seekTo;
          pendingSeeks.delete(key);
        }
        const meta = metaOf(tp.topic);
        let topicEnds = ends.get(tp.topic);
        if (!topicEnds) ends.set(tp.topic, (topicEnds = store.endOffsets(meta)));
        if (tp.position >= (topicEnds.get(tp.partition) ?? 0)) continue;
        if (options.ready && !options.ready(tp.topic, tp.partition)) continue;
        const messages = store.fetch(meta, tp.partition, tp.position, maxBatch, options.maxFetchBytes);
        if (messages.length === 0) continue;
        await eachBatch({ topic: tp.topic, partition: tp.partition, messages });
        delivered = true;
        if (pendingSeeks.has(key)) continue; // a seek during the batch wins over its commit
        tp.position = messages[messages.length - 1]!.offset + 1;
        if (!manual) uncommitted.set(key, { meta, partition: tp.partition, offset: tp.position });
      }
      if (stopping || performance.now() - lastCommitAt >= COMMIT_EVERY_MS) commitPending();
      if (!delivered && !stopping && !signalled) {
        commitLater();
        await new Promise<void>((resolve) => {
          wakeUp = resolve;
          void notifier.wait(topicNames, seen, deps.pollMs).then(resolve);
        });
        wakeUp = () => {};
        // Woken while other sliced loops wait for turns: queue behind them rather than add a
        // slice to this turn. Alone, go at once (a turn's hop would put a stream feed behind
        // whatever else the thread does this turn: swap → frame p50 4–8 → 13–17 ms in the bench).
        if (options.sliceMs !== undefined && !stopping && slicersWaiting()) await waitForTurn();
      }
    }
  }

  return {
    run(eachBatch) {
      if (loop) return Promise.reject(new Error(`consumer of group ${options.group} is already running`));
      coordinator.join(options.group, member);
      loop = (async () => {
        let failed = false;
        try {
          await consume(eachBatch);
        } catch (error) {
          failed = true;
          logger.error({ err: error }, 'consumer stopped on an error; the batch in flight was not committed');
          throw error;
        } finally {
          commitPending(); // batches whose handler resolved, also when a later one threw
          const released = [...owned.values()].map(({ topic, partition }) => ({ topic, partition }));
          owned.clear();
          coordinator.leave(options.group, member);
          if (!failed && released.length > 0) await options.onRevoke?.(released);
        }
      })();
      return loop;
    },
    async seek(topic, partition, offset) {
      seek(topic, partition, offset);
    },
    async seekToTime(topic, timestamp) {
      const meta = metaOf(topic);
      for (let p = 0; p < meta.partitions; p++) seek(topic, p, store.offsetForTime(meta, p, timestamp));
    },
    async commit(positions) {
      if (!loop || stopping) throw new Error(`consumer of group ${options.group} is not running; nothing committed`);
      for (const p of positions) store.commit(options.group, metaOf(p.topic), p.partition, p.offset);
    },
    async committed(topic) {
      commitPending();
      const meta = metaOf(topic);
      const stored = store.committed(options.group, meta);
      const result = new Map<number, number>();
      for (let p = 0; p < meta.partitions; p++) result.set(p, stored.get(p) ?? -1);
      return result;
    },
    async stop() {
      stopping = true;
      wake();
      await loop?.catch(() => {});
    },
  };
}
