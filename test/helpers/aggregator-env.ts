// A data dir, context, embedded log and store on the shared chDB for the aggregator's
// integration tests (derived tables emptied first); close() removes the dir.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../core/config.ts';
import { createContext, type Context } from '../../core/context.ts';
import { createLogger } from '../../core/logger.ts';
import { createEmbeddedLog } from '../../core/eventlog/embedded.ts';
import type { EventLog } from '../../core/eventlog/types.ts';
import { createStore } from '../../clickhouse/store.ts';
import type { SpotStore } from '../../clickhouse/types.ts';
import type { ClickHouseClient } from '../../clickhouse/client.ts';
import { sharedChdb } from './chdb.ts';

export interface AggregatorEnv {
  ctx: Context;
  log: EventLog;
  store: SpotStore;
  client: ClickHouseClient;
  close(): Promise<void>;
}

export async function createAggregatorEnv(prefix: string): Promise<AggregatorEnv> {
  const client = (await sharedChdb()).client;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const ctx = createContext(loadConfig({ SPOT_DATA_DIR: dir, SPOT_LOG_LEVEL: 'silent' }), createLogger('silent'));
  const store = createStore(ctx, client);
  await store.migrate();
  await store.truncateDerived();
  const log = createEmbeddedLog(ctx, { path: path.join(dir, 'log.sqlite'), retentionIntervalMs: 0 });
  return {
    ctx,
    log,
    store,
    client,
    async close() {
      await log.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
