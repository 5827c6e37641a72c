// The `spot` command as a user meets it: --help after a command, unknown arguments, settings that
// cannot work (a data dir that is a file, a port in use, an address not of this machine), commands
// that need a store another process holds, and `spot decode` inputs. Each runs bin/spot.js in a
// child process and checks the exit code and the one-line message (never a stack trace).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import uWS from 'uWebSockets.js';
import { freePort } from './helpers/ports.ts';
import { sharedChdb } from './helpers/chdb.ts';
import { encodePumpTrade, solanaAddress } from '../ingest/solana/index.ts';

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Runs `node bin/spot.js ...args`; a run that outlives timeoutMs is SIGKILLed and reported as timed out. */
function spot(
  args: string[],
  env: Record<string, string> = {},
  options: { timeoutMs?: number; input?: string } = {},
): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/spot.js', ...args], {
      env: { ...process.env, SPOT_LOG_LEVEL: 'warn', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 20_000);
    child.stdin.end(options.input ?? '');
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
  });
}

const NO_STACK = /\n\s+at [^\n]*\(|node:internal|"stack"/;

describe('spot command line (cli)', function () {
  this.timeout(120_000);
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-cli-test-'));
    dirs.push(dir);
    return dir;
  };
  /** Ports and a fresh data dir for a `spot up` that would otherwise use the defaults. */
  const upEnv = async (dataDir: string) => ({
    SPOT_DATA_DIR: dataDir,
    SPOT_HTTP_PORT: String(await freePort()),
    SPOT_WS_PORT: String(await freePort()),
    SPOT_SQL_PORT: String(await freePort()),
    SPOT_SIM_WARM_HOURS: '0',
    SPOT_SIM_RATE: '0',
  });

  after(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('--help after a command prints its usage and runs nothing', () => {
    for (const command of [
      'up',
      'replay',
      'migrate',
      'api',
      'edge',
      'aggregate',
      'ingest',
      'keys',
      'sql',
      'decode',
      'bench',
    ]) {
      it(`spot ${command} --help`, async () => {
        const dataDir = path.join(tempDir(), 'data');
        const run = await spot([command, '--help'], { ...(await upEnv(dataDir)) }, { timeoutMs: 15_000 });
        assert.equal(run.timedOut, false, `spot ${command} --help ran the command:\n${run.stderr.slice(0, 500)}`);
        assert.equal(run.code, 0, run.stderr);
        assert.match(run.stdout, new RegExp(`^Usage: spot ${command}`));
        assert.equal(fs.existsSync(dataDir), false, 'nothing is created in the data dir');
      });
    }

    it('spot up -h as well', async () => {
      const dataDir = path.join(tempDir(), 'data');
      const run = await spot(['up', '-h'], await upEnv(dataDir), { timeoutMs: 15_000 });
      assert.equal(run.timedOut, false);
      assert.equal(run.code, 0);
      assert.match(run.stdout, /^Usage: spot up/);
    });
  });

  describe('unknown arguments of a service command are refused before anything starts', () => {
    for (const args of [
      ['up', '--bogus'],
      ['up', 'now'],
      ['replay', '--yes'],
      ['migrate', 'extra'],
    ]) {
      it(`spot ${args.join(' ')}`, async () => {
        const dataDir = path.join(tempDir(), 'data');
        const run = await spot(args, await upEnv(dataDir), { timeoutMs: 15_000 });
        assert.equal(run.timedOut, false, `spot ${args.join(' ')} started instead of refusing`);
        assert.equal(run.code, 2);
        assert.match(run.stderr, new RegExp(`spot ${args[0]}: unexpected argument "${args[1]}"`));
        assert.match(run.stderr, /Usage: spot /);
        assert.equal(fs.existsSync(dataDir), false);
      });
    }

    it('the documented flags still work (spot ingest --chains is consumed, not refused)', async () => {
      const run = await spot(['ingest', '--chains', 'solana,nope'], {}, { timeoutMs: 15_000 });
      assert.equal(run.code, 2);
      assert.match(run.stderr, /SPOT_SIM_CHAINS: unknown chain "nope"/);
    });
  });

  describe('settings that cannot work name their variable, with no stack trace', () => {
    it('SPOT_DATA_DIR naming a file', async () => {
      const file = path.join(tempDir(), 'not-a-dir');
      fs.writeFileSync(file, 'x');
      for (const args of [['up'], ['keys', 'list'], ['replay']]) {
        const run = await spot(args, { ...(await upEnv(file)) }, { timeoutMs: 15_000 });
        assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
        assert.match(
          run.stderr,
          /^spot: configuration error: SPOT_DATA_DIR: ".*not-a-dir" exists and is not a directory\n$/,
        );
      }
    });

    it('SPOT_HTTP_PORT already in use', async () => {
      const blocker = net.createServer();
      const port = await freePort();
      await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
      try {
        const run = await spot(
          ['up'],
          { ...(await upEnv(tempDir())), SPOT_HTTP_PORT: String(port) },
          { timeoutMs: 60_000 },
        );
        assert.equal(run.timedOut, false);
        assert.equal(run.code, 2, run.stderr);
        assert.match(
          run.stderr,
          new RegExp(`spot: configuration error: SPOT_HTTP_PORT: 127\\.0\\.0\\.1:${port} is already in use`),
        );
        assert.doesNotMatch(run.stderr, NO_STACK);
      } finally {
        blocker.close();
      }
    });

    it('SPOT_WS_PORT held by another uWebSockets.js server (SO_REUSEPORT) is refused, not shared', async () => {
      const port = await freePort();
      const socket = await new Promise<uWS.us_listen_socket>((resolve, reject) =>
        uWS.App().listen('127.0.0.1', port, (s) => (s ? resolve(s) : reject(new Error('could not listen')))),
      );
      try {
        const run = await spot(
          ['up'],
          { ...(await upEnv(tempDir())), SPOT_WS_PORT: String(port) },
          { timeoutMs: 60_000 },
        );
        assert.equal(run.timedOut, false, 'spot up started on a port another server holds');
        assert.equal(run.code, 2, run.stderr);
        assert.match(
          run.stderr,
          new RegExp(`spot: configuration error: SPOT_WS_PORT: 127\\.0\\.0\\.1:${port} is already in use`),
        );
        assert.doesNotMatch(run.stderr, NO_STACK);
      } finally {
        uWS.us_listen_socket_close(socket);
      }
    });

    it('SPOT_HOST that is not an address of this machine', async () => {
      const run = await spot(
        ['up'],
        { ...(await upEnv(tempDir())), SPOT_HOST: '10.255.255.254' },
        { timeoutMs: 60_000 },
      );
      assert.equal(run.code, 2, run.stderr);
      assert.match(
        run.stderr,
        /spot: configuration error: SPOT_HOST: cannot listen on "10\.255\.255\.254": not an address of this machine \(EADDRNOTAVAIL\)/,
      );
      assert.doesNotMatch(run.stderr, NO_STACK);
    });
  });

  describe('commands that need the store while another process holds it', () => {
    // This test process holds the shared chDB data dir, as a running `spot up` would.
    for (const command of ['migrate', 'replay']) {
      it(`spot ${command} says which process to stop`, async () => {
        const { dataDir } = await sharedChdb();
        const run = await spot(
          [command],
          { SPOT_DATA_DIR: dataDir, SPOT_SQL_PORT: String(await freePort()) },
          { timeoutMs: 60_000 },
        );
        assert.equal(run.code, 1, run.stderr);
        assert.match(
          run.stderr,
          new RegExp(
            `spot ${command}: the store in .*clickhouse is open in another process \\(a running \`spot up\`\\?\\)`,
          ),
        );
        assert.doesNotMatch(run.stderr, NO_STACK);
      });
    }
  });

  it("spot sql without the running service's SPOT_SQL_PORT says to pass it", async () => {
    const { dataDir } = await sharedChdb();
    const port = await freePort();
    const run = await spot(
      ['sql', 'SELECT 1'],
      { SPOT_DATA_DIR: dataDir, SPOT_SQL_PORT: String(port) },
      { timeoutMs: 60_000 },
    );
    assert.equal(run.code, 1, run.stderr);
    assert.match(
      run.stderr,
      new RegExp(
        `spot sql: the store in .*clickhouse is open in another process .*no SQL endpoint answered on 127\\.0\\.0\\.1:${port}: run spot sql with the SPOT_SQL_PORT`,
      ),
    );
    assert.doesNotMatch(run.stderr, NO_STACK);
  });

  describe('spot decode', () => {
    const env = () => ({ SPOT_DATA_DIR: path.join(tempDir(), 'data') });

    it('a Solana getTransaction result (file, stdin and JSON-RPC wrapper) gives the swap as a JSON line', async () => {
      const tx = encodePumpTrade({
        layout: 'jan2026',
        mint: solanaAddress('cli:mint'),
        user: solanaAddress('cli:user'),
        isBuy: true,
        solAmount: 1_000_000_000n,
        tokenAmount: 30_000_000_000_000n,
        timestamp: 1_772_000_000n,
        virtualSolReserves: 31_000_000_000n,
        virtualTokenReserves: 1_043_000_000_000_000n,
        realSolReserves: 1_000_000_000n,
        realTokenReserves: 763_100_000_000_000n,
        slot: 310_000_000,
        blockTime: 1_772_000_000,
        emit: 'both',
      });
      const json = JSON.stringify(tx, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
      const file = path.join(tempDir(), 'tx.json');
      fs.writeFileSync(file, json);
      for (const [args, input] of [
        [[file], ''],
        [['-'], json],
        [[], `{"jsonrpc":"2.0","id":1,"result":${json}}`],
      ] as const) {
        const run = await spot(['decode', ...args], env(), { input });
        assert.equal(run.code, 0, run.stderr);
        const lines = run.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as { type: string; chain: string; token?: string });
        const swaps = lines.filter((line) => line.type === 'swap');
        assert.equal(swaps.length, 1);
        assert.equal(swaps[0]!.chain, 'solana');
        assert.equal(swaps[0]!.token, solanaAddress('cli:mint'));
      }
    });

    it('a file that cannot be read is reported as such (not as "not JSON")', async () => {
      const run = await spot(['decode', '/nonexistent/receipt.json'], env());
      assert.equal(run.code, 1);
      assert.match(run.stderr, /^spot decode: cannot read \/nonexistent\/receipt\.json: ENOENT/);
    });

    it('an EVM receipt whose pool is unknown says why nothing came out', async () => {
      // A Uniswap V2 Swap log of a pool this input never created.
      const word = (n: number) => n.toString(16).padStart(64, '0');
      const receipt = {
        transactionHash: `0x${'ab'.repeat(32)}`,
        blockNumber: '0x10',
        status: '0x1',
        blockTimestamp: '0x69000000',
        logs: [
          {
            address: `0x${'11'.repeat(20)}`,
            logIndex: '0x0',
            blockNumber: '0x10',
            transactionHash: `0x${'ab'.repeat(32)}`,
            removed: false,
            topics: [
              '0xd78ad95fa46c994b6551d0da85fc275fe613ce37657fb8d5e3d130840159d822',
              `0x${'0'.repeat(24)}${'22'.repeat(20)}`,
              `0x${'0'.repeat(24)}${'33'.repeat(20)}`,
            ],
            data: `0x${word(1000)}${word(0)}${word(0)}${word(5000)}`,
          },
        ],
      };
      const run = await spot(['decode', '--chain', 'base', '-'], env(), { input: JSON.stringify(receipt) });
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, '');
      assert.match(
        run.stderr,
        /spot decode: no swaps or token events in the input\n1 log\(s\) skipped, unknown_pool: /,
      );
    });

    it('more than one input is refused', async () => {
      const run = await spot(['decode', 'a.json', 'b.json'], env());
      assert.equal(run.code, 2);
      assert.match(run.stderr, /one input at a time/);
    });
  });
});
