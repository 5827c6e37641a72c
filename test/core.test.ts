import assert from 'node:assert/strict';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import * as D from '../core/decimal.ts';
import { canonicalAddress, isAddressOf, isChain, looksLikeAddress, tradeId } from '../core/chains.ts';
import { Token, Trade, Candle, TradePage, DiscoveryRequest, ErrorEnvelope, DiscoveryItem } from '../core/schemas.ts';
import { loadConfig, ConfigError } from '../core/config.ts';
import { TOPICS, assertTopicValue } from '../core/topics.ts';
import { createSlicer } from '../core/slices.ts';
import { createMemo } from '../core/memo.ts';
import { textOf } from '../core/text.ts';
import { sampleToken, sampleTrade } from './fixtures/spec-samples.ts';

describe('core/decimal', () => {
  it('keeps sums of base units exact where floats drift', () => {
    const tenth = D.parse('0.1');
    const sum = D.add(D.add(tenth, tenth), tenth);
    assert.equal(D.decToString(sum), '0.3');
    assert.notEqual(0.1 + 0.1 + 0.1, 0.3);
  });
  it('converts base units with their decimals', () => {
    assert.equal(D.decToString(D.fromUnits('50051224', 9)), '0.050051224');
    assert.equal(D.decToString(D.fromUnits('1000000000000000', 6)), '1000000000');
    // 33 places round at the 30th: ...890|123 -> ...890, trailing zero dropped; ...890|5 rounds up.
    assert.equal(
      D.decToString(D.fromUnits('123456789012345678901234567890123', 33)),
      '0.12345678901234567890123456789',
    );
    assert.equal(
      D.decToString(D.fromUnits('123456789012345678901234567890500', 33)),
      '0.123456789012345678901234567891',
    );
  });
  it('divides with rounding at the 30th place and multiplies exactly', () => {
    assert.equal(D.decToString(D.div(D.parse('1'), D.parse('3'))), '0.333333333333333333333333333333');
    assert.equal(D.decToString(D.div(D.parse('2'), D.parse('3'))), '0.666666666666666666666666666667');
    assert.equal(D.decToString(D.mul(D.parse('1.5'), D.parse('-2.25'))), '-3.375');
    assert.equal(D.decToString(D.div(D.parse('5'), D.ZERO)), '0');
  });
  it('computes signed percentage changes', () => {
    assert.equal(D.decToString(D.pctChange(D.parse('200'), D.parse('195'))), '-2.5');
    assert.equal(D.decToString(D.pct(D.parse('25'), D.parse('200'))), '12.5');
  });
  it('parses and prints round trip, refusing exponents', () => {
    for (const text of ['0', '-1', '123.000000001', '0.000000000000000000000000000001'])
      assert.equal(D.decToString(D.parse(text)), text);
    assert.throws(() => D.parse('1e-7'));
    assert.throws(() => D.parse('abc'));
    assert.equal(D.toFixedString(D.parse('1.23456'), 2), '1.23');
  });
});

