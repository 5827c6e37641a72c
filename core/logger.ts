// Structured logs through pino. API keys never reach a log line: the redact list covers the
// places a key could sit, and callers log key ids (hash prefixes), never keys.
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function createLogger(level: LogLevel, destination?: NodeJS.WritableStream): Logger {
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
        ],
        censor: '[redacted]',
      },
    },
    destination as DestinationStream | undefined,
  );
}
