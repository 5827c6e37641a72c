import assert from 'node:assert/strict';
import type dns from 'node:dns';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../core/config.ts';
import { createContext } from '../core/context.ts';
import { createLogger } from '../core/logger.ts';
import { isTopicValue, TOPICS, type TokenEvent } from '../core/topics.ts';
import { createMetadataFetcher, resolveUri, type MetadataFetcher } from '../ingest/enrichment/fetcher.ts';
import { createMetadataCache } from '../ingest/enrichment/metadata-cache.ts';
import { normaliseMetadata } from '../ingest/enrichment/metadata-json.ts';
import { createMetadataResolver, type MetadataEvent } from '../ingest/enrichment/metadata-resolver.ts';
import { createUrlGuard, isPrivateAddress, type LookupFn } from '../ingest/enrichment/url-guard.ts';
import { twitterHandle, websiteHost } from '../query-api/discovery-filters.ts';

// Recorded answers: a pump.fun metadata JSON as its IPFS gateway serves it (fields as pump.fun writes them).
const PUMP_JSON = {
  name: 'Dog Wif Hat',
  symbol: 'WIF',
  description: 'the dog\u0007 with a hat',
  image: 'https://ipfs.io/ipfs/QmImage',
  showName: true,
  createdOn: 'https://pump.fun',
  twitter: 'https://twitter.com/DogWifCoin/',
  telegram: 't.me/dogwifhat',
  website: 'www.DogWifHat.com',
};

