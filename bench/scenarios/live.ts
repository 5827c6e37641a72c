// Live scenarios on a real `spot up` child process (bin/spot.js, simulator intake at a fixed
// rate), measured from outside as a user would see it:
// - soak: SPOT_SIM_RATE swaps/s for durationSeconds with WebSocket subscribers following the most
//   traded tokens and a REST client at restPerSecond token-details requests: RSS each minute, CPU,
//   REST p50/p99, swap → frame p50/p99 (sampled in windows), the store keeping up, SIGTERM time.
// - idle: the same process at the default rate with no clients: its share of a core.
// swap → frame: a swap is stamped when this process's read-only reader of the embedded log sees it
// on spot.swaps.v1 (a 2 ms cross-process poll: slightly after the append), the frame when a
// subscriber process receives it. Its trade is stamped the same way on spot.trades.v1, which splits
// the figure into the main thread's part (aggregate, price, append) and the rest (the serving
// thread's feed and routing, the subscriber processes). Each process's own event-loop delay is
// kept beside it: a stamp is late by as much.
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { createEmbeddedLog, embeddedLogPath } from '../../core/eventlog/index.ts';
import { TOPICS } from '../../core/topics.ts';
import { startBareServer, type BareServer } from '../lib/bare-server.ts';
import { startClients, type Clients } from '../lib/clients.ts';
import { check, epochNow, runScenarioMain, sleep, type Measurement, type TargetCheck } from '../lib/scenario.ts';
import { machineShare, machineTicks, type MachineShare } from '../lib/machine-cpu.ts';
import { coreShare, slowStopParts, startSpot, threadShares, type ProcessSample } from '../lib/spot-process.ts';
import { round, slope, summarize } from '../lib/stats.ts';

interface Params {
  inputFile: string;
  mode: 'soak' | 'idle';
  rate: number;
  /** SPOT_SIM_PROFILE of the child ('' = the default profile). */
  profile: string;
  warmHours: number;
  durationSeconds: number;
  /** Seconds after start-up before anything is measured. */
  warmupSeconds: number;
  subscribers: number;
  restPerSecond: number;
  /** Seconds between swap → frame windows, and each window's length. */
  frameWindowEverySeconds: number;
  frameWindowSeconds: number;
  targetRestP99Ms: number;
  targetFrameP99Ms: number;
  targetIdleShare: number;
  /**
   * RSS growth is measured from this many seconds after start-up (the first hour: the live state
   * is built by then), when the run goes on for at least growthMinSpanSeconds past it.
   */
  growthFromSeconds: number;
  growthMinSpanSeconds: number;
  targetGrowthMBPerHour: number;
}

/** Connections the edge accepts per key (stream-edge DEFAULT_MAX_CONNECTIONS_PER_KEY). */
const CONNECTIONS_PER_KEY = 100;
const SWAP_PREFIX = '{"id":"';
const TRADE_PREFIX = '{"trade":{"id":"';

/**
 * Id → first sighting of the messages whose value starts with `prefix` and then the id; says
 * whether any id stamped now is in `watch`.
 */
function stampIds(
  into: Map<string, number>,
  messages: readonly { value: string }[],
  prefix: string,
  at: number,
  watch?: ReadonlyMap<string, number>,
): boolean {
  let watched = false;
  for (const m of messages) {
    if (!m.value.startsWith(prefix)) continue;
    const end = m.value.indexOf('"', prefix.length);
    if (end <= 0) continue;
    const id = m.value.slice(prefix.length, end);
    if (into.has(id)) continue;
    into.set(id, at);
    if (watch?.has(id)) watched = true;
  }
  return watched;
}

/** Whether a swap among `messages` is of a token a subscriber follows (`"token":"<address>"` in it). */
function hasFollowedSwap(messages: readonly { value: string }[], tokenFields: readonly string[]): boolean {
  return messages.some((m) => m.value.startsWith(SWAP_PREFIX) && tokenFields.some((field) => m.value.includes(field)));
}

