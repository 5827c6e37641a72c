// Start-up failures explained in the user's terms: the variable to change, or the process to stop.
import net from 'node:net';
import { ConfigError } from '../core/config.ts';
import { StoreBusyError } from '../core/errors.ts';

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
export function storeBusy(command: string, error: unknown): string | null {
  if (!(error instanceof StoreBusyError)) return null;
  return (
    `spot ${command}: the store in ${error.dataPath} is open in another process (a running \`spot up\`?); ` +
    'chDB opens a data dir in one process only: stop that process first'
  );
}
