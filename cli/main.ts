// `spot <command>`: one entry for every role. Each command loads only the modules it needs.
import fs from 'node:fs';
import { loadConfig, ConfigError, type Config } from '../core/config.ts';
import { createLogger } from '../core/logger.ts';
import { createContext, type Context } from '../core/context.ts';
import { FLAG_TO_ENV, settingsHelp } from './config-docs.ts';

/** `spot --help`: the commands, then every SPOT_* variable with its default (from core/config.ts's SETTINGS). */
export const USAGE = `Usage: spot <command> [options]

Commands:
  up                     run every role in one process (embedded default)
  ingest [--chains a,b]  run chain sources (RPC or the market simulator) and publish to the log
  aggregate              run the aggregator (on Kafka: one instance of a set that splits token state by partition)
  api                    run the REST query API
  edge                   run the WebSocket stream edge
  replay                 rebuild every table and compacted topic from the raw topics
  keys create|list|revoke  manage API keys
  sql "<query>"          run a read-only ClickHouse query against the store
  migrate                apply the ClickHouse migrations
  decode [--chain C] [FILE|-]  decode a Solana getTransaction result or an EVM receipt to JSON lines
  bench [scenario…]      run the benchmarks and write bench/results
  console                print a one-time link that opens the live console in a browser
  labels import FILE|URL import a wallet-label list (CSV or JSON; docs/sources.md)
  promotions import FILE|URL  import a paid-promotion list (CSV or JSON; docs/sources.md)

Configuration comes from SPOT_* environment variables (meanings: docs/configuration.md); flags and defaults:
${settingsHelp()}`;

export type CommandHandler = (ctx: Context, args: string[]) => Promise<number>;

const COMMANDS: Record<string, () => Promise<CommandHandler>> = {
  up: async () => (await import('./up.ts')).upCommand,
  ingest: async () => (await import('./roles.ts')).ingestCommand,
  aggregate: async () => (await import('./roles.ts')).aggregateCommand,
  api: async () => (await import('./roles.ts')).apiCommand,
  edge: async () => (await import('./roles.ts')).edgeCommand,
  replay: async () => (await import('./replay.ts')).replayCommand,
  keys: async () => (await import('./keys.ts')).keysCommand,
  sql: async () => (await import('./sql.ts')).sqlCommand,
  migrate: async () => (await import('./sql.ts')).migrateCommand,
  decode: async () => (await import('./decode.ts')).decodeCommand,
  bench: async () => (await import('../bench/run.ts')).benchCommand,
  console: async () => (await import('./console.ts')).consoleCommand,
  labels: async () => (await import('./labels.ts')).labelsCommand,
  promotions: async () => (await import('./promotions.ts')).promotionsCommand,
};

/** One usage line per command, printed by `spot <command> --help` (and on a usage error). */
const COMMAND_USAGE: Record<string, string> = {
  up: 'spot up                       every role in one process (embedded default)',
  ingest: 'spot ingest [--chains a,b]    chain sources (RPC or the market simulator) -> the log',
  aggregate:
    'spot aggregate                the aggregator (on Kafka: one instance of a set that splits token state by partition)',
  api: 'spot api                      the REST query API on SPOT_HTTP_PORT',
  edge: 'spot edge                     the WebSocket stream edge on SPOT_WS_PORT',
  replay:
    'spot replay                   rebuild every table and compacted topic from the raw topics (stop `spot up` first)',
  keys: 'spot keys create [--label L] [--expires-in 30d|--expires-at ISO] [--metered --credits N]\n       spot keys list\n       spot keys revoke <id>',
  sql: 'spot sql "<query>"            a read-only ClickHouse query (through the running service, or on the store)',
  migrate: 'spot migrate                  apply the ClickHouse migrations',
  decode:
    'spot decode [--chain C] [FILE|-]  a Solana getTransaction result, or an EVM receipt with --chain base|bsc|robinhood|arc, to JSON lines',
  bench: 'spot bench [scenario...]      run the benchmarks and write bench/results',
  console: 'spot console                  a one-time link (15 min) that opens the live console at / on SPOT_HTTP_PORT',
  labels:
    'spot labels import FILE|URL   a wallet-label list (CSV or JSON: chain,address,label,name,source) onto the log',
  promotions:
    'spot promotions import FILE|URL  a paid-promotion list (CSV or JSON: chain,token,platform,paidAt,product,source) onto the log',
};

