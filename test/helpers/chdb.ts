// One chDB engine per test process: chDB binds a single data directory per process and mocha
// runs every test file in one process, so all suites share this lazily created client on one
// temp data dir (migrated once). Do not close it; it is removed when the process exits.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../core/config.ts';
import { createContext, type Context } from '../../core/context.ts';
import { createLogger } from '../../core/logger.ts';
import { createClickHouseClient, type ClickHouseClient } from '../../clickhouse/client.ts';
import { migrate } from '../../clickhouse/migrations.ts';

export interface SharedChdb {
  /** A context whose config.dataDir holds the chDB data (<dataDir>/clickhouse). */
  ctx: Context;
  client: ClickHouseClient;
  dataDir: string;
}

let shared: Promise<SharedChdb> | null = null;

export function sharedChdb(): Promise<SharedChdb> {
  shared ??= (async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-chdb-test-'));
    process.on('exit', () => fs.rmSync(dataDir, { recursive: true, force: true }));
    const config = loadConfig({ SPOT_DATA_DIR: dataDir, SPOT_LOG_LEVEL: 'silent', SPOT_SQL_PORT: '0' });
    const ctx = createContext(config, createLogger('silent'));
    const client = createClickHouseClient(ctx);
    await migrate(client);
    return { ctx, client, dataDir };
  })();
  return shared;
}
