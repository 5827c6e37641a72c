// The paid-promotion poller: every interval it reads a DEX Screener-shaped API (dexscreener.ts)
// through the hardened fetcher (deadline, size cap, SSRF guard, retries with backoff), asks the
// orders of the boosted tokens whose boost total changed, and publishes their paid orders as
// `promotion` token events — all of one poll in one publish, after every event passed its schema
// check. A failed poll backs off (doubling, at most 10 min) and the next good one catches up.
import { tokenKey } from '../../core/chains.ts';
import type { Context } from '../../core/context.ts';
import type { TokenEvent } from '../../core/topics.ts';
import type { MetadataFetcher } from '../enrichment/fetcher.ts';
import type { IngestPublisher } from '../publisher.ts';
import { BOOST_PATHS, ordersPath, parseBoosts, parseOrders, type Boost, type FeedProblem } from './dexscreener.ts';
import { promotionEvent } from './entry.ts';

export interface PollReport {
  /** Promotion events published. */
  published: number;
  /** Tokens whose orders were asked. */
  asked: number;
  /** Entries refused (wrong shape, bad address, bad time). */
  refused: number;
  /** Requests that failed (after the fetcher's own retries). */
  failed: number;
}

export interface PromotionPoller {
  pollOnce(): Promise<PollReport>;
  /** Polls now and then every interval (backing off while polls fail). */
  start(): void;
  /** Stops polling; resolves once a poll under way has finished. */
  stop(): Promise<void>;
}

export interface PromotionPollerOptions {
  fetcher: MetadataFetcher;
  /** API origin (and path prefix), e.g. https://api.dexscreener.com */
  baseUrl: string;
  publisher: Pick<IngestPublisher, 'publish'>;
  intervalMs: number;
  /** Orders asked per poll at most (the API allows 60 requests a minute); the rest wait for the next poll. */
  maxOrdersPerPoll?: number;
  /** Tokens (and event ids) remembered: memory stays bounded, the oldest are forgotten first. */
  maxRemembered?: number;
  now?: () => number;
}

const MAX_BACKOFF_MS = 10 * 60_000;

/** A bounded map, oldest insertion forgotten first. */
function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value!);
}

/** Paths whose last refusals are remembered (each token's orders path is one). */
const MAX_WARNED_PATHS = 1_000;

export function createPromotionPoller(ctx: Context, options: PromotionPollerOptions): PromotionPoller {
  const logger = ctx.logger.child({ component: 'promotions' });
  const maxOrders = options.maxOrdersPerPoll ?? 30;
  const maxRemembered = options.maxRemembered ?? 10_000;
  const now = options.now ?? Date.now;
  const base = options.baseUrl.replace(/\/+$/, '');
  // Where the events came from: the API's host and path, never its query (it may hold a key).
  const source = (() => {
    const url = new URL(base);
    return `${url.host}${url.pathname.replace(/\/+$/, '')}`;
  })();
  /** Token key → boost total its orders were last read at. */
  const asked = new Map<string, number>();
  /** Ids of the promotion events already published. */
  const published = new Map<string, true>();
  /**
   * Per path, the refusals last warned about: a feed keeps a bad entry for hours, so the same ones
   * again are logged at debug only (warned every poll they were a line every 5 s, forever).
   */
  const warnedRefusals = new Map<string, string>();
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> | null = null;
  let stopped = false;
  let failures = 0;

  /**
   * One answer fetched and parsed, its refused entries reported: undefined when the request failed,
   * null when the answer was refused whole.
   */
  async function read<T extends { problems: FeedProblem[] }>(
    path: string,
    parse: (json: unknown) => T | { error: string },
    report: PollReport,
  ): Promise<T | null | undefined> {
    let json: unknown;
    try {
      json = await get(path);
    } catch {
      report.failed++;
      return undefined;
    }
    const parsed = parse(json);
    if ('error' in parsed) {
      reportProblems(path, [{ index: 0, message: parsed.error }]);
      report.refused++;
      return null;
    }
    reportProblems(path, parsed.problems);
    report.refused += parsed.problems.length;
    return parsed;
  }

  function reportProblems(where: string, problems: FeedProblem[]): void {
    if (problems.length === 0) {
      warnedRefusals.delete(where);
      return;
    }
    for (const problem of problems) logger.debug({ where, ...problem }, 'promotion entry refused');
    ctx.metrics.inc('ingest.promotions.refused', problems.length);
    // By message, not index: entries shift as the feed gains new ones.
    const refusals = problems.map((problem) => problem.message).join('\n');
    if (warnedRefusals.get(where) === refusals) return;
    remember(warnedRefusals, where, refusals, MAX_WARNED_PATHS);
    logger.warn({ where, refused: problems.length, first: problems.slice(0, 3) }, 'promotion entries refused');
  }

  async function get(path: string): Promise<unknown> {
    const got = await options.fetcher.fetchJson(`${base}${path}`);
    if (got.ok) return got.json;
    logger.warn({ where: path, reason: got.reason, transient: got.transient }, 'promotion source request failed');
    ctx.metrics.inc('ingest.promotions.request_errors');
    throw new Error(got.reason);
  }

  async function pollOnce(): Promise<PollReport> {
    const report: PollReport = { published: 0, asked: 0, refused: 0, failed: 0 };
    const boosted = new Map<string, Boost>();
    for (const path of BOOST_PATHS) {
      const parsed = await read(path, parseBoosts, report);
      if (!parsed) continue;
      for (const boost of parsed.boosts) {
        const key = tokenKey(boost.chain, boost.token);
        if (!boosted.has(key)) boosted.set(key, boost);
      }
    }
    const events: TokenEvent[] = [];
    const answered: Array<[string, number]> = [];
    const due = [...boosted].filter(([key, boost]) => asked.get(key) !== boost.totalAmount).slice(0, maxOrders);
    for (const [key, boost] of due) {
      if (stopped) break;
      const path = ordersPath(boost.chain, boost.token);
      report.asked++;
      const parsed = await read(
        path,
        (json) => parseOrders(json, { chain: boost.chain, token: boost.token, now: now(), source }),
        report,
      );
      if (parsed === undefined) continue; // not answered: asked again next poll
      answered.push([key, boost.totalAmount]);
      if (!parsed) continue;
      for (const entry of parsed.entries) {
        const event = promotionEvent(entry);
        if (published.has(event.id) || events.some((e) => e.id === event.id)) continue;
        events.push(event);
      }
    }
    if (events.length > 0) await options.publisher.publish({ swaps: [], events });
    // Remembered only once published: a publish that failed is asked again.
    for (const [key, total] of answered) remember(asked, key, total, maxRemembered);
    for (const event of events) remember(published, event.id, true, maxRemembered);
    report.published = events.length;
    ctx.metrics.inc('ingest.promotions.published', events.length);
    if (events.length > 0)
      logger.info({ source, promotions: events.length, asked: report.asked }, 'promotions published');
    return report;
  }

  function schedule(delayMs: number): void {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = null;
      running = pollOnce()
        .then((report) => {
          failures = report.failed > 0 ? failures + 1 : 0;
        })
        .catch((error: Error) => {
          failures++;
          logger.warn({ err: error.message }, 'promotion poll failed');
        })
        .finally(() => {
          running = null;
          const backoff = failures === 0 ? options.intervalMs : options.intervalMs * 2 ** Math.min(failures, 10);
          schedule(Math.min(backoff, Math.max(options.intervalMs, MAX_BACKOFF_MS)));
        });
    }, delayMs);
    timer.unref();
  }

  return {
    pollOnce,
    start() {
      stopped = false;
      schedule(0);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await running;
    },
  };
}