/** Commands that take no arguments besides the configuration flags (an unknown flag must not start a service). */
const NO_ARGUMENTS = new Set(['up', 'ingest', 'aggregate', 'api', 'edge', 'replay', 'migrate', 'console']);

/** `--help`/`-h` after a command asks for its usage (for `sql`, only as the sole argument: the rest is a query). */
function asksForHelp(command: string, args: string[]): boolean {
  const isHelp = (arg: string) => arg === '--help' || arg === '-h';
  return command === 'sql' ? args.length === 1 && isHelp(args[0]!) : args.some(isHelp);
}

/** The `spot` subcommands (docker-compose.yml and the README name only these). */
export const COMMAND_NAMES: readonly string[] = Object.keys(COMMANDS);

const FLAGS_NOTE = `Flags of every command: ${Object.keys(FLAG_TO_ENV).join(', ')} (each sets its SPOT_* variable).`;

export function applyFlags(
  args: string[],
  env: Record<string, string | undefined>,
): { rest: string[]; env: Record<string, string | undefined> } {
  const rest: string[] = [];
  const out = { ...env };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const [flag, inline] = arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg, undefined];
    const variable = FLAG_TO_ENV[flag];
    if (variable) {
      const value = inline ?? args[++i];
      if (value === undefined) throw new ConfigError(variable, `flag ${flag} needs a value`);
      out[variable] = value;
    } else {
      rest.push(arg);
    }
  }
  return { rest, env: out };
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE + '\n');
    return command ? 0 : 1;
  }
  const load = COMMANDS[command];
  if (!load) {
    process.stderr.write(`spot: unknown command "${command}"\n\n${USAGE}\n`);
    return 2;
  }
  if (asksForHelp(command, args)) {
    process.stdout.write(
      `Usage: ${COMMAND_USAGE[command]}\n\n${FLAGS_NOTE}\nConfiguration comes from SPOT_* environment variables (spot --help lists them); see docs/configuration.md.\n`,
    );
    return 0;
  }
  let config: Config;
  let rest: string[];
  try {
    const applied = applyFlags(args, process.env);
    rest = applied.rest;
    config = loadConfig(applied.env);
    if (NO_ARGUMENTS.has(command) && rest.length > 0) {
      process.stderr.write(
        `spot ${command}: unexpected argument "${rest[0]}"\n\nUsage: ${COMMAND_USAGE[command]}\n\n${FLAGS_NOTE}\n`,
      );
      return 2;
    }
    if (command !== 'decode' && command !== 'bench') checkDataDir(config.dataDir);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`spot: configuration error: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  // Commands that print results keep stdout for data: logs go to stderr.
  const logger = createLogger(config.logLevel, process.stderr, config.logFormat);
  const ctx = createContext(config, logger);
  const handler = await load();
  try {
    return await handler(ctx, rest);
  } catch (error) {
    // A start-up problem traced to a setting (a port in use, an address that is not local, ...).
    if (error instanceof ConfigError) {
      process.stderr.write(`spot: configuration error: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

/** SPOT_DATA_DIR must be a directory, or a path one can be created at. */
function checkDataDir(dataDir: string): void {
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(dataDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // created at start
    throw new ConfigError('SPOT_DATA_DIR', `cannot use "${dataDir}": ${(error as Error).message}`);
  }
  if (!stat.isDirectory()) throw new ConfigError('SPOT_DATA_DIR', `"${dataDir}" exists and is not a directory`);
}
