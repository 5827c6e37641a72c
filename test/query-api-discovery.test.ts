// Query API: POST /v1/discovery through real HTTP, tokens fed through spot.tokens.v1.
import assert from 'node:assert/strict';
import type { Token } from '../core/schemas.ts';
import {
  call,
  evmAddress,
  makeToken,
  produceTokens,
  solanaAddress,
  startEnv,
  waitFor,
  type ApiEnv,
} from './query-api-env.ts';

const MINUTE = 60_000;

describe('query API: discovery', () => {
  let env: ApiEnv;
  const now = Date.now();
  const tokens: Record<string, Token> = {};
  const add = (name: string, t: Partial<Token> & { chain: Token['chain'] }) => {
    tokens[name] = makeToken({
      address: t.chain === 'solana' ? solanaAddress() : evmAddress(),
      name,
      symbol: name.toUpperCase().slice(0, 6),
      ...t,
    });
  };
  // newPairs (curve < 40%)
  add('alpha', {
    chain: 'solana',
    bondingCurvePct: '10',
    createdAt: now - 5 * MINUTE,
    metadata: {
      description: null,
      twitter: '@alphaX',
      website: 'https://www.alpha.example/page',
      telegram: null,
      discord: null,
    },
  });
  add('beta', {
    chain: 'solana',
    bondingCurvePct: '20',
    createdAt: now - 3 * MINUTE,
    metadata: { description: null, twitter: null, website: null, telegram: null, discord: null },
  });
  add('gamma', { chain: 'base', bondingCurvePct: '30', createdAt: now - 4 * MINUTE });
  add('tieA', { chain: 'bsc', bondingCurvePct: '5', createdAt: now - 60 * MINUTE });
  add('tieB', { chain: 'base', bondingCurvePct: '5', createdAt: now - 60 * MINUTE });
  add('stale', { chain: 'solana', bondingCurvePct: '10', updatedAt: now - 25 * 3600_000 });
  add('nolaunch', { chain: 'solana', launchpad: null, bondingCurvePct: null });
  // graduating (>= 40%, not graduated)
  add('hot', { chain: 'solana', bondingCurvePct: '60', updatedAt: now - 2 * MINUTE });
  add('quiet', { chain: 'solana', bondingCurvePct: '70', updatedAt: now - 90 * MINUTE });
  add('almost', { chain: 'solana', bondingCurvePct: '99.6', updatedAt: now - 90 * MINUTE });
  add('thin', {
    chain: 'solana',
    bondingCurvePct: '50',
    holders: { ...makeToken({ chain: 'solana', address: solanaAddress() }).holders, count: 5 },
  });
  // graduated
  add('grad1', {
    chain: 'base',
    bondingCurvePct: '100',
    graduatedAt: now - 30 * MINUTE,
    marketCap: { native: '10', usd: '50000' },
  });
  add('grad2', {
    chain: 'solana',
    bondingCurvePct: '100',
    graduatedAt: now - 10 * MINUTE,
    marketCap: { native: '10', usd: '9000' },
  });
  add('nocurve', {
    chain: 'solana',
    bondingCurvePct: null,
    graduatedAt: null,
    marketCap: { native: '10', usd: '7000' },
  });

  const names = (column: { deltas: { data: Token }[] }) => column.deltas.map((d) => d.data.name);
  const discover = (body: unknown, key = env.key) => call(env.base, '/v1/discovery', { method: 'POST', key, body });

  before(async () => {
    env = await startEnv();
    await produceTokens(env.log, Object.values(tokens));
    await waitFor(() => env.api.views.token('base', tokens.grad1!.address) !== undefined, 'tokens in view');
  });
  after(async () => env.close());

  it('answers the requested columns in the order newPairs, graduating, graduated with ranked deltas', async () => {
    const r = await discover({
      graduated: {},
      chains: ['solana', 'base', 'bsc', 'solana'],
      newPairs: {},
      graduating: null,
    });
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.columns.map((c: { column: string }) => c.column),
      ['newPairs', 'graduated'],
    );
    const [newPairs, graduated] = r.body.columns;
    // createdAt newest first; equal values (tieA bsc, tieB base) in the fixed order chain, address.
    assert.deepEqual(names(newPairs), ['beta', 'gamma', 'alpha', 'tieB', 'tieA']);
    newPairs.deltas.forEach((d: { rank: number; chain: string; address: string; data: Token }, i: number) => {
      assert.equal(d.rank, i + 1);
      assert.equal(d.chain, d.data.chain);
      assert.equal(d.address, d.data.address);
    });
    // graduatedAt newest first; a token with no curve reading is graduated and ranks last (no graduatedAt).
    assert.deepEqual(names(graduated), ['grad2', 'grad1', 'nocurve']);
  });

  it('applies the graduating defaults: holders, 60-minute staleness unless at 99.5% of the curve', async () => {
    const r = await discover({ chains: ['solana'], graduating: {} });
    assert.deepEqual(names(r.body.columns[0]).sort(), ['almost', 'hot']);
    const loose = await discover({
      chains: ['solana'],
      graduating: { filters: { maxGraduationStaleMinutes: 600, holderCount: { min: 1 } } },
    });
    assert.deepEqual(names(loose.body.columns[0]).sort(), ['almost', 'hot']);
    const tight = await discover({ chains: ['solana'], graduating: { filters: { maxGraduationStaleMinutes: 1 } } });
    assert.deepEqual(names(tight.body.columns[0]), ['almost']);
  });

  it('ranks on every sort field and order; bondingCurvePct on graduating ranks on activity', async () => {
    const asc = await discover({ chains: ['solana', 'base', 'bsc'], newPairs: { sortBy: 'createdAt', order: 'asc' } });
    assert.deepEqual(names(asc.body.columns[0]), ['tieB', 'tieA', 'alpha', 'gamma', 'beta']);
    const curve = await discover({ chains: ['solana', 'base', 'bsc'], newPairs: { sortBy: 'bondingCurvePct' } });
    assert.deepEqual(names(curve.body.columns[0]), ['gamma', 'beta', 'alpha', 'tieB', 'tieA']);
    const mcap = await discover({ chains: ['solana', 'base'], graduated: { sortBy: 'marketCapUsd', order: 'asc' } });
    assert.deepEqual(names(mcap.body.columns[0]), ['nocurve', 'grad2', 'grad1']);
    for (const sortBy of [
      'volume24hUsd',
      'liquidityUsd',
      'holdersCount',
      'tradeCount24h',
      'bondingCurveActivity',
      'graduatedAt',
      'bondingCurvePct',
    ]) {
      const r = await discover({ chains: ['solana'], graduating: { sortBy } });
      assert.equal(r.status, 200, sortBy);
    }
  });

  it('clamps limit into 1..100 instead of refusing it', async () => {
    assert.equal(
      (await discover({ chains: ['solana', 'base', 'bsc'], newPairs: { limit: 0 } })).body.columns[0].deltas.length,
      1,
    );
    assert.equal(
      (await discover({ chains: ['solana', 'base', 'bsc'], newPairs: { limit: 2 } })).body.columns[0].deltas.length,
      2,
    );
    assert.equal((await discover({ chains: ['solana', 'base', 'bsc'], newPairs: { limit: 1000 } })).status, 200);
  });

  it('applies filters: ranges inclusive, lists as unions, address words exactly, socials, unknown names ignored', async () => {
    const np = async (filters: unknown) =>
      names((await discover({ chains: ['solana', 'base', 'bsc'], newPairs: { filters } })).body.columns[0]).sort();
    assert.deepEqual(await np({ bondingCurvePercent: { min: 20, max: 30 } }), ['beta', 'gamma']);
    assert.deepEqual(await np({ symbolOrName: ['ALP', 'gam'] }), ['alpha', 'gamma']);
    assert.deepEqual(await np({ symbolOrName: [tokens.beta!.address] }), ['beta']);
    assert.deepEqual(await np({ symbolOrName: [tokens.gamma!.address.toUpperCase().replace('0X', '0x')] }), ['gamma']);
    assert.deepEqual(await np({ excludeSymbolOrName: ['tie', tokens.alpha!.address] }), ['beta', 'gamma']);
    assert.deepEqual(await np({ excludeTwitter: ['https://x.com/AlphaX'], excludeWebsites: [] }), [
      'beta',
      'gamma',
      'tieA',
      'tieB',
    ]);
    assert.deepEqual(await np({ excludeWebsites: ['alpha.example'] }), ['beta', 'gamma', 'tieA', 'tieB']);
    assert.deepEqual(await np({ withAtLeastOneSocial: true }), ['alpha', 'gamma', 'tieA', 'tieB']);
    assert.deepEqual(
      await np({ withAtLeastOneSocial: false, someFutureFilter: { min: 1 }, twitterReuseCount: { min: 5, max: 9 } }),
      ['alpha', 'beta', 'gamma', 'tieA', 'tieB'],
    );
    // Ages grow while the suite runs: shift the range by the whole minutes elapsed since setup.
    const elapsed = Math.floor((Date.now() - now) / MINUTE);
    assert.deepEqual(await np({ ageMinutes: { min: 4 + elapsed, max: 5 + elapsed } }), ['alpha', 'gamma']);
    assert.deepEqual(await np({ protocols: ['other', 'PUMPFUN'] }).then((x) => x.length), 5);
    assert.deepEqual(await np({ protocols: ['mayhem_mode'] }).then((x) => x.length), 5);
    assert.deepEqual(await np({ anchorSymbols: ['usdc'] }), []);
    assert.deepEqual(await np({ excludeDevAddresses: [tokens.alpha!.creator] }), ['beta', 'gamma', 'tieA', 'tieB']);
    assert.deepEqual(
      await np({ holderCount: { min: 120, max: 120 }, marketCapUsd: { min: '12984.12', max: '12984.12' } }).then(
        (x) => x.length,
      ),
      5,
    );
    const mcap = await discover({
      chains: ['solana', 'base'],
      graduated: { filters: { marketCapUsd: { min: '9000', max: '50000' } } },
    });
    assert.deepEqual(names(mcap.body.columns[0]).sort(), ['grad1', 'grad2']);
  });

  it('refuses a bad request with VALIDATION_ERROR or UNSUPPORTED_CHAIN', async () => {
    const fields = async (body: unknown) => {
      const r = await discover(body);
      assert.equal(r.status, 400);
      assert.equal(r.body.error.code, 'VALIDATION_ERROR');
      return r.body.error.details.map((d: { field: string }) => d.field).sort();
    };
    assert.deepEqual(await fields({ newPairs: {} }), ['chains']);
    assert.deepEqual(await fields({ chains: [], newPairs: {} }), ['chains']);
    assert.deepEqual(await fields({ chains: ['solana'] }), ['body']);
    assert.deepEqual(await fields({ chains: ['solana'], newPairs: null, graduated: null }), ['body']);
    assert.deepEqual(await fields('{"chains": ['), ['body']);
    assert.deepEqual(await fields('[]'), ['body']);
    assert.deepEqual(
      await fields({
        chains: ['solana'],
        graduated: { filters: { marketCapUsd: { min: '10', max: '9.5' } } },
        newPairs: { filters: { holderCount: { min: 5, max: 4 } } },
      }),
      ['graduated.filters.marketCapUsd', 'newPairs.filters.holderCount'],
    );
    assert.deepEqual(await fields({ chains: ['solana'], newPairs: { sortBy: 'price', limit: 2.5, order: 'up' } }), [
      'newPairs.limit',
      'newPairs.order',
      'newPairs.sortBy',
    ]);
    assert.deepEqual(
      await fields({
        chains: ['solana'],
        newPairs: { filters: { holderCount: { min: -1 }, liquidityUsd: { min: 'lots' } } },
      }),
      ['newPairs.filters.holderCount.min', 'newPairs.filters.liquidityUsd.min'],
    );
    const chain = await discover({ chains: ['solana', 'polygon'], newPairs: {} });
    assert.equal(chain.status, 400);
    assert.deepEqual(chain.body.error, {
      code: 'UNSUPPORTED_CHAIN',
      message: chain.body.error.message,
      details: { chain: 'polygon' },
    });
    const big = await discover(
      JSON.stringify({ chains: ['solana'], newPairs: { filters: { symbolOrName: ['x'.repeat(1024 * 1024)] } } }),
    );
    assert.equal(big.status, 400);
    assert.equal(big.body.error.details[0].field, 'body');
  });
});
