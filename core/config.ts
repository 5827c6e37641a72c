// Configuration in one validated place: environment variables (and CLI flags mapped onto them).
// A bad value stops start-up with a message naming the variable.
import path from 'node:path';
import { CHAINS, type Chain } from './chains.ts';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from './logger.ts';

export interface Config {
  dataDir: string;
  httpPort: number;
  wsPort: number;
  sqlPort: number;
  /** Host the HTTP, WebSocket and SQL ports bind to. */
  host: string;
  kafkaBrokers: string[] | null;
  clickhouseUrl: string | null;
  /** Write credential of the embedded SQL endpoint (user "spot_writer"); generated and stored in the data dir when unset. */
  sqlWritePassword: string | null;
  apiKeys: string[];
  logLevel: LogLevel;
  rpc: Partial<Record<Chain, string>>;
  simSeed: number;
  simRate: number;
  simWarmHours: number;
  /** Swaps per second of event time in the simulator's warm-start history (default 0.5: 24 h ≈ 43 k swaps). */
  simHistoryRate: number;
  simChains: Chain[];
  /** Serve the simulator's market as a local chain node read through the block sources (SPOT_SIM_NODE=1). */
  simNode: boolean;
  /** Simulator profile (SPOT_SIM_PROFILE): 'default' (light) or 'mainnet' (REALWORLD.md's figures). */
  simProfile: 'default' | 'mainnet';
  /** Pinned simulator wall clock, Unix ms (reproducible runs and tests); null: the real clock. */
  simNow: number | null;
  /** Names this aggregator instance (its snapshot and input group); generated into the data dir when unset. */
  aggregatorId: string | null;
  /** Session timeout of the aggregator ownership group on Kafka, ms: how fast a dead instance's partitions move. */
  aggregateSessionMs: number;
  /** Longest wall time between aggregator snapshots, ms (on Kafka also the cadence of handover progress). */
  aggregateSnapshotMs: number;
  /** Gateway ipfs:// metadata URIs are fetched through (SPOT_IPFS_GATEWAY). */
  ipfsGateway: string;
  /** Hosts metadata may be fetched from although they resolve to private addresses (SPOT_METADATA_ALLOW_HOSTS). */
  metadataAllowHosts: string[];
  /**
   * Longest wait before the aggregator writes processed rows to the store, ms (default 1000). Each
   * write is one INSERT per table, a part chDB merges later: at 100 ms, the store's inserts and merges
   * were 2/3 of spot up's CPU at 200 swaps/s. Serving reads hot views from the log, not the store.
   */
  storeFlushMs: number;
  /** Messages of slack when an aggregator decides outputs are already durable at a handover. */
  /** Port of /metrics, /healthz, /readyz for roles without a REST port (ingest, aggregate); null: none. */
  metricsPort: number | null;
  /** /readyz answers 503 while a consumer group of the process is more than this many messages behind. */
  readyMaxLag: number;
  /** pretty (pino-pretty), json, or auto: pretty when stdout is a terminal. */
  logFormat: LogFormat;
  /** The live console at / on the REST port: loopback clients only, open to any client, or off. */
  console: ConsoleMode;
}

const CONSOLE_MODES = ['loopback', 'open', 'off'] as const;
export type ConsoleMode = (typeof CONSOLE_MODES)[number];

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function port(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 0 || Number(raw) > 65535)
    throw new ConfigError(name, `must be a TCP port 0-65535, got "${raw}"`);
  return Number(raw);
}

function simProfile(env: Env): 'default' | 'mainnet' {
  const raw = env.SPOT_SIM_PROFILE || 'default';
  if (raw !== 'default' && raw !== 'mainnet')
    throw new ConfigError('SPOT_SIM_PROFILE', `must be "default" or "mainnet", got "${raw}"`);
  return raw;
}

function number(env: Env, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new ConfigError(name, `must be a number >= ${min}, got "${raw}"`);
  return value;
}

function url(env: Env, name: string, protocols: string[]): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be a URL, got "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol))
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  return raw;
}

function aggregatorId(env: Env): string | null {
  const raw = env.SPOT_AGGREGATOR_ID;
  if (raw === undefined || raw === '') return null;
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(raw))
    throw new ConfigError('SPOT_AGGREGATOR_ID', `must be 1-64 letters, digits, '_', '.' or '-', got "${raw}"`);
  return raw;
}

