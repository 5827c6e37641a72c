// One conformance suite for the EventLog contract, run against the embedded SQLite log and
// against Kafka (librdkafka's mock cluster through kcat).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { createContext, type Context } from '../core/context.ts';
import { loadConfig } from '../core/config.ts';
import { createLogger } from '../core/logger.ts';
import kafkajs from 'kafkajs';
import { createEmbeddedLog } from '../core/eventlog/embedded.ts';
import { openStore } from '../core/eventlog/embedded-store.ts';
import { createKafkaLog } from '../core/eventlog/kafka.ts';
import { partitionFor } from '../core/eventlog/partitioner.ts';
import { decodeValue, produceValues } from '../core/eventlog/typed.ts';
import { TOPICS } from '../core/topics.ts';
import type { Consumer, EventLog, LogMessage, ProduceMessage } from '../core/eventlog/types.ts';
import { requireKcat, startKafkaMock, type KafkaMock } from './helpers/kafka-mock.ts';

const CHILD = fileURLToPath(new URL('./fixtures/eventlog-producer-child.ts', import.meta.url));

interface Backend {
  /** A new log instance over the same storage (a "restart"). */
  open(): Promise<EventLog>;
  /** argv for the producer child after the fixture path. */
  childArgs(topic: string): string[];
  teardown(): Promise<void>;
}

let unique = 0;
const name = (what: string) => `${what}-${process.pid}-${++unique}`;

function messages(
  count: number,
  keyCount: number,
  from = 0,
  timestamp = (i: number) => 1_700_000_000_000 + i,
): ProduceMessage[] {
  return Array.from({ length: count }, (_, j) => {
    const i = from + j;
    return { key: `solana:key${i % keyCount}`, value: JSON.stringify({ seq: i }), timestamp: timestamp(i) };
  });
}
const seqOf = (message: LogMessage) => (JSON.parse(message.value) as { seq: number }).seq;

/** Runs `consumer` until it delivered `count` messages, then stops it and returns them. */
async function consume(consumer: Consumer, count: number): Promise<LogMessage[]> {
  const received: LogMessage[] = [];
  let done!: () => void;
  const enough = new Promise<void>((resolve) => (done = resolve));
  const running = consumer.run(async (batch) => {
    assert.ok(batch.messages.length > 0, 'no empty batches');
    for (const message of batch.messages) {
      assert.equal(message.topic, batch.topic);
      assert.equal(message.partition, batch.partition);
    }
    received.push(...batch.messages);
    if (received.length >= count) done();
  });
  await Promise.race([enough, running]);
  await consumer.stop();
  await running;
  return received;
}

