// Fuzz (issue 14): the long run of the hostile-input property suite. `cases` REST requests and
// `cases` stream frames generated and mutated by bench/lib/hostile-fuzz.ts against the real query
// API (embedded log, chDB) and stream edge; targets: no invariant broken, no case holding the
// event loop over 10 ms. Budgets are lifted so the run exercises inputs, not the rate limiter.
import { createQueryApi } from '../../query-api/app.ts';
import { createStreamEdge } from '../../stream-edge/server.ts';
import { BENCH_BUDGET_PER_MINUTE, benchKeys } from '../lib/edge-env.ts';
import { MAX_BLOCK_MS, runFuzz } from '../lib/hostile-fuzz.ts';
import { openLog, openStore } from '../lib/pipeline-parts.ts';
import { check, runScenarioMain } from '../lib/scenario.ts';

interface Params {
  /** Cases of each kind (REST and stream); 5,000 each is the 10,000-case run. */
  cases: number;
  seed: number;
}

runScenarioMain<Params>('fuzz', { cases: 5000, seed: 14 }, async ({ ctx }, params) => {
  const handle = await openStore(ctx);
  const logHandle = await openLog(ctx, 'embedded', 'fuzz');
  const env = benchKeys(ctx);
  const api = createQueryApi(ctx, {
    store: handle.store,
    log: logHandle.log,
    keys: env.keys,
    keyBudgetPerMinute: BENCH_BUDGET_PER_MINUTE,
    ipBudgetPerMinute: BENCH_BUDGET_PER_MINUTE,
  });
  const edge = createStreamEdge(ctx, { log: null, keys: env.keys, limiters: env.limiters });
  const { port } = await api.start();
  const { port: wsPort } = await edge.start();
  const started = performance.now();
  const report = await runFuzz({
    restPort: port,
    wsUrl: `ws://127.0.0.1:${wsPort}/v1/stream`,
    key: env.authorization.slice('Bearer '.length),
    count: params.cases,
    seed: params.seed,
  });
  const seconds = (performance.now() - started) / 1000;
  await edge.stop();
  await api.stop();
  await logHandle.close();
  await handle.store.close();
  env.close();
  return {
    measurements: [
      { subject: 'hostile REST + stream cases', metric: 'cases', value: report.cases, unit: 'cases' },
      { subject: 'hostile REST + stream cases', metric: 'failures', value: report.failures.length, unit: 'cases' },
      { subject: 'largest event-loop block of one case', metric: 'max', value: report.maxBlockMs, unit: 'ms' },
      { subject: 'fuzz throughput', metric: 'rate', value: Math.round(report.cases / seconds), unit: 'cases/s' },
    ],
    ratios: {},
    targets: [
      check('fuzz: no invariant broken', 'failures', '<=', 0, report.failures.length, 'cases'),
      check(`fuzz: no case blocks > ${MAX_BLOCK_MS} ms`, 'maxBlockMs', '<=', MAX_BLOCK_MS, report.maxBlockMs, 'ms'),
    ],
    notes: [
      `seed ${params.seed}; largest block from: ${JSON.stringify(report.worstCase)}; failures (first 5): ${JSON.stringify(report.failures.slice(0, 5))}`,
    ],
  };
});
