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
  /** Yellowstone gRPC (Geyser) endpoint: when set, Solana is read from its block stream instead of getBlock polling. */
  geyserSolana: string | null;
  /** x-token of the Geyser endpoint (a secret: never logged). */
  geyserToken: string | null;
  simSeed: number;
  simRate: number;
  simWarmHours: number;
  /** Swaps per second of event time in the simulator's warm-start history (default 0.5: 24 h ≈ 43 k swaps). */
  simHistoryRate: number;
  simRecentRate: number;
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
  /** Whether ingest resolves metadata and security facts of new tokens (SPOT_ENRICHMENT). */
  enrichment: 'on' | 'off';
  /** DEX Screener-shaped paid-promotion API polled for the tokens' `platforms` (SPOT_PROMOTIONS_URL); null: off (the simulator polls its own). */
  promotionsUrl: string | null;
  /** Time between two polls of the promotion source, ms; null: 60 s (the simulator's local feed: 5 s). */
  promotionsIntervalMs: number | null;
  /**
   * Longest wait before the aggregator writes processed rows to the store, ms (default 1000). Each
   * write is one INSERT per table, a part chDB merges later: at 100 ms, the store's inserts and merges
   * were 2/3 of spot up's CPU at 200 swaps/s. Serving reads hot views from the log, not the store.
   */
  storeFlushMs: number;
  /** Trades the serving thread's token rings hold together (SPOT_HELD_TRADES). */
  heldTrades: number;
  /** Event time of a chain between its progress marks on the input partitions (SPOT_INPUT_MARK_MS; 0: none). */
  inputMarkMs: number;
  ingestNice: number;
  /** Hours the embedded log keeps its raw and trade topics (default 168; Kafka: the topics' retention.ms). */
  logRetentionHours: number;
  /** How the embedded log stores new record batches: 'deflate' (default) or 'none' (text). */
  logCompression: 'deflate' | 'none';
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

/** One setting: the variable(s) it reads, what users read about it, and its parser. */
export interface Setting<T> {
  /** Usually one; a group (SPOT_RPC_<CHAIN>) lists every variable it covers. */
  variables: readonly string[];
  /** The `spot` flag that sets the variable too (every command takes it), if any. */
  flag?: string;
  /** The default as users read it (markdown: docs/configuration.md, `spot --help`). */
  default: string;
  /** One line (markdown): what the setting does. */
  meaning: string;
  /** Reads the setting; a bad value throws a ConfigError naming the variable (the first of a group). */
  parse: (env: Env, variable: string) => T;
}

/** Unset and empty both mean "use the default". */
function raw(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === '' ? undefined : value;
}

function port(env: Env, name: string, fallback: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 0 || Number(value) > 65535)
    throw new ConfigError(name, `must be a TCP port 0-65535, got "${value}"`);
  return Number(value);
}

function number(env: Env, name: string, fallback: number, min: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < min)
    throw new ConfigError(name, `must be a number >= ${min}, got "${value}"`);
  return parsed;
}

function url(env: Env, name: string, protocols: string[]): string | null {
  const value = raw(env, name);
  if (value === undefined) return null;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(name, `must be a URL, got "${value}"`);
  }
  if (!protocols.includes(parsed.protocol))
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  return value;
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const value = (raw(env, name) ?? fallback) as T;
  if (!values.includes(value)) throw new ConfigError(name, `must be one of ${values.join(', ')}, got "${value}"`);
  return value;
}

/** A comma-separated list, entries trimmed, empty entries dropped. */
function list(env: Env, name: string): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}

const code = (value: string | number) => `\`${value}\``;

function portSetting(variable: string, fallback: number, meaning: string): Setting<number> {
  return { variables: [variable], default: code(fallback), meaning, parse: (env) => port(env, variable, fallback) };
}

function numberSetting(variable: string, fallback: number, min: number, meaning: string): Setting<number> {
  return {
    variables: [variable],
    default: code(fallback),
    meaning,
    parse: (env) => number(env, variable, fallback, min),
  };
}

/** One of two words; the first is the default. */
function choiceSetting<A extends string, B extends string>(
  variable: string,
  [fallback, other]: readonly [A, B],
  meaning: string,
): Setting<A | B> {
  return {
    variables: [variable],
    default: code(fallback),
    meaning,
    parse: (env, name) => {
      const value = raw(env, name) ?? fallback;
      if (value !== fallback && value !== other)
        throw new ConfigError(name, `must be "${fallback}" or "${other}", got "${value}"`);
      return value as A | B;
    },
  };
}

const RPC_VARIABLES = CHAINS.map((chain) => `SPOT_RPC_${chain.toUpperCase()}`);