function conformance(label: string, setup: () => Promise<Backend | null>): void {
  describe(`event log conformance: ${label}`, () => {
    let backend: Backend;
    let log: EventLog;

    before(async function () {
      const ready = await setup();
      if (!ready) this.skip();
      backend = ready;
      log = await backend.open();
    });
    after(async () => {
      await log?.close();
      await backend?.teardown();
    });

    it('round-trips produced messages to a consumer group, offsets contiguous per partition', async () => {
      const topic = name('roundtrip');
      await log.ensureTopics([{ name: topic, partitions: 4, compacted: false }]);
      const sent = messages(60, 12);
      await log.produce(topic, sent.slice(0, 25));
      await log.produce(topic, sent.slice(25));
      const got = await consume(log.consumer({ group: name('g'), topics: [topic] }), 60);
      assert.equal(got.length, 60);
      assert.deepEqual(
        got.map((m) => `${m.key}|${m.value}|${m.timestamp}`).sort(),
        sent.map((m) => `${m.key}|${m.value}|${m.timestamp}`).sort(),
      );
      const byPartition = new Map<number, number[]>();
      for (const m of got) byPartition.set(m.partition, [...(byPartition.get(m.partition) ?? []), m.offset]);
      assert.ok(byPartition.size > 1, 'keys spread over partitions');
      for (const offsets of byPartition.values())
        assert.deepEqual(
          offsets,
          offsets.map((_, i) => i),
        );
    });

    it('keeps order per key; a key always lands in its murmur2 partition', async () => {
      const topic = name('order');
      const sent = messages(300, 20);
      for (let i = 0; i < sent.length; i += 37) await log.produce(topic, sent.slice(i, i + 37));
      const ends = await log.endOffsets(topic);
      const got = await consume(log.consumer({ group: name('g'), topics: [topic], maxBatchSize: 16 }), 300);
      const lastSeq = new Map<string, number>();
      for (const m of got) {
        assert.ok((lastSeq.get(m.key) ?? -1) < seqOf(m), `order of ${m.key}`);
        lastSeq.set(m.key, seqOf(m));
        assert.equal(m.partition, partitionFor(m.key, ends.size), `partition of ${m.key}`);
      }
      assert.equal(lastSeq.size, 20);
    });

    it('resumes a group from its committed offsets after a restart', async () => {
      const topic = name('restart');
      const group = name('g');
      await log.produce(topic, messages(40, 8));
      const first = await consume(log.consumer({ group, topics: [topic] }), 40);
      assert.equal(first.length, 40);
      const committed = await log.consumer({ group, topics: [topic] }).committed(topic);
      const ends = await log.endOffsets(topic);
      for (const [partition, end] of ends) assert.equal(committed.get(partition), end > 0 ? end : -1);

      await log.close();
      log = await backend.open();
      await log.produce(topic, messages(15, 8, 1000));
      const second = await consume(log.consumer({ group, topics: [topic] }), 15);
      assert.deepEqual(
        second.map(seqOf).sort((a, b) => a - b),
        Array.from({ length: 15 }, (_, i) => 1000 + i),
      );
    });

    it('stops without committing when eachBatch throws, and run() rejects with the error', async () => {
      const topic = name('throw');
      const group = name('g');
      await log.produce(topic, messages(20, 4));
      const consumer = log.consumer({ group, topics: [topic] });
      let calls = 0;
      await assert.rejects(
        consumer.run(async () => {
          calls++;
          throw new Error('sink down');
        }),
        /sink down/,
      );
      assert.equal(calls, 1);
      await consumer.stop();
      const committed = await consumer.committed(topic);
      for (const offset of committed.values()) assert.equal(offset, -1);
    });

    it('commits only through commit() in manual mode, only while running; stop commits nothing', async () => {
      const topic = name('manual');
      const group = name('g');
      await log.produce(topic, messages(24, 6));
      const consumer = log.consumer({ group, topics: [topic], commit: 'manual' });
      await consumer.seek(topic, 0, 0); // a seek moves the position, it commits nothing
      const received: LogMessage[] = [];
      let committedWhileRunning: Map<number, number> | null = null;
      let done!: () => void;
      const enough = new Promise<void>((resolve) => (done = resolve));
      const running = consumer.run(async (batch) => {
        received.push(...batch.messages);
        if (received.length >= 24) done();
      });
      await Promise.race([enough, running]);
      committedWhileRunning = await consumer.committed(topic);
      for (const offset of committedWhileRunning.values()) assert.equal(offset, -1, 'nothing committed by batches');
      // The sinks acknowledged half of one partition: that, and only that, is committed.
      const [partition, end] = [...(await log.endOffsets(topic))].find(([, e]) => e >= 2)!;
      await consumer.commit([{ topic, partition, offset: Math.floor(end / 2) }]);
      assert.equal((await consumer.committed(topic)).get(partition), Math.floor(end / 2));
      await consumer.stop();
      await running;
      assert.equal((await consumer.committed(topic)).get(partition), Math.floor(end / 2), 'stop commits nothing');
      await assert.rejects(consumer.commit([{ topic, partition, offset: end }]), /not running/);
      // A new member resumes from the committed positions only.
      const rest = 24 - Math.floor(end / 2);
      const again = await consume(log.consumer({ group, topics: [topic] }), rest);
      assert.equal(again.filter((m) => m.partition === partition).length, end - Math.floor(end / 2));
      assert.equal(again.length, rest);
    });

    it('lets a second group read the same topic independently', async () => {
      const topic = name('groups');
      const [a, b] = [name('ga'), name('gb')];
      await log.produce(topic, messages(30, 6));
      const fromA = await consume(log.consumer({ group: a, topics: [topic] }), 30);
      const committedA = await log.consumer({ group: a, topics: [topic] }).committed(topic);
      const fromB = await consume(log.consumer({ group: b, topics: [topic] }), 30);
      assert.deepEqual(
        fromB.map(seqOf).sort((x, y) => x - y),
        fromA.map(seqOf).sort((x, y) => x - y),
      );
      assert.deepEqual(await log.consumer({ group: a, topics: [topic] }).committed(topic), committedA);
    });

    it('shares partitions between members of one group, with onAssign/onRevoke around the hand-over', async () => {
      const topic = name('members');
      const group = name('g');
      await log.produce(topic, messages(40, 10));
      const partitions = (await log.endOffsets(topic)).size;
      const events: string[] = [];
      const owned = { a: new Set<number>(), b: new Set<number>() };
      const received: Array<{ member: 'a' | 'b'; message: LogMessage }> = [];
      const waiters: Array<() => void> = [];
      const changed = () => waiters.splice(0).forEach((wake) => wake());
      const until = async (condition: () => boolean) => {
        while (!condition()) await new Promise<void>((resolve) => waiters.push(resolve));
      };
      const member = (id: 'a' | 'b') => {
        const consumer = log.consumer({
          group,
          topics: [topic],
          onAssign: (tps) => {
            for (const tp of tps) owned[id].add(tp.partition);
            events.push(
              `${id}+${tps
                .map((tp) => tp.partition)
                .sort()
                .join(',')}`,
            );
            changed();
          },
          onRevoke: (tps) => {
            for (const tp of tps) {
              assert.ok(owned[id].delete(tp.partition), `${id} revoked ${tp.partition} it did not own`);
            }
            events.push(
              `${id}-${tps
                .map((tp) => tp.partition)
                .sort()
                .join(',')}`,
            );
            changed();
          },
        });
        const running = consumer.run(async (batch) => {
          assert.ok(owned[id].has(batch.partition), `${id} got a batch of ${batch.partition} before onAssign`);
          for (const message of batch.messages) received.push({ member: id, message });
          changed();
        });
        return { consumer, running };
      };

      const a = member('a');
      await until(() => received.length >= 40);
      assert.equal(owned.a.size, partitions);
      const b = member('b');
      await until(() => owned.b.size > 0 && owned.a.size + owned.b.size === partitions);
      for (const p of owned.b) assert.ok(!owned.a.has(p), `partition ${p} owned twice`);

      await log.produce(topic, messages(40, 10, 100));
      await until(() => received.length >= 80);
      const second = received.slice(40);
      assert.deepEqual(
        second.map((r) => seqOf(r.message)).sort((x, y) => x - y),
        Array.from({ length: 40 }, (_, i) => 100 + i),
      );
      for (const { member: id, message } of second) assert.ok(owned[id].has(message.partition));
      assert.ok(
        second.some((r) => r.member === 'b'),
        'the second member took part',
      );

      await b.consumer.stop();
      await b.running;
      await a.consumer.stop();
      await a.running;
      assert.equal(owned.a.size + owned.b.size, 0, 'everything revoked on stop');
      assert.ok(events[0]?.startsWith('a+'), events.join(' '));
    });

    it('keeps the latest value of every key of a compacted topic (readToEnd)', async () => {
      const topic = name('compacted');
      await log.ensureTopics([{ name: topic, partitions: 4, compacted: true }]);
      for (let version = 1; version <= 4; version++) {
        await log.produce(
          topic,
          Array.from({ length: 10 }, (_, k) => ({ key: `base:token${k}`, value: `v${version}` })),
        );
      }
      await log.produce(topic, [
        { key: 'base:token3', value: 'v5' },
        { key: 'base:token3', value: 'v6' },
      ]);
      const latest = new Map<string, string>();
      let read = 0;
      await log.readToEnd(topic, (m) => {
        latest.set(m.key, m.value);
        read++;
      });
      assert.equal(latest.size, 10);
      for (const [key, value] of latest) assert.equal(value, key === 'base:token3' ? 'v6' : 'v4');
      if (log.kind === 'embedded') assert.equal(read, 10, 'the embedded log compacts on write');
    });

    it('seeks by offset, before and during run', async () => {
      const topic = name('seek');
      await log.produce(topic, messages(80, 10));
      const ends = await log.endOffsets(topic);
      const [partition, end] = [...ends].sort((x, y) => y[1] - x[1])[0]!;
      assert.ok(end > 6);
      const consumer = log.consumer({ group: name('g'), topics: [topic] });
      await consumer.seek(topic, partition, 5);
      const received: LogMessage[] = [];
      let rewound = false;
      let done!: () => void;
      const finished = new Promise<void>((resolve) => (done = resolve));
      const running = consumer.run(async (batch) => {
        received.push(...batch.messages);
        if (!rewound && received.length >= 80 - 5) {
          rewound = true;
          await consumer.seek(topic, partition, end - 2);
        }
        if (received.length >= 80 - 5 + 2) done();
      });
      await Promise.race([finished, running]);
      await consumer.stop();
      await running;
      const ofPartition = received.filter((m) => m.partition === partition).map((m) => m.offset);
      const expected = [...Array.from({ length: end - 5 }, (_, i) => 5 + i), end - 2, end - 1];
      assert.deepEqual(ofPartition, expected);
      assert.equal(received.length, 80 - 5 + 2);
    });

    it('seeks by time to the first message at or after a timestamp', async () => {
      const topic = name('time');
      const base = 1_750_000_000_000;
      await log.produce(topic, messages(40, 7, 0, (i) => base + i * 1000).slice(0, 25));
      await log.produce(
        topic,
        messages(15, 7, 25, (i) => base + i * 1000),
      );
      const consumer = log.consumer({ group: name('g'), topics: [topic] });
      await consumer.seekToTime(topic, base + 22_500);
      const got = await consume(consumer, 40 - 23);
      assert.deepEqual(
        got.map(seqOf).sort((a, b) => a - b),
        Array.from({ length: 17 }, (_, i) => 23 + i),
      );
    });

    it('reports end offsets per partition', async () => {
      const topic = name('ends');
      const sent = messages(57, 9);
      await log.produce(topic, sent);
      const ends = await log.endOffsets(topic);
      const expected = new Map<number, number>();
      for (let p = 0; p < ends.size; p++) expected.set(p, 0);
      for (const m of sent) {
        const p = partitionFor(m.key, ends.size);
        expected.set(p, expected.get(p)! + 1);
      }
      assert.deepEqual(new Map([...ends].sort((a, b) => a[0] - b[0])), expected);
    });

    it('loses no acknowledged message when the producing process is SIGKILLed', async () => {
      const topic = name('kill');
      // Create the topic first so the child and the reader agree on it from the start.
      await log.produce(topic, [{ key: 'key-0', value: JSON.stringify({ seq: -1 }) }]);
      const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ...backend.childArgs(topic)], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const acked: number[] = [];
      let partial = '';
      const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
        child.once('exit', (code, signal) => resolve(signal ?? code)),
      );
      await new Promise<void>((resolve, reject) => {
        child.once('exit', () => reject(new Error(`child exited early: ${stderr}`)));
        child.stdout.on('data', (chunk: Buffer) => {
          const lines = (partial + chunk.toString('utf8')).split('\n');
          partial = lines.pop()!;
          for (const line of lines) acked.push(Number(line));
          if (acked.length >= 600) {
            child.kill('SIGKILL');
            resolve();
          }
        });
      });
      assert.equal(await exited, 'SIGKILL');
      assert.ok(acked.length >= 600);

      const reader = await backend.open();
      const stored = new Set<number>();
      try {
        await reader.readToEnd(topic, (m) => stored.add(seqOf(m)));
      } finally {
        await reader.close();
      }
      const missing = acked.filter((n) => !stored.has(n));
      assert.deepEqual(missing, [], `acknowledged but lost: ${missing.slice(0, 10).join(', ')}`);
    });
  });
}

