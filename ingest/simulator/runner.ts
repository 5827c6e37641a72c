// The market simulator as a chain source: a warm start that fast-forwards history when the data
// dir is new, then live trading at `rate` swaps/s with event time = wall clock. Every event goes
// SimEvent → chain record → the real decoders → the ingest publisher.
//
// State marker: <dataDir>/simulator.json {seed, runSeed, lastEventTime}, written after the
// records up to lastEventTime were acknowledged. On a restart the simulator does not warm-start
// again: it fills the gap since lastEventTime (at most warmHours, at history density) and goes
// live. The market itself restarts with fresh state from a seed derived from the saved time
// (`<seed>/resume@<lastEventTime>`): new wallets and launches, the earlier tokens stop trading;
// reference pools keep their addresses. Replaying the model up to the saved time would cost as
// much as the whole history since the first start, so it is not done.
//
// Node mode (`node` given): the records are not decoded here. They become blocks of a local chain
// node (node.ts) that the ingest role's block sources read like a real one; wallet labels are
// appended to <dataDir>/simulator-labels.csv and applied through the label import. Each batch is
// sealed, then the runner waits until the sources processed the batch before it (one in flight),
// and the marker names only what they processed.
import fs from 'node:fs';
import path from 'node:path';
import type { Chain } from '../../core/chains.ts';
import type { Context } from '../../core/context.ts';
import { LABEL_CSV_HEADER, labelCsvLine } from '../labels/format.ts';
import type { LabelImporter } from '../labels/import.ts';
import type { IngestPublisher } from '../publisher.ts';
import { createAddressSource } from './addresses.ts';
import { appendLabelLines, SIMULATOR_LABELS_FILE } from './labels-file.ts';
import { blockAt } from './clock.ts';
import { createMarket, type Market } from './model.ts';
import type { SimulatorNode } from './node.ts';
import { createSimulatorPipeline, type SimulatorPipeline } from './pipeline.ts';
import type { ChainRecord } from './records.ts';

/** Longest span of event time one live step generates (see the live loop). */
const LIVE_STEP_MS = 1000;

export interface SimulatorSourceOptions {
  /** Where decoded records go; node mode (openNode) publishes nothing itself. */
  publisher?: Pick<IngestPublisher, 'publish'>;
  seed: number | string;
  /** Live swaps per second (all chains together). */
  rate: number;
  /** History the first start fast-forwards, ending now. */
  warmHours: number;
  chains: Chain[];
  /** Wall clock, unix ms (tests pin it). */
  now?: () => number;
  /** Swaps per second of event time in the warm-start history; default ctx.config.simHistoryRate (SPOT_SIM_HISTORY_RATE, 0.5: 24 h ≈ 43 k swaps). */
  historyRate?: number;
  /** Swaps per second in the last hour of a history longer than that; default ctx.config.simRecentRate. */
  recentRate?: number;
  /** Live tick, ms; default 50. */
  tickMs?: number;
  /** Event time per history batch, ms; default 60 s. */
  historyChunkMs?: number;
  /** Most swaps one history batch generates (its event time is cut to fit); default 20,000. */
  historyChunkSwaps?: number;
  /** Where simulator.json lives; default ctx.config.dataDir. */
  dataDir?: string;
  /** Node mode: opens the chain node the market is served on, given the event time of its first records. */
  openNode?: (start: number) => Promise<SimulatorNode>;
  /** Node mode: where the market's wallet labels are applied. */
  labels?: LabelImporter;
  /** The market stopped on an error (its marker or a block could not be written): it makes nothing more. */
  onFailure?: (error: Error) => void;
}

export interface SimulatorSource {
  start(): Promise<void>;
  /** Stops after the batch in flight is acknowledged, and saves the marker. */
  stop(): Promise<void>;
  /** Resolves once the warm-start history (or the restart gap) is published, or on stop. */
  readonly warmedUp: Promise<void>;
  /** Node mode: the node, once start() resolved. */
  readonly node: SimulatorNode | null;
}

export interface SimulatorState {
  version: 1;
  seed: string;
  runSeed: string;
  lastEventTime: number;
}

export const SIMULATOR_STATE_FILE = 'simulator.json';

export function readSimulatorState(dataDir: string): SimulatorState | null {
  try {
    const value = JSON.parse(fs.readFileSync(path.join(dataDir, SIMULATOR_STATE_FILE), 'utf8')) as SimulatorState;
    return value.version === 1 && Number.isFinite(value.lastEventTime) ? value : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

function writeSimulatorState(dataDir: string, state: SimulatorState): void {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, SIMULATOR_STATE_FILE);
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(state));
  fs.renameSync(`${file}.tmp`, file);
}

const HOUR_MS = 3_600_000;
const SAVE_EVERY_MS = 1_000;

