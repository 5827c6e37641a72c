// Bench inputs: chain records (Solana transactions, EVM receipts, off-chain events) from the
// market simulator's model and chain writer, made once ahead of every timed section and cached
// on disk so each scenario child reads the same records instead of re-encoding them.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Chain } from '../../core/chains.ts';
import type { IngestRecords } from '../../ingest/publisher.ts';
import { createAddressSource } from '../../ingest/simulator/addresses.ts';
import { createChainWriter, type ChainRecord } from '../../ingest/simulator/chain-writer.ts';
import { createMarket } from '../../ingest/simulator/model.ts';
import { createSimulatorDecoders } from '../../ingest/simulator/pipeline.ts';
import { SIM_PROFILES, type SimProfileName } from '../../ingest/simulator/profiles.ts';

export interface InputSpec {
  seed: number;
  chains: Chain[];
  /** Market events (trades and reference swaps) wanted; the run stops at the first step past it. */
  trades: number;
  /** Simulated swaps per second of event time. */
  rate: number;
  /** Event time of the first record: this long before the wall clock, so hot views keep the tokens. */
  startAgoMs: number;
  /** The simulator profile whose market makes the records (`--set profile`). */
  profile: SimProfileName;
}

/** The profile named by `--set profile` ('' or absent: the default one); throws on an unknown name. */
export function inputProfile(name: unknown): SimProfileName {
  const profile = name === undefined || name === '' ? 'default' : String(name);
  if (!Object.hasOwn(SIM_PROFILES, profile))
    throw new Error(`unknown profile "${profile}"; one of ${Object.keys(SIM_PROFILES).join(', ')}`);
  return profile as SimProfileName;
}

export interface InputFile {
  spec: InputSpec;
  startTime: number;
  records: ChainRecord[];
  generateMs: number;
}

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Changes whenever the simulator or an encoder changes, so a stale cache is never read. */
function sourceStamp(): string {
  const hash = crypto.createHash('sha256');
  for (const dir of ['ingest/simulator', 'ingest/solana', 'ingest/evm']) {
    for (const name of fs.readdirSync(path.join(REPO, dir)).sort()) {
      const stat = fs.statSync(path.join(REPO, dir, name));
      hash.update(`${dir}/${name}:${stat.size}:${stat.mtimeMs};`);
    }
  }
  return hash.digest('hex').slice(0, 12);
}

export function inputCachePath(spec: InputSpec): string {
  const key = `${spec.seed}-${spec.profile}-${spec.chains.join('_')}-${spec.trades}-${spec.rate}-${sourceStamp()}`;
  return path.join(os.tmpdir(), 'spot-bench-inputs', `${key}.json`);
}

/** Runs the market model and the chain writer until `trades` market swaps exist. */
export function generateInputs(spec: InputSpec): InputFile {
  const started = performance.now();
  // Whole seconds, so repeated runs on one day share the layout of blocks.
  const startTime = Math.floor((Date.now() - spec.startAgoMs) / 1000) * 1000;
  const market = createMarket({
    seed: spec.seed,
    chains: spec.chains,
    startTime,
    addresses: createAddressSource(String(spec.seed)),
    profile: spec.profile,
  });
  const writer = createChainWriter({ seed: spec.seed });
  const records: ChainRecord[] = [];
  let trades = 0;
  let until = startTime;
  const stepMs = 1000;
  while (trades < spec.trades) {
    until += stepMs;
    for (const event of market.advance(until, spec.rate)) {
      if (event.type === 'trade' || event.type === 'reference') trades++;
      for (const record of writer.write(event)) records.push(record);
    }
  }
  return { spec, startTime, records, generateMs: performance.now() - started };
}

/** The cached records of `spec`, generating (and caching) them on the first call. */
export function ensureInputs(spec: InputSpec): string {
  const file = inputCachePath(spec);
  if (fs.existsSync(file)) return file;
  const generated = generateInputs(spec);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(generated));
  fs.renameSync(temp, file);
  return file;
}

export function readInputs(file: string): InputFile {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as InputFile;
}

/** Decodes every record with the real decoders (outside timed sections: replay and latency inputs). */
export function decodeAll(records: readonly ChainRecord[]): IngestRecords[] {
  const decoders = createSimulatorDecoders();
  return records.map((record) => decoders.decode(record));
}

const decodedPath = (inputFile: string) => inputFile.replace(/\.json$/, '.decoded.json');

/** The decoded form of a cached input file, decoded (and cached) on the first call. */
export function ensureDecoded(inputFile: string): string {
  const file = decodedPath(inputFile);
  if (fs.existsSync(file)) return file;
  const decoded = decodeAll(readInputs(inputFile).records);
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(decoded));
  fs.renameSync(temp, file);
  return file;
}

export function readDecoded(inputFile: string): IngestRecords[] {
  return JSON.parse(fs.readFileSync(ensureDecoded(inputFile), 'utf8')) as IngestRecords[];
}

export function countSwaps(decoded: readonly IngestRecords[]): { swaps: number; events: number } {
  let swaps = 0;
  let events = 0;
  for (const d of decoded) {
    swaps += d.swaps.length;
    events += d.events.length;
  }
  return { swaps, events };
}