function testContext(): Context {
  return createContext(loadConfig({}), createLogger('fatal'));
}

conformance('embedded (SQLite)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-eventlog-'));
  const file = path.join(dir, 'log', 'events.sqlite');
  return {
    open: async () => createEmbeddedLog(testContext(), { path: file }),
    childArgs: (topic) => ['embedded', file, topic],
    teardown: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
});

// The serving thread's connection: consumers share decoded reads (read-share.ts).
conformance('embedded (SQLite), shared reads', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-eventlog-shared-'));
  const file = path.join(dir, 'log', 'events.sqlite');
  return {
    open: async () => createEmbeddedLog(testContext(), { path: file, shareReads: true }),
    childArgs: (topic) => ['embedded', file, topic],
    teardown: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
});

// A short session: the mock holds a rejoin after a member left for (session timeout - 1 s).
conformance('kafka (librdkafka mock cluster)', async () => {
  if (!requireKcat('the Kafka event log conformance suite')) return null;
  const mock: KafkaMock = await startKafkaMock();
  return {
    open: async () =>
      createKafkaLog(testContext(), { brokers: mock.brokers, clientId: 'eventlog-test', sessionTimeoutMs: 4000 }),
    childArgs: (topic) => ['kafka', mock.brokers.join(','), topic],
    teardown: () => mock.stop(),
  };
});

