// Decoded reads shared by the consumers of one connection. The serving thread's hot views and
// stream edge read the same new messages moments apart, and each decoded them for itself: an
// inflate per batch, a string per key and value, an object per message, about a third of what
// that thread allocated live. An entry lives for `ttlMs`: long enough for the readers one append
// wakes, short enough that a lone reader's messages are not kept past its batch.
import type { LogMessage } from './types.ts';

export interface ReadShare {
  /** What `read` gives for `key`, read once while `ttlMs` have not passed since; an empty read is not kept. */
  get(key: string, read: () => LogMessage[]): readonly LogMessage[];
  readonly size: number;
  /** Key and value units kept. */
  readonly chars: number;
}

export interface ReadShareOptions {
  ttlMs?: number;
  /**
   * Key and value UTF-16 units kept at most: a catch-up reads many batches within one ttl, and
   * what is kept survives the young generation's collections instead of dying young.
   */
  maxChars?: number;
  now?: () => number;
}

export function createReadShare(options: ReadShareOptions = {}): ReadShare {
  const ttlMs = options.ttlMs ?? 250;
  const maxChars = options.maxChars ?? 4 * 1024 * 1024;
  const now = options.now ?? (() => performance.now());
  // Oldest first: an entry is set once and never refreshed.
  const entries = new Map<string, { messages: LogMessage[]; at: number; chars: number }>();
  let kept = 0;
  // Swept on a timer too, not only by the next read: that comes with the next append, often after
  // the thread's next scavenge, which then copies every message still kept (docs/performance.md).
  let timer: NodeJS.Timeout | null = null;

  function sweep(at: number): void {
    for (const [key, entry] of entries) {
      if (entry.at > at - ttlMs && kept <= maxChars) break;
      entries.delete(key);
      kept -= entry.chars;
    }
  }

  /** A timer for when the oldest entry expires, unless one is set. */
  function sweepLater(): void {
    if (timer !== null) return;
    const oldest = entries.values().next().value;
    if (oldest === undefined) return;
    timer = setTimeout(
      () => {
        timer = null;
        sweep(now());
        sweepLater();
      },
      Math.max(1, oldest.at + ttlMs - now()),
    );
    timer.unref();
  }

  return {
    get(key, read) {
      const at = now();
      sweep(at);
      const entry = entries.get(key);
      if (entry) return entry.messages;
      const messages = read();
      if (messages.length > 0) {
        let chars = 0;
        for (const message of messages) chars += message.key.length + message.value.length;
        entries.set(key, { messages, at, chars });
        kept += chars;
        if (kept > maxChars) sweep(at);
        sweepLater();
      }
      return messages;
    },
    get size() {
      return entries.size;
    },
    get chars() {
      return kept;
    },
  };
}
