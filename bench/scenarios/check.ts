// The issue's outside check as a new user would run it: `npm start`'s command (its Node flags and
// malloc arenas) on a new data dir with the mainnet profile at 2,000 swaps/s and the default day
// of history, for six minutes: RSS after the first minute, sequential token-details requests
// (one at a time, ~15 a second) in 30 s windows, the store keeping up, SIGTERM → exit. Each
// request is followed by one to a bare HTTP server in a process of its own (bench/lib/bare-server.ts):
// what the machine gives any process under the same load, window by window.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { createEmbeddedLog, embeddedLogPath, type EventLog } from '../../core/eventlog/index.ts';
import { TOPICS } from '../../core/topics.ts';
import { startBareServer, type BareServer } from '../lib/bare-server.ts';
import { check, epochNow, runScenarioMain, sleep, type Measurement } from '../lib/scenario.ts';
import {
  coreShare,
  LOOP_THREADS,
  slowStopParts,
  startSpot,
  threadShares,
  type ProcessSample,
  type SpotProcess,
  type ThreadCpu,
} from '../lib/spot-process.ts';
import { round, slope, summarize } from '../lib/stats.ts';

interface Params {
  rate: number;
  /** SPOT_SIM_PROFILE of the child ('' = the default profile). */
  profile: string;
  warmHours: number;
  durationSeconds: number;
  /** Pause after each pair of requests (the service's, then the bare server's). */
  requestGapMs: number;
  windowSeconds: number;
  /** RSS growth is read between these two times since start (the issue: minutes 2 to 6). */
  growthFromSeconds: number;
  growthToSeconds: number;
  /** Per-thread CPU is read over this span since start (the live rate, after the catch-up). */
  cpuFromSeconds: number;
  /** Seconds before SIGTERM the store's rate is read over. */
  storeWindowSeconds: number;
  targetGrowthMB: number;
  targetP99Ms: number;
}

const CHECK_KEY = 'bench-check-key-0001';
const mib = (bytes: number) => round(bytes / 2 ** 20, 1);

/** One GET on a keep-alive agent of its own; resolves with its latency and status (0 on error). */
function timedGet(agent: http.Agent, url: string, headers: Record<string, string>) {
  const from = epochNow();
  return new Promise<{ ms: number; status: number }>((resolve) => {
    http
      .get(url, { agent, headers }, (response) => {
        response.resume();
        response.on('end', () => resolve({ ms: epochNow() - from, status: response.statusCode ?? 0 }));
      })
      .on('error', () => resolve({ ms: epochNow() - from, status: 0 }));
  });
}

/** Per window of `seconds` since `from`, the p99 of the latencies in it, keyed by the window's start. */
function windowP99s(samples: ReadonlyArray<{ at: number; ms: number }>, from: number, seconds: number) {
  const windows = new Map<number, number[]>();
  for (const s of samples) {
    const start = Math.floor((s.at - from) / 1000 / seconds) * seconds;
    let list = windows.get(start);
    if (!list) windows.set(start, (list = []));
    list.push(s.ms);
  }
  return Object.fromEntries([...windows].map(([start, list]) => [`p99At${start}s`, round(summarize(list).p99, 1)]));
}

interface CpuReading {
  threads: ThreadCpu;
  node: ProcessSample | null;
  at: number;
}

const readCpu = (spot: SpotProcess): CpuReading => ({
  threads: spot.threadCpu(),
  node: spot.simulatorNodeSample(),
  at: epochNow(),
});

/** Messages appended to a topic of the log so far (its partitions' end offsets). */
async function appended(log: EventLog, topic: string): Promise<number> {
  let total = 0;
  for (const end of (await log.endOffsets(topic)).values()) total += end;
  return total;
}

/** Per second between two counts of a store sample, or NaN without a span. */
function ratePerSecond(
  from: StoreSample | undefined,
  to: StoreSample | undefined,
  count: (sample: StoreSample) => number,
): number {
  return from && to && to.at > from.at ? ((count(to) - count(from)) * 1000) / (to.at - from.at) : Number.NaN;
}

/** Trades in the store, with the swaps and trades on the log when the count came back. */
interface StoreSample {
  at: number;
  trades: number;
  swapsOnLog: number;
  tradesOnLog: number;
}

/** The sample nearest `at`. */
const nearest = (samples: readonly ProcessSample[], at: number) =>
  samples.reduce((best, s) => (Math.abs(s.at - at) < Math.abs(best.at - at) ? s : best), samples[0]!);

/** Mean RSS (bytes) of the samples within `halfMs` of `at`. */
function meanRssAround(samples: readonly ProcessSample[], at: number, halfMs: number): number {
  const near = samples.filter((s) => Math.abs(s.at - at) <= halfMs);
  return near.length ? near.reduce((sum, s) => sum + s.rssBytes, 0) / near.length : Number.NaN;
}