/** Names the tests resolve: meta.test is the local server (allowed), rebind.test points into a private range. */
const fakeDns: LookupFn = ((hostname: string, _options: unknown, callback: (...args: unknown[]) => void) => {
  const table: Record<string, string> = { 'meta.test': '127.0.0.1', 'rebind.test': '10.1.2.3', 'v6.test': '::1' };
  const address = table[hostname];
  if (!address) return callback(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
  callback(null, [{ address, family: address.includes(':') ? 6 : 4 }] satisfies dns.LookupAddress[]);
}) as unknown as LookupFn;

describe('enrichment: metadata resolver', function () {
  this.timeout(20_000);
  let server: http.Server;
  let port = 0;
  const hits = new Map<string, number[]>();
  let flaky = 0;
  let base = '';

  before(async () => {
    server = http.createServer((req, res) => {
      const url = req.url ?? '/';
      hits.set(url, [...(hits.get(url) ?? []), Date.now()]);
      const json = (value: unknown) => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(value));
      };
      if (url === '/ok.json' || url === '/ipfs/QmMeta') return json(PUMP_JSON);
      if (url === '/huge.json') {
        // chunked, no content-length: the cap must stop the read
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        let sent = 0;
        const write = () => {
          while (sent < 4 * 1024 * 1024) {
            sent += chunk.length;
            if (!res.write(chunk)) return res.once('drain', write);
          }
          res.end();
        };
        return write();
      }
      if (url === '/huge-declared.json') {
        res.setHeader('content-length', String(50 * 1024 * 1024));
        return res.write('{');
      }
      if (url === '/slow.json') return setTimeout(() => json(PUMP_JSON), 3000).unref();
      if (url === '/redirect-metadata') {
        res.statusCode = 302;
        res.setHeader('location', 'http://169.254.169.254/latest/meta-data/');
        return res.end();
      }
      if (url === '/redirect-rebind') {
        res.statusCode = 301;
        res.setHeader('location', 'http://rebind.test/x.json');
        return res.end();
      }
      if (url === '/redirect-ok') {
        res.statusCode = 307;
        res.setHeader('location', '/ok.json');
        return res.end();
      }
      if (url === '/loop') {
        res.statusCode = 302;
        res.setHeader('location', '/loop');
        return res.end();
      }
      if (url === '/bad-utf8.json')
        return res.end(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]));
      if (url === '/wrong-types.json')
        return json({
          description: true,
          twitter: 12345,
          website: ['https://a.com'],
          telegram: { url: 't.me/x' },
          discord: 'javascript:alert(1)',
          image: 'data:image/png;base64,AAAA',
        });
      if (url === '/not-object.json') return json([1, 2, 3]);
      if (url === '/flaky.json') {
        flaky++;
        if (flaky === 1) {
          res.statusCode = 503;
          return res.end('busy');
        }
        return json({ ...PUMP_JSON, twitter: '@flakyone' });
      }
      if (url.startsWith('/rate/')) return json({ twitter: url.slice(6) });
      res.statusCode = 404;
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    base = `http://meta.test:${port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const makeFetcher = (overrides: Partial<Parameters<typeof createMetadataFetcher>[0]> = {}): MetadataFetcher =>
    createMetadataFetcher({
      guard: createUrlGuard({ allowHosts: ['meta.test'], resolve: fakeDns }),
      ipfsGateway: `http://meta.test:${port}/ipfs/`,
      timeoutMs: 300,
      maxBytes: 64 * 1024,
      retries: 2,
      backoffMs: 20,
      hostIntervalMs: 0,
      ...overrides,
    });

  describe('guard', () => {
    it('refuses loopback, private, link-local, CGNAT, multicast and mapped addresses, accepts public ones', () => {
      for (const ip of [
        '127.0.0.1',
        '10.0.0.8',
        '172.20.1.1',
        '192.168.1.1',
        '169.254.169.254',
        '100.64.0.1',
        '0.0.0.0',
        '224.0.0.1',
        '::1',
        '::',
        'fe80::1',
        'fd00::1',
        '::ffff:127.0.0.1',
        '::ffff:7f00:1',
        'ff02::1',
      ])
        assert.equal(isPrivateAddress(ip), true, ip);
      for (const ip of ['8.8.8.8', '104.18.2.3', '2606:4700::1111', '::ffff:8.8.8.8', '172.32.0.1'])
        assert.equal(isPrivateAddress(ip), false, ip);
    });

    it('refuses literal private IPs in any spelling, other schemes and credentials, before connecting', async () => {
      const fetcher = makeFetcher();
      for (const uri of [
        `http://127.0.0.1:${port}/ok.json`,
        `http://2130706433:${port}/ok.json`,
        `http://0x7f.1:${port}/ok.json`,
        `http://[::1]:${port}/ok.json`,
        `http://localhost:${port}/ok.json`,
        'file:///etc/passwd',
        `http://user:pw@meta.test:${port}/ok.json`,
      ]) {
        const outcome = await fetcher.fetchJson(uri);
        assert.equal(outcome.ok, false, uri);
        assert.equal(!outcome.ok && outcome.transient, false, uri);
      }
      assert.equal(hits.get('/ok.json'), undefined, 'no request reached the server');
    });

    it('checks what a name resolves to, not only literals (DNS to a private range is refused)', async () => {
      const outcome = await makeFetcher().fetchJson('http://rebind.test/x.json');
      assert.equal(outcome.ok, false);
      assert.match(!outcome.ok ? outcome.reason : '', /private address/);
      assert.equal(!outcome.ok && outcome.transient, false, 'a refusal is not retried');
    });

    it('an operator-allowed host may resolve privately; without the allowance it is refused', async () => {
      assert.equal((await makeFetcher().fetchJson(`${base}/ok.json`)).ok, true);
      const strict = makeFetcher({ guard: createUrlGuard({ resolve: fakeDns }) });
      const outcome = await strict.fetchJson(`${base}/ok.json`);
      assert.equal(outcome.ok, false);
    });

    it('re-checks every redirect hop: to the cloud metadata address, to a name resolving privately, loops', async () => {
      const fetcher = makeFetcher();
      for (const uri of [`${base}/redirect-metadata`, `${base}/redirect-rebind`, `${base}/loop`]) {
        const outcome = await fetcher.fetchJson(uri);
        assert.equal(outcome.ok, false, uri);
      }
      const ok = await fetcher.fetchJson(`${base}/redirect-ok`);
      assert.equal(ok.ok, true);
    });
  });

  describe('fetcher (hostile hosts)', () => {
    it('caps the body: a huge streamed body and a huge declared length are refused, not buffered', async () => {
      const fetcher = makeFetcher();
      for (const name of ['/huge.json', '/huge-declared.json']) {
        const outcome = await fetcher.fetchJson(base + name);
        assert.equal(outcome.ok, false, name);
        assert.match(!outcome.ok ? outcome.reason : '', /cap/);
        assert.equal(hits.get(name)?.length, 1, 'too large is not retried');
      }
    });

    it('times out a slow host and retries with backoff, then gives up as transient', async () => {
      const started = Date.now();
      const outcome = await makeFetcher().fetchJson(`${base}/slow.json`);
      assert.equal(outcome.ok, false);
      assert.equal(!outcome.ok && outcome.transient, true);
      assert.equal(hits.get('/slow.json')?.length, 3, 'first try + 2 retries');
      assert.ok(Date.now() - started < 2500, 'bounded by timeout × attempts + backoff');
    });

    it('close() aborts a fetch in flight at once and refuses new ones (shutdown never waits for a host)', async () => {
      const fetcher = makeFetcher({ timeoutMs: 10_000 });
      const started = Date.now();
      const pending = fetcher.fetchJson(`${base}/slow.json`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      fetcher.close();
      const outcome = await pending;
      assert.equal(outcome.ok, false);
      assert.ok(Date.now() - started < 1000, `${Date.now() - started} ms`);
      assert.equal((await fetcher.fetchJson(`${base}/ok.json`)).ok, false);
    });

    it('retries a 503 and succeeds', async () => {
      const outcome = await makeFetcher().fetchJson(`${base}/flaky.json`);
      assert.equal(outcome.ok, true);
      assert.equal(normaliseMetadata(outcome.ok ? outcome.json : null).twitter, 'https://x.com/flakyone');
    });

    it('refuses invalid UTF-8 and non-JSON bodies without retrying', async () => {
      const outcome = await makeFetcher().fetchJson(`${base}/bad-utf8.json`);
      assert.equal(outcome.ok, false);
      assert.match(!outcome.ok ? outcome.reason : '', /UTF-8/);
      assert.equal(hits.get('/bad-utf8.json')?.length, 1);
    });

    it('ipfs:// goes through the configured gateway; a gateway that is down fails as transient', async () => {
      const ok = await makeFetcher().fetchJson('ipfs://QmMeta');
      assert.equal(ok.ok, true);
      const closed = http.createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const deadPort = (closed.address() as AddressInfo).port;
      closed.close();
      const down = await makeFetcher({ ipfsGateway: `http://meta.test:${deadPort}/ipfs/` }).fetchJson('ipfs://QmMeta');
      assert.equal(down.ok, false);
      assert.equal(!down.ok && down.transient, true);
    });

    it('maps ipfs://, ipfs://ipfs/ and ar:// onto gateways and refuses other schemes', () => {
      assert.equal(
        resolveUri('ipfs://QmA/1.json', 'https://gw.example/ipfs')?.href,
        'https://gw.example/ipfs/QmA/1.json',
      );
      assert.equal(resolveUri('ipfs://ipfs/QmA', 'https://gw.example/ipfs/')?.href, 'https://gw.example/ipfs/QmA');
      assert.equal(resolveUri('ar://abc123', 'https://gw.example/ipfs/')?.href, 'https://arweave.net/abc123');
      assert.equal(resolveUri('data:application/json,{}', 'https://gw.example/'), null);
      assert.equal(resolveUri('not a uri', 'https://gw.example/'), null);
    });

    it('spaces requests to one host by the rate limit', async () => {
      const fetcher = makeFetcher({ hostIntervalMs: 100 });
      await Promise.all([1, 2, 3].map((n) => fetcher.fetchJson(`${base}/rate/h${n}`)));
      const times = [1, 2, 3].map((n) => hits.get(`/rate/h${n}`)![0]!).sort((a, b) => a - b);
      assert.ok(times[2]! - times[0]! >= 180, `spread ${times[2]! - times[0]!} ms`);
    });
  });

  describe('normalisation', () => {
    it('reads pump.fun JSON into the forms the discovery filters compare', () => {
      const m = normaliseMetadata(PUMP_JSON);
      assert.deepEqual(m, {
        description: 'the dog with a hat',
        image: 'https://ipfs.io/ipfs/QmImage',
        twitter: 'https://x.com/dogwifcoin',
        website: 'https://www.dogwifhat.com/',
        telegram: 'https://t.me/dogwifhat',
        discord: null,
      });
      assert.equal(twitterHandle(m.twitter), 'dogwifcoin');
      assert.equal(websiteHost(m.website), 'dogwifhat.com');
    });

    it('reads Metaplex extensions, keeps community links, drops wrong types and unsafe schemes', () => {
      const m = normaliseMetadata({
        extensions: {
          twitter: 'https://x.com/i/communities/1789',
          website: 'https://x.com/foo',
          discord: 'https://discord.com/invite/abc',
        },
      });
      assert.equal(m.twitter, 'https://x.com/i/communities/1789');
      assert.equal(m.website, null, 'a social host is no website');
      assert.equal(m.discord, 'https://discord.gg/abc');
      assert.deepEqual(
        normaliseMetadata({
          description: true,
          twitter: 12345,
          website: ['https://a.com'],
          telegram: { url: 't.me/x' },
          discord: 'javascript:alert(1)',
          image: 'data:image/png;base64,AAAA',
        }),
        { description: null, image: null, twitter: null, website: null, telegram: null, discord: null },
      );
      assert.equal(normaliseMetadata([1, 2]).twitter, null);
      assert.equal(normaliseMetadata('x'.repeat(10)).description, null);
    });
  });

  describe('resolver', () => {
    const ctx = () => createContext(loadConfig({}), createLogger('silent'));
    const created = (n: number, uri: string): TokenEvent => ({
      id: `solana:sig${n}:0`,
      chain: 'solana',
      transactionHash: `sig${n}`,
      eventIndex: 0,
      blockNumber: 100 + n,
      blockTime: 1_700_000_000_000 + n,
      kind: 'created',
      token: `Mint${n}`,
      name: 'T',
      symbol: 'T',
      uri,
      decimals: 6,
      supply: '1000',
      creator: 'Creator',
      launchpad: 'pumpfun',
      pool: null,
      quoteAsset: null,
    });

    it('publishes valid metadata events, skips failures, and serves the second run from the persistent cache', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-meta-'));
      const cachePath = path.join(dir, 'metadata.sqlite');
      const run = async () => {
        const published: MetadataEvent[] = [];
        const cache = createMetadataCache({ path: cachePath });
        const c = ctx();
        const resolver = createMetadataResolver({
          ctx: c,
          fetcher: makeFetcher(),
          cache,
          publish: (e) => {
            published.push(e);
          },
        });
        resolver.submit([
          created(1, `${base}/ok.json`),
          created(2, `${base}/bad-utf8.json`),
          created(3, `${base}/wrong-types.json`),
          created(4, ''),
        ]);
        await resolver.idle();
        cache.close();
        return { published, metrics: c.metrics };
      };
      const before = hits.get('/ok.json')?.length ?? 0;
      const first = await run();
      assert.deepEqual(first.published.map((e) => e.token).sort(), ['Mint1', 'Mint3']);
      for (const e of first.published) assert.ok(isTopicValue(TOPICS.tokenEvents, e), 'a valid token event');
      const one = first.published.find((e) => e.token === 'Mint1')!;
      assert.equal(one.twitter, 'https://x.com/dogwifcoin');
      assert.equal(one.id, 'solana:sig1:0:metadata');
      assert.equal(hits.get('/ok.json')!.length, before + 1);
      const second = await run();
      assert.equal(hits.get('/ok.json')!.length, before + 1, 'no refetch after a restart');
      assert.equal(second.published.length, 2);
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('never waits: submit returns at once and the queue is bounded (overflow dropped and counted)', async () => {
      const c = ctx();
      const resolver = createMetadataResolver({
        ctx: c,
        fetcher: makeFetcher(),
        cache: createMetadataCache({ path: ':memory:' }),
        publish: () => {},
        concurrency: 1,
        maxQueued: 2,
      });
      const started = Date.now();
      resolver.submit([1, 2, 3, 4, 5].map((n) => created(10 + n, `${base}/rate/q${n}`)));
      assert.ok(Date.now() - started < 50);
      assert.equal(resolver.queued, 2, 'one running, two queued, two dropped');
      await resolver.idle();
      assert.equal(c.metrics.get('enrichment_metadata_dropped'), 2);
      assert.equal(c.metrics.get('enrichment_metadata_fetched'), 3);
    });
  });
});
