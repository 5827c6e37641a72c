// A bare HTTP server in a process of its own (plain node:http, a constant JSON body), loaded by the
// same client as the service at the same time: what this machine gives any process answering
// requests under the same load. A REST latency above the service's target next to it shows the
// machine's share of the figure; the gap between the two is the service's own.
import { spawn } from 'node:child_process';
import { answersOk, freePort, waitFor } from '../../test/helpers/ports.ts';

export interface BareServer {
  url: string;
  stop(): void;
}

const SERVER_SOURCE = `require('node:http').createServer((q, r) => { r.setHeader('content-type', 'application/json'); r.end('{"ok":true}'); }).listen(Number(process.argv[1]), '127.0.0.1');`;

export async function startBareServer(): Promise<BareServer> {
  const port = await freePort();
  const child = spawn(process.execPath, ['-e', SERVER_SOURCE, String(port)], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(() => answersOk(url), 10_000, 'the bare server');
  return {
    url,
    stop: () => {
      child.kill('SIGKILL');
    },
  };
}