describe('core/chains', () => {
  it('knows the five slugs only', () => {
    for (const chain of ['solana', 'base', 'bsc', 'robinhood', 'arc']) assert.ok(isChain(chain));
    assert.ok(!isChain('ethereum'));
    assert.ok(!isChain('Solana'));
  });
  it('validates solana addresses as base58 of 32 bytes', () => {
    assert.ok(isAddressOf('solana', 'So11111111111111111111111111111111111111112'));
    assert.ok(isAddressOf('solana', '6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P'));
    assert.ok(!isAddressOf('solana', 'So1111111111111111111111111111111111111111O')); // O is not base58
    assert.ok(!isAddressOf('solana', '0x4200000000000000000000000000000000000006'));
    assert.ok(!isAddressOf('solana', '111'));
  });
  it('canonicalises EVM addresses to lower case and compares case-insensitively', () => {
    assert.equal(
      canonicalAddress('base', '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'),
      '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
    );
    assert.equal(canonicalAddress('base', '0x833589fcd6edb6e08f4c7c32d4f71b54bda0291'), null);
    assert.equal(
      canonicalAddress('solana', 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'),
      'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    );
    assert.ok(looksLikeAddress('0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'));
    assert.ok(!looksLikeAddress('pepe'));
    assert.equal(tradeId('bsc', '0xab', 7), 'bsc:0xab:7');
  });
});

describe('core/schemas', () => {
  const token = TypeCompiler.Compile(Token);
  const trade = TypeCompiler.Compile(Trade);
  it('accepts a token object built from the SPEC tables, with and without optional fields', () => {
    const full = sampleToken();
    assert.ok(token.Check(full), JSON.stringify([...token.Errors(full)][0]));
    const minimal = sampleToken();
    for (const key of [
      'anchorAddress',
      'anchorSymbol',
      'annotations',
      'bondingCurvePct',
      'launchpad',
      'graduatedAt',
      'graduatedToPool',
      'graduatedToDex',
      'platforms',
    ])
      delete minimal[key];
    assert.ok(token.Check(minimal));
  });
  it('rejects wrong token objects', () => {
    const noPrice = sampleToken();
    delete noPrice.price;
    assert.ok(!token.Check(noPrice));
    const floatMoney = { ...sampleToken(), price: { native: 0.1, usd: '1' } };
    assert.ok(!token.Check(floatMoney));
    const badChain = { ...sampleToken(), chain: 'ethereum' };
    assert.ok(!token.Check(badChain));
    const missingWindow = sampleToken();
    delete (missingWindow.stats as Record<string, unknown>)['30m'];
    assert.ok(!token.Check(missingWindow));
    const extra = { ...sampleToken(), surprise: 1 };
    assert.ok(!token.Check(extra));
  });
  it('accepts trades, pages, candles, discovery items and error envelopes; rejects wrong ones', () => {
    assert.ok(trade.Check(sampleTrade()));
    assert.ok(!trade.Check({ ...sampleTrade(), side: 'long' }));
    assert.ok(!trade.Check({ ...sampleTrade(), timestamp: '1760000000000' }));
    assert.ok(TypeCompiler.Compile(TradePage).Check({ trades: [sampleTrade()], hasMore: false, nextCursor: null }));
    assert.ok(!TypeCompiler.Compile(TradePage).Check({ trades: [], nextCursor: null }));
    const candle = TypeCompiler.Compile(Candle);
    assert.ok(candle.Check({ time: 1760000000000, open: 1.5, high: 2, low: 1, close: 1.75, volume: 1000 }));
    assert.ok(!candle.Check({ time: 1760000000000, open: '1.5', high: 2, low: 1, close: 1.75, volume: 1000 }));
    const item = TypeCompiler.Compile(DiscoveryItem);
    assert.ok(item.Check({ chain: 'solana', address: 'x', rank: 1, data: sampleToken() }));
    assert.ok(item.Check({ chain: 'solana', address: 'x', rank: null }));
    assert.ok(!item.Check({ chain: 'solana', address: 'x', rank: 0 }));
    const envelope = TypeCompiler.Compile(ErrorEnvelope);
    assert.ok(envelope.Check({ error: { code: 'UNSUPPORTED_CHAIN', message: 'm', details: { chain: 'eth' } } }));
    assert.ok(
      envelope.Check({
        error: { code: 'VALIDATION_ERROR', message: 'm', details: [{ field: 'limit', message: 'x' }] },
      }),
    );
    assert.ok(!envelope.Check({ error: { code: 'TEAPOT', message: 'm' } }));
  });
  it('accepts discovery requests with unknown filters and refuses an empty chain list', () => {
    const request = TypeCompiler.Compile(DiscoveryRequest);
    assert.ok(
      request.Check({
        chains: ['solana'],
        newPairs: {},
        graduated: { sortBy: 'marketCapUsd', limit: 500, filters: { holderCount: { min: 5 }, futureFilter: 1 } },
      }),
    );
    assert.ok(!request.Check({ chains: [], newPairs: {} }));
    assert.ok(!request.Check({ chains: ['solana'], newPairs: { sortBy: 'hype' } }));
  });
  it('validates topic values at the log boundary', () => {
    assert.doesNotThrow(() => assertTopicValue(TOPICS.tokens, sampleToken()));
    assert.throws(() => assertTopicValue(TOPICS.tokens, { ...sampleToken(), supply: 5 }), /spot\.tokens\.v1/);
  });
});

describe('core/config', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({});
    assert.equal(config.httpPort, 8080);
    assert.equal(config.wsPort, 8081);
    assert.equal(config.sqlPort, 8123);
    assert.equal(config.kafkaBrokers, null);
    assert.equal(config.clickhouseUrl, null);
    assert.deepEqual(config.apiKeys, []);
    assert.equal(config.logLevel, 'info');
  });
  it('stops on a bad value, naming the variable', () => {
    assert.throws(
      () => loadConfig({ SPOT_HTTP_PORT: 'eighty' }),
      (e: unknown) => e instanceof ConfigError && e.variable === 'SPOT_HTTP_PORT',
    );
    assert.throws(() => loadConfig({ SPOT_KAFKA_BROKERS: 'nohost' }), /SPOT_KAFKA_BROKERS/);
    assert.throws(() => loadConfig({ SPOT_CLICKHOUSE_URL: 'ftp://x' }), /SPOT_CLICKHOUSE_URL/);
    assert.throws(() => loadConfig({ SPOT_LOG_LEVEL: 'loud' }), /SPOT_LOG_LEVEL/);
    assert.throws(() => loadConfig({ SPOT_API_KEYS: 'short' }), /SPOT_API_KEYS/);
    assert.deepEqual(loadConfig({ SPOT_KAFKA_BROKERS: 'a:9092, b:9093' }).kafkaBrokers, ['a:9092', 'b:9093']);
  });
});

