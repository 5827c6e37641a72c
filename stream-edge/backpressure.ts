// Per-connection outbox: frames wait here, not inside uWS, whenever the socket has backpressure.
// A frame goes to uWS only while uWS buffers nothing for the socket, so the frames the edge
// still holds for a connection are counted exactly, and a slow reader costs the others
// nothing: a push is an array append, never a wait on a socket.

export const DEFAULT_MAX_UNSENT_FRAMES = 1024;
export const BACKPRESSURE_CLOSE_CODE = 4008;

/** What the outbox needs of a uWS WebSocket. */
export interface FrameSocket {
  /** 1 success, 0 accepted but buffered (backpressure), 2 dropped. */
  send(message: string): number;
  getBufferedAmount(): number;
  cork(cb: () => void): unknown;
}

export interface OutboxCounters {
  framesSent: number;
  framesQueued: number;
}

export interface Outbox {
  /** Queues a frame; flushes (and may close for backpressure) when the limit is met. */
  push(frame: string): void;
  /** Hands queued frames to the socket while it takes them without buffering. */
  flush(): void;
  /** Frames accepted for this connection and not yet handed to the socket. */
  unsent(): number;
  readonly closed: boolean;
  /** The socket closed: drop everything queued, accept nothing more. */
  markClosed(): void;
}

export interface OutboxOptions {
  maxUnsentFrames: number;
  /** Outboxes with queued frames; the router flushes them after each batch. */
  dirty: Set<Outbox>;
  counters: OutboxCounters;
  /** Called once when the limit is met; it must end the socket (code 4008). */
  onOverflow: () => void;
}

// Compact the queue array once this many sent entries sit at its head.
const COMPACT_AFTER = 256;

export function createOutbox(socket: FrameSocket, options: OutboxOptions): Outbox {
  const { maxUnsentFrames, dirty, counters } = options;
  let queue: string[] = [];
  let head = 0;
  let closed = false;

  const drop = () => {
    counters.framesQueued -= queue.length - head;
    queue = [];
    head = 0;
    dirty.delete(outbox);
  };

  const writeQueued = () => {
    while (head < queue.length && socket.getBufferedAmount() === 0) {
      if (socket.send(queue[head]!) === 2) break; // dropped by uWS: keep it, retry on drain
      if (closed) return; // the send closed the socket (its close handler already dropped the queue)
      queue[head] = '';
      head++;
      counters.framesSent++;
      counters.framesQueued--;
    }
  };

  const outbox: Outbox = {
    push(frame) {
      if (closed) return;
      queue.push(frame);
      counters.framesQueued++;
      dirty.add(outbox);
      if (queue.length - head >= maxUnsentFrames) {
        outbox.flush();
        if (!closed && queue.length - head >= maxUnsentFrames) {
          closed = true;
          drop();
          options.onOverflow();
        }
      }
    },
    flush() {
      if (closed || head === queue.length) return;
      socket.cork(writeQueued);
      if (head === queue.length) {
        queue = [];
        head = 0;
      } else if (head >= COMPACT_AFTER) {
        queue = queue.slice(head);
        head = 0;
      }
    },
    unsent() {
      return queue.length - head;
    },
    get closed() {
      return closed;
    },
    markClosed() {
      if (closed) return;
      closed = true;
      drop();
    },
  };
  return outbox;
}
