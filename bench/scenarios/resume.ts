// Resume: how fast a reconnecting client (client/index.ts) catches up on spot.trades from its
// cursor. The simulator's trades are on the embedded log; a client follows the most traded token,
// leaves after the first of its trades, the rest of the trades land while it is away, and a new
// client resumes from the last cursor. Rate = log messages the edge scanned for it / time from the
// resume subscribe to its last missed trade. Baseline, same run: reading those messages off the
// same log with a plain consumer and JSON.parse each, sending nothing.
import path from 'node:path';
import { createStreamClient } from '../../client/index.ts';
import { tokenKey, type Chain } from '../../core/chains.ts';
import { createEmbeddedLog } from '../../core/eventlog/embedded.ts';
import { TOPICS, type PricedTradeMessage } from '../../core/topics.ts';
import { createStreamEdge } from '../../stream-edge/server.ts';
import { derive } from '../lib/derived.ts';
import { benchKeys } from '../lib/edge-env.ts';
import { readDecoded } from '../lib/inputs.ts';
import { check, runScenarioMain, sleep, type Measurement } from '../lib/scenario.ts';
import { round } from '../lib/stats.ts';

interface Params {
  inputFile: string;
  /** The resume must scan the log at least this fraction of a plain consumer's rate. */
  targetRatio: number;
}

const waitFor = async (predicate: () => boolean, what: string, timeoutMs = 120_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(2);
  }
};

runScenarioMain<Params>('resume', { inputFile: '', targetRatio: 0.3 }, async ({ ctx, dir }, params) => {
  const { trades } = derive(ctx, readDecoded(params.inputFile));
  const counts = new Map<string, number>();
  for (const m of trades) counts.set(m.trade.token, (counts.get(m.trade.token) ?? 0) + 1);
  const token = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
  const chain = trades.find((m) => m.trade.token === token)!.trade.chain as Chain;

  const log = createEmbeddedLog(ctx, { path: path.join(dir, 'log', 'events.sqlite'), pollMs: 5 });
  await log.ensureTopics([TOPICS.trades, TOPICS.candles, TOPICS.tokens]);
  const produce = async (messages: PricedTradeMessage[]) => {
    for (let i = 0; i < messages.length; i += 500) {
      await log.produce(
        TOPICS.trades.name,
        messages.slice(i, i + 500).map((m) => ({
          key: tokenKey(m.trade.chain as Chain, m.trade.token),
          value: JSON.stringify(m),
          timestamp: m.trade.timestamp,
        })),
      );
    }
  };
  const env = benchKeys(ctx);
  const edge = createStreamEdge(ctx, { log, keys: env.keys, limiters: env.limiters });
  const { port } = await edge.start();
  const url = `ws://127.0.0.1:${port}/v1/stream`;
  const apiKey = env.authorization.slice('Bearer '.length);
  try {
    // 1. Live until the token's first trade: that update's cursor is where the client left.
    const firstAt = trades.findIndex((m) => m.trade.token === token);
    const first = createStreamClient({ url, apiKey });
    let seen = 0;
    const live = first.subscribe('spot.trades', { chain, token }, { onUpdate: () => seen++ });
    await live.ready;
    await produce(trades.slice(0, firstAt + 1));
    await waitFor(() => seen === 1, 'the first live trade');
    const cursor = live.cursor!;
    first.close();
    // 2. Everything else lands while the client is away.
    const missed = trades.slice(firstAt + 1);
    const missedOfToken = missed.filter((m) => m.trade.token === token).length;
    await produce(missed);
    // 3. The resume, timed.
    const again = createStreamClient({ url, apiKey });
    await again.connected();
    let received = 0;
    const started = performance.now();
    again.subscribe('spot.trades', { chain, token }, { onUpdate: () => received++ }, { resumeFrom: cursor });
    await waitFor(() => received === missedOfToken, `${missedOfToken} missed trades`);
    const resumeMs = performance.now() - started;
    again.close();
    // 4. Baseline: the whole topic read by a plain consumer, each value parsed.
    const total = trades.length;
    const reader = log.consumer({
      group: 'bench-baseline',
      topics: [TOPICS.trades.name],
      start: 'earliest',
      commit: 'manual',
    });
    let read = 0;
    const baseStarted = performance.now();
    const running = reader.run(async (batch) => {
      for (const m of batch.messages) if (JSON.parse(m.value)) read++;
    });
    await waitFor(() => read === total, 'the baseline read');
    const baseMs = performance.now() - baseStarted;
    await reader.stop();
    await running;

    const resumeRate = (missed.length * 1000) / resumeMs;
    const baseRate = (total * 1000) / baseMs;
    const ratio = resumeRate / baseRate;
    const measurements: Measurement[] = [
      {
        subject: 'spot edge resume (client/ resumeFrom → log reader → hand-over)',
        metric: 'log messages/s',
        value: round(resumeRate, 0),
        unit: 'msg/s',
        extra: { ms: round(resumeMs, 1), tradesDelivered: missedOfToken },
      },
      {
        subject: 'plain log consumer + JSON.parse (baseline)',
        metric: 'log messages/s',
        value: round(baseRate, 0),
        unit: 'msg/s',
        extra: { ms: round(baseMs, 1), messages: total },
      },
    ];
    return {
      params: { logMessagesMissed: missed.length, tradesOfTokenMissed: missedOfToken },
      measurements,
      ratios: { resume_vs_plain_consumer: round(ratio, 3) },
      targets: [
        check(
          `resume scans >= ${params.targetRatio}× a plain consumer`,
          'ratio',
          '>=',
          params.targetRatio,
          round(ratio, 3),
          '×',
        ),
      ],
      notes: [
        'One client, in the edge process; the resume is paced by the connection (half the unsent-frame limit), filters every message and hands over to the live feed at the end.',
      ],
    };
  } finally {
    await edge.stop();
    env.close();
    await log.close();
  }
});