/**
 * Where the growth's end points fall. RSS swings ±40 MB within seconds (full collections, store
 * merges) and dips after the history is published, then climbs as the live rate's state fills,
 * so a single sample at minute 2 can land on the warm start's peak or in that dip: the 30 s means
 * around both ends, and the lowest sample after the history with the growth from it.
 */
function rssPhase(
  samples: readonly ProcessSample[],
  startedAt: number,
  publishedAfterSeconds: number | null,
  fromAt: number,
  toAt: number,
): Record<string, number> {
  const endMean = meanRssAround(samples, toAt, 15_000);
  const growthOfMeansMB = round((endMean - meanRssAround(samples, fromAt, 15_000)) / 1e6, 1);
  if (publishedAfterSeconds === null) return { growthOfMeansMB };
  const after = samples.filter((s) => s.at >= startedAt + publishedAfterSeconds * 1000 && s.at <= toAt);
  if (after.length === 0) return { growthOfMeansMB };
  const low = after.reduce((best, s) => (s.rssBytes < best.rssBytes ? s : best));
  return {
    growthOfMeansMB,
    lowAfterHistory: mib(low.rssBytes),
    lowAtSeconds: Math.round((low.at - startedAt) / 1000),
    growthFromLowMB: round((endMean - low.rssBytes) / 1e6, 1),
  };
}

/** Seconds from `from` to the log line saying the simulator's history is published, if there is one. */
function historyPublishedAfter(dir: string, from: number): number | null {
  const file = path.join(dir, 'spot-up.log');
  if (!fs.existsSync(file)) return null;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.includes('simulator history published')) continue;
    const time = (JSON.parse(line) as { time?: number }).time;
    return typeof time === 'number' ? round((time - from) / 1000, 1) : null;
  }
  return null;
}