describe('core/slices', () => {
  it('lets timers and other callbacks run in the middle of a long sliced loop', async () => {
    const slicer = createSlicer(2);
    let timerFiredAt = -1;
    setTimeout(() => (timerFiredAt = done), 0);
    const answered = new Promise<number>((resolve) => setImmediate(() => resolve(done)));
    let done = 0;
    const until = performance.now() + 60;
    while (performance.now() < until) {
      done++;
      if (slicer.due()) await slicer.pause();
    }
    // Both ran while the loop still had work, not after its 60 ms.
    assert.ok(timerFiredAt >= 0 && timerFiredAt < done, `timer at ${timerFiredAt} of ${done}`);
    assert.ok((await answered) < done);
  });

  it('resumes one sliced loop per event-loop turn, taking turns, so the loop polls between any two slices', async () => {
    // A timer that is always due runs once per turn: the slices begun between two of its runs are
    // what one turn held the loop for. Each slice runs its full 2 ms, longer than a timer's 1 ms.
    const slicesPerTurn: number[] = [0];
    const order: string[] = [];
    const turns = setInterval(() => slicesPerTurn.push(0), 0);
    const loop = async (name: string) => {
      const slicer = createSlicer(2);
      for (let slice = 0; slice < 10; slice++) {
        if (slice > 0) await slicer.pause();
        order.push(name);
        slicesPerTurn[slicesPerTurn.length - 1]!++;
        while (!slicer.due()) {
          // a slice's work
        }
      }
    };
    await Promise.all([loop('a'), loop('b')]);
    clearInterval(turns);
    // The two first slices start together, before either has paused; every later turn holds one.
    assert.deepEqual(
      slicesPerTurn.slice(1).filter((n) => n > 1),
      [],
      JSON.stringify(slicesPerTurn),
    );
    // Taking turns: neither runs two slices in a row while the other waits.
    assert.equal(order.join(''), 'ab'.repeat(10));
  });
});

describe('core/memo', () => {
  it('stays within its bound and keeps the keys in use when the others turn over', () => {
    const memo = createMemo<string>(1_000);
    let derived = 0;
    const derive = (key: string) => {
      derived++;
      return `v:${key}`;
    };
    const memoGet = (key: string) => memo.get(key) ?? memo.set(key, derive(key));
    for (let i = 0; i < 20_000; i++) {
      // One hot key asked between cold ones that each come once.
      assert.equal(memoGet('hot'), 'v:hot');
      assert.equal(memoGet(`cold${i}`), `v:cold${i}`);
      assert.ok(memo.size <= 1_000, `size ${memo.size}`);
    }
    // Each cold key derived once and the hot key once, however often the generations turned over.
    assert.equal(derived, 20_001);
    // A key that fell out of both generations is derived again, not lost.
    assert.equal(memoGet('cold0'), 'v:cold0');
    assert.equal(derived, 20_002);
  });
});

describe('core/text', () => {
  it('reads UTF-8 bytes as Buffer#toString does, ASCII or not', () => {
    const cases = [
      Buffer.from('{"jsonrpc":"2.0","result":[1,2,3]}'),
      Buffer.from(''),
      Buffer.from('{"name":"tök 🙂","symbol":"Ω"}'),
      Buffer.from([0x7b, 0xff, 0xfe, 0x22, 0x7d]), // not UTF-8: replacement characters, as toString gives
      Buffer.from('x'.repeat(300_000)),
    ];
    for (const bytes of cases) assert.equal(textOf(bytes), bytes.toString('utf8'));
  });
});
