// A JSON logger whose lines a test reads back, parsed, as they are written.
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../core/logger.ts';

export function captureLog<Line = Record<string, unknown>>(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line) as Line);
      done();
    },
  });
  return { logger: createLogger('info', sink, 'json'), lines };
}