/**
 * Every setting, in the order docs/configuration.md lists them: loadConfig() reads these, the docs
 * table and `spot --help` are generated from them (cli/config-docs.ts), so one cannot drift from another.
 */
export const SETTINGS: { readonly [K in keyof Config]: Setting<Config[K]> } = {
  dataDir: {
    variables: ['SPOT_DATA_DIR'],
    flag: '--data-dir',
    default: code('.data'),
    meaning: 'where the embedded log, chDB store, snapshots, keys and cursors live',
    parse: (env, name) => path.resolve(raw(env, name) ?? '.data'),
  },
  httpPort: { ...portSetting('SPOT_HTTP_PORT', 8080, 'REST API port'), flag: '--http-port' },
  wsPort: { ...portSetting('SPOT_WS_PORT', 8081, 'WebSocket stream port'), flag: '--ws-port' },
  sqlPort: {
    ...portSetting(
      'SPOT_SQL_PORT',
      8123,
      'ClickHouse HTTP interface of the embedded store (loopback, read-only for analysts)',
    ),
    flag: '--sql-port',
  },
  host: {
    variables: ['SPOT_HOST'],
    default: code('127.0.0.1'),
    meaning: 'address the three ports bind to',
    parse: (env, name) => raw(env, name) ?? '127.0.0.1',
  },
  kafkaBrokers: {
    variables: ['SPOT_KAFKA_BROKERS'],
    flag: '--kafka-brokers',
    default: 'absent: embedded log',
    meaning: 'comma-separated `host:port` list: use Kafka',
    parse: (env, name) => {
      if (raw(env, name) === undefined) return null;
      const brokers = list(env, name);
      for (const broker of brokers)
        if (!/^[^\s:]+:\d{1,5}$/.test(broker))
          throw new ConfigError(name, `must be comma-separated host:port pairs, got "${broker}"`);
      if (brokers.length === 0) throw new ConfigError(name, 'names no broker');
      return brokers;
    },
  },
  clickhouseUrl: {
    variables: ['SPOT_CLICKHOUSE_URL'],
    flag: '--clickhouse-url',
    default: 'absent: chDB in-process',
    meaning: '`http(s)://user:password@host:port` of a ClickHouse server',
    parse: (env, name) => url(env, name, ['http:', 'https:']),
  },
  sqlWritePassword: {
    variables: ['SPOT_SQL_WRITE_PASSWORD'],
    default: 'generated into `<data dir>/sql-writer.password`',
    meaning: 'password of user `spot_writer` on the SQL endpoint',
    parse: (env, name) => raw(env, name) ?? null,
  },
  apiKeys: {
    variables: ['SPOT_API_KEYS'],
    default: 'none',
    meaning:
      'comma-separated keys registered at start (demos, tests); they are stored in `keys.sqlite` and stay valid after the variable is removed (`spot keys revoke <id>`)',
    parse: (env, name) => {
      const keys = list(env, name);
      for (const key of keys)
        if (!/^[\x21-\x7e]{8,256}$/.test(key))
          throw new ConfigError(name, 'each key must be 8-256 visible ASCII characters');
      return keys;
    },
  },
  logLevel: {
    variables: ['SPOT_LOG_LEVEL'],
    flag: '--log-level',
    default: code('info'),
    meaning: `pino level: ${LOG_LEVELS.join(', ')}`,
    parse: (env, name) => oneOf(env, name, LOG_LEVELS, 'info'),
  },
  logFormat: {
    variables: ['SPOT_LOG_FORMAT'],
    default: code('auto'),
    meaning: '`pretty` (pino-pretty), `json`, or `auto`: pretty when stderr is a terminal',
    parse: (env, name) => oneOf(env, name, LOG_FORMATS, 'auto'),
  },
  metricsPort: {
    variables: ['SPOT_METRICS_PORT'],
    default: 'none',
    meaning:
      '`/metrics`, `/healthz`, `/readyz` port of `spot ingest`/`spot aggregate` ([operations.md](operations.md))',
    parse: (env, name) => (raw(env, name) === undefined ? null : port(env, name, 0)),
  },
  readyMaxLag: numberSetting(
    'SPOT_READY_MAX_LAG',
    10_000,
    0,
    '`/readyz` answers 503 while a consumer group of the process is more messages than this behind',
  ),
  console: {
    variables: ['SPOT_CONSOLE'],
    default: code('loopback'),
    meaning:
      'the live console at `/` on the REST port: `loopback` (loopback clients only), `open`, or `off`; see [operations.md](operations.md)',
    parse: (env, name) => oneOf(env, name, CONSOLE_MODES, 'loopback'),
  },
  rpc: {
    variables: RPC_VARIABLES,
    default: 'none',
    meaning:
      'RPC endpoint per chain (http(s) or ws(s)); when any is set, `spot up` indexes those chains instead of simulating',
    parse: (env) => {
      const rpc: Partial<Record<Chain, string>> = {};
      CHAINS.forEach((chain, i) => {
        const value = url(env, RPC_VARIABLES[i]!, ['http:', 'https:', 'ws:', 'wss:']);
        if (value) rpc[chain] = value;
      });
      return rpc;
    },
  },
  geyserSolana: {
    variables: ['SPOT_GEYSER_SOLANA'],
    default: 'none',
    meaning:
      'Yellowstone gRPC (Geyser) endpoint (http(s)); with it Solana is read from its confirmed block stream instead of `getBlock` polling ([sources.md](sources.md))',
    parse: (env, name) => url(env, name, ['http:', 'https:']),
  },
  geyserToken: {
    variables: ['SPOT_GEYSER_TOKEN'],
    default: 'none',
    meaning: '`x-token` sent to `SPOT_GEYSER_SOLANA` (a secret: never logged)',
    parse: (env, name) => raw(env, name) ?? null,
  },
  simSeed: {
    ...numberSetting('SPOT_SIM_SEED', 42, 0, 'simulator seed: the same seed gives the same market'),
    flag: '--sim-seed',
  },
  simRate: { ...numberSetting('SPOT_SIM_RATE', 200, 0, 'simulated swaps per second, live'), flag: '--sim-rate' },
  simWarmHours: numberSetting('SPOT_SIM_WARM_HOURS', 24, 0, 'history fast-forwarded on a new data dir'),
  simHistoryRate: numberSetting(
    'SPOT_SIM_HISTORY_RATE',
    0.5,
    0,
    'swaps per second of event time in that history (24 h ≈ 43k swaps)',
  ),
  simRecentRate: numberSetting(
    'SPOT_SIM_RECENT_RATE',
    20,
    0,
    "swaps per second of event time in the last hour of a history longer than an hour, so a fresh start shows a live market's board at once (tokens mid-curve with holders: the `graduating` column filled)",
  ),
  simChains: {
    variables: ['SPOT_SIM_CHAINS'],
    flag: '--chains',
    default: 'all five',
    meaning: 'chains the simulator trades on (also limits which RPC endpoints `spot ingest` follows)',
    parse: (env, name) => {
      const value = raw(env, name);
      if (value === undefined) return [...CHAINS];
      // No empty entries dropped: "solana," names an unknown chain "".
      const chains = value.split(',').map((chain) => chain.trim()) as Chain[];
      for (const chain of chains) if (!CHAINS.includes(chain)) throw new ConfigError(name, `unknown chain "${chain}"`);
      return chains;
    },
  },
  simNode: {
    variables: ['SPOT_SIM_NODE'],
    default: 'on (`1`)',
    meaning:
      'the simulator is served as a local chain node on loopback and read by the same block sources as a real node (docs/sources.md); `0`: its records are decoded in-process (no RPC)',
    parse: (env, name) => {
      const value = (env[name] ?? '1').toLowerCase();
      if (['1', 'true', 'on'].includes(value)) return true;
      if (['0', 'false', 'off'].includes(value)) return false;
      throw new ConfigError(name, `must be 1 or 0, got "${env[name]}"`);
    },
  },
  ingestNice: {
    variables: ['SPOT_INGEST_NICE'],
    default: code(10),
    meaning:
      "`spot up` on Linux: the nice value (0–19) of every thread but the serving thread (ingest, aggregation, store, chDB's threads, V8's GC helpers), so the serving thread (nice 0) gets a core first when the machine is busy; the simulator's chain node process runs 5 lower still (at most 19); `0` leaves priorities alone (docs/performance.md)",
    parse: (env, name) => {
      const value = number(env, name, 10, 0);
      if (!Number.isInteger(value) || value > 19)
        throw new ConfigError(name, `must be an integer from 0 to 19, got "${value}"`);
      return value;
    },
  },
  logRetentionHours: numberSetting(
    'SPOT_LOG_RETENTION_HOURS',
    168,
    1,
    "hours the embedded log keeps `spot.swaps.v1`, `spot.token-events.v1` and `spot.trades.v1` (what `spot replay` rebuilds from and stream resume reads; ~5.4 GB an hour at 2,000 swaps/s deflated, ~20 as text, docs/performance.md); on Kafka the topics' `retention.ms` decides",
  ),
  logCompression: choiceSetting(
    'SPOT_LOG_COMPRESSION',
    ['deflate', 'none'],
    'how the embedded log stores new record batches: `deflate` (zlib level 1: ~3.8x smaller, ~5.4 GB an hour at 2,000 swaps/s instead of ~20; its CPU cost is measured in docs/performance.md) or `none` (JSON text); a log holding both is read either way',
  ),
  storeFlushMs: numberSetting(
    'SPOT_STORE_FLUSH_MS',
    1000,
    1,
    'longest wait before processed rows are written to the store (each write is an INSERT per table that chDB merges later)',
  ),
  heldTrades: numberSetting(
    'SPOT_HELD_TRADES',
    100_000,
    0,
    "trades the serving thread keeps for first pages of token trades, over every token's ring together (~1.2 KB each, up to 202 a token); past it the least recently traded tokens' rings go and their pages come from the store",
  ),
  inputMarkMs: numberSetting(
    'SPOT_INPUT_MARK_MS',
    2000,
    0,
    "event time, ms, of a chain between the progress marks ingest writes to every partition of `spot.swaps.v1` and `spot.token-events.v1` (the aggregator's merge then need not read a partition ahead for a quiet chain; docs/memory.md); 0 writes none",
  ),
  simProfile: choiceSetting(
    'SPOT_SIM_PROFILE',
    ['default', 'mainnet'],
    "the simulator's market: `default` (light) or `mainnet` (the real chains' shares, launches, lifetimes and wallets; [simulator-profiles.md](simulator-profiles.md))",
  ),
  simNow: {
    variables: ['SPOT_SIM_NOW'],
    default: 'the real clock',
    meaning:
      'pinned simulator clock, Unix ms: the warm start ends there and no live trading follows (reproducible runs)',
    parse: (env, name) => (raw(env, name) === undefined ? null : number(env, name, 0, 0)),
  },
  aggregatorId: {
    variables: ['SPOT_AGGREGATOR_ID'],
    default: 'generated into `<data dir>/aggregator/instance-id`',
    meaning: 'names an aggregator instance on Kafka (its snapshot and input group)',
    parse: (env, name) => {
      const value = raw(env, name);
      if (value === undefined) return null;
      if (!/^[A-Za-z0-9_.-]{1,64}$/.test(value))
        throw new ConfigError(name, `must be 1-64 letters, digits, '_', '.' or '-', got "${value}"`);
      return value;
    },
  },
  aggregateSessionMs: numberSetting(
    'SPOT_AGGREGATE_SESSION_MS',
    10_000,
    1000,
    "session timeout of the aggregator ownership group: how soon a dead instance's partitions move",
  ),
  aggregateSnapshotMs: numberSetting(
    'SPOT_AGGREGATE_SNAPSHOT_MS',
    30_000,
    100,
    'time from one aggregator snapshot on disk to the next one (on Kafka also the cadence of ownership progress)',
  ),
  ipfsGateway: {
    variables: ['SPOT_IPFS_GATEWAY'],
    default: code('https://ipfs.io/ipfs/'),
    meaning: 'gateway `ipfs://` metadata URIs are fetched through (see [token-fields.md](token-fields.md))',
    parse: (env, name) => url(env, name, ['http:', 'https:']) ?? 'https://ipfs.io/ipfs/',
  },
  metadataAllowHosts: {
    variables: ['SPOT_METADATA_ALLOW_HOSTS'],
    default: 'none',
    meaning:
      'comma-separated hosts metadata may be fetched from although they resolve to private, loopback or link-local addresses',
    parse: (env, name) => list(env, name).map((host) => host.toLowerCase()),
  },
  enrichment: {
    variables: ['SPOT_ENRICHMENT'],
    default: code('on'),
    meaning:
      '`off`: ingest fetches no token metadata and reads no security facts (no off-chain requests; `metadata` and `security` keep their defaults)',
    parse: (env, name) => oneOf(env, name, ['on', 'off'] as const, 'on'),
  },
  promotionsUrl: {
    variables: ['SPOT_PROMOTIONS_URL'],
    default: 'off (the simulator: its own feed)',
    meaning:
      "base URL of a DEX Screener-shaped paid-promotion API (e.g. `https://api.dexscreener.com`) polled for the tokens' `platforms` (see [sources.md](sources.md))",
    parse: (env, name) => url(env, name, ['http:', 'https:']),
  },
  promotionsIntervalMs: {
    variables: ['SPOT_PROMOTIONS_INTERVAL_MS'],
    default: "`60000` (the simulator's feed: `5000`)",
    meaning: 'time between two polls of the promotion source, ms',
    parse: (env, name) => (raw(env, name) === undefined ? null : number(env, name, 0, 100)),
  },
};

/** Reads and validates every setting; the first bad value throws a ConfigError naming its variable. */
export function loadConfig(env: Env = process.env): Config {
  const config: Partial<Record<keyof Config, unknown>> = {};
  for (const [key, setting] of Object.entries(SETTINGS))
    config[key as keyof Config] = setting.parse(env, setting.variables[0]!);
  return config as Config;
}
