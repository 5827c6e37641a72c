// Update frame bytes: prefix + seq + shared tail, assembled into one reused buffer; outboxes
// flushed to their sockets in slices.
import assert from 'node:assert/strict';
import { createOutbox, flushAll, type FrameSocket, type OutboxHub } from '../stream-edge/backpressure.ts';
import { createFrameAssembler, cursorPrefix, updatePrefix, updateTail } from '../stream-edge/update-frames.ts';

describe('stream edge: update frame assembly', () => {
  const prefix = updatePrefix('spot.trades', 'sub-1');

  it('writes every seq in full, across digit counts, with the data as given', () => {
    const assembler = createFrameAssembler();
    const data = JSON.stringify({ id: 't1', name: 'Ünïcode ☃', amount: '1.5' });
    const tail = updateTail(data);
    for (const seq of [1, 9, 10, 99, 100, 12_345, 1_000_000, 2 ** 40]) {
      const text = Buffer.from(assembler.assemble(prefix, seq, tail)).toString('utf8');
      assert.equal(
        text,
        `{"type":"update","channel":"spot.trades","subscriptionId":"sub-1","seq":${seq},"data":${data}}`,
      );
      assert.deepEqual(JSON.parse(text), {
        type: 'update',
        channel: 'spot.trades',
        subscriptionId: 'sub-1',
        seq,
        data: JSON.parse(data),
      });
    }
  });

  it('grows for a frame larger than its buffer and keeps assembling small ones after', () => {
    const assembler = createFrameAssembler();
    const big = JSON.stringify({ name: 'z'.repeat(40_000) });
    const small = JSON.stringify({ name: 'a' });
    const bigFrame = Buffer.from(assembler.assemble(prefix, 7, updateTail(big))).toString('utf8');
    assert.equal(JSON.parse(bigFrame).data.name.length, 40_000);
    const smallFrame = Buffer.from(assembler.assemble(prefix, 8, updateTail(small))).toString('utf8');
    assert.deepEqual(JSON.parse(smallFrame), {
      type: 'update',
      channel: 'spot.trades',
      subscriptionId: 'sub-1',
      seq: 8,
      data: { name: 'a' },
    });
  });

  it('hands out views of one buffer: a frame is valid until the next assemble', () => {
    const assembler = createFrameAssembler();
    const tail = updateTail('{"x":1}');
    const first = assembler.assemble(prefix, 1, tail);
    const copy = Buffer.from(first);
    assembler.assemble(prefix, 2, tail);
    assert.equal(first.buffer, assembler.assemble(prefix, 3, tail).buffer);
    assert.equal(JSON.parse(copy.toString('utf8')).seq, 1);
  });

  it('writes the cursor between seq and data: the subscription head, then the shared position', () => {
    const assembler = createFrameAssembler();
    const mid = cursorPrefix('tabc123.');
    const tail = updateTail('{"x":1}', 'mwtt41co.2-0-1-0');
    for (const seq of [1, 42, 123_456]) {
      const text = Buffer.from(assembler.assemble(prefix, seq, tail, mid)).toString('utf8');
      assert.equal(
        text,
        `{"type":"update","channel":"spot.trades","subscriptionId":"sub-1","seq":${seq},"cursor":"tabc123.mwtt41co.2-0-1-0","data":{"x":1}}`,
      );
      assert.equal(JSON.parse(text).cursor, 'tabc123.mwtt41co.2-0-1-0');
    }
  });

  it('flushes outboxes in slices: each socket once per round, in order, pushed-again ones at the end', () => {
    const hub: OutboxHub = {
      pending: [],
      flushed: 0,
      assembler: createFrameAssembler(),
      counters: { framesSent: 0, framesQueued: 0 },
    };
    const written: string[] = [];
    const socket = (name: string): FrameSocket => ({
      send: (message) => (written.push(`${name}:${Buffer.from(message).toString()}`), 1),
      getBufferedAmount: () => 0,
      cork: (write) => write(),
    });
    const options = { maxUnsentFrames: 1024, hub, onOverflow: () => assert.fail('no overflow') };
    const [a, b, c] = ['a', 'b', 'c'].map((name) => createOutbox(socket(name), options));
    a!.push('1');
    b!.push('2');
    c!.push('3');
    // The slice is spent after the first socket: the rest waits for the next call.
    assert.equal(
      flushAll(hub, () => true),
      false,
    );
    assert.deepEqual(written, ['a:1']);
    a!.push('4'); // flushed this round already: listed again, after c
    b!.push('5'); // still listed: not twice
    assert.equal(flushAll(hub), true);
    assert.deepEqual(written, ['a:1', 'b:2', 'b:5', 'c:3', 'a:4']);
    assert.equal(hub.pending.length, 0);
    assert.equal(hub.counters.framesSent, 5);
    assert.equal(hub.counters.framesQueued, 0);
    c!.push('6');
    assert.equal(flushAll(hub), true);
    assert.deepEqual(written.slice(5), ['c:6']);
  });
});
