// Free loopback ports for child processes that need fixed port numbers.
import fs from 'node:fs';
import net from 'node:net';

/**
 * A free loopback port outside the kernel's ephemeral range: a child binds it seconds later, and a
 * port the kernel hands out (listen(0)) can meanwhile become the local end of some outgoing
 * connection (CI once saw `spot up` refuse SPOT_WS_PORT as in use, under the chain node's RPC traffic).
 */
export async function freePort(): Promise<number> {
  const [low] = ephemeralRange();
  const below = low - 1 - FIXED_PORTS_FROM;
  if (below >= 1000) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = await listenOnce(FIXED_PORTS_FROM + Math.floor(Math.random() * below));
      if (port !== null) return port;
    }
  }
  const port = await listenOnce(0);
  if (port === null) throw new Error('no free loopback port');
  return port;
}

/** Ports below this are left to well-known services. */
const FIXED_PORTS_FROM = 10_000;

/** The kernel's ephemeral port range (Linux), else IANA's. */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = fs
      .readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return [low!, high!];
  } catch {
    // not Linux
  }
  return [49152, 65535];
}

/** Binds `port` on loopback (0: any) and releases it at once: the port, or null when it is taken. */
function listenOnce(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : null));
    });
  });
}

export async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}${lastError ? `: ${(lastError as Error).message}` : ''}`);
}

/**
 * True once `url` answers 2xx, else undefined; a refused connection throws (a probe for waitFor). The body is read to the end:
 * an unread one holds its connection, and a server's stop waits for it.
 */
export async function answersOk(url: string): Promise<true | undefined> {
  const response = await fetch(url);
  await response.arrayBuffer();
  return response.ok ? true : undefined;
}