const BLOCK_FIELD = '"blockNumber":';

/** How long after a frame window its swaps' trades are awaited. */
const FRAME_LAG_LIMIT_MS = 15_000;

/**
 * Each swap's place in its block (chain and block number) among the swaps seen so far: a block's
 * swaps reach the log together, and the aggregator prices them one after another.
 */
function placeSwaps(
  places: Map<string, number>,
  blockSizes: Map<string, number>,
  messages: readonly { value: string }[],
) {
  for (const m of messages) {
    if (!m.value.startsWith(SWAP_PREFIX)) continue;
    const idEnd = m.value.indexOf('"', SWAP_PREFIX.length);
    const at = m.value.indexOf(BLOCK_FIELD, idEnd);
    if (idEnd < 0 || at < 0) continue;
    const id = m.value.slice(SWAP_PREFIX.length, idEnd);
    const numberEnd = m.value.indexOf(',', at);
    const block = `${id.slice(0, id.indexOf(':'))}:${m.value.slice(at + BLOCK_FIELD.length, numberEnd)}`;
    const place = blockSizes.get(block) ?? 0;
    blockSizes.set(block, place + 1);
    if (!places.has(id)) places.set(id, place);
  }
}

/** Places in a block the swap → trade figures are split by: the first swap, the 2nd to 100th, the rest. */
const PLACE_GROUPS = ['first', 'upTo100th', 'later'] as const;
const placeGroup = (place: number) => (place === 0 ? 0 : place < 100 ? 1 : 2);

/** Fixed-rate GETs over a keep-alive agent; every response's latency kept. */
function startRestLoad(base: string, authorization: string, paths: string[], perSecond: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const latencies: number[] = [];
  let errors = 0;
  let non2xx = 0;
  let sent = 0;
  const startedAt = epochNow();
  let stopped = false;
  const fire = () => {
    const path = paths[sent % paths.length]!;
    sent++;
    const t0 = epochNow();
    const request = http.get(`${base}${path}`, { agent, headers: { authorization } }, (response) => {
      response.resume();
      response.on('end', () => {
        latencies.push(epochNow() - t0);
        if (response.statusCode! >= 300) non2xx++;
      });
    });
    request.on('error', () => errors++);
  };
  const tick = () => {
    if (stopped) return;
    const due = Math.floor(((epochNow() - startedAt) * perSecond) / 1000);
    while (sent < due) fire();
    setTimeout(tick, 2);
  };
  if (perSecond > 0) tick();
  return {
    /** Latencies since the last call, and counters. */
    take() {
      const taken = latencies.splice(0);
      return { taken, errors, non2xx, sent };
    },
    stop() {
      stopped = true;
      agent.destroy();
    },
  };
}

/** push(...from) overflows the stack past ~100k items: a window of 1,000 subscribers' frames is more. */
function append(into: number[], from: readonly number[]): void {
  for (const value of from) into.push(value);
}

const mib = (bytes: number) => round(bytes / 2 ** 20, 1);

