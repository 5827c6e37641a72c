// Fuzz (issue 14): the long run of the hostile-input property suite. `cases` REST requests and
// `cases` stream frames generated and mutated by bench/lib/hostile-fuzz.ts against the real query
// API (embedded log, chDB) and stream edge; targets: no invariant broken, no case holding the
// event loop over 10 ms. Budgets are lifted so the run exercises inputs, not the rate limiter.
// The views hold `tokens` real token objects (the simulator's, re-addressed, as in the memory
// scenario) so discovery requests rank and filter at a realistic column size.
import { CHAINS, type Chain } from '../../core/chains.ts';
import { COLUMNS } from '../../core/schemas.ts';
import { seedAddress } from '../../ingest/evm/index.ts';
import { solanaAddress } from '../../ingest/solana/index.ts';
import { createQueryApi } from '../../query-api/app.ts';
import { createStreamEdge } from '../../stream-edge/server.ts';
import { derive } from '../lib/derived.ts';
import { BENCH_BUDGET_PER_MINUTE, benchKeys } from '../lib/edge-env.ts';
import { MAX_BLOCK_MS, runFuzz } from '../lib/hostile-fuzz.ts';
import { readDecoded } from '../lib/inputs.ts';
import { openLog, openStore } from '../lib/pipeline-parts.ts';
import { check, runScenarioMain } from '../lib/scenario.ts';

interface Params {
  inputFile: string;
  /** Cases of each kind (REST and stream); 5,000 each is the 10,000-case run. */
  cases: number;
  seed: number;
  /** Tokens in the hot views (0 when no inputFile is given). */
  tokens: number;
}

const addressFor = (chain: Chain, i: number) =>
  chain === 'solana' ? solanaAddress(`bench-fuzz/${i}`) : seedAddress(`bench-fuzz/${chain}/${i}`).toLowerCase();

runScenarioMain<Params>('fuzz', { inputFile: '', cases: 5000, seed: 14, tokens: 20_000 }, async ({ ctx }, params) => {
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
  const templates = params.inputFile ? derive(ctx, readDecoded(params.inputFile)).tokens : [];
  const tokens = templates.length > 0 ? params.tokens : 0;
  const now = Date.now();
  for (let i = 0; i < tokens; i++) {
    const template = templates[i % templates.length]!;
    api.views.applyToken({
      ...structuredClone(template),
      address: addressFor(template.chain, i),
      name: `${template.name} ${i}`,
      updatedAt: now,
    });
  }
  const inColumns = COLUMNS.reduce(
    (n, column) => n + CHAINS.reduce((m, chain) => m + api.views.discovery.size(chain, column), 0),
    0,
  );
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
    params: { tokens, inColumns },
    notes: [
      `seed ${params.seed}; ${tokens} tokens in the views, ${inColumns} of them in discovery columns; largest block from: ${JSON.stringify(report.worstCase)} (its runs, ms: ${report.worstCaseRunsMs.join(', ')}); failures (first 5): ${JSON.stringify(report.failures.slice(0, 5))}`,
    ],
  };
});
