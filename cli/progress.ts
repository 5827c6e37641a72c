// Start-up progress of `spot up` and `spot aggregate`: the warm start (the in-process simulator's
// history published, or every followed chain's newest block close to the wall clock) and the
// aggregator's catch-up (messages processed of those in the log). A bar redrawn on a terminal; a
// log line every 5 s otherwise. Read from the role's metrics (the ingest thread's included), so
// the stages need no hook of their own.
import { progressBar } from '../aggregators/replay.ts';
import { TOPICS } from '../core/topics.ts';
import type { MetricsJSON } from '../core/metrics.ts';
import type { Runtime } from './runtime.ts';

/** The aggregator counts as caught up this many messages from the log's end (live traffic keeps arriving). */
const CAUGHT_UP_SLACK = 1000;
const INPUTS = [TOPICS.swaps.name, TOPICS.tokenEvents.name];
/**
 * Ingest counts as warm (still reading history) while a chain's newest block is older than this, s.
 * A source reading a node's head stays within a few seconds (its confirmations' worth on EVM).
 */
const WARM_BEHIND_S = 120;

/** The value of the named counter `name` in a metrics dump, if present. */
function namedValue(metrics: MetricsJSON, name: string): number | undefined {
  const family = metrics.find((metric) => metric.name === 'spot_named_counter');
  return family?.values.find((value) => value.labels.name === name)?.value;
}

/** How far behind the wall clock the furthest-behind chain's newest processed block is, s. */
function ingestBehindSeconds(metrics: MetricsJSON): number | undefined {
  const family = metrics.find((metric) => metric.name === 'spot_ingest_behind_seconds');
  if (!family || family.values.length === 0) return undefined;
  return Math.max(...family.values.map((value) => value.value));
}

function formatBehind(seconds: number): string {
  return seconds >= 3600 ? `${(seconds / 3600).toFixed(1)} h` : `${Math.round(seconds / 60)} min`;
}

export function watchStartup(runtime: Runtime, output: NodeJS.WriteStream = process.stderr): void {
  const { ctx, log } = runtime;
  const tty = output.isTTY === true && ctx.config.logFormat !== 'json';
  const started = Date.now();
  let lastLine = 0;
  let busy = false;
  let timer: NodeJS.Timeout | null = null;

  const stop = (final: string | null) => {
    if (timer) clearInterval(timer);
    timer = null;
    if (final !== null && tty) output.write(`\r\x1b[K${final}\n`);
  };

  async function tick(): Promise<void> {
    let total = 0;
    for (const topic of INPUTS) for (const end of (await log.endOffsets(topic)).values()) total += end;
    const processed = ctx.metrics.get('aggregator.processed');
    const metrics = await runtime.metricsJSON();
    const history = namedValue(metrics, 'ingest.simulator.history_progress');
    const behind = ingestBehindSeconds(metrics);
    const rate = processed / Math.max(0.001, (Date.now() - started) / 1000);
    const warm = (history !== undefined && history < 1) || (behind !== undefined && behind > WARM_BEHIND_S);
    const caughtUp = !warm && total - processed <= CAUGHT_UP_SLACK;
    const parts = [
      ...(history !== undefined ? [`warm start ${(Math.min(1, history) * 100).toFixed(0)}%`] : []),
      ...(history === undefined && behind !== undefined && behind > WARM_BEHIND_S
        ? [`ingest ${formatBehind(behind)} behind`]
        : []),
      `aggregator ${progressBar(processed, total, rate)}`,
    ];
    if (tty) output.write(`\r\x1b[K${parts.join('  ')}`);
    else if (Date.now() - lastLine >= 5000 && !caughtUp) {
      lastLine = Date.now();
      ctx.logger.info(
        {
          processed,
          inLog: total,
          warmStart: history ?? null,
          ingestBehindS: behind === undefined ? null : Math.round(behind),
        },
        'catching up',
      );
    }
    if (caughtUp) {
      stop(`aggregator caught up: ${processed} messages in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      ctx.logger.info({ processed, ms: Date.now() - started }, 'caught up with the event log');
    }
  }

  timer = setInterval(
    () => {
      if (busy) return;
      busy = true;
      tick()
        .catch(() => stop(null))
        .finally(() => {
          busy = false;
        });
    },
    tty ? 250 : 1000,
  );
  timer.unref();
  runtime.add({ name: 'progress', stop: async () => stop(null) });
}
