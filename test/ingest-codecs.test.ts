// The fast paths of the decoders against their references: base58 against a BigInt
// conversion, the Jacobi on-curve test against Euler's criterion, the precompiled EVM event
// decoders against viem's decodeEventLog (values and errors alike).
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { decodeEventLog, type Hex } from 'viem';
import { EVENTS, TOPIC0, type EventName } from '../ingest/evm/abi.ts';
import { compileEventDecoder } from '../ingest/evm/event-decoders.ts';
import { base58Decode, base58Encode } from '../ingest/solana/base58.ts';
import { pubkeyBytes } from '../ingest/solana/borsh.ts';
import { deriveProgramAddress, findProgramAddress, isOnCurve, isOnCurveEuler, jacobi } from '../ingest/solana/pda.ts';

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Base58 by plain BigInt division: slow, obviously right. */
function referenceEncode(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  let value = 0n;
  for (const byte of bytes) value = value * 256n + BigInt(byte);
  let text = '';
  while (value > 0n) {
    text = ALPHABET[Number(value % 58n)]! + text;
    value /= 58n;
  }
  return '1'.repeat(zeros) + text;
}

describe('base58', () => {
  it('encodes like a BigInt conversion and decodes back, for every length up to 300 bytes', () => {
    for (let length = 0; length <= 300; length++) {
      for (let round = 0; round < 4; round++) {
        const bytes = crypto.randomBytes(length);
        if (round === 1) bytes.fill(0, 0, Math.min(3, length)); // leading zeros become '1's
        if (round === 2) bytes.fill(0);
        if (round === 3) bytes.fill(0xff);
        const text = base58Encode(bytes);
        assert.equal(text, referenceEncode(bytes), `length ${length}`);
        assert.deepEqual(Buffer.from(base58Decode(text)), bytes, `length ${length}`);
      }
    }
  });

  it('decodes random text to bytes that encode back to it', () => {
    for (let i = 0; i < 2000; i++) {
      let text = i % 7 === 0 ? '11' : '';
      for (let k = i % 90; k > 0; k--) text += ALPHABET[crypto.randomInt(58)];
      assert.equal(base58Encode(base58Decode(text)), text);
    }
  });

  it('rejects characters outside the alphabet with their position', () => {
    assert.throws(
      () => base58Decode('abc0'),
      (error: Error) => error instanceof RangeError && /at 3/.test(error.message),
    );
    assert.throws(() => base58Decode('é'), RangeError);
  });
});

const P = 2n ** 255n - 19n;

function littleEndian(value: bigint): Uint8Array {
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = Number((value >> BigInt(8 * i)) & 0xffn);
  return bytes;
}

describe('ed25519 on-curve test', () => {
  it("agrees with Euler's criterion on random candidates, without touching the input", () => {
    let on = 0;
    for (let i = 0; i < 1500; i++) {
      const bytes = crypto.randomBytes(32);
      const copy = Buffer.from(bytes);
      const fast = isOnCurve(bytes);
      assert.deepEqual(bytes, copy);
      assert.equal(fast, isOnCurveEuler(bytes), bytes.toString('hex'));
      if (fast) on++;
    }
    // About half of all y have a point: both outcomes were exercised.
    assert.ok(on > 500 && on < 1000, `on curve: ${on}`);
  });

  it('agrees on the edge cases: u = 0, y ≥ P, the sign bit, all ones', () => {
    const cases = [0n, 1n, P - 1n, P, P + 1n, 2n ** 255n - 1n, 2n ** 255n + 1n, (1n << 256n) - 1n, 2n, 4n, 9n];
    for (const value of cases) {
      const bytes = littleEndian(value);
      assert.equal(isOnCurve(bytes), isOnCurveEuler(bytes), value.toString(16));
    }
    assert.equal(isOnCurve(littleEndian(1n)), true); // y = 1: x = 0
  });

  it("computes Legendre symbols of a small prime like Euler's criterion", () => {
    const p = 1_000_003n;
    for (let a = 0n; a < 3000n; a++) {
      const euler = a % p === 0n ? 0 : modPowSmall(a, (p - 1n) / 2n, p) === 1n ? 1 : -1;
      assert.equal(jacobi(a, p), euler, `a = ${a}`);
    }
  });
});