runScenarioMain<Params>(
  'check',
  {
    rate: 2000,
    profile: 'mainnet',
    warmHours: 24,
    durationSeconds: 360,
    requestGapMs: 66,
    windowSeconds: 30,
    growthFromSeconds: 120,
    growthToSeconds: 360,
    cpuFromSeconds: 240,
    storeWindowSeconds: 120,
    targetGrowthMB: 60,
    targetP99Ms: 10,
  },
  async ({ ctx, dir }, params) => {
    const startedAt = epochNow();
    let spot: SpotProcess | null = null;
    let bare: BareServer | null = null;
    let log: EventLog | null = null;
    const agents = [
      new http.Agent({ keepAlive: true, maxSockets: 1 }),
      new http.Agent({ keepAlive: true, maxSockets: 1 }),
    ];
    try {
      spot = await startSpot(dir, {
        SPOT_SIM_RATE: String(params.rate),
        SPOT_SIM_WARM_HOURS: String(params.warmHours),
        SPOT_API_KEYS: CHECK_KEY,
        SPOT_LOG_LEVEL: 'info', // the history's publication is an info line
        ...(params.profile ? { SPOT_SIM_PROFILE: params.profile } : {}),
      });
      const service = spot;
      // The log's ends say what the chain delivered and the aggregator priced, beside the store's count.
      const logReader = createEmbeddedLog(ctx, { path: embeddedLogPath(dir), readonly: true });
      log = logReader;
      bare = await startBareServer();
      const endAt = startedAt + params.durationSeconds * 1000;
      const samples: ProcessSample[] = [service.sample()];
      const stored: StoreSample[] = [];
      let token: { chain: string; token: string } | null = null;
      /** Per-thread CPU and the chain node's, read at cpuFromSeconds and at the end. */
      let cpuFrom: CpuReading | null = null;
      let stopping = false;

      // Side loops: none of them holds up a request (a store query can wait behind inserts).
      const sampling = (async () => {
        let nextStoreAt = epochNow();
        let nextTokenAt = epochNow();
        while (!stopping) {
          const now = epochNow();
          samples.push(service.sample());
          if (!cpuFrom && now >= startedAt + params.cpuFromSeconds * 1000) cpuFrom = readCpu(service);
          if (now >= nextStoreAt) {
            nextStoreAt = now + params.windowSeconds * 1000;
            void service
              .query<{ n: string }>('SELECT count() AS n FROM spot.trades')
              .then(async (rows) => {
                const at = epochNow();
                const [swapsOnLog, tradesOnLog] = await Promise.all([
                  appended(logReader, TOPICS.swaps.name),
                  appended(logReader, TOPICS.trades.name),
                ]);
                stored.push({ at, trades: Number(rows[0]?.n ?? 0), swapsOnLog, tradesOnLog });
              })
              .catch(() => {});
          }
          if (now >= nextTokenAt) {
            // The most traded token so far (the busiest views, the ones a bot would ask for): asked
            // every second until the store has trades, then every minute.
            nextTokenAt = now + (token ? 60_000 : 1000);
            void service
              .topTokens(1)
              .then((rows) => {
                if (rows[0]) token = rows[0];
              })
              .catch(() => {});
          }
          await sleep(1000);
        }
      })();

      const tokenLatencies: Array<{ at: number; ms: number }> = [];
      const bareLatencies: Array<{ at: number; ms: number }> = [];
      let non2xx = 0;
      const headers = { authorization: `Bearer ${CHECK_KEY}` };
      while (epochNow() < endAt) {
        const current = token as { chain: string; token: string } | null;
        if (!current) {
          await sleep(500);
          continue;
        }
        const answer = await timedGet(
          agents[0]!,
          `${service.http}/v1/tokens/${current.chain}/${current.token}`,
          headers,
        );
        tokenLatencies.push({ at: epochNow(), ms: answer.ms });
        if (answer.status !== 200) non2xx++;
        const baseline = await timedGet(agents[1]!, bare.url, {});
        bareLatencies.push({ at: epochNow(), ms: baseline.ms });
        await sleep(params.requestGapMs);
      }
      const cpuTo = readCpu(service);
      // Assigned in the sampling loop, which narrowing does not follow.
      const from = cpuFrom as CpuReading | null;
      stopping = true;
      await sampling;
      const last = service.sample();
      samples.push(last);
      for (const agent of agents) agent.destroy();
      const stopped = await service.stop();

      const growthFrom = nearest(samples, startedAt + params.growthFromSeconds * 1000);
      const growthTo = nearest(samples, startedAt + params.growthToSeconds * 1000);
      const growthSamples = samples.filter((s) => s.at >= growthFrom.at && s.at <= growthTo.at);
      const rssAtMinutes: Record<string, number> = {};
      for (let minute = 1; minute * 60 <= params.durationSeconds; minute++)
        rssAtMinutes[`minute${minute}`] = mib(nearest(samples, startedAt + minute * 60_000).rssBytes);
      const storeFrom = stored.find((s) => s.at >= endAt - params.storeWindowSeconds * 1000);
      const storeTo = stored[stored.length - 1];
      const storeRate = ratePerSecond(storeFrom, storeTo, (sample) => sample.trades);
      const swapRate = ratePerSecond(storeFrom, storeTo, (sample) => sample.swapsOnLog);
      const tradeRate = ratePerSecond(storeFrom, storeTo, (sample) => sample.tradesOnLog);
      // Reference-pair swaps (the native mark) make no trade: the share over the whole run on the log.
      const tradesPerSwap = storeTo && storeTo.swapsOnLog > 0 ? storeTo.tradesOnLog / storeTo.swapsOnLog : Number.NaN;
      const threadShare = from ? threadShares(spot, from.threads, cpuTo.threads, cpuTo.at - from.at) : {};
      const threadRunQueueWait = from
        ? threadShares(spot, from.threads, cpuTo.threads, cpuTo.at - from.at, 'waitMs')
        : {};
      const tokenSummary = summarize(tokenLatencies.map((l) => l.ms));
      const bareSummary = summarize(bareLatencies.map((l) => l.ms));
      const growthMB = (growthTo.rssBytes - growthFrom.rssBytes) / 1e6;
      const published = historyPublishedAfter(dir, startedAt);
      const phase = rssPhase(samples, startedAt, published, growthFrom.at, growthTo.at);
      const minutes = (seconds: number) => round(seconds / 60, 1);
      const measurements: Measurement[] = [
        {
          subject: `RSS of spot up, minute ${minutes(params.growthFromSeconds)} → ${minutes(params.growthToSeconds)} (${params.rate} swaps/s, ${params.profile || 'default'} profile, ${params.warmHours} h of history)`,
          metric: 'rssGrowth',
          value: round(growthMB, 1),
          unit: 'MB',
          extra: {
            ...rssAtMinutes,
            slopeMBPerMinute: round(
              slope(growthSamples.map((s) => [(s.at - growthFrom.at) / 60_000, s.rssBytes / 1e6] as const)),
              1,
            ),
            ...phase,
          },
        },
        {
          subject: 'token details, one request at a time (the most traded token)',
          metric: 'p99',
          value: round(tokenSummary.p99, 1),
          unit: 'ms',
          extra: {
            p50: round(tokenSummary.p50),
            max: round(tokenSummary.max, 1),
            requests: tokenSummary.count,
            non2xx,
            ...windowP99s(tokenLatencies, startedAt, params.windowSeconds),
          },
        },
        {
          subject:
            'a bare HTTP server in its own process, right after each of those requests (the machine under the same load)',
          metric: 'p99',
          value: round(bareSummary.p99, 1),
          unit: 'ms',
          extra: {
            p50: round(bareSummary.p50),
            max: round(bareSummary.max, 1),
            requests: bareSummary.count,
            ...windowP99s(bareLatencies, startedAt, params.windowSeconds),
          },
        },
        {
          subject: `store keeping up: trades stored per second over the last ${minutes(params.storeWindowSeconds)} min, against the swaps the chain appended to the log (reference-pair swaps make no trade)`,
          metric: 'tradesPerSecond',
          value: round(storeRate, 0),
          unit: 'trades/s',
          extra: {
            simRate: params.rate,
            swapsOnLogPerSecond: round(swapRate, 0),
            tradesOnLogPerSecond: round(tradeRate, 0),
            tradesPerSwapOnLog: round(tradesPerSwap, 3),
            ...Object.fromEntries(stored.map((s) => [`tradesAt${Math.round((s.at - startedAt) / 1000)}s`, s.trades])),
          },
        },
        ...(from?.node && cpuTo.node
          ? [
              {
                subject: `the simulator's chain node (the chain, not the service): CPU from ${minutes(params.cpuFromSeconds)} min`,
                metric: 'coreShare',
                value: round(coreShare(from.node, cpuTo.node), 3),
                unit: 'cores',
              },
            ]
          : []),
        {
          subject: 'simulator history published (its warm start) after',
          metric: 'seconds',
          value: published ?? Number.NaN,
          unit: 's',
        },
        {
          subject: 'SIGTERM → exit',
          metric: 'shutdownMs',
          value: round(stopped.ms, 0),
          unit: 'ms',
          extra: { exitCode: stopped.code ?? -1, ...slowStopParts(service.stopTimes()) },
        },
      ];
      return {
        measurements,
        ratios: { tokenDetailsP99OverBareServerP99: round(tokenSummary.p99 / bareSummary.p99, 2) },
        targets: [
          check(
            `RSS growth over minutes ${minutes(params.growthFromSeconds)}–${minutes(params.growthToSeconds)} <= ${params.targetGrowthMB} MB`,
            'rssGrowth',
            '<=',
            params.targetGrowthMB,
            round(growthMB, 1),
            'MB',
          ),
          check(
            `sequential token details p99 <= ${params.targetP99Ms} ms`,
            'p99',
            '<=',
            params.targetP99Ms,
            round(tokenSummary.p99, 1),
            'ms',
          ),
          check(
            `the store keeps up with the chain's swaps (${params.rate}/s asked): trades stored within 10 % of swaps on the log × trades per swap`,
            'tradesPerSecond',
            '>=',
            round(0.9 * swapRate * tradesPerSwap, 0),
            round(storeRate, 0),
            'trades/s',
          ),
          check(
            'SIGTERM exits 0 within 10 s',
            'shutdownMs',
            '<=',
            10_000,
            stopped.code === 0 ? round(stopped.ms, 0) : Number.NaN,
            'ms',
          ),
        ],
        notes: [
          `\`npm start\`'s command (${'bin/spot.js up'} with its Node flags and MALLOC_ARENA_MAX) on a new data dir: SPOT_SIM_PROFILE=${params.profile || 'default'} SPOT_SIM_RATE=${params.rate}, ${params.warmHours} h of history; RSS of the spot up process (the chain node is a child process, measured apart) every second; token details one at a time with ${params.requestGapMs} ms between pairs, each followed by a request to a bare node:http server in a process of its own, on keep-alive connections of their own. Window p99s keyed by seconds since start.`,
        ],
        evidence: {
          threadShareFromCpuFrom: threadShare,
          threadRunQueueWaitFromCpuFrom: threadRunQueueWait,
          servingLoop: service
            .loopReports('serving')
            .map((r) => ({ ...r.delayMs, utilization: r.utilization, gc: r.gc })),
          // Each thread's heap every 30 s: which one's committed size the RSS growth is.
          heaps: Object.fromEntries(
            LOOP_THREADS.map((thread) => [
              thread,
              service.loopReports(thread).map((r) => ({
                atSeconds: Math.round((r.time - startedAt) / 1000),
                usedMB: r.heapMB,
                committedMB: r.heapCommittedMB,
                oldSpaceMB: r.oldSpaceMB,
                largeObjectSpaceMB: r.largeObjectSpaceMB,
              })),
            ]),
          ),
          shutdown: { ...stopped, partsMs: service.stopTimes() },
        },
      };
    } finally {
      for (const agent of agents) agent.destroy();
      bare?.stop();
      await spot?.stop();
      await log?.close();
    }
  },
);
