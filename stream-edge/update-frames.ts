// Update frames as bytes: `{"type":"update","channel":…,"subscriptionId":…,"seq":N,"cursor":…,"data":…}`.
// A subscription keeps its constant prefix and cursor head (`,"cursor":"<kind><filters hash>.`) as
// bytes; each routed message encodes its `<position>","data":…}` tail once for every subscription; the frame itself is assembled only when the
// socket takes it, into one reusable buffer that uWS copies from, so a frame costs no
// allocation and a queued frame holds no bytes of its own.

/** Constant head of every update frame of a subscription, up to and including `"seq":`. */
export function updatePrefix(channel: string, subscriptionId: string): Buffer {
  return Buffer.from(
    `{"type":"update","channel":${JSON.stringify(channel)},"subscriptionId":${JSON.stringify(subscriptionId)},"seq":`,
  );
}

/** Constant part of a subscription's cursor, written after seq: `,"cursor":"<head>`. */
export function cursorPrefix(cursorHead: string): Buffer {
  return Buffer.from(`,"cursor":"${cursorHead}`);
}

/**
 * The tail every subscription shares for one `data` JSON text: `<position>","data":<data>}`
 * after a cursor prefix, or `,"data":<data>}` when there is none (position omitted).
 */
export function updateTail(data: string, position?: string): Buffer {
  return Buffer.from(position === undefined ? `,"data":${data}}` : `${position}","data":${data}}`);
}

export interface FrameAssembler {
  /**
   * prefix + seq + mid + tail, in a buffer that the next call overwrites: hand it to something
   * that copies it at once (uWS send does). `mid` is the subscription's cursor prefix.
   */
  assemble(prefix: Uint8Array, seq: number, tail: Uint8Array, mid?: Uint8Array | null): Uint8Array;
}

const DIGIT_0 = 48;
/** Frames up to this size reuse a cached view of the buffer (one per length). */
const CACHED_VIEW_MAX = 16 * 1024;

export function createFrameAssembler(): FrameAssembler {
  let buffer = new Uint8Array(CACHED_VIEW_MAX);
  // views[n] is buffer's first n bytes; a view per length, so assembling allocates nothing.
  const views = new Array<Uint8Array | undefined>(CACHED_VIEW_MAX + 1).fill(undefined);

  return {
    assemble(prefix, seq, tail, mid) {
      let digits = 1;
      for (let n = seq; n >= 10; n = Math.floor(n / 10)) digits++;
      const seqEnd = prefix.length + digits;
      const midLength = mid ? mid.length : 0;
      const length = seqEnd + midLength + tail.length;
      if (length > buffer.length) {
        buffer = new Uint8Array(2 ** Math.ceil(Math.log2(length)));
        views.fill(undefined); // they looked at the old buffer
      }
      buffer.set(prefix, 0);
      for (let i = seqEnd - 1, n = seq; i >= prefix.length; i--, n = Math.floor(n / 10)) buffer[i] = DIGIT_0 + (n % 10);
      if (mid) buffer.set(mid, seqEnd);
      buffer.set(tail, seqEnd + midLength);
      if (length > CACHED_VIEW_MAX) return buffer.subarray(0, length);
      return (views[length] ??= buffer.subarray(0, length));
    },
  };
}
