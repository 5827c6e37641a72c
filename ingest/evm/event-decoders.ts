// Per-event log decoders prepared once from viem's parsed ABI items. Static words (address,
// bool, intN/uintN, bytesN) are read straight from the hex text; anything else (dynamic types,
// short or malformed data, missing topics, out-of-range values) goes through viem's strict
// decodeEventLog, so its results and errors stay the reference behaviour.
import { decodeEventLog, toEventSelector, type AbiEvent, type AbiParameter, type Hex } from 'viem';

type WordReader = (hex: string, at: number) => unknown;

/** Why a word cannot be read here; viem then decodes the log (and throws if it must). */
const FALLBACK = Symbol('fallback');

const HEX = /^0x[0-9a-f]*$/;
const TWO_256 = 1n << 256n;
const INT256_MAX = (1n << 255n) - 1n;

const bigWord = (hex: string, at: number) => BigInt(`0x${hex.slice(at, at + 64)}`);

/** viem's decodeParameter for one static type, or null when the type is not one. */
function wordReader(param: AbiParameter): WordReader | null {
  const type = param.type;
  if (type === 'address') return (hex, at) => `0x${hex.slice(at + 24, at + 64)}`; // lowercase: callers compare lowercase
  if (type === 'bool') {
    return (hex, at) => {
      const value = bigWord(hex, at);
      return value === 0n ? false : value === 1n ? true : FALLBACK;
    };
  }
  const fixedBytes = /^bytes(\d+)$/.exec(type);
  if (fixedBytes) {
    const size = Number(fixedBytes[1]);
    if (size < 1 || size > 32) return null;
    return (hex, at) => `0x${hex.slice(at, at + 2 * size)}`;
  }
  const integer = /^(u?)int(\d*)$/.exec(type);
  if (!integer) return null;
  const signed = integer[1] === '';
  const bits = integer[2] ? Number(integer[2]) : 256;
  const toSigned = (value: bigint) => (signed && value > INT256_MAX ? value - TWO_256 : value);
  if (bits > 48) return (hex, at) => toSigned(bigWord(hex, at));
  // viem returns a number for ≤ 48 bits and throws when the word is not a safe integer.
  return (hex, at) => {
    const value = Number(toSigned(bigWord(hex, at)));
    return Number.isSafeInteger(value) ? value : FALLBACK;
  };
}

export type EventArgs = Record<string, unknown>;
export type EventDecoder = (topics: readonly Hex[], data: Hex) => EventArgs;

/** A decoder for one named event (every input named), strict like decodeEventLog. */
export function compileEventDecoder(item: AbiEvent): EventDecoder {
  const viemDecode: EventDecoder = (topics, data) => {
    const { args } = decodeEventLog({ abi: [item], topics: topics as [Hex, ...Hex[]], data, strict: true });
    return args as EventArgs;
  };
  const indexed: { name: string; read: WordReader }[] = [];
  const words: { name: string; read: WordReader }[] = [];
  for (const input of item.inputs) {
    const read = wordReader(input);
    if (!read || !input.name) return viemDecode;
    (input.indexed ? indexed : words).push({ name: input.name, read });
  }
  const dataLength = 2 + 64 * words.length;
  const selector = toEventSelector(item);
  return (topics, data) => {
    if (topics[0] !== selector || topics.length <= indexed.length) return viemDecode(topics, data);
    // viem's result keeps its key order: indexed inputs, then the data words.
    const args: EventArgs = {};
    for (let i = 0; i < indexed.length; i++) {
      const topic = topics[i + 1]!;
      if (topic.length !== 66 || !HEX.test(topic)) return viemDecode(topics, data);
      const value = indexed[i]!.read(topic, 2);
      if (value === FALLBACK) return viemDecode(topics, data);
      args[indexed[i]!.name] = value;
    }
    if (words.length > 0) {
      // Odd-length hex is padded by viem, shifting every word: its business.
      if (data.length < dataLength || (data.length & 1) === 1 || !HEX.test(data)) return viemDecode(topics, data);
      for (let i = 0; i < words.length; i++) {
        const value = words[i]!.read(data, 2 + 64 * i);
        if (value === FALLBACK) return viemDecode(topics, data);
        args[words[i]!.name] = value;
      }
    }
    return args;
  };
}
