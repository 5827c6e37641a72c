// librdkafka's mock Kafka cluster, started through Debian's kcat: a real Kafka-protocol broker
// for tests, without a JVM. It auto-creates topics with 4 partitions on first use and refuses
// kafkajs createTopics and idempotent producers.
import { spawn, spawnSync } from 'node:child_process';

export interface KafkaMock {
  brokers: string[];
  stop(): Promise<void>;
}

export function kcatAvailable(): boolean {
  const probe = spawnSync('kcat', ['-V'], { stdio: 'ignore' });
  return !probe.error && probe.status === 0;
}

/** Prints a banner when kcat is missing; returns whether Kafka suites can run. */
export function requireKcat(suite: string): boolean {
  if (kcatAvailable()) return true;
  const line = '!'.repeat(78);
  console.warn(
    `\n${line}\n!! SKIPPING ${suite}: kcat is not installed, so no Kafka mock broker.\n!! Install it (apt-get install -y kcat) to run the Kafka suites; CI does.\n${line}\n`,
  );
  return false;
}

export async function startKafkaMock(options: { brokers?: number; startTimeoutMs?: number } = {}): Promise<KafkaMock> {
  const child = spawn(
    'kcat',
    [
      '-X',
      `test.mock.num.brokers=${options.brokers ?? 3}`,
      '-d',
      'mock',
      '-b',
      '127.0.0.1:1',
      '-C',
      '-t',
      '__spot_mock_keepalive',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const brokers = await new Promise<string[]>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(
      () =>
        fail(
          new Error(
            `kcat printed no mock bootstrap servers within ${options.startTimeoutMs ?? 10_000} ms:\n${seen.slice(0, 2000)}`,
          ),
        ),
      options.startTimeoutMs ?? 10_000,
    );
    function fail(error: Error) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    }
    const exitedEarly = (code: number | null) =>
      fail(new Error(`kcat exited (${code}) before the mock cluster started:\n${seen.slice(0, 2000)}`));
    child.once('error', fail);
    child.once('exit', exitedEarly);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', function onData(chunk: string) {
      if (seen.length < 64_000) seen += chunk;
      const match = /bootstrap\.servers=([\d.:,]+)/.exec(seen);
      if (!match) return;
      clearTimeout(timer);
      child.off('exit', exitedEarly);
      child.stderr.off('data', onData);
      // Keep draining the (debug-level, chatty) stderr so kcat never blocks on a full pipe.
      child.stderr.resume();
      resolve(match[1]!.split(',').filter(Boolean));
    });
  });

  return {
    brokers,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const killLater = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(killLater);
    },
  };
}
