// Structured logs through pino; on a terminal pino-pretty renders them for people (SPOT_LOG_FORMAT). API keys never reach a log line: the redact list covers the
// places a key could sit, and callers log key ids (hash prefixes), never keys.
import { pino, type Logger, type DestinationStream } from 'pino';
import { prettyFactory } from 'pino-pretty';

export type { Logger };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const LOG_FORMATS = ['auto', 'pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** auto: pretty when the destination (stdout by default) is a terminal, JSON lines otherwise. */
export function usesPrettyLogs(format: LogFormat, destination: NodeJS.WritableStream = process.stdout): boolean {
  if (format !== 'auto') return format === 'pretty';
  return (destination as NodeJS.WriteStream).isTTY === true;
}

/**
 * Formats each line synchronously (nothing is lost at exit). On a terminal a line first clears
 * the current one, where a start-up progress bar may be drawn (cli/progress.ts).
 */
function prettyStream(target: NodeJS.WritableStream): { write(line: string): void } {
  const tty = (target as NodeJS.WriteStream).isTTY === true;
  const format = prettyFactory({
    colorize: tty,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
  });
  const clear = tty ? '\r\x1b[K' : '';
  return { write: (line) => target.write(clear + format(line)) };
}

export function createLogger(level: LogLevel, destination?: NodeJS.WritableStream, format: LogFormat = 'json'): Logger {
  const target = destination ?? process.stdout;
  const stream = usesPrettyLogs(format, target) ? prettyStream(target) : destination;
  return pino(
    {
      level,
      base: { service: 'spot' },
      redact: {
        paths: [
          'authorization',
          'headers.authorization',
          'req.headers.authorization',
          'apiKey',
          'key',
          '*.apiKey',
          'config.apiKeys',
          'apiKeys',
          'geyserToken',
          'config.geyserToken',
        ],
        censor: '[redacted]',
      },
    },
    stream as DestinationStream | undefined,
  );
}
