// Values the views keep plain until they go a while without being replaced, then pack (deflate),
// oldest first: a token changing at every views pass would otherwise be deflated at every pass.
import { performance } from 'node:perf_hooks';

export interface PackQueue<T> {
  /** A value made now, plain; past `maxPlain` values the oldest is packed at once. */
  add(value: T): void;
  /** The value was replaced or removed while plain: it is not packed. */
  delete(value: T): void;
  /**
   * Packs the values made before `madeBefore` (performance.now()), oldest first, while `due` says
   * the slice has time left; returns how many stay plain.
   */
  pack(madeBefore: number, due?: () => boolean): number;
}

export function createPackQueue<T>(packOne: (value: T) => void, maxPlain: number): PackQueue<T> {
  // Oldest first, with when each was made.
  const plain = new Map<T, number>();
  const packNow = (value: T) => {
    plain.delete(value);
    packOne(value);
  };
  return {
    add(value) {
      plain.set(value, performance.now());
      if (plain.size > maxPlain) packNow(plain.keys().next().value as T);
    },
    delete(value) {
      plain.delete(value);
    },
    pack(madeBefore, due) {
      for (const [value, madeAt] of plain) {
        if (madeAt >= madeBefore || due?.()) break;
        packNow(value);
      }
      return plain.size;
    },
  };
}
