// Pushed delivery in the embedded log: a consumer wakes on an append (also one made by another
// instance on the same file, as the serving thread's reader does) and costs nothing while idle.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createContext } from '../core/context.ts';
import { loadConfig } from '../core/config.ts';
import { createLogger } from '../core/logger.ts';
import { createEmbeddedLog } from '../core/eventlog/embedded.ts';
import { createNotifier } from '../core/eventlog/notifier.ts';
import type { LogMessage } from '../core/eventlog/types.ts';

const ctx = () => createContext(loadConfig({}), createLogger('fatal'));
const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('embedded log pushed delivery', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-eventlog-push-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('wakes a read-only reader instance on the writer’s appends, offsets kept in the reader’s memory', async () => {
    const file = path.join(dir, 'events.sqlite');
    const writer = createEmbeddedLog(ctx(), { path: file, retentionIntervalMs: 0 });
    await writer.ensureTopics([{ name: 't', partitions: 2, compacted: false }]);
    await writer.produce('t', [{ key: 'a', value: '0' }]);
    const reader = createEmbeddedLog(ctx(), { path: file, readonly: true });
    const consumer = reader.consumer({ group: 'reader', topics: ['t'], start: 'latest' });
    const seen: LogMessage[] = [];
    let arrived!: () => void;
    const enough = new Promise<void>((resolve) => (arrived = resolve));
    const running = consumer.run(async (batch) => {
      seen.push(...batch.messages);
      if (seen.length >= 3) arrived();
    });
    try {
      await sleep(50); // the consumer went to sleep at the end
      const before = timers();
      await sleep(300);
      assert.equal(timers(), before, 'an idle consumer keeps no timer running');
      await writer.produce(
        't',
        [1, 2, 3].map((i) => ({ key: `k${i}`, value: String(i) })),
      );
      await Promise.race([enough, sleep(2000)]);
      assert.deepEqual(seen.map((m) => m.value).sort(), ['1', '2', '3']);
      const committed = await consumer.committed('t');
      assert.equal(
        [...committed.values()].reduce((a, b) => a + Math.max(b, 0), 0),
        4,
      );
    } finally {
      await consumer.stop();
      await running;
      await reader.close();
      await writer.close();
    }
  });

  it('wakes a waiter only for its own topics, in this thread and through the channel', async () => {
    const channel = `spot-notifier-test-${process.pid}-${Date.now()}`;
    const local = createNotifier(channel);
    const other = createNotifier(channel);
    try {
      const topics = ['a', 'c'];
      const state = (promise: Promise<void>) =>
        Promise.race([promise.then(() => 'woken'), sleep(100).then(() => 'asleep')]);

      let seen = local.stamp(topics);
      let waiting = local.wait(topics, seen);
      local.notify('b');
      other.notify('b');
      assert.equal(await state(waiting), 'asleep', 'appends to another topic wake nobody');
      assert.equal(local.stamp(topics), seen);
      other.notify('c');
      assert.equal(await state(waiting), 'woken', "another instance's append to one of its topics wakes it");

      seen = local.stamp(topics);
      waiting = local.wait(topics, seen);
      local.notify('a');
      assert.equal(await state(waiting), 'woken', "this instance's append wakes it");
      // A commit raced between reading the stamp and waiting: no sleep through it.
      seen = local.stamp(topics);
      local.notify('a');
      assert.equal(await state(local.wait(topics, seen)), 'woken');
      assert.equal(await state(local.wait(['b'], local.stamp(['b']), 20)), 'woken', 'a poll timeout ends the wait');
    } finally {
      local.close();
      other.close();
    }
  });
});