// The typed layer does not depend on the transport: checked once, over the embedded log.
describe('event log typed values', () => {
  let dir: string;
  let log: EventLog;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-eventlog-typed-'));
    log = createEmbeddedLog(testContext(), { path: path.join(dir, 'events.sqlite') });
  });
  after(async () => {
    await log.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('validates typed values at the log boundary', async () => {
    const topic = TOPICS.candles;
    const bad = { chain: 'solana', token: 'x', updatedAt: 1, open: 5 } as never;
    await assert.rejects(
      produceValues(log, topic, [{ key: 'solana:x', value: bad, timestamp: 1 }]),
      /spot\.candles\.v1/,
    );
    const value = { chain: 'solana' as const, token: 'So1', updatedAt: 7, open: {} };
    await produceValues(log, topic, [{ key: 'solana:So1', value, timestamp: 7 }]);
    const read: unknown[] = [];
    await log.readToEnd(topic.name, (m) => read.push(decodeValue(topic, m)));
    assert.deepEqual(read.at(-1), value);
  });
});

describe('event log internals', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-eventlog-internals-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('partitions keys exactly as kafkajs does (murmur2), ASCII and not', () => {
    const kafkaPartitioner = kafkajs.Partitioners.DefaultPartitioner();
    const keys = [
      '',
      'a',
      'ab',
      'abc',
      'abcd',
      'solana:So11111111111111111111111111111111111111112',
      'base:0x4200000000000000000000000000000000000006',
      'clé-ü-漢字-🙂',
    ];
    for (let i = 0; i < 300; i++) keys.push(`bsc:0x${(i * 2654435761).toString(16)}${'z'.repeat(i % 7)}`);
    for (const partitions of [1, 3, 4, 16]) {
      const partitionMetadata = Array.from({ length: partitions }, (_, p) => ({
        partitionId: p,
        leader: 0,
        partitionErrorCode: 0,
        replicas: [0],
        isr: [0],
      }));
      for (const key of keys) {
        assert.equal(
          partitionFor(key, partitions),
          kafkaPartitioner({ topic: 't', partitionMetadata, message: { key, value: null } }),
          key,
        );
      }
    }
  });

  it('applies retention by append time and leaves offsets and compacted topics alone', async () => {
    const file = path.join(dir, 'retention.sqlite');
    const log = createEmbeddedLog(testContext(), { path: file, retentionIntervalMs: 0 });
    await log.ensureTopics([
      { name: 'kept-short', partitions: 2, compacted: false, retentionMs: 60_000 },
      { name: 'state', partitions: 2, compacted: true },
    ]);
    // Event times from 2001: a replay of old events must survive until its retention passes.
    await log.produce(
      'kept-short',
      messages(30, 5, 0, (i) => 1_000_000_000_000 + i),
    );
    await log.produce(
      'state',
      messages(30, 5, 0, (i) => 1_000_000_000_000 + i),
    );
    await log.close();

    const store = openStore({ path: file });
    try {
      const short = store.lookup('kept-short')!;
      const state = store.lookup('state')!;
      assert.equal(store.applyRetention(short, Date.now()), 0);
      // SPOT_LOG_RETENTION_HOURS caps a topic's own retention, never extends it.
      assert.equal(store.applyRetention(short, Date.now() + 20_000, 30_000), 0);
      assert.equal(store.applyRetention(short, Date.now() + 20_000, 3_600_000), 0);
      assert.ok(store.applyRetention(short, Date.now() + 31_000, 30_000) > 0);
      assert.equal(store.applyRetention(state, Date.now() + 61_000), 0);
      assert.deepEqual(
        [0, 1].map((p) => store.fetch(short, p, 0, 100).length),
        [0, 0],
      );
      assert.equal(
        [...store.endOffsets(short).values()].reduce((a, b) => a + b, 0),
        30,
      );
      assert.equal(
        [0, 1].map((p) => store.fetch(state, p, 0, 100).length).reduce((a, b) => a + b, 0),
        5,
      );
    } finally {
      store.close();
    }
  });

  it('stores a batch deflated when that is smaller, reads back exactly what was written, and still reads batches stored as text', () => {
    const file = path.join(dir, 'deflated.sqlite');
    const store = openStore({ path: file });
    try {
      const topic = store.ensureTopic({ name: 'swaps', partitions: 1, compacted: false });
      // Records like the log's own (JSON with repeated field names and addresses). The second
      // batch has names that are not ASCII (cut as UTF-8), the others are ASCII only (a byte per unit).
      const written = Array.from({ length: 2_500 }, (_, i) => ({
        key: `solana:Mint${i % 40}Pump${'x'.repeat(i % 7)}`,
        value: JSON.stringify({
          seq: i,
          side: i % 2 ? 'buy' : 'sell',
          amount: `${i * 1_000_003}.${i % 97}`,
          name: i >= 1_000 && i < 2_000 && i % 13 === 0 ? `tök ${i % 13} 🙂` : `tok ${i % 13}`,
        }),
        timestamp: 1_700_000_000_000 + i,
      }));
      store.append(topic, written.slice(0, 2_000), 1);
      store.append(topic, written.slice(2_000, 2_001), 2); // one short record: stays text
      store.append(topic, written.slice(2_001), 3);
      const rows = store.db
        .prepare<[number], { data: string | Buffer; units: number }>(
          'SELECT data, last_offset - base_offset + 1 AS units FROM batches WHERE topic_id = ? ORDER BY last_offset',
        )
        .all(topic.id);
      assert.deepEqual(
        rows.map((row) => [typeof row.data === 'string' ? 'text' : 'deflated', row.units]),
        [
          ['deflated', 1_000],
          ['deflated', 1_000],
          ['text', 1],
          ['deflated', 499],
        ],
      );
      const rawBytes = Buffer.byteLength(
        written
          .slice(0, 1_000)
          .map((r) => r.key + r.value)
          .join(''),
      );
      assert.ok(rows[0]!.data.length * 3 < rawBytes, `deflated ${rows[0]!.data.length} of ${rawBytes} bytes`);
      const readAll = () =>
        store
          .fetch(topic, 0, 0, 10_000)
          .map(({ key, value, timestamp, offset }) => ({ key, value, timestamp, offset }));
      const expected = written.map((r, offset) => ({ ...r, offset }));
      assert.deepEqual(readAll(), expected);
      // From the middle of a deflated batch, as a consumer resuming there reads it.
      for (const from of [500, 1_507])
        assert.deepEqual(
          store
            .fetch(topic, 0, from, 3)
            .map(({ key, value, timestamp, offset }) => ({ key, value, timestamp, offset })),
          expected.slice(from, from + 3),
        );

      // A log written before batches were deflated: its rows hold the text itself.
      const texts = store.db.prepare<[], { id: number; data: string | Buffer }>('SELECT id, data FROM batches').all();
      for (const row of texts) {
        if (typeof row.data === 'string') continue;
        const text = zlib.inflateRawSync(row.data).toString('utf8');
        store.db.prepare('UPDATE batches SET data = ? WHERE id = ?').run(text, row.id);
      }
      assert.equal(
        store.db.prepare<[], { n: number }>("SELECT count(*) AS n FROM batches WHERE typeof(data) = 'blob'").get()!.n,
        0,
      );
      assert.deepEqual(readAll(), expected);
    } finally {
      store.close();
    }
    // SPOT_LOG_COMPRESSION=none: new batches are text, and the deflated ones still read.
    const plain = openStore({ path: file, deflate: false });
    try {
      const topic = plain.lookup('swaps')!;
      plain.append(topic, [{ key: 'k', value: 'v'.repeat(5_000), timestamp: 1 }], 4);
      const last = plain.db
        .prepare<[number], { data: string | Buffer }>(
          'SELECT data FROM batches WHERE topic_id = ? ORDER BY last_offset DESC LIMIT 1',
        )
        .get(topic.id)!;
      assert.equal(typeof last.data, 'string');
      assert.equal(plain.fetch(topic, 0, 2_500, 10)[0]!.value, 'v'.repeat(5_000));
    } finally {
      plain.close();
    }
  });

  it('cuts the records of a deflated batch that is not ASCII by their UTF-8 bytes, surrogate pairs and lone surrogates included', () => {
    const store = openStore({ path: path.join(dir, 'utf8-cut.sqlite') });
    try {
      const topic = store.ensureTopic({ name: 'names', partitions: 1, compacted: false });
      const written = [
        { key: 'lone\ud800', value: `${'a'.repeat(600)}é`, timestamp: 1 },
        { key: '🙂', value: '🙂'.repeat(300), timestamp: 2 },
        { key: 'k', value: `ü${'\udfff'}${'b'.repeat(700)}`, timestamp: 3 },
        { key: 'last', value: 'plain', timestamp: 4 },
      ];
      store.append(topic, written, 1);
      const row = store.db
        .prepare<[number], { data: unknown }>('SELECT data FROM batches WHERE topic_id = ?')
        .get(topic.id)!;
      assert.ok(Buffer.isBuffer(row.data), 'stored deflated');
      const read = store.fetch(topic, 0, 0, 10).map(({ key, value }) => [key, value]);
      // UTF-8 has no lone surrogates: the log keeps U+FFFD in their place, one unit for one.
      assert.deepEqual(read, [
        ['lone\ufffd', `${'a'.repeat(600)}é`],
        ['🙂', '🙂'.repeat(300)],
        ['k', `ü\ufffd${'b'.repeat(700)}`],
        ['last', 'plain'],
      ]);
      assert.deepEqual(
        store.fetch(topic, 0, 2, 10).map(({ key }) => key),
        ['k', 'last'],
      );
    } finally {
      store.close();
    }
  });

  /** A deterministic generator (tests must fail the same way every run). */
  function lcg(seed: number): () => number {
    return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  }

  it('decodes a batch once for every reader of a shared-reads connection, and answers each fetch as a fetch without sharing does', () => {
    const file = path.join(dir, 'shared-reads.sqlite');
    const writer = openStore({ path: file });
    const shared = openStore({ path: file, readonly: true, shareReads: true });
    const plain = openStore({ path: file, readonly: true });
    try {
      const batches = writer.ensureTopic({ name: 'trades', partitions: 1, compacted: false });
      const latest = writer.ensureTopic({ name: 'tokens', partitions: 1, compacted: true });
      const value = (i: number) => JSON.stringify({ seq: i, name: i % 50 === 0 ? `tök ${i}` : `tok ${i}` });
      for (let from = 0; from < 3_000; from += 700)
        writer.append(
          batches,
          Array.from({ length: 700 }, (_, j) => ({
            key: `k${(from + j) % 30}`,
            value: value(from + j),
            timestamp: from + j,
          })),
          1,
        );
      writer.append(
        latest,
        Array.from({ length: 300 }, (_, i) => ({ key: `t${i % 120}`, value: value(i), timestamp: i })),
        1,
      );
      const strip = (messages: LogMessage[]) =>
        messages.map(({ offset, key, value, timestamp }) => ({ offset, key, value, timestamp }));
      const topics = { batches: shared.lookup('trades')!, latest: shared.lookup('tokens')! };
      const plainTopics = { batches: plain.lookup('trades')!, latest: plain.lookup('tokens')! };
      // Two readers of the same batch get the same message objects: it was decoded once.
      const first = shared.fetch(topics.batches, 0, 650, 100);
      const second = shared.fetch(topics.batches, 0, 650, 100);
      assert.equal(first.length, 100);
      assert.ok(
        first.every((message, i) => message === second[i]),
        'the second read decoded again',
      );
      // Every fetch, from anywhere, with any count or size bound, reads as without sharing.
      for (const [from, limit, maxChars] of [
        [0, 2_000, 256 * 1024],
        [650, 100, Number.POSITIVE_INFINITY],
        [699, 5, Number.POSITIVE_INFINITY],
        [1_400, 3_000, 1_000],
        [2_990, 50, 40],
        [3_500, 10, Number.POSITIVE_INFINITY],
      ] as const) {
        for (const kind of ['batches', 'latest'] as const) {
          const got = shared.fetch(topics[kind], 0, from, limit, maxChars);
          const want = plain.fetch(plainTopics[kind], 0, from, limit, maxChars);
          // A shared fetch may end early (a batch boundary, a kept compacted read), never differ.
          assert.deepEqual(strip(got), strip(want).slice(0, got.length), `${kind} from ${from}`);
          if (want.length > 0) assert.ok(got.length > 0, `${kind} from ${from}: nothing`);
        }
      }
      // A read at the end is not kept: what is appended next is read at once.
      const end = 3_500;
      assert.deepEqual(shared.fetch(topics.batches, 0, end, 10), []);
      writer.append(batches, [{ key: 'k', value: value(end), timestamp: end }], 2);
      assert.deepEqual(
        strip(shared.fetch(topics.batches, 0, end, 10)).map((m) => m.offset),
        [end],
      );
    } finally {
      shared.close();
      plain.close();
      writer.close();
    }
  });

  it('seeks by time through many batches, also once retention dropped the oldest ones', async () => {
    const store = openStore({ path: path.join(dir, 'seek-time.sqlite') });
    try {
      const topic = store.ensureTopic({ name: 'ticks', partitions: 1, compacted: false, retentionMs: 1000 });
      const random = lcg(11);
      const batches: { base: number; timestamps: number[] }[] = [];
      let ts = 1_700_000_000_000;
      let end = 0;
      for (let b = 0; b < 400; b++) {
        const timestamps: number[] = [];
        // Single-record batches first: a bisection off by one offset skips a whole batch there.
        for (let i = b < 4 ? 1 : 1 + Math.floor(random() * 6); i > 0; i--) {
          // Small steps, jumps, event times going back (out-of-order events), else a repeat.
          const r = random();
          if (r >= 0.9) ts -= Math.floor(random() * 300);
          else if (r >= 0.8) ts += 500 + Math.floor(random() * 2000);
          else if (r >= 0.25) ts += 1 + Math.floor(random() * 20);
          timestamps.push(ts);
        }
        // A spike in the last batch retention drops: the first kept ones inherit it as their
        // running maximum without holding a record that high.
        if (b === 149) timestamps.push(ts + 4000);
        const values = timestamps.map((timestamp, i) => ({ key: 'k', value: String(end + i), timestamp }));
        store.append(topic, values, 50_000 + b);
        batches.push({ base: end, timestamps });
        end += timestamps.length;
      }
      const all = batches.flatMap((batch) => batch.timestamps);
      const times = new Set([Math.min(...all) - 1, Math.max(...all) + 1]);
      for (const t of all) for (const d of [-1, 0, 1]) times.add(t + d);

      // Brute force over every record: the first kept batch whose running maximum (over all records
      // ever appended) reaches t, then its first record >= t; the end offset when there is none.
      const reference = (dropped: number, t: number): number => {
        let max = Number.NEGATIVE_INFINITY;
        for (const [i, batch] of batches.entries()) {
          max = Math.max(max, ...batch.timestamps);
          if (i < dropped || max < t) continue;
          const at = batch.timestamps.findIndex((x) => x >= t);
          return at < 0 ? end : batch.base + at;
        }
        return end;
      };
      const check = (dropped: number) => {
        const answers = new Set<number>();
        for (const t of times) {
          const offset = store.offsetForTime(topic, 0, t);
          assert.equal(offset, reference(dropped, t), `t = ${t}, ${dropped} batches dropped`);
          answers.add(offset);
        }
        return answers.size;
      };
      // Distinct answers: the bisection lands all over the partition, not on a few batches.
      const spread = check(0);
      assert.ok(spread > 600, `${spread} distinct offsets`);
      // Retention of 1 s at 51,150: the batches appended at 50,000 to 50,149 go.
      assert.equal(store.applyRetention(topic, 51_150), 150);
      assert.equal(store.fetch(topic, 0, 0, 1)[0]!.offset, batches[150]!.base);
      const kept = check(150);
      assert.ok(kept > 350, `${kept} distinct offsets`);
      // The inherited spike: times the first kept batch's maximum reaches and none of its records do.
      const inherited = [...times].filter((t) => t <= Math.max(...all) && reference(150, t) === end).length;
      assert.ok(inherited > 10, `${inherited} times answered by the end offset`);
    } finally {
      await store.close();
    }
  });

  it('drops by retention exactly the batches appended before the cutoff, also after the clock stepped back', async () => {
    const file = path.join(dir, 'retention-order.sqlite');
    let store = openStore({ path: file });
    const specs = ['stepped', 'walk'].map((name) => ({ name, partitions: 2, compacted: false, retentionMs: 100 }));
    const keys = [0, 1].map((p) => {
      let i = 0;
      while (partitionFor(`k${i}`, 2) !== p) i++;
      return `k${i}`;
    });
    // The batches each partition should hold, stamped max(clock, the partition's last stamp).
    const expected = new Map(
      specs.map((spec) => [spec.name, [] as { partition: number; base: number; stamp: number }[]]),
    );
    const ends = new Map(specs.map((spec) => [spec.name, [0, 0]]));
    let behind = 0;
    const append = (name: string, partitions: number[], count: number, clock: number) => {
      const batch = partitions.flatMap((p) => Array.from({ length: count }, () => ({ key: keys[p]!, value: 'v' })));
      store.append(store.ensureTopic(specs.find((spec) => spec.name === name)!), batch, clock);
      const batches = expected.get(name)!;
      for (const p of partitions) {
        const last = batches.findLast((e) => e.partition === p)?.stamp ?? clock;
        if (clock < last) behind++;
        batches.push({ partition: p, base: ends.get(name)![p]!, stamp: Math.max(clock, last) });
        ends.get(name)![p]! += count;
      }
    };
    const retain = (name: string, now: number) => store.applyRetention(store.lookup(name)!, now);
    const stored = (name: string) =>
      store.db
        .prepare(
          'SELECT partition, base_offset AS base, appended_at AS stamp FROM batches WHERE topic_id = ? ORDER BY partition, last_offset',
        )
        .all(store.lookup(name)!.id);
    const held = (name: string, cutoff: number) =>
      expected
        .get(name)!
        .filter((e) => e.stamp >= cutoff)
        .sort((x, y) => x.partition - y.partition || x.base - y.base);
    try {
      // The clock steps back from 5,000 to 2,000: the batch appended then is stamped 5,000, and a
      // cutoff of 3,000 drops the two batches before it, not the one appended "at 2,000".
      append('stepped', [0], 1, 1000);
      append('stepped', [0], 1, 1500);
      append('stepped', [0], 2, 5000);
      append('stepped', [0], 1, 2000);
      append('stepped', [0], 1, 5001);
      assert.deepEqual(stored('stepped'), held('stepped', 0));
      assert.equal(retain('stepped', 1300), 1);
      assert.deepEqual(stored('stepped'), held('stepped', 1200));
      assert.equal(retain('stepped', 3100), 1);
      assert.deepEqual(stored('stepped'), held('stepped', 3000));
      assert.equal(retain('stepped', 5100), 0);
      assert.equal(retain('stepped', 5101), 2);
      assert.deepEqual(stored('stepped'), held('stepped', 5001));

      // Hundreds of appends over both partitions, the clock mostly advancing, sometimes stepping back.
      const random = lcg(5);
      let clock = 10_000;
      for (let i = 0; i < 300; i++) {
        clock += random() < 0.05 ? -Math.floor(random() * 100) : Math.floor(random() * 20);
        const r = random();
        append('walk', r < 0.4 ? [0] : r < 0.8 ? [1] : [0, 1], 1 + Math.floor(random() * 3), clock);
        // A reopened store reads the partitions' last stamps back from the file.
        if (i === 150) {
          await store.close();
          store = openStore({ path: file });
          append('walk', [0, 1], 1, clock - 200);
        }
      }
      assert.deepEqual(stored('walk'), held('walk', 0));
      const stamps = [...new Set(expected.get('walk')!.map((e) => e.stamp))].sort((a, b) => a - b);
      assert.ok(stamps.length > 160 && behind > 20, `${stamps.length} stamps, ${behind} behind`);
      let before = held('walk', 0).length;
      for (const cutoff of [
        stamps[40]!,
        stamps[40]! + 1,
        stamps[41]!,
        stamps[150]! - 1,
        stamps[150]!,
        stamps.at(-1)! + 1,
      ]) {
        const deleted = retain('walk', cutoff + 100);
        assert.deepEqual(stored('walk'), held('walk', cutoff), `cutoff ${cutoff}`);
        assert.equal(deleted, before - held('walk', cutoff).length, `cutoff ${cutoff}`);
        before = held('walk', cutoff).length;
      }
      assert.equal(before, 0);
      assert.deepEqual(store.endOffsets(store.lookup('walk')!), new Map(ends.get('walk')!.map((e, p) => [p, e])));
      assert.deepEqual(stored('stepped'), held('stepped', 5001));
    } finally {
      await store.close();
    }
  });

  it('drops the time and append-time indexes of a file made before they were removed', async () => {
    const file = path.join(dir, 'old-schema.sqlite');
    const indexes = (store: ReturnType<typeof openStore>) =>
      store.db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'batches' ORDER BY name")
        .pluck()
        .all();
    let store = openStore({ path: file });
    const topic = store.ensureTopic({ name: 'old', partitions: 1, compacted: false });
    store.append(topic, messages(20, 3));
    store.db.exec(`
      CREATE INDEX batches_time ON batches (topic_id, partition, max_ts, last_offset);
      CREATE INDEX batches_appended ON batches (topic_id, partition, appended_at);`);
    await store.close();
    store = openStore({ path: file, readonly: true });
    assert.deepEqual(indexes(store), ['batches_appended', 'batches_offset', 'batches_time']);
    await store.close();
    store = openStore({ path: file });
    try {
      assert.deepEqual(indexes(store), ['batches_offset']);
      assert.equal(store.fetch(topic, 0, 0, 100).length, 20);
      assert.equal(store.offsetForTime(topic, 0, 1_700_000_000_005), 5);
    } finally {
      await store.close();
    }
  });

  it('bounds a fetch by size as well as by count, a message larger than the bound still delivered', async () => {
    const file = path.join(dir, 'fetch-size.sqlite');
    const log = createEmbeddedLog(testContext(), { path: file });
    await log.ensureTopics([
      { name: 'stream', partitions: 1, compacted: false },
      { name: 'state', partitions: 1, compacted: true },
    ]);
    // Messages of ~1,010 characters, one of ~5,010: a 2,500-character fetch reads 2 (or that one alone).
    const sized = Array.from({ length: 40 }, (_, i) => ({
      key: `solana:key${i}`,
      value: JSON.stringify({ seq: i, pad: 'x'.repeat((i === 17 ? 5000 : 1000) - 22) }),
    }));
    for (const topic of ['stream', 'state']) await log.produce(topic, sized);
    for (const topic of ['stream', 'state']) {
      const batches: number[][] = [];
      const consumer = log.consumer({ group: name('g'), topics: [topic], maxBatchSize: 10, maxFetchBytes: 2500 });
      const running = consumer.run(async (batch) => {
        batches.push(batch.messages.map(seqOf));
        if (batch.messages.at(-1)!.offset === 39) void consumer.stop();
      });
      await running;
      assert.deepEqual(
        batches.flat(),
        Array.from({ length: 40 }, (_, i) => i),
        topic,
      );
      for (const batch of batches) {
        const chars = batch.reduce((sum, seq) => sum + sized[seq]!.key.length + sized[seq]!.value.length, 0);
        assert.ok(batch.length === 1 || chars <= 2500, `${topic}: ${batch}`);
        assert.ok(batch.length <= 10);
      }
      assert.ok(
        batches.some((batch) => batch.length === 1 && batch[0] === 17),
        `${topic}: the large value alone`,
      );
      assert.ok(batches.filter((batch) => batch.length === 2).length >= 15, `${topic}: ${JSON.stringify(batches)}`);
    }
    await log.close();
  });

  it('commits what a consumer delivered within a commit interval of going idle, and hands a revoked partition over at its last delivered offset', async () => {
    const log = createEmbeddedLog(testContext(), { path: path.join(dir, 'commits.sqlite'), retentionIntervalMs: 0 });
    const topic = 'handover';
    await log.ensureTopics([{ name: topic, partitions: 4, compacted: false }]);
    const group = 'g-handover';
    const seen = new Map<string, number>();
    const record = (batch: { messages: LogMessage[] }) => {
      for (const m of batch.messages)
        seen.set(`${m.partition}/${m.offset}`, (seen.get(`${m.partition}/${m.offset}`) ?? 0) + 1);
    };
    const a = log.consumer({ group, topics: [topic] });
    const b = log.consumer({ group, topics: [topic] });
    let bRunning: Promise<void> | null = null;
    let joinOnNext = false;
    const aRunning = a.run(async (batch) => {
      record(batch);
      // B joins while A is mid-pass with positions it has not written yet.
      if (joinOnNext && !bRunning) bRunning = b.run(async (other) => record(other));
    });
    const total = async () => [...(await log.endOffsets(topic)).values()].reduce((x, y) => x + y, 0);
    /** Waits up to 2 s for `check`; resolves with the ms it took. */
    const settle = async (what: string, check: () => Promise<boolean> | boolean) => {
      const started = performance.now();
      while (!(await check()) && performance.now() - started < 2000)
        await new Promise((resolve) => setTimeout(resolve, 2));
      assert.ok(await check(), what);
      return performance.now() - started;
    };
    try {
      await log.produce(topic, messages(200, 40));
      await settle('A delivered the first batch', async () => seen.size === (await total()));
      // Idle: a member that is not running reads the group's offsets from the store.
      const reader = log.consumer({ group, topics: [topic] });
      const ends = await log.endOffsets(topic);
      const commitWaitMs = await settle('A committed everything after it went idle', async () =>
        [...(await reader.committed(topic))].every(([p, offset]) => offset === ends.get(p)),
      );
      // The idle commit is timed COMMIT_EVERY_MS (100 ms) after the previous one; slack for a loaded machine.
      assert.ok(commitWaitMs < 1000, `idle commit after ${Math.round(commitWaitMs)} ms`);
      joinOnNext = true;
      await log.produce(topic, messages(200, 40, 200));
      await settle('A and B delivered the second batch', async () => seen.size === (await total()));
      await log.produce(topic, messages(200, 40, 400));
      await settle('the third batch was delivered', async () => seen.size === (await total()));
      assert.ok(bRunning, 'B joined');
      assert.deepEqual(
        [...seen.values()].filter((n) => n !== 1),
        [],
        'every message delivered once across the handover',
      );
    } finally {
      await a.stop();
      await b.stop();
      await aRunning;
      await bRunning;
      await log.close();
    }
  });

  it('reads a log another instance writes through a read-only instance', async () => {
    const file = path.join(dir, 'shared.sqlite');
    const writer = createEmbeddedLog(testContext(), { path: file });
    await writer.ensureTopics([{ name: 'shared', partitions: 1, compacted: false }]);
    await writer.produce('shared', messages(2500, 3));
    const reader = createEmbeddedLog(testContext(), { path: file, readonly: true });
    try {
      assert.deepEqual(await reader.endOffsets('shared'), new Map([[0, 2500]]));
      await assert.rejects(reader.produce('shared', messages(1, 1)));
      const seen: number[] = [];
      await reader.readToEnd('shared', (m) => seen.push(m.offset));
      assert.deepEqual(
        seen,
        Array.from({ length: 2500 }, (_, i) => i),
      );
    } finally {
      await reader.close();
      await writer.close();
    }
  });
});
