// SSRF guard for metadata fetches: a token's URI is chosen by whoever created the token, so it may
// point at the operator's own network. Refuses loopback, private, link-local, CGNAT, multicast and
// unspecified addresses — for literal IPs, and for every address a name resolves to, checked at
// connect time (the `lookup` given to the socket) so a DNS answer cannot change after the check.
import dns from 'node:dns';
import net from 'node:net';

export class GuardError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GuardError';
  }
}

function ipv4Bytes(ip: string): number[] {
  return ip.split('.').map(Number);
}

function privateIpv4(ip: string): boolean {
  const [a = 0, b = 0] = ipv4Bytes(ip);
  return (
    a === 0 || // this network / unspecified
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // CGNAT
    (a === 169 && b === 254) || // link-local, cloud metadata
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0) || // IETF protocol assignments (192.0.0.0/24)
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    a >= 224 // multicast, reserved, broadcast
  );
}

/** The 8 groups of an IPv6 address as numbers (handles `::` and an embedded IPv4 tail). */
function ipv6Groups(ip: string): number[] {
  let text = ip.toLowerCase();
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    const [a = 0, b = 0, c = 0, d = 0] = ipv4Bytes(text.slice(lastColon + 1));
    tail = [(a << 8) | b, (c << 8) | d];
    text = text.slice(0, lastColon + 1) + (text.endsWith('::') ? '' : '0');
    if (text.endsWith(':0')) text = text.slice(0, -2);
  }
  const [head = '', rest] = text.split('::');
  const left = head === '' ? [] : head.split(':').map((g) => Number.parseInt(g, 16));
  const right = rest === undefined || rest === '' ? [] : rest.split(':').map((g) => Number.parseInt(g, 16));
  const missing = 8 - tail.length - left.length - right.length;
  return [...left, ...new Array(Math.max(0, missing)).fill(0), ...right, ...tail];
}

function privateIpv6(ip: string): boolean {
  const g = ipv6Groups(ip);
  const first = g[0] ?? 0;
  const zeroHead = g.slice(0, 5).every((x) => x === 0);
  if (zeroHead && (g[5] === 0xffff || g[5] === 0)) {
    // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d, ::1, ::) addresses
    const v4 = `${(g[6] ?? 0) >> 8}.${(g[6] ?? 0) & 255}.${(g[7] ?? 0) >> 8}.${(g[7] ?? 0) & 255}`;
    return g[5] === 0xffff ? privateIpv4(v4) : true;
  }
  return (
    (first & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (first & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (first & 0xffc0) === 0xfec0 || // site-local (deprecated)
    (first & 0xff00) === 0xff00 || // multicast
    first === 0x0064 || // NAT64 64:ff9b::/96 can reach IPv4 private space
    (first === 0x2002 &&
      privateIpv4(`${(g[1] ?? 0) >> 8}.${(g[1] ?? 0) & 255}.${(g[2] ?? 0) >> 8}.${(g[2] ?? 0) & 255}`)) // 6to4
  );
}

/** True for any address a public fetch must not reach. */
export function isPrivateAddress(ip: string): boolean {
  const family = net.isIP(ip);
  if (family === 4) return privateIpv4(ip);
  if (family === 6) return privateIpv6(ip);
  return true; // not an address at all: refuse
}

export type LookupFn = typeof dns.lookup;

export interface UrlGuard {
  /** Throws GuardError when the URL may not be fetched before any connection (scheme, port, literal IP). */
  checkUrl(url: URL): void;
  /** A socket `lookup` that refuses names resolving to a private address (unless the host is allowed). */
  lookup: LookupFn;
}

/**
 * `allowHosts`: host names (or literal IPs) the operator trusts although they resolve privately,
 * e.g. a local metadata server. `resolve` is the DNS lookup to check (tests pass their own).
 */
export function createUrlGuard(options: { allowHosts?: readonly string[]; resolve?: LookupFn } = {}): UrlGuard {
  const allowed = new Set((options.allowHosts ?? []).map((h) => h.trim().toLowerCase()).filter(Boolean));
  const resolve = options.resolve ?? dns.lookup;
  const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '').toLowerCase();

  const lookup = ((hostname: string, opts: unknown, callback: unknown) => {
    const cb = (typeof opts === 'function' ? opts : callback) as (
      err: NodeJS.ErrnoException | null,
      address: string | dns.LookupAddress[],
      family?: number,
    ) => void;
    const o = (typeof opts === 'object' && opts !== null ? opts : {}) as dns.LookupOptions;
    const host = hostname.toLowerCase();
    resolve(host, { ...o, all: true }, (err, addresses) => {
      if (err) return cb(err, '');
      const list = addresses as unknown as dns.LookupAddress[];
      if (!allowed.has(host)) {
        const bad = list.find((a) => isPrivateAddress(a.address));
        if (bad || list.length === 0)
          return cb(new GuardError(`${host} resolves to a private address (${bad?.address ?? 'none'})`), '');
      }
      if (o.all) return cb(null, list);
      const first = list[0]!;
      cb(null, first.address, first.family);
    });
  }) as LookupFn;

  return {
    checkUrl(url) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        throw new GuardError(`scheme ${url.protocol} is not fetched`);
      if (url.username || url.password) throw new GuardError('credentials in a URL are not fetched');
      const host = hostOf(url);
      if (allowed.has(host)) return;
      if (net.isIP(host) !== 0 && isPrivateAddress(host)) throw new GuardError(`${host} is a private address`);
      if (host === 'localhost' || host.endsWith('.localhost')) throw new GuardError(`${host} is loopback`);
    },
    lookup,
  };
}
