// Operations: Prometheus metrics, health endpoints, the SPOT_METRICS_PORT of roles without a REST
// port, log formats and the start-up banner. The service runs as a user runs it (`spot up` in a
// child process); the units run on real parts (the embedded log, a ClickHouse client).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import WebSocket from 'ws';
import { ConfigError, loadConfig } from '../core/config.ts';
import { createContext } from '../core/context.ts';
import { createEventLog } from '../core/eventlog/index.ts';
import { createLogger, usesPrettyLogs } from '../core/logger.ts';
import { createMetrics } from '../core/metrics.ts';
import { createClickHouseClient } from '../clickhouse/client.ts';
import { createStore } from '../clickhouse/store.ts';
import { createOps } from '../query-api/ops-routes.ts';
import { createRuntime, waitForShutdown, type Runtime } from '../cli/runtime.ts';
import { answersOk, freePort, waitFor } from './helpers/ports.ts';

const KEY = 'ops-test-key-0001';

/** The families docs/operations.md promises on a full `spot up`. */
const FAMILIES = [
  'spot_ingest_head',
  'spot_ingest_processed',
  'spot_ingest_behind_blocks',
  'spot_ingest_behind_seconds',
  'spot_decode_errors_total',
  'spot_log_consumer_lag',
  'spot_aggregator_messages_total',
  'spot_aggregator_batch_duration_seconds',
  'spot_store_write_duration_seconds',
  'spot_store_rows_written_total',
  'spot_hot_view_age_seconds',
  'spot_http_request_duration_seconds',
  'spot_stream_connections',
  'spot_stream_subscriptions',
  'spot_stream_frames_sent_total',
  'spot_stream_backpressure_closes_total',
  'nodejs_eventloop_lag_p99_seconds',
];

/** Value of one sample line `name{labels} value` of a Prometheus text (the first that matches). */
function sample(text: string, name: string, labels = ''): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    const key = line.slice(0, space);
    if (key === name + labels) return Number(line.slice(space + 1));
  }
  return undefined;
}

const discovery = (http: string) =>
  fetch(`${http}/v1/discovery`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ chains: ['solana'], newPairs: {} }),
  });

