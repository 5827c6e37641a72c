// Key -> partition, the same function Kafka's (and kafkajs's) default partitioner uses
// (murmur2 of the UTF-8 key, sign bit cleared, mod partitions), so a key lands in the same
// partition whichever transport carries it.

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

let scratch = new Uint8Array(256);

function keyBytes(key: string): ArrayLike<number> {
  // Keys are `chain:address`, ASCII: copy the chars into a reused array instead of allocating a
  // Buffer per message. The result is valid until the next call.
  if (key.length > scratch.length) scratch = new Uint8Array(key.length * 2);
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i);
    if (code > 0x7f) return Buffer.from(key, 'utf8');
    scratch[i] = code;
  }
  return scratch.subarray(0, key.length);
}

/** Kafka's murmur2 (32-bit, seed 0x9747b28c) over the key's UTF-8 bytes. */
export function murmur2(key: string): number {
  const data = keyBytes(key);
  const length = data.length;
  let h = (SEED ^ length) | 0;
  const blocks = length >>> 2;
  for (let i = 0; i < blocks; i++) {
    const at = i * 4;
    let k = data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16) | (data[at + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const tail = length & ~3;
  switch (length & 3) {
    // biome-ignore lint/suspicious/noFallthroughSwitchClause: murmur tail bytes fall through by design
    case 3:
      h ^= data[tail + 2]! << 16;
    // falls through
    // biome-ignore lint/suspicious/noFallthroughSwitchClause: murmur tail bytes fall through by design
    case 2:
      h ^= data[tail + 1]! << 8;
    // falls through
    case 1:
      h ^= data[tail]!;
      h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

export function partitionFor(key: string, partitions: number): number {
  return (murmur2(key) & 0x7fffffff) % partitions;
}
