// Load generator process: autocannon with a fixed connection count and duration, every response
// time kept (autocannon's own histogram rounds to whole ms). Prints one JSON line on stdout.
// argv[2]: {url, method, headers, body?, connections, durationSeconds}. Plain JavaScript, so
// it starts without the TypeScript loader; summarize.mjs matches stats.ts.
import autocannon from 'autocannon';
import { summarize } from './summarize.mjs';

const params = JSON.parse(process.argv[2] ?? '{}');
const times = [];
const statuses = new Map();

const instance = autocannon(
  {
    url: params.url,
    method: params.method,
    headers: params.headers,
    body: params.body,
    connections: params.connections,
    duration: params.durationSeconds,
    pipelining: 1,
  },
  (error, result) => {
    if (error) {
      process.stderr.write(`load: ${error.message}\n`);
      process.exit(1);
    }
    const summary = summarize(times);
    process.stdout.write(
      `${JSON.stringify({
        requests: result.requests.total,
        requestsPerSecond: result.requests.total / params.durationSeconds,
        non2xx: result.non2xx,
        errors: result.errors + result.timeouts,
        latency: summary,
        statuses: Object.fromEntries(statuses),
      })}\n`,
    );
  },
);
instance.on('response', (_client, statusCode, _bytes, responseTime) => {
  times.push(responseTime);
  statuses.set(statusCode, (statuses.get(statusCode) ?? 0) + 1);
});