describe('program-derived addresses', () => {
  it('caches by the seed list, not by the seeds run together', () => {
    const program = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
    const whole = findProgramAddress([Buffer.from('ab:c')], program);
    const split = findProgramAddress([Buffer.from('ab'), Buffer.from('c')], program);
    const splitColon = findProgramAddress([Buffer.from('ab:'), Buffer.from('c')], program);
    assert.equal(whole, deriveProgramAddress([Buffer.from('ab:c')], program));
    assert.equal(split, deriveProgramAddress([Buffer.from('ab'), Buffer.from('c')], program));
    assert.equal(splitColon, deriveProgramAddress([Buffer.from('ab:'), Buffer.from('c')], program));
    assert.notEqual(split, splitColon);
    // Seeds are hashed run together: 'ab' + ':c' is the same address as 'ab:' + 'c', from a cache key of its own.
    assert.equal(findProgramAddress([Buffer.from('ab'), Buffer.from(':c')], program), splitColon);
  });
});

describe('borsh encoder', () => {
  it("keeps cached keys in slabs of their own, not in Node's shared buffer pool", () => {
    // A key copied with Buffer.from() is a slice of Node's 8 KB pool and keeps the whole slab alive
    // while it is cached, however much of the rest is garbage (235 MB on a mainnet run).
    const backing = new Set<ArrayBufferLike>();
    for (let i = 0; i < 4096; i++) {
      backing.add(pubkeyBytes(base58Encode(crypto.randomBytes(32)), 'probe').buffer);
      Buffer.allocUnsafe(1024).fill(0); // other work taking buffers from the pool between keys
    }
    // 1,024 keys a slab: 4 slabs, one more if an earlier test left one partly used.
    assert.ok(backing.size <= 5, `4,096 cached keys are backed by ${backing.size} buffers`);
  });
});

function modPowSmall(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  base %= modulus;
  for (; exponent > 0n; exponent >>= 1n) {
    if (exponent & 1n) result = (result * base) % modulus;
    base = (base * base) % modulus;
  }
  return result;
}

/** A word of one of the shapes the decoders branch on. */
function randomWord(): string {
  const shape = crypto.randomInt(6);
  if (shape === 0) return crypto.randomBytes(32).toString('hex');
  if (shape === 1) return crypto.randomInt(2).toString(16).padStart(64, '0'); // 0 or 1
  if (shape === 2) return crypto.randomBytes(3).toString('hex').padStart(64, '0'); // fits int24/uint24
  if (shape === 3) return crypto.randomBytes(20).toString('hex').padStart(64, '0'); // address-like
  if (shape === 4) return 'f'.repeat(58) + crypto.randomBytes(3).toString('hex'); // small negative
  return crypto.randomBytes(14).toString('hex').padStart(64, '0'); // uint112
}

/** viem's outcome with addresses lowercased (the fast path does not checksum), or the error name. */
function outcome(run: () => unknown): unknown {
  try {
    const args = run() as Record<string, unknown>;
    return Object.fromEntries(
      Object.entries(args).map(([key, value]) => [key, typeof value === 'string' ? value.toLowerCase() : value]),
    );
  } catch (error) {
    return { threw: (error as Error).name };
  }
}

describe('precompiled EVM event decoders', () => {
  it("give viem's strict decodeEventLog results and errors, on valid and malformed logs", () => {
    for (const [name, item] of Object.entries(EVENTS)) {
      const decode = compileEventDecoder(item);
      const indexedCount = item.inputs.filter((input) => 'indexed' in input && input.indexed).length;
      const dataCount = item.inputs.length - indexedCount;
      const topic0 = TOPIC0[name as EventName];
      for (let i = 0; i < 300; i++) {
        let topics: string[] = [topic0, ...Array.from({ length: indexedCount }, () => `0x${randomWord()}`)];
        let data = `0x${Array.from({ length: dataCount }, randomWord).join('')}`;
        const malformed = i % 10;
        if (malformed === 1 && topics.length > 1) topics = topics.slice(0, -1); // a topic missing
        if (malformed === 2) topics = [...topics, `0x${randomWord()}`]; // an extra topic
        if (malformed === 3) data = data.slice(0, Math.max(2, data.length - 64)); // a word short
        if (malformed === 4) data = `${data}${randomWord().slice(0, 8)}`; // trailing bytes
        if (malformed === 5) data = `${data}0`; // odd length
        if (malformed === 6 && data.length > 10) data = `${data.slice(0, 10)}zz${data.slice(12)}`; // not hex
        if (malformed === 7) data = '0x';
        if (malformed === 8) topics = [`0x${randomWord()}`, ...topics.slice(1)]; // another event's topic0
        const expected = outcome(
          () =>
            decodeEventLog({ abi: [item], topics: topics as [Hex, ...Hex[]], data: data as Hex, strict: true }).args,
        );
        const actual = outcome(() => decode(topics as Hex[], data as Hex));
        assert.deepEqual(actual, expected, `${name}: topics ${topics.join(',')} data ${data}`);
      }
    }
  });
});