export function createSimulatorSource(ctx: Context, options: SimulatorSourceOptions): SimulatorSource {
  const logger = ctx.logger.child({ component: 'simulator' });
  const now = options.now ?? Date.now;
  const dataDir = options.dataDir ?? ctx.config.dataDir;
  const historyRate = options.historyRate ?? ctx.config.simHistoryRate;
  const recentRate = Math.max(historyRate, options.recentRate ?? ctx.config.simRecentRate);
  const tickMs = options.tickMs ?? 50;
  const chunkMs = options.historyChunkMs ?? 60_000;
  const chunkSwaps = options.historyChunkSwaps ?? 20_000;
  const seed = String(options.seed);

  let stopped = false;
  let loop: Promise<void> | null = null;
  let wake: (() => void) | null = null;
  let state: SimulatorState | null = null;
  let savedAt = 0;
  let resolveWarm!: () => void;
  const warmedUp = new Promise<void>((resolve) => {
    resolveWarm = resolve;
  });

  let node: SimulatorNode | null = null;
  /** Node mode: the tips sealed by the previous batch and the event time they end at. */
  let inFlight: { tips: Map<Chain, number>; until: number } | null = null;

  /** Node mode: blocks to the node, labels through the import. */
  async function serveUpTo(market: Market, pipeline: SimulatorPipeline, until: number, rate: number): Promise<void> {
    const from = market.now;
    const events = market.advance(until, rate);
    const labels: Array<Extract<ChainRecord, { kind: 'label' }>> = [];
    for (const event of events) {
      for (const record of pipeline.writer.write(event)) {
        if (record.kind === 'label') labels.push(record);
        else node!.append(record);
      }
    }
    ctx.metrics.inc('ingest.simulator.events', events.length);
    // The previous batch's blocks are published before this batch's labels, which are stamped at the
    // block holding `from` (no later than any block sealed from here on): every log partition stays
    // in event-time order per chain, which the aggregator's merge relies on (it takes a chain's
    // messages of a partition in offset order).
    if (inFlight) {
      const previous = inFlight;
      await node!.waitAcknowledged(previous.tips, () => stopped);
      if (!stopped) state = { ...state!, lastEventTime: previous.until };
      inFlight = null;
    }
    if (labels.length > 0 && !stopped) await applyLabels(labels, from);
    node!.seal(until);
    inFlight = { tips: node!.mark(), until };
  }

  async function applyLabels(labels: Array<Extract<ChainRecord, { kind: 'label' }>>, from: number): Promise<void> {
    for (const chain of new Set(labels.map((record) => record.chain))) {
      const at = Math.floor(blockAt(chain, from).timeMs / 1000) * 1000;
      await importLabels(
        labels.filter((record) => record.chain === chain),
        at,
      );
    }
  }

  async function importLabels(labels: Array<Extract<ChainRecord, { kind: 'label' }>>, at: number): Promise<void> {
    const lines = labels.flatMap((record) =>
      record.labels.map((label) =>
        labelCsvLine({ chain: record.chain, address: record.wallet, label, name: record.name, source: 'simulator' }),
      ),
    );
    appendLabelLines(path.join(dataDir, SIMULATOR_LABELS_FILE), lines);
    const result = await options.labels!.importText(`${LABEL_CSV_HEADER}\n${lines.join('\n')}\n`, {
      format: 'csv',
      origin: SIMULATOR_LABELS_FILE,
      at,
      logLevel: 'debug',
    });
    if (result.errors.length > 0)
      logger.error({ errors: result.errors.slice(0, 5) }, 'simulator labels rejected by the import');
  }

  async function publishUpTo(market: Market, pipeline: SimulatorPipeline, until: number, rate: number): Promise<void> {
    if (node) return serveUpTo(market, pipeline, until, rate);
    const events = market.advance(until, rate);
    if (events.length > 0) {
      const records = pipeline.process(events);
      await options.publisher!.publish(records);
      ctx.metrics.inc('ingest.simulator.events', events.length);
      ctx.metrics.inc('ingest.simulator.swaps', records.swaps.length);
    }
    state = { ...state!, lastEventTime: until };
  }

  // Throttled by the wall clock: with a pinned market clock (SPOT_SIM_NOW) now() never advances, and
  // the marker was written only at the end of the history.
  function save(force = false): void {
    if (!state || (!force && Date.now() - savedAt < SAVE_EVERY_MS)) return;
    writeSimulatorState(dataDir, state);
    savedAt = Date.now();
  }

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wake = null;
        resolve();
      }, ms);
      wake = () => {
        clearTimeout(timer);
        wake = null;
        resolve();
      };
    });

  async function run(
    market: Market,
    pipeline: SimulatorPipeline,
    historyFrom: number,
    historyTo: number,
  ): Promise<void> {
    const startedAt = Date.now();
    // A long history ends with an hour at live density: at 0.5 swaps/s no launch climbs its curve
    // with holders, so a fresh board would show no `graduating` token for minutes.
    const recentFrom = historyTo - historyFrom > HOUR_MS ? historyTo - HOUR_MS : Number.POSITIVE_INFINITY;
    const plannedTo = historyTo;
    let lastGap = Number.POSITIVE_INFINITY;
    for (let at = historyFrom; at < historyTo && !stopped; ) {
      // A chunk is generated in one synchronous step and held (node mode: as blocks) until it is
      // read, so it is bounded in swaps too: 5 minutes at 2,000 swaps/s ran the heap out.
      const rate = at >= recentFrom ? recentRate : historyRate;
      const span = Math.max(1000, Math.min(chunkMs, (chunkSwaps / rate) * 1000));
      at = Math.min(historyTo, at + span, at < recentFrom ? recentFrom : historyTo);
      await publishUpTo(market, pipeline, at, at > recentFrom ? recentRate : historyRate);
      save();
      // The clock moved on while the history was published (minutes on a mainnet warm start): that
      // time is history too, at the density the history ended with, so live trading starts at the
      // clock instead of a live-rate backlog that keeps the machine saturated until it is worked off.
      // Only while the gap shrinks: each batch waits for the readers to take the one before, so a
      // gap as long as that round trip stays that long, and the live loop takes it from there.
      if (at >= historyTo) {
        const clock = now();
        const gap = clock - historyTo;
        if (gap > LIVE_STEP_MS && gap < lastGap) historyTo = clock;
        lastGap = gap;
      }
      ctx.metrics.set('ingest.simulator.history_progress', (at - historyFrom) / (historyTo - historyFrom));
    }
    // Node mode: the history counts as published once the readers processed its last batch.
    if (inFlight && !stopped) {
      await node!.waitAcknowledged(inFlight.tips, () => stopped);
      if (!stopped) state = { ...state!, lastEventTime: inFlight.until };
    }
    save(true);
    if (historyTo > historyFrom) {
      logger.info(
        {
          hours: (historyTo - historyFrom) / HOUR_MS,
          extendedMs: historyTo - plannedTo,
          events: ctx.metrics.get('ingest.simulator.events'),
          ms: Date.now() - startedAt,
        },
        'simulator history published',
      );
    }
    resolveWarm();
    while (!stopped) {
      // At most LIVE_STEP_MS of event time per step: a market that falls behind the clock lags in
      // event time instead of generating an ever larger synchronous batch that starves the thread
      // (signals, the SQL endpoint) and makes a stop wait for it.
      const until = Math.min(now(), market.now + LIVE_STEP_MS);
      if (until > market.now) {
        try {
          await publishUpTo(market, pipeline, until, options.rate);
          save();
        } catch (error) {
          ctx.metrics.inc('ingest.simulator.errors');
          logger.error({ err: (error as Error).message }, 'simulator tick failed');
        }
      }
      if (stopped) break;
      if (now() - market.now > tickMs) await new Promise<void>((resolve) => setImmediate(resolve));
      else await sleep(tickMs);
    }
  }

  return {
    warmedUp,
    get node() {
      return node;
    },
    async start() {
      if (loop) return;
      const saved = readSimulatorState(dataDir);
      const end = now();
      let runSeed: string;
      let historyFrom: number;
      if (saved) {
        runSeed = `${seed}/resume@${saved.lastEventTime}`;
        historyFrom = Math.min(end, Math.max(saved.lastEventTime, end - options.warmHours * HOUR_MS));
        logger.info({ from: new Date(saved.lastEventTime).toISOString(), runSeed }, 'simulator resuming');
      } else {
        runSeed = seed;
        historyFrom = end - options.warmHours * HOUR_MS;
        logger.info({ warmHours: options.warmHours, historyRate, recentRate }, 'simulator warm start');
      }
      state = { version: 1, seed, runSeed, lastEventTime: historyFrom };
      const market = createMarket({
        seed: runSeed,
        chains: options.chains,
        startTime: historyFrom,
        addresses: createAddressSource(runSeed),
        profile: ctx.config.simProfile,
      });
      const pipeline = createSimulatorPipeline({ seed: runSeed, metrics: ctx.metrics, logger: ctx.logger });
      if (!options.openNode && !options.publisher) throw new TypeError('the simulator needs a publisher or a node');
      if (options.openNode) {
        if (!options.labels) throw new TypeError('node mode needs the label import');
        node = await options.openNode(historyFrom);
      }
      loop = run(market, pipeline, historyFrom, end).catch((error: Error) => {
        ctx.metrics.inc('ingest.simulator.errors');
        logger.error({ err: error.message }, 'simulator stopped on an error');
        resolveWarm();
        options.onFailure?.(error);
      });
    },
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      try {
        save(true);
      } catch (error) {
        // A full disk, say: the marker saved last is at most a second older, and a restart resumes from it.
        logger.error({ err: (error as Error).message }, 'simulator marker not saved at stop');
      }
      resolveWarm();
    },
  };
}
