// Per-connection outbox: frames wait here, not inside uWS, whenever the socket has backpressure.
// A frame goes to uWS only while uWS buffers nothing for the socket, so the frames the edge
// still holds for a connection are counted exactly, and a slow reader costs the others
// nothing: a push is an array append, never a wait on a socket.
// Frames pushed during one routed batch are written together: one cork (one syscall) per
// socket per batch instead of one per frame, which is what fan-out throughput hangs on.
import type { FrameAssembler } from './update-frames.ts';

export const DEFAULT_MAX_UNSENT_FRAMES = 1024;
export const BACKPRESSURE_CLOSE_CODE = 4008;

/** uWS WebSocket.send results. */
const SEND_SUCCESS = 1;
const SEND_DROPPED = 2;

/** What the outbox needs of a uWS WebSocket. */
export interface FrameSocket {
  /** Sends a text frame. 1 success, 0 accepted but buffered (backpressure), 2 dropped. */
  send(message: string | Uint8Array): number;
  getBufferedAmount(): number;
  cork(cb: () => void): unknown;
}

export interface OutboxCounters {
  framesSent: number;
  framesQueued: number;
}

export interface Outbox {
  /** Queues a text frame (ack, error); flushes (and may close for backpressure) when the limit is met. */
  push(frame: string): void;
  /** Queues the update frame prefix + seq + mid + tail (see update-frames.ts), under the same rules. */
  pushUpdate(prefix: Uint8Array, seq: number, tail: Uint8Array, mid?: Uint8Array | null): void;
  /** Hands queued frames to the socket while it takes them without buffering. */
  flush(): void;
  /** Frames accepted for this connection and not yet handed to the socket. */
  unsent(): number;
  readonly closed: boolean;
  /** The socket closed: drop everything queued, accept nothing more. */
  markClosed(): void;
}

/** What every outbox of one edge shares. */
export interface OutboxHub {
  /** Outboxes pushed to since the last complete flushAll(); each listed once until it is flushed. */
  pending: Array<{ flushListed(): void }>;
  /** How many of `pending` a sliced flushAll() has flushed so far. */
  flushed: number;
  assembler: FrameAssembler;
  counters: OutboxCounters;
}

export interface OutboxOptions {
  maxUnsentFrames: number;
  hub: OutboxHub;
  /** Called once when the limit is met; it must end the socket (code 4008). */
  onOverflow: () => void;
}

/**
 * Flushes the outboxes pushed to since the last complete call (one cork per socket), while `due`
 * says the slice has time left; returns true once none is left. A flush to a thousand sockets is
 * a thousand writes (up to 15–27 ms); in slices, requests on the same thread go between them.
 * An outbox flushed in this round and pushed to again is listed again, at the end.
 */
export function flushAll(hub: OutboxHub, due?: () => boolean): boolean {
  const pending = hub.pending;
  while (hub.flushed < pending.length) {
    pending[hub.flushed++]!.flushListed();
    if (hub.flushed < pending.length && due?.()) return false;
  }
  pending.length = 0;
  hub.flushed = 0;
  return true;
}

// The queue is flat, four slots a frame: [prefix, seq, mid, tail] for an update, [null, 0, null,
// text] for a text frame. Pushing allocates nothing but array growth.
const SLOTS = 4;
// Compact the queue array once this many sent slots sit at its head.
const COMPACT_AFTER = 256 * SLOTS;

// A class, not a closure bag: one hidden class for every connection keeps push/flush monomorphic.
class SocketOutbox implements Outbox {
  closed = false;
  private queue: Array<Uint8Array | string | number | null> = [];
  private head = 0;
  /** In hub.pending until the next flushAll(). */
  private listed = false;
  private readonly write: () => void;

  constructor(
    private readonly socket: FrameSocket,
    private readonly options: OutboxOptions,
  ) {
    this.write = () => this.writeQueued();
  }

  push(frame: string): void {
    if (this.closed) return;
    this.queue.push(null, 0, null, frame);
    this.queued();
  }

  pushUpdate(prefix: Uint8Array, seq: number, tail: Uint8Array, mid: Uint8Array | null = null): void {
    if (this.closed) return;
    this.queue.push(prefix, seq, mid, tail);
    this.queued();
  }

  flushListed(): void {
    this.listed = false;
    this.flush();
  }

  flush(): void {
    if (this.closed || this.head === this.queue.length) return;
    // uWS already holds data for this socket: wait for its drain event.
    if (this.socket.getBufferedAmount() !== 0) return;
    this.socket.cork(this.write);
    if (this.closed) return;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head >= COMPACT_AFTER) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  unsent(): number {
    return (this.queue.length - this.head) / SLOTS;
  }

  markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    this.drop();
  }

  private queued(): void {
    const hub = this.options.hub;
    hub.counters.framesQueued++;
    if (!this.listed) {
      this.listed = true;
      hub.pending.push(this);
    }
    if (this.unsent() >= this.options.maxUnsentFrames) {
      this.flush();
      if (!this.closed && this.unsent() >= this.options.maxUnsentFrames) {
        this.closed = true;
        this.drop();
        this.options.onOverflow();
      }
    }
  }

  /** Inside the cork: send until uWS starts buffering (status 0: taken, but the socket is full). */
  private writeQueued(): void {
    const queue = this.queue;
    const { assembler, counters } = this.options.hub;
    let head = this.head;
    while (head < queue.length) {
      const prefix = queue[head] as Uint8Array | null;
      const status =
        prefix === null
          ? this.socket.send(queue[head + 3] as string)
          : this.socket.send(
              assembler.assemble(
                prefix,
                queue[head + 1] as number,
                queue[head + 3] as Uint8Array,
                queue[head + 2] as Uint8Array | null,
              ),
            );
      if (status === SEND_DROPPED) break; // not taken: keep it, retry on drain
      if (this.closed) return; // the send closed the socket (its close handler dropped the queue)
      queue[head] = null;
      queue[head + 3] = null; // let the shared tail go once every socket has it
      head += SLOTS;
      counters.framesSent++;
      counters.framesQueued--;
      if (status !== SEND_SUCCESS) break; // buffered by uWS: the rest waits for drain
    }
    this.head = head;
  }

  private drop(): void {
    this.options.hub.counters.framesQueued -= this.unsent();
    this.queue = [];
    this.head = 0;
  }
}

export function createOutbox(socket: FrameSocket, options: OutboxOptions): Outbox {
  return new SocketOutbox(socket, options);
}
