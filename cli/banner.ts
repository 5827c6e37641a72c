// The start-up banner: where the service answers, where its data lives, how to get a key. A text
// block for a person at a terminal; one structured log line for everyone else.
import { usesPrettyLogs } from '../core/logger.ts';
import type { Runtime } from './runtime.ts';

export function printBanner(runtime: Runtime, output: NodeJS.WriteStream = process.stderr): void {
  const { ctx, endpoints } = runtime;
  const keyHint =
    ctx.config.apiKeys.length > 0
      ? `${ctx.config.apiKeys.length} from SPOT_API_KEYS; more with \`spot keys create --label <name>\``
      : 'none yet: `spot keys create --label <name>` (or start with SPOT_API_KEYS=<key>)';
  const rows: Array<[string, string | undefined]> = [
    ['REST', endpoints.rest && `${endpoints.rest}/v1   (OpenAPI: ${endpoints.rest}/openapi.json)`],
    ['Stream', endpoints.stream],
    ['SQL', endpoints.sql && `${endpoints.sql}   (ClickHouse HTTP, read-only)`],
    ['Metrics', endpoints.rest && `${endpoints.rest}/metrics   (health: /healthz, /readyz)`],
    ['Console', endpoints.console && `${endpoints.console}   (one-time link; opens a browser session)`],
    ['Data dir', ctx.config.dataDir],
    ['API keys', keyHint],
  ];
  const shown = rows.filter((row): row is [string, string] => row[1] !== undefined);
  if (!usesPrettyLogs(ctx.config.logFormat, output)) {
    const { console: _oneTime, ...urls } = endpoints; // the one-time console link stays off log shippers
    ctx.logger.info({ ...urls, dataDir: ctx.config.dataDir }, 'spot is up');
    return;
  }
  const lines = shown.map(([name, value]) => `  ${name.padEnd(9)} ${value}`);
  output.write(`\r\x1b[K\n  spot is up\n${lines.join('\n')}\n\n`);
}