function spawnSpot(args: string[], env: Record<string, string>): { child: ChildProcess; output: () => string } {
  let output = '';
  const child = spawn(process.execPath, ['bin/spot.js', ...args], {
    env: { ...process.env, SPOT_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  return { child, output: () => output };
}

async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
}

/** Field 19 of /proc/<pid>/task/<tid>/stat (after the parenthesised name): the thread's nice value. */
const niceOf = (pid: number, tid: number) =>
  Number(fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);

describe('operations: spot up serves metrics and health', function () {
  this.timeout(120_000);
  let proc: ReturnType<typeof spawnSpot>;
  /** The first line of the service's output that holds `text`, once it is there. */
  const logLine = (text: string, what: string) =>
    waitFor(
      async () =>
        proc
          .output()
          .split('\n')
          .find((line) => line.includes(text)),
      30_000,
      what,
    );
  let dataDir: string;
  let http: string;
  let wsBase: string;

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-ops-'));
    const [httpPort, wsPort, sqlPort] = [await freePort(), await freePort(), await freePort()];
    http = `http://127.0.0.1:${httpPort}`;
    wsBase = `127.0.0.1:${wsPort}`;
    proc = spawnSpot(['up'], {
      SPOT_DATA_DIR: dataDir,
      SPOT_HTTP_PORT: String(httpPort),
      SPOT_WS_PORT: String(wsPort),
      SPOT_SQL_PORT: String(sqlPort),
      SPOT_API_KEYS: KEY,
      SPOT_SIM_WARM_HOURS: '0.5',
      SPOT_SIM_RATE: '100',
      SPOT_LOG_FORMAT: 'json',
    });
    await waitFor(() => answersOk(`${http}/healthz`), 90_000, 'the REST port').catch((error) => {
      throw new Error(`${error.message}\n--- service output ---\n${proc.output().slice(-4000)}`);
    });
  });

  after(async () => {
    await stopChild(proc?.child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('logs a start-up line with the URLs and the data dir (JSON logs: no banner block, no console link)', async () => {
    const line = await logLine('"msg":"spot is up"', 'the start-up line');
    const fields = JSON.parse(line) as Record<string, string>;
    assert.equal(fields.rest, http);
    assert.equal(fields.stream, `ws://${wsBase}/v1/stream`);
    assert.match(fields.sql!, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(fields.dataDir, dataDir);
    assert.equal(fields.console, undefined);
  });

  it('runs every thread but the serving thread (main, chDB, V8 helpers) at SPOT_INGEST_NICE (default 10), serving at 0 (Linux)', async function () {
    if (!fs.existsSync('/proc/thread-self')) this.skip();
    const { servingThreadId } = JSON.parse(await logLine('ingest threads lowered', 'the priority line')) as {
      servingThreadId: number;
    };
    const pid = proc.child.pid!;
    const nameOf = (tid: number) => fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
    assert.equal(niceOf(pid, pid), 10, 'main thread');
    assert.equal(niceOf(pid, servingThreadId), 0, 'serving thread');
    const others = fs
      .readdirSync(`/proc/${pid}/task`)
      .map(Number)
      .filter((tid) => tid !== servingThreadId);
    assert.ok(
      others.some((tid) => nameOf(tid) !== 'node'),
      'chDB runs threads of its own',
    );
    for (const tid of others) assert.equal(niceOf(pid, tid), 10, `thread ${tid} (${nameOf(tid)})`);
  });

  it("runs the simulator's chain node as a child process below the ingest threads (nice 15), every thread of it (Linux)", async function () {
    if (!fs.existsSync('/proc/thread-self')) this.skip();
    const { pid } = JSON.parse(await logLine('process lowered below the ingest threads', 'the node priority line')) as {
      pid: number;
    };
    const parent = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1];
    assert.equal(Number(parent), proc.child.pid, 'a child of spot up');
    const tasks = fs.readdirSync(`/proc/${pid}/task`);
    assert.ok(tasks.length > 1, 'V8 and libuv threads beside the main one');
    for (const tid of tasks) assert.equal(niceOf(pid, Number(tid)), 15);
  });

  it('answers /healthz and /readyz on both ports without a key and without spending the request budget', async () => {
    const before = Number((await discovery(http)).headers.get('x-ratelimit-remaining'));
    for (const base of [http, `http://${wsBase}`]) {
      const health = await fetch(`${base}/healthz`);
      assert.equal(health.status, 200);
      assert.deepEqual(await health.json(), { status: 'ok' });
      assert.equal(health.headers.get('x-ratelimit-remaining'), null);
      const ready = await waitFor(
        async () => {
          const response = await fetch(`${base}/readyz`);
          return response.status === 200 ? ((await response.json()) as Record<string, unknown>) : undefined;
        },
        60_000,
        `${base}/readyz`,
      );
      assert.equal(ready.ready, true);
      assert.equal(ready.store, 'ok');
      assert.ok('spot-aggregator-default' in (ready.lag as object), JSON.stringify(ready));
    }
    // A burst carrying the key, which the key's budget would notice (it refills 200 per second).
    const auth = { Authorization: `Bearer ${KEY}` };
    await Promise.all(
      Array.from({ length: 300 }, () => fetch(`${http}/healthz`, { headers: auth }).then((r) => r.arrayBuffer())),
    );
    const after = Number((await discovery(http)).headers.get('x-ratelimit-remaining'));
    assert.ok(after >= before - 1, `ops requests spend nothing from the budget (${before} -> ${after})`);
    assert.equal((await fetch(`${http}/healthz`, { method: 'POST' })).status, 405);
  });

  it('serves every documented family in Prometheus text on the REST and stream ports', async () => {
    // Every family but the decode errors (none in the simulator's real layouts) gets samples; some
    // only once their part has done something (the hot views' first token), so they are waited for.
    const unsampled = (body: string) =>
      FAMILIES.filter(
        (family) => family !== 'spot_decode_errors_total' && !new RegExp(`^${family}(_bucket)?[{ ]`, 'm').test(body),
      );
    assert.equal((await discovery(http)).status, 200);
    const socket = new WebSocket(`ws://${wsBase}/v1/stream`, { headers: { Authorization: `Bearer ${KEY}` } });
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    socket.send(
      JSON.stringify({
        action: 'subscribe',
        channel: 'spot.trades',
        filters: { chain: 'base', token: `0x${'1'.repeat(40)}` },
      }),
    );
    try {
      const text = await waitFor(
        async () => {
          const response = await fetch(`${http}/metrics`);
          assert.equal(response.status, 200);
          assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
          const body = await response.text();
          // Every family present with a sample, the aggregator has flushed and the socket is counted.
          const complete =
            FAMILIES.every((family) => new RegExp(`^# TYPE ${family} `, 'm').test(body)) &&
            unsampled(body).length === 0 &&
            (sample(body, 'spot_aggregator_messages_total') ?? 0) > 0 &&
            // The store writes behind the topics, once per SPOT_STORE_FLUSH_MS.
            /^spot_store_write_duration_seconds_count\{/m.test(body) &&
            (sample(body, 'spot_stream_connections') ?? 0) >= 1;
          return complete ? body : undefined;
        },
        60_000,
        'every metric family',
      ).catch(async (error) => {
        const body = await (await fetch(`${http}/metrics`)).text();
        const missing = FAMILIES.filter((family) => !new RegExp(`^# TYPE ${family} `, 'm').test(body));
        throw new Error(
          `${error.message}; missing: ${missing.join(', ')}; without samples: ${unsampled(body).join(', ')}`,
        );
      });
      assert.match(text, /^# TYPE spot_http_request_duration_seconds histogram$/m);
      assert.match(
        text,
        /^spot_http_request_duration_seconds_bucket\{le="0.005",route="\/v1\/discovery",method="POST",status="200"\} \d+$/m,
      );
      assert.match(text, /^spot_ingest_processed\{chain="solana"\} \d+$/m);
      assert.match(text, /^spot_log_consumer_lag\{group="spot-aggregator-default",topic="spot.swaps.v1"\} \d+$/m);
      assert.ok((sample(text, 'spot_aggregator_messages_total') ?? 0) > 0);
      assert.ok((sample(text, 'spot_stream_subscriptions') ?? 0) >= 1);
      // The same registry on the stream port.
      const onStreamPort = await (await fetch(`http://${wsBase}/metrics`)).text();
      assert.match(onStreamPort, /^# TYPE spot_stream_connections gauge$/m);
      assert.match(text, /^# TYPE spot_stream_frames_sent_total counter$/m);
    } finally {
      socket.close();
    }
  });
});

describe('operations: SPOT_METRICS_PORT on a role without a REST port', function () {
  this.timeout(60_000);
  let proc: ReturnType<typeof spawnSpot> | undefined;
  let dataDir: string;

  after(async () => {
    await stopChild(proc?.child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('spot ingest serves /metrics and /healthz on SPOT_METRICS_PORT', async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-ops-ingest-'));
    const metricsPort = await freePort();
    proc = spawnSpot(['ingest'], {
      SPOT_DATA_DIR: dataDir,
      SPOT_METRICS_PORT: String(metricsPort),
      SPOT_SIM_WARM_HOURS: '0',
      SPOT_SIM_CHAINS: 'base',
    });
    const base = `http://127.0.0.1:${metricsPort}`;
    const text = await waitFor(
      async () => {
        const body = await (await fetch(`${base}/metrics`)).text();
        return /^spot_ingest_processed\{chain="base"\} \d+$/m.test(body) ? body : undefined;
      },
      40_000,
      'ingest metrics',
    ).catch((error) => {
      throw new Error(`${error.message}\n--- output ---\n${proc!.output().slice(-3000)}`);
    });
    assert.match(text, /^spot_ingest_behind_blocks\{chain="base"\} 0$/m);
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
    assert.equal((await fetch(`${base}/v1/discovery`)).status, 404);
  });
});

describe('operations: metrics registry and readiness', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-ops-unit-'));
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('keeps the named counters (inc/set/get/snapshot) and exports them as one labelled family', async () => {
    const metrics = createMetrics();
    metrics.inc('ingest.published.swaps', 3);
    metrics.inc('ingest.published.swaps');
    metrics.set('aggregator.processed', 7);
    assert.equal(metrics.get('ingest.published.swaps'), 4);
    assert.equal(metrics.get('never.set'), 0);
    assert.deepEqual(metrics.snapshot(), { 'ingest.published.swaps': 4, 'aggregator.processed': 7 });
    const text = await metrics.expose();
    assert.match(text, /^spot_named_counter\{name="ingest.published.swaps"\} 4$/m);
    // Two registries never share values (one per role or test context).
    assert.doesNotMatch(await createMetrics().expose(), /ingest\.published\.swaps/);
  });

  it('derives ingest distance from head and processed heights', async () => {
    const metrics = createMetrics();
    metrics.ingestHead('base', 120);
    metrics.ingestProcessed('base', 100, Date.now() - 30_000);
    metrics.ingestProcessed('base', 90, Date.now() - 60_000); // an older block published later changes nothing
    const text = await metrics.expose();
    assert.equal(sample(text, 'spot_ingest_head', '{chain="base"}'), 120);
    assert.equal(sample(text, 'spot_ingest_processed', '{chain="base"}'), 100);
    assert.equal(sample(text, 'spot_ingest_behind_blocks', '{chain="base"}'), 20);
    const seconds = sample(text, 'spot_ingest_behind_seconds', '{chain="base"}')!;
    assert.ok(seconds >= 29 && seconds < 60, String(seconds));
  });

  it('measures consumer lag against the log and turns /readyz to 503 past SPOT_READY_MAX_LAG', async () => {
    const ctx = createContext(
      loadConfig({ SPOT_DATA_DIR: dataDir, SPOT_READY_MAX_LAG: '2', SPOT_CLICKHOUSE_URL: 'http://127.0.0.1:9' }),
      createLogger('silent'),
    );
    const log = createEventLog(ctx);
    await log.ensureTopics([{ name: 'ops.test.v1', partitions: 1, compacted: false }]);
    await log.produce(
      'ops.test.v1',
      Array.from({ length: 5 }, (_, i) => ({ key: `k${i}`, value: '{}' })),
    );
    let store: { ping(): Promise<boolean> } | null = null;
    const ops = createOps(ctx, { log, store: () => store });
    try {
      ctx.metrics.consumerPosition('reader', 'ops.test.v1', 0, 2);
      let state = await ops.readiness();
      assert.deepEqual(state.lag, { reader: { 'ops.test.v1': 3 } });
      assert.equal(state.store, 'none');
      assert.equal(state.ready, false);
      const answer = await ops.handle('GET', '/readyz')!;
      assert.equal(answer.status, 503);

      ctx.metrics.consumerPosition('reader', 'ops.test.v1', 0, 4);
      state = await ops.readiness();
      assert.equal(state.ready, true);
      const metrics = await ops.handle('GET', '/metrics')!;
      assert.match(metrics.body, /^spot_log_consumer_lag\{group="reader",topic="ops.test.v1"\} 1$/m);
      assert.equal(ops.handle('GET', '/v1/discovery'), null);

      // A store that does not answer (nothing listens on port 9) makes the process unready.
      const client = createClickHouseClient(ctx);
      store = createStore(ctx, client);
      state = await ops.readiness();
      assert.equal(state.store, 'unreachable');
      assert.equal(state.ready, false);
      await client.close();
    } finally {
      await log.close();
    }
  });
});

describe('operations: log format', () => {
  function capture(format: 'auto' | 'pretty' | 'json', tty: boolean): string {
    const stream = new PassThrough() as PassThrough & { isTTY?: boolean };
    if (tty) stream.isTTY = true;
    let text = '';
    stream.on('data', (chunk) => (text += chunk));
    const logger = createLogger('info', stream, format);
    logger.info({ port: 8080, apiKey: 'secret-key-value' }, 'REST API listening');
    logger.flush();
    return text;
  }

  it('writes JSON lines off a terminal and pretty lines on one (auto), as SPOT_LOG_FORMAT chooses', async () => {
    const json = capture('auto', false);
    assert.equal(JSON.parse(json.trim()).msg, 'REST API listening');
    const pretty = capture('auto', true);
    assert.throws(() => JSON.parse(pretty.trim()));
    assert.match(pretty, /INFO.*REST API listening/);
    assert.match(capture('pretty', false), /INFO.*REST API listening \{"port":8080,"apiKey":"\[redacted\]"\}\n$/);
    assert.equal(JSON.parse(capture('json', true).trim()).port, 8080);
    for (const format of ['auto', 'pretty', 'json'] as const)
      assert.doesNotMatch(capture(format, format !== 'json'), /secret-key-value/);
    assert.equal(usesPrettyLogs('auto', process.stdout), process.stdout.isTTY === true);
  });

  it('rejects an unknown SPOT_LOG_FORMAT naming the variable', () => {
    assert.throws(
      () => loadConfig({ SPOT_LOG_FORMAT: 'xml' }),
      (error: unknown) => {
        return error instanceof ConfigError && error.variable === 'SPOT_LOG_FORMAT';
      },
    );
    assert.equal(loadConfig({}).logFormat, 'auto');
  });
});

/** A runtime on a data dir of its own, removed after fn. */
async function withRuntime(prefix: string, fn: (runtime: Runtime) => Promise<void>): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  try {
    const ctx = createContext(loadConfig({ SPOT_DATA_DIR: dataDir }), createLogger('silent'));
    await fn(await createRuntime(ctx));
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('operations: a part that fails', () => {
  it('shuts the runtime down in order and exits 1 (a supervisor restarts it from its snapshot)', async () => {
    await withRuntime('spot-fail-', async (runtime) => {
      const stopped: string[] = [];
      runtime.add({ name: 'aggregator', stop: async () => void stopped.push('aggregator') });
      runtime.add({ name: 'serving', stop: async () => void stopped.push('serving') });
      const exitCode = waitForShutdown(runtime, Promise.resolve(), new EventEmitter());
      runtime.fail('aggregator', new Error('database is locked'));
      assert.equal(await exitCode, 1);
      assert.deepEqual(stopped, ['serving', 'aggregator']);
    });
  });
});

describe('operations: a shutdown signal during start-up', () => {
  it('waits for the roles to finish starting, then stops every part they added', async () => {
    await withRuntime('spot-early-signal-', async (runtime) => {
      const stopped: string[] = [];
      let finishStart!: () => void;
      const starting = new Promise<void>((resolve) => (finishStart = resolve)).then(() =>
        runtime.add({ name: 'ingest', stop: async () => void stopped.push('ingest') }),
      );
      const signals = new EventEmitter();
      const exitCode = waitForShutdown(runtime, starting, signals);
      signals.emit('SIGTERM', 'SIGTERM');
      // The signal came before the ingest part existed: it is stopped all the same once added.
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual(stopped, []);
      finishStart();
      assert.equal(await exitCode, 0);
      assert.deepEqual(stopped, ['ingest']);
    });
  });
});

describe('operations: parts stopped alongside', () => {
  /** A stop that notes its start and end in `events` and takes `ms`. */
  const stopTaking = (events: string[], name: string, ms: number) => async () => {
    events.push(`${name} stopping`);
    await new Promise((resolve) => setTimeout(resolve, ms));
    events.push(`${name} stopped`);
  };

  it('stops an alongside part together with the parts after it, and closes the log once all are done', async () => {
    await withRuntime('spot-alongside-', async (runtime) => {
      const events: string[] = [];
      const closeLog = runtime.log.close.bind(runtime.log);
      runtime.log.close = async () => {
        events.push('log closed');
        await closeLog();
      };
      const slowStop = (name: string) => stopTaking(events, name, 50);
      // Started in this order; stopped in reverse: ingest (alongside), serving (alongside), aggregator.
      runtime.add({ name: 'aggregator', stop: slowStop('aggregator') });
      runtime.add({ name: 'serving', alongside: true, stop: slowStop('serving') });
      runtime.add({ name: 'ingest', alongside: true, stop: slowStop('ingest') });
      await runtime.stop();
      // All three began before any finished: none waited for another.
      assert.deepEqual(events.slice(0, 3), ['ingest stopping', 'serving stopping', 'aggregator stopping']);
      assert.equal(events.at(-1), 'log closed');
      assert.equal(events.filter((event) => event.endsWith(' stopped')).length, 3);
    });
  });

  it('still stops a part that is not alongside only after the one before it', async () => {
    await withRuntime('spot-in-order-', async (runtime) => {
      const events: string[] = [];
      const slowStop = (name: string) => stopTaking(events, name, 20);
      runtime.add({ name: 'sql-endpoint', stop: slowStop('sql-endpoint') });
      runtime.add({ name: 'aggregator', stop: slowStop('aggregator') });
      await runtime.stop();
      assert.deepEqual(events, [
        'aggregator stopping',
        'aggregator stopped',
        'sql-endpoint stopping',
        'sql-endpoint stopped',
      ]);
    });
  });
});
