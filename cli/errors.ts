// Start-up failures explained in the user's terms: the variable to change, or the process to stop.
import net from 'node:net';
import path from 'node:path';
import type { Context } from '../core/context.ts';
import { ConfigError } from '../core/config.ts';

/** A listen failure as a configuration error naming the variable to change (other errors unchanged). */
export function listenError(variable: string, host: string, port: number, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'EADDRINUSE')
    return new ConfigError(
      variable,
      `${host}:${port} is already in use (another spot or another program listens there); choose a free port`,
    );
  if (code === 'EACCES') return new ConfigError(variable, `no permission to listen on ${host}:${port}`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME') {
    return new ConfigError('SPOT_HOST', `cannot listen on "${host}": not an address of this machine (${code})`);
  }
  return error;
}

/** Resolves when host:port can be bound exclusively right now (port 0: always). */
export function probePort(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve()));
  });
}

/** chDB opens a data dir in one process: a command that needs the store while `spot up` runs gets this. */
export function storeBusy(ctx: Context, command: string, error: unknown): string | null {
  const text = `${(error as Error)?.message ?? ''} ${String((error as { cause?: unknown })?.cause ?? '')}`;
  if (
    (error as { code?: unknown })?.code !== 'CHDB_CONNECTION' &&
    !/Cannot lock file|Another server instance/i.test(text)
  )
    return null;
  return (
    `spot ${command}: the store in ${path.join(ctx.config.dataDir, 'clickhouse')} is open in another process (a running \`spot up\`?); ` +
    `chDB opens a data dir in one process only: stop that process first (${(error as Error)?.message ?? String(error)})`
  );
}
