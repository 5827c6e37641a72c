// `spot console`: prints a new one-time link that opens a console session in a browser, minted
// from the data dir's console secret (the running service checks it; no call to the service).
import type { Context } from '../core/context.ts';
import { consoleSecret, mintConsoleToken } from '../query-api/console/sessions.ts';

/** The host a browser on this machine reaches the REST port at (a wildcard bind answers on loopback). */
export function consoleHost(host: string): string {
  return host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
}

export async function consoleCommand(ctx: Context): Promise<number> {
  const { config } = ctx;
  if (config.console === 'off') {
    process.stderr.write('spot console: the console is off (SPOT_CONSOLE=off)\n');
    return 1;
  }
  const token = mintConsoleToken(consoleSecret(config.dataDir));
  process.stdout.write(`http://${consoleHost(config.host)}:${config.httpPort}/console/open?token=${token}\n`);
  return 0;
}