/** Defaults: see docs/configuration.md, which lists each of these. */
export function loadConfig(env: Env = process.env): Config {
  const logLevel = (env.SPOT_LOG_LEVEL || 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel))
    throw new ConfigError('SPOT_LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got "${env.SPOT_LOG_LEVEL}"`);

  const logFormat = (env.SPOT_LOG_FORMAT || 'auto') as LogFormat;
  if (!LOG_FORMATS.includes(logFormat))
    throw new ConfigError('SPOT_LOG_FORMAT', `must be one of ${LOG_FORMATS.join(', ')}, got "${env.SPOT_LOG_FORMAT}"`);

  const consoleMode = (env.SPOT_CONSOLE || 'loopback') as ConsoleMode;
  if (!CONSOLE_MODES.includes(consoleMode))
    throw new ConfigError('SPOT_CONSOLE', `must be one of ${CONSOLE_MODES.join(', ')}, got "${env.SPOT_CONSOLE}"`);

  let kafkaBrokers: string[] | null = null;
  if (env.SPOT_KAFKA_BROKERS) {
    kafkaBrokers = env.SPOT_KAFKA_BROKERS.split(',')
      .map((b) => b.trim())
      .filter(Boolean);
    for (const broker of kafkaBrokers) {
      if (!/^[^\s:]+:\d{1,5}$/.test(broker))
        throw new ConfigError('SPOT_KAFKA_BROKERS', `must be comma-separated host:port pairs, got "${broker}"`);
    }
    if (kafkaBrokers.length === 0) throw new ConfigError('SPOT_KAFKA_BROKERS', 'names no broker');
  }

  const apiKeys = (env.SPOT_API_KEYS ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  for (const key of apiKeys) {
    if (!/^[\x21-\x7e]{8,256}$/.test(key))
      throw new ConfigError('SPOT_API_KEYS', 'each key must be 8-256 visible ASCII characters');
  }

  const rpc: Partial<Record<Chain, string>> = {};
  for (const chain of CHAINS) {
    const name = `SPOT_RPC_${chain.toUpperCase()}`;
    const value = url(env, name, ['http:', 'https:', 'ws:', 'wss:']);
    if (value) rpc[chain] = value;
  }

  let simChains: Chain[] = [...CHAINS];
  if (env.SPOT_SIM_CHAINS) {
    simChains = env.SPOT_SIM_CHAINS.split(',').map((c) => c.trim()) as Chain[];
    for (const chain of simChains)
      if (!CHAINS.includes(chain)) throw new ConfigError('SPOT_SIM_CHAINS', `unknown chain "${chain}"`);
  }

  return {
    dataDir: path.resolve(env.SPOT_DATA_DIR || '.data'),
    httpPort: port(env, 'SPOT_HTTP_PORT', 8080),
    wsPort: port(env, 'SPOT_WS_PORT', 8081),
    sqlPort: port(env, 'SPOT_SQL_PORT', 8123),
    host: env.SPOT_HOST || '127.0.0.1',
    kafkaBrokers,
    clickhouseUrl: url(env, 'SPOT_CLICKHOUSE_URL', ['http:', 'https:']),
    sqlWritePassword: env.SPOT_SQL_WRITE_PASSWORD || null,
    apiKeys,
    logLevel,
    rpc,
    simSeed: number(env, 'SPOT_SIM_SEED', 42, 0),
    simRate: number(env, 'SPOT_SIM_RATE', 200, 0),
    simWarmHours: number(env, 'SPOT_SIM_WARM_HOURS', 24, 0),
    simHistoryRate: number(env, 'SPOT_SIM_HISTORY_RATE', 0.5, 0),
    simChains,
    simNode: ['1', 'true'].includes((env.SPOT_SIM_NODE ?? '').toLowerCase()),
    simProfile: simProfile(env),
    simNow: env.SPOT_SIM_NOW ? number(env, 'SPOT_SIM_NOW', 0, 0) : null,
    aggregatorId: aggregatorId(env),
    aggregateSessionMs: number(env, 'SPOT_AGGREGATE_SESSION_MS', 10_000, 1000),
    aggregateSnapshotMs: number(env, 'SPOT_AGGREGATE_SNAPSHOT_MS', 30_000, 100),
    metricsPort: env.SPOT_METRICS_PORT ? port(env, 'SPOT_METRICS_PORT', 0) : null,
    readyMaxLag: number(env, 'SPOT_READY_MAX_LAG', 10_000, 0),
    logFormat,
    console: consoleMode,
    ipfsGateway: url(env, 'SPOT_IPFS_GATEWAY', ['http:', 'https:']) ?? 'https://ipfs.io/ipfs/',
    metadataAllowHosts: (env.SPOT_METADATA_ALLOW_HOSTS ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
    storeFlushMs: number(env, 'SPOT_STORE_FLUSH_MS', 1000, 1),
  };
}