runScenarioMain<Params>(
  'live',
  {
    inputFile: '',
    mode: 'soak',
    rate: 2000,
    profile: '',
    warmHours: 1,
    durationSeconds: 600,
    warmupSeconds: 20,
    subscribers: 1000,
    restPerSecond: 200,
    frameWindowEverySeconds: 60,
    frameWindowSeconds: 10,
    targetRestP99Ms: 5,
    targetFrameP99Ms: 10,
    targetIdleShare: 0.1,
    growthFromSeconds: 3600,
    growthMinSpanSeconds: 600,
    targetGrowthMBPerHour: 50,
  },
  async ({ ctx, dir }, params) => {
    const soak = params.mode === 'soak';
    const keyCount = soak ? Math.max(1, Math.ceil(params.subscribers / CONNECTIONS_PER_KEY)) : 0;
    const keys = Array.from({ length: keyCount + 1 }, (_, i) => `bench-live-key-${String(i).padStart(4, '0')}`);
    const spot = await startSpot(dir, {
      SPOT_SIM_RATE: String(params.rate),
      SPOT_SIM_WARM_HOURS: String(params.warmHours),
      SPOT_API_KEYS: keys.join(','),
      SPOT_LOG_LEVEL: 'info', // the serving and main threads' event-loop reports
      ...(params.profile ? { SPOT_SIM_PROFILE: params.profile } : {}),
    });
    const startedAt = epochNow();
    const clients: Clients[] = [];
    let rest: ReturnType<typeof startRestLoad> | null = null;
    let bare: BareServer | null = null;
    let bareRest: ReturnType<typeof startRestLoad> | null = null;
    const reader = createEmbeddedLog(ctx, { path: embeddedLogPath(dir), readonly: true, pollMs: 2 });
    const swapReader = reader.consumer({ group: 'bench-swaps', topics: [TOPICS.swaps.name], start: 'latest' });
    const tradeReader = reader.consumer({ group: 'bench-trades', topics: [TOPICS.trades.name], start: 'latest' });
    const benchLoop = monitorEventLoopDelay({ resolution: 2 });
    try {
      // Swaps appended while measuring; within a frame window each swap's and trade's first sighting.
      let swapsSeen = 0;
      const swapSeenAt = new Map<string, number>();
      const tradeSeenAt = new Map<string, number>();
      const swapPlaces = new Map<string, number>();
      const blockSizes = new Map<string, number>();
      // Swaps are stamped during a window; trades until one of a swap appended after the window
      // shows the aggregator has passed the window (not every swap gives a trade).
      let stamping = false;
      let stampingTrades = false;
      const swapsAfterWindow = new Map<string, number>();
      let passedWindow = false;
      // Set with the subscriptions; a window runs until it has stamped a swap of one of them.
      let followedTokenFields: string[] = [];
      let followedSwapStamped = false;
      const readingSwaps = swapReader.run(async (batch) => {
        swapsSeen += batch.messages.length;
        if (stamping) {
          stampIds(swapSeenAt, batch.messages, SWAP_PREFIX, epochNow());
          placeSwaps(swapPlaces, blockSizes, batch.messages);
          if (!followedSwapStamped) followedSwapStamped = hasFollowedSwap(batch.messages, followedTokenFields);
        } else if (stampingTrades) stampIds(swapsAfterWindow, batch.messages, SWAP_PREFIX, 0);
      });
      const readingTrades = tradeReader.run(async (batch) => {
        if (!stampingTrades) return;
        if (stampIds(tradeSeenAt, batch.messages, TRADE_PREFIX, epochNow(), swapsAfterWindow)) passedWindow = true;
      });

      await sleep(params.warmupSeconds * 1000);
      // The store may hold no trade yet after the warm-up on a loaded machine (a quick soak under
      // CI), or the trades of a few tokens only: asked again each second, for up to a minute, until
      // it names as many tokens as wanted or no more than a second before.
      const wanted = Math.max(1, Math.min(100, params.subscribers));
      let tokens: Array<{ chain: string; token: string }> = [];
      for (let tries = 0; soak && tokens.length < wanted && tries < 60; tries++) {
        if (tries > 0) await sleep(1000);
        const found = await spot.topTokens(wanted);
        const settled = found.length > 0 && found.length === tokens.length;
        tokens = found;
        if (settled) break;
      }
      for (let k = 0; soak && k < keyCount && tokens.length > 0; k++) {
        const connections = Math.min(CONNECTIONS_PER_KEY, params.subscribers - k * CONNECTIONS_PER_KEY);
        if (connections <= 0) break;
        clients.push(
          await startClients({
            url: spot.ws,
            authorization: `Bearer ${keys[k]}`,
            connections,
            subscribe: Array.from({ length: connections }, (_, i) => {
              const t = tokens[(k * CONNECTIONS_PER_KEY + i) % tokens.length]!;
              return JSON.stringify({
                action: 'subscribe',
                channel: 'spot.trades',
                filters: { chain: t.chain, token: t.token },
                id: `s${i}`,
              });
            }),
            recordIds: true,
            expectAck: true,
          }),
        );
      }
      followedTokenFields = tokens.map((t) => `"token":"${t.token}"`);
      // The REST client has a key of its own: 200 req/s is a whole key's budget (12,000/min).
      rest = startRestLoad(
        spot.http,
        `Bearer ${keys[keyCount]}`,
        tokens.map((t) => `/v1/tokens/${t.chain}/${t.token}`),
        soak && tokens.length > 0 ? params.restPerSecond : 0,
      );
      // The same load on a bare server in a process of its own: what the machine gives any process.
      if (soak && params.restPerSecond > 0) {
        bare = await startBareServer();
        bareRest = startRestLoad(bare.url, '', ['/'], params.restPerSecond);
      }

      const countTrades = async () =>
        Number((await spot.query<{ n: string }>('SELECT count() AS n FROM spot.trades'))[0]?.n ?? 0);
      const threadsFrom = spot.threadCpu();
      const measureFrom = spot.sample();
      const machineFrom = machineTicks();
      // The simulator's chain node runs in a child process (the chain, not the service): measured apart.
      const nodeFrom = spot.simulatorNodeSample();
      let nodeRssPeak = nodeFrom?.rssBytes ?? 0;
      const tradesFrom = await countTrades();
      swapsSeen = 0;
      const samples: ProcessSample[] = [measureFrom];
      const restLatencies: number[] = [];
      const frameLatencies: number[] = [];
      const swapToTrade: number[] = [];
      const swapToTradeByPlace: number[][] = PLACE_GROUPS.map(() => []);
      const swapsPerBlock: number[] = [];
      const tradeToFrame: number[] = [];
      const frameWindows: Array<{
        p50: number;
        p99: number;
        matched: number;
        /** Swaps stamped, and how long stamping ran (longer than the window when none came in it). */
        swaps: number;
        stampedMs: number;
        swapToTradeP99: number;
        firstInBlockSwapToTradeP99: number;
        tradeToFrameP99: number;
        /** Event-loop delay p99 of this bench process (the stamps) and the worst subscriber process. */
        benchLoopP99: number;
        subscriberLoopP99: number;
        /** Every core of the machine over the window: busy (any process), stolen by the host, waiting on I/O. */
        machine: MachineShare | null;
      }> = [];
      const rssByMinute: Record<string, number> = {};
      const endAt = epochNow() + params.durationSeconds * 1000;
      let nextWindow = epochNow() + 5000;
      let rssPeak = measureFrom.rssBytes;
      while (epochNow() < endAt) {
        await sleep(1000);
        const sample = spot.sample();
        samples.push(sample);
        rssPeak = Math.max(rssPeak, sample.rssBytes);
        nodeRssPeak = Math.max(nodeRssPeak, spot.simulatorNodeSample()?.rssBytes ?? 0);
        // RSS at each whole minute since spot up started serving.
        const minute = Math.floor((sample.at - startedAt) / 60_000);
        if (minute > 0 && rssByMinute[`minute${minute}`] === undefined)
          rssByMinute[`minute${minute}`] = mib(sample.rssBytes);
        append(restLatencies, rest.take().taken);
        const now = epochNow();
        if (clients.length > 0 && now >= nextWindow && now + (params.frameWindowSeconds + 2) * 1000 < endAt) {
          nextWindow = now + params.frameWindowEverySeconds * 1000;
          await Promise.all(clients.map((c) => c.reset()));
          swapSeenAt.clear();
          tradeSeenAt.clear();
          swapPlaces.clear();
          blockSizes.clear();
          benchLoop.reset();
          benchLoop.enable();
          const windowMachineFrom = machineTicks();
          const windowFrom = epochNow();
          followedSwapStamped = false;
          stamping = true;
          stampingTrades = true;
          await sleep(params.frameWindowSeconds * 1000);
          // A window in which no swap of a followed token reached the log (few tokens followed, or
          // the chain node's blocks held back on a loaded machine: a quick soak under CI) has no
          // frame to time: it runs on to the first such swap, up to the lag limit.
          const stretchUntil = epochNow() + FRAME_LAG_LIMIT_MS;
          while (!followedSwapStamped && epochNow() < stretchUntil) await sleep(10);
          stamping = false;
          const stampedMs = epochNow() - windowFrom;
          const windowMachine = machineShare(windowMachineFrom, machineTicks());
          // A lagging aggregator (a loaded machine) appends the window's trades later: their frames
          // count too, rather than only those within a second of the window's end.
          const lagUntil = epochNow() + FRAME_LAG_LIMIT_MS;
          while (epochNow() < lagUntil && !passedWindow) await sleep(50);
          stampingTrades = false;
          passedWindow = false;
          swapsAfterWindow.clear();
          await sleep(1000); // the window's last frames arrive
          benchLoop.disable();
          const sentSwaps = [...swapSeenAt.entries()];
          const sentTrades = [...tradeSeenAt.entries()];
          const windowSwapToTrade: number[] = [];
          const windowByPlace: number[][] = PLACE_GROUPS.map(() => []);
          for (const [id, at] of sentTrades) {
            const swapAt = swapSeenAt.get(id);
            if (swapAt === undefined) continue;
            windowSwapToTrade.push(at - swapAt);
            const place = swapPlaces.get(id);
            if (place !== undefined) windowByPlace[placeGroup(place)]!.push(at - swapAt);
          }
          for (let g = 0; g < PLACE_GROUPS.length; g++) append(swapToTradeByPlace[g]!, windowByPlace[g]!);
          append(swapsPerBlock, [...blockSizes.values()]);
          swapSeenAt.clear();
          tradeSeenAt.clear();
          swapPlaces.clear();
          blockSizes.clear();
          const window: number[] = [];
          const windowTradeToFrame: number[] = [];
          let subscriberLoopP99 = 0;
          for (const result of await Promise.all(clients.map((c) => c.latencySamples(sentSwaps)))) {
            append(window, result.samples);
            subscriberLoopP99 = Math.max(subscriberLoopP99, result.loopDelayMs.p99);
          }
          for (const result of await Promise.all(clients.map((c) => c.latencySamples(sentTrades))))
            append(windowTradeToFrame, result.samples);
          const summary = summarize(window);
          frameWindows.push({
            p50: round(summary.p50),
            p99: round(summary.p99),
            matched: window.length,
            swaps: sentSwaps.length,
            stampedMs: round(stampedMs),
            swapToTradeP99: round(summarize(windowSwapToTrade).p99),
            firstInBlockSwapToTradeP99: round(summarize(windowByPlace[0]!).p99),
            tradeToFrameP99: round(summarize(windowTradeToFrame).p99),
            benchLoopP99: round(benchLoop.percentile(99) / 1e6),
            subscriberLoopP99: round(subscriberLoopP99),
            machine: windowMachine,
          });
          append(frameLatencies, window);
          append(swapToTrade, windowSwapToTrade);
          append(tradeToFrame, windowTradeToFrame);
        }
      }
      const measureTo = samples[samples.length - 1]!;
      const machine = machineShare(machineFrom, machineTicks());
      const seconds = (measureTo.at - measureFrom.at) / 1000;
      // Share of a core per thread over the measured span, the loop threads by role (threads that ended are not counted).
      const threadsTo = spot.threadCpu();
      const threadShare = threadShares(spot, threadsFrom, threadsTo, measureTo.at - measureFrom.at);
      // Share of the time each thread was runnable but waited for a core (the main and ingest threads run niced).
      const threadRunQueueWait = threadShares(spot, threadsFrom, threadsTo, measureTo.at - measureFrom.at, 'waitMs');
      const nodeTo = spot.simulatorNodeSample();
      const tradesTo = await countTrades();
      const restTotals = rest.take();
      append(restLatencies, restTotals.taken);
      rest.stop();
      const bareSummary = bareRest ? summarize(bareRest.take().taken) : null;
      bareRest?.stop();
      bare?.stop();
      const clientProcesses = clients.length;
      for (const c of clients) await c.close();
      clients.length = 0;
      const stopped = await spot.stop();
      // What the event log holds at the end (the warm start's history included), for disk sizing:
      // pages in use, not the files' sizes (the WAL holds stale page copies until it is truncated).
      // Record batches grow with the swaps; compacted topics hold a row per key (token, candle series).
      const logDb = new Database(embeddedLogPath(dir), { readonly: true });
      const pagesOf = (tables: string[]) =>
        Number(
          logDb
            .prepare(
              `SELECT coalesce(sum(pgsize), 0) AS bytes FROM dbstat WHERE name IN (${tables.map(() => '?').join(',')})`,
            )
            .pluck()
            .get(...tables),
        );
      const batchBytes = pagesOf(['batches', 'batches_offset']);
      const compactedBytes = pagesOf(['compacted', 'compacted_key']);
      logDb.close();
      const swapsOnLog = [...(await reader.endOffsets(TOPICS.swaps.name)).values()].reduce((a, b) => a + b, 0);

      const cpu = coreShare(measureFrom, measureTo);
      // A least-squares line through every 1 s sample: single samples differ by up to ~120 MiB
      // (young generations, GC), a line over tens of minutes does not.
      const growthFrom = startedAt + params.growthFromSeconds * 1000;
      const growthSamples = samples.filter((s) => s.at >= growthFrom);
      const growthSpanMs = growthSamples.length > 1 ? growthSamples[growthSamples.length - 1]!.at - growthFrom : 0;
      const growthMBPerHour =
        growthSpanMs >= params.growthMinSpanSeconds * 1000
          ? slope(growthSamples.map((s) => [(s.at - growthFrom) / 3_600_000, s.rssBytes / 1e6] as const))
          : null;
      const restSummary = summarize(restLatencies);
      const frameSummary = summarize(frameLatencies);
      const swapToTradeSummary = summarize(swapToTrade);
      const tradeToFrameSummary = summarize(tradeToFrame);
      const blockSummary = summarize(swapsPerBlock);
      const minuteKeys = Object.keys(rssByMinute);
      const lastMinute = minuteKeys[minuteKeys.length - 1];
      const measurements: Measurement[] = [
        {
          subject: `spot up at ${params.rate} swaps/s (${params.profile || 'default'} profile): process CPU`,
          metric: 'coreShare',
          value: round(cpu, 3),
          unit: 'cores',
          extra: { seconds: round(seconds, 1), swapsPerSecondOnLog: round(swapsSeen / seconds, 1) },
        },
        {
          subject: 'RSS of the spot up process',
          metric: 'rss',
          value: mib(measureTo.rssBytes),
          unit: 'MiB',
          extra: { ...rssByMinute, peak: mib(rssPeak) },
        },
        ...(growthMBPerHour === null
          ? []
          : [
              {
                subject: `RSS growth from ${round(params.growthFromSeconds / 60, 1)} min to the end (least-squares line)`,
                metric: 'rssGrowth',
                value: round(growthMBPerHour, 1),
                unit: 'MB/h',
                extra: { minutes: round(growthSpanMs / 60_000, 1), samples: growthSamples.length },
              },
            ]),
        ...(nodeFrom && nodeTo
          ? [
              {
                subject: "the simulator's chain node (a child process: the chain, not the service): CPU",
                metric: 'coreShare',
                value: round(coreShare(nodeFrom, nodeTo), 3),
                unit: 'cores',
                extra: { rssMiB: mib(nodeTo.rssBytes), rssPeakMiB: mib(nodeRssPeak) },
              },
            ]
          : []),
        {
          subject: 'store keeping up: trades stored per second vs swaps appended per second',
          metric: 'tradesPerSecond',
          value: round((tradesTo - tradesFrom) / seconds, 1),
          unit: 'trades/s',
          extra: { swapsPerSecond: round(swapsSeen / seconds, 1) },
        },
        {
          subject:
            "the event log's record batches at the end (swaps, trades, token events; the warm start included), per swap",
          metric: 'logBytesPerSwap',
          value: Math.round(batchBytes / Math.max(1, swapsOnLog)),
          unit: 'B/swap',
          extra: {
            batchesMB: round(batchBytes / 1e6, 1),
            compactedMB: round(compactedBytes / 1e6, 1),
            swapsOnLog,
            gbPerHourAtRate: round(((batchBytes / Math.max(1, swapsOnLog)) * params.rate * 3600) / 1e9, 1),
          },
        },
        {
          subject: 'SIGTERM → exit',
          metric: 'shutdownMs',
          value: round(stopped.ms, 0),
          unit: 'ms',
          extra: { exitCode: stopped.code ?? -1, ...slowStopParts(spot.stopTimes()) },
        },
      ];
      const ratios: Record<string, number> = {};
      if (bareSummary) ratios.restP99OverBareServerP99 = round(restSummary.p99 / bareSummary.p99, 2);
      const targets: TargetCheck[] = [];
      if (soak) {
        measurements.push({
          subject: `REST token details at ${params.restPerSecond} req/s during ingest`,
          metric: 'p99',
          value: round(restSummary.p99),
          unit: 'ms',
          extra: {
            p50: round(restSummary.p50),
            p999: round(restSummary.p999),
            max: round(restSummary.max),
            requests: restSummary.count,
            non2xx: restTotals.non2xx,
            errors: restTotals.errors,
          },
        });
        if (bareSummary)
          measurements.push({
            subject: `a bare HTTP server in its own process at the same ${params.restPerSecond} req/s (the machine under the same load)`,
            metric: 'p99',
            value: round(bareSummary.p99),
            unit: 'ms',
            extra: { p50: round(bareSummary.p50), max: round(bareSummary.max), requests: bareSummary.count },
          });
        // Without subscribers (`--set subscribers=0`: REST alone beside ingest) there are no frames.
        if (params.subscribers > 0)
          measurements.push(
            {
              subject: `swap on the log → WebSocket frame (${params.subscribers} subscribers, ${frameWindows.length} windows of ${params.frameWindowSeconds} s)`,
              metric: 'p99',
              value: round(frameSummary.p99),
              unit: 'ms',
              extra: { p50: round(frameSummary.p50), p999: round(frameSummary.p999), frames: frameSummary.count },
            },
            {
              subject: 'of which swap on the log → its trade on the log (the main thread: aggregate, price, append)',
              metric: 'p99',
              value: round(swapToTradeSummary.p99),
              unit: 'ms',
              extra: {
                p50: round(swapToTradeSummary.p50),
                max: round(swapToTradeSummary.max),
                trades: swapToTradeSummary.count,
              },
            },
            {
              subject:
                "of which swap → trade of a block's first swap (a block's swaps reach the log together and are priced one after another: later ones wait for those before them)",
              metric: 'p99',
              value: round(summarize(swapToTradeByPlace[0]!).p99),
              unit: 'ms',
              extra: {
                ...Object.fromEntries(
                  PLACE_GROUPS.flatMap((group, g) => {
                    const summary = summarize(swapToTradeByPlace[g]!);
                    return [
                      [`${group}P50`, round(summary.p50)],
                      [`${group}P99`, round(summary.p99)],
                      [`${group}Trades`, summary.count],
                    ];
                  }),
                ),
                swapsPerBlockP50: blockSummary.p50,
                swapsPerBlockP99: blockSummary.p99,
                swapsPerBlockMax: blockSummary.max,
                blocks: blockSummary.count,
              },
            },
            {
              subject: 'of which trade on the log → frame (the serving thread and the subscriber processes)',
              metric: 'p99',
              value: round(tradeToFrameSummary.p99),
              unit: 'ms',
              extra: {
                p50: round(tradeToFrameSummary.p50),
                max: round(tradeToFrameSummary.max),
                frames: tradeToFrameSummary.count,
              },
            },
          );
        targets.push(
          check(
            `REST token details p99 <= ${params.targetRestP99Ms} ms at ${params.rate} swaps/s`,
            'p99',
            '<=',
            params.targetRestP99Ms,
            round(restSummary.p99),
            'ms',
          ),
        );
        if (params.subscribers > 0)
          targets.push(
            check(
              `swap → frame p99 <= ${params.targetFrameP99Ms} ms at ${params.rate} swaps/s, ${params.subscribers} subscribers`,
              'p99',
              '<=',
              params.targetFrameP99Ms,
              round(frameSummary.p99),
              'ms',
            ),
          );
      } else {
        targets.push(
          check(
            `idle cost at ${params.rate} swaps/s <= ${params.targetIdleShare} of a core`,
            'coreShare',
            '<=',
            params.targetIdleShare,
            round(cpu, 3),
            'cores',
          ),
        );
      }
      if (growthMBPerHour !== null)
        targets.push(
          check(
            `RSS growth after ${round(params.growthFromSeconds / 60, 1)} min <= ${params.targetGrowthMBPerHour} MB/h`,
            'rssGrowth',
            '<=',
            params.targetGrowthMBPerHour,
            round(growthMBPerHour, 1),
            'MB/h',
          ),
        );
      targets.push(
        check('SIGTERM under load exits within 10 s', 'shutdownMs', '<=', 10_000, round(stopped.ms, 0), 'ms'),
      );
      await swapReader.stop();
      await tradeReader.stop();
      await readingSwaps;
      await readingTrades;
      return {
        measurements,
        ratios,
        targets,
        notes: [
          `A real \`spot up\` child process (bin/spot.js) on a fresh data dir, simulator at SPOT_SIM_RATE=${params.rate}, SPOT_SIM_WARM_HOURS=${params.warmHours}; measured for ${round(seconds, 0)} s after a ${params.warmupSeconds} s warm-up. CPU and RSS from /proc (every thread).`,
          ...(soak
            ? [
                `Subscribers: ${clientProcesses} client processes of ≤${CONNECTIONS_PER_KEY} connections (one key each; the edge caps connections per key), each following spot.trades of one of the ${tokens.length} most traded tokens. swap → frame: the swap is stamped when this bench process's read-only log reader (2 ms poll) sees it, so the figure slightly understates the append → frame time.`,
              ]
            : []),
        ],
        evidence: {
          threadShare,
          threadRunQueueWait,
          servingLoop: spot.loopReports('serving').map((r) => ({ ...r.delayMs, utilization: r.utilization, gc: r.gc })),
          mainLoop: spot.loopReports('main').map((r) => ({ ...r.delayMs, utilization: r.utilization, gc: r.gc })),
          subscribedTokens: tokens.length,
          frameWindows,
          machine,
          shutdown: { ...stopped, partsMs: spot.stopTimes() },
          lastMinute: lastMinute ?? null,
        },
      };
    } finally {
      rest?.stop();
      bareRest?.stop();
      bare?.stop();
      for (const c of clients) await c.close().catch(() => {});
      await swapReader.stop().catch(() => {});
      await tradeReader.stop().catch(() => {});
      await reader.close();
      await spot.stop();
    }
  },
);
