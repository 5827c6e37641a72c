// The simulator's metadata host: serves the off-chain JSON its tokens' URIs name
// (`/meta/<chain>/<id>.json`), deterministic per path and seed, with the mix a real launchpad host
// shows: most tokens with some socials, handles reused across tokens (copycat launches), and a
// share of hostile answers — bad JSON, wrong types, invalid UTF-8, oversized bodies, slow and
// failing responses. Bound to loopback; the enrichment stage maps the URIs' host onto it.
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SimMetadataServer {
  /** Origin the server answers on, e.g. http://127.0.0.1:41234 */
  readonly origin: string;
  close(): Promise<void>;
}

const HANDLES = ['pumpdotfun', 'solana', 'memecoinhq', 'basedtoken', 'bnbchain', 'degenlabs', 'moonteam', 'cookingcto'];

/** A number in [0, 1) from the seed and path: the same token always gets the same answer. */
export function draw(seed: number, path: string, salt: string): number {
  return createHash('sha256').update(`${seed}:${salt}:${path}`).digest().readUInt32BE(0) / 2 ** 32;
}

export type SimAnswer = 'ok' | 'bad-json' | 'wrong-types' | 'bad-utf8' | 'huge' | 'slow' | 'missing' | 'error';

/** Which answer a path gets: 85% ok, the rest spread over the hostile kinds. */
export function simAnswerOf(seed: number, path: string): SimAnswer {
  const r = draw(seed, path, 'answer');
  const shares: Array<[SimAnswer, number]> = [
    ['bad-json', 0.03],
    ['wrong-types', 0.03],
    ['bad-utf8', 0.01],
    ['huge', 0.01],
    ['slow', 0.02],
    ['missing', 0.03],
    ['error', 0.02],
  ];
  let edge = 0;
  for (const [answer, share] of shares) {
    edge += share;
    if (r < edge) return answer;
  }
  return 'ok';
}

/** The JSON of a token that answers ok: pump.fun's shape, socials on a realistic share. */
export function simMetadataJson(seed: number, path: string): Record<string, unknown> {
  const id =
    path
      .split('/')
      .pop()
      ?.replace(/\.json$/, '') ?? 'token';
  const pick = (salt: string) => draw(seed, path, salt);
  const handle = HANDLES[Math.floor(pick('handle') * HANDLES.length)]!;
  const own = `${id.replace(/[^A-Za-z0-9_]/g, '').slice(0, 10)}coin`;
  const json: Record<string, unknown> = {
    name: `Sim ${id}`,
    symbol: id.slice(0, 6).toUpperCase(),
    description: `Simulated token ${id}.`,
    image: `ipfs://bafkreisim${id
      .toLowerCase()
      .replace(/[^a-z0-9]/g, '')
      .slice(0, 20)}`,
    showName: true,
    createdOn: 'https://pump.fun',
  };
  // 55% twitter (a quarter of them a reused handle), 35% website, 40% telegram, 10% discord
  if (pick('twitter') < 0.55) json.twitter = pick('reuse') < 0.25 ? `https://x.com/${handle}` : `https://x.com/${own}`;
  if (pick('website') < 0.35) json.website = `https://${own}.xyz`;
  if (pick('telegram') < 0.4) json.telegram = `https://t.me/${own}`;
  if (pick('discord') < 0.1) json.discord = `https://discord.gg/${own}`;
  return json;
}

export async function startSimMetadataServer(options: { seed: number; slowMs?: number }): Promise<SimMetadataServer> {
  const slowMs = options.slowMs ?? 30_000;
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method !== 'GET' || !path.startsWith('/meta/')) {
      res.statusCode = 404;
      return res.end();
    }
    const answer = simAnswerOf(options.seed, path);
    const send = (body: string | Buffer, status = 200) => {
      res.statusCode = status;
      res.setHeader('content-type', 'application/json');
      res.end(body);
    };
    switch (answer) {
      case 'ok':
        return send(JSON.stringify(simMetadataJson(options.seed, path)));
      case 'bad-json':
        return send(JSON.stringify(simMetadataJson(options.seed, path)).slice(0, 40));
      case 'wrong-types':
        return send(JSON.stringify({ description: 42, twitter: ['@x'], website: { url: 'x' }, telegram: true }));
      case 'bad-utf8':
        return send(Buffer.from([0x7b, 0x22, 0x64, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]));
      case 'huge':
        return send(`{"description":"${'x'.repeat(2 * 1024 * 1024)}"}`);
      case 'slow': {
        const timer = setTimeout(() => {
          timers.delete(timer);
          send(JSON.stringify(simMetadataJson(options.seed, path)));
        }, slowMs);
        timers.add(timer);
        return;
      }
      case 'missing':
        return send('', 404);
      case 'error':
        return send('', 503);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    async close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
