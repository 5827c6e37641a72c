// Property suite (issue 14): REST requests and stream frames generated from the spec's shapes and
// mutated (bench/lib/hostile-fuzz.ts); every answer keeps the Errors section's invariants and no
// case holds the event loop more than 10 ms. A bounded run here; `spot bench fuzz` runs 10,000.
import assert from 'node:assert/strict';
import { loadConfig } from '../core/config.ts';
import { createContext } from '../core/context.ts';
import { createLogger } from '../core/logger.ts';
import { createStreamEdge, type StreamEdge } from '../stream-edge/server.ts';
import { MAX_BLOCK_MS, runFuzz } from '../bench/lib/hostile-fuzz.ts';
import { startEnv, type ApiEnv } from './query-api-env.ts';

const CASES = Number(process.env.SPOT_FUZZ_CASES ?? 150);

describe('hostile input: property suite', function () {
  this.timeout(120_000);
  let env: ApiEnv;
  let edge: StreamEdge;
  let wsPort: number;
  before(async () => {
    env = await startEnv();
    const ctx = createContext(
      loadConfig({ SPOT_DATA_DIR: env.dir, SPOT_LOG_LEVEL: 'silent', SPOT_WS_PORT: '0' }),
      createLogger('silent'),
    );
    edge = createStreamEdge(ctx, { log: null, keys: env.keys });
    wsPort = (await edge.start()).port;
  });
  after(async () => {
    await edge?.stop();
    await env?.close();
  });

  it(`keeps the envelope, the headers and a ${MAX_BLOCK_MS} ms bound on ${CASES} REST requests and ${CASES} frames`, async () => {
    const report = await runFuzz({
      restPort: Number(new URL(env.base).port),
      wsUrl: `ws://127.0.0.1:${wsPort}/v1/stream`,
      key: env.key,
      count: CASES,
      seed: Number(process.env.SPOT_FUZZ_SEED ?? 14),
    });
    assert.equal(report.cases, 2 * CASES);
    assert.deepEqual(report.failures.slice(0, 5), []);
    assert.ok(
      report.maxBlockMs <= MAX_BLOCK_MS,
      `max block ${report.maxBlockMs} ms on ${report.worstCase} (runs: ${report.worstCaseRunsMs.join(', ')})`,
    );
  });
});
