// What the distributed suites share: a temp root, librdkafka's mock cluster, the SQL endpoint on
// a chDB data dir standing in for a ClickHouse server, and each role's environment. Call inside
// a describe: it registers the clean-up.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../core/config.ts';
import { createContext, type Context } from '../../core/context.ts';
import { createLogger } from '../../core/logger.ts';
import { startKafkaMock, type KafkaMock } from './kafka-mock.ts';
import { waitFor } from './ports.ts';
import { killAll, start, type Proc } from './processes.ts';

const STANDIN = path.resolve('test/fixtures/clickhouse-standin.ts');

export interface Cluster {
  mock: KafkaMock;
  standin: Proc;
  sqlPort: number;
  /** A role's environment: its own data dir under the root, Kafka and the ClickHouse stand-in. */
  roleEnv(dir: string): Record<string, string>;
}

export function useDistributedSuite(
  prefix: string,
  password: string,
): { root: string; ctx: Context; cluster(): Promise<Cluster> } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  const ctx = createContext(loadConfig({ SPOT_DATA_DIR: root, SPOT_LOG_LEVEL: 'silent' }), createLogger('silent'));
  let mock: KafkaMock | null = null;
  after(async () => {
    await killAll();
    await mock?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });
  return {
    root,
    ctx,
    async cluster() {
      mock = await startKafkaMock();
      const brokers = mock.brokers.join(',');
      let sqlPort = 0;
      const standin = start(
        'clickhouse stand-in',
        ['--import', 'tsx', STANDIN],
        {
          SPOT_DATA_DIR: path.join(root, 'clickhouse'),
          SPOT_SQL_PORT: '0',
          SPOT_SQL_WRITE_PASSWORD: password,
          SPOT_LOG_LEVEL: 'warn',
        },
        (text) => (sqlPort = (JSON.parse(text) as { port: number }).port),
      );
      await waitFor(async () => (sqlPort > 0 ? true : undefined), 60_000, 'the ClickHouse stand-in');
      const url = `http://spot_writer:${password}@127.0.0.1:${sqlPort}`;
      return {
        mock,
        standin,
        sqlPort,
        roleEnv: (dir) => ({
          SPOT_DATA_DIR: path.join(root, dir),
          SPOT_KAFKA_BROKERS: brokers,
          SPOT_CLICKHOUSE_URL: url,
        }),
      };
    },
  };
}
