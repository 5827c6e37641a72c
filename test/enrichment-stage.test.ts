import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../core/config.ts';
import { createContext } from '../core/context.ts';
import { createLogger } from '../core/logger.ts';
import { isTopicValue, TOPICS, type TokenEvent } from '../core/topics.ts';
import { simAnswerOf } from '../ingest/enrichment/sim-metadata-server.ts';
import { startSimEnrichment, SIM_METADATA_HOST } from '../ingest/enrichment/sim-enrichment.ts';
import type { IngestPublisher, IngestRecords } from '../ingest/publisher.ts';
import { solanaAddress } from '../ingest/solana/address.ts';
import { seedAddress } from '../ingest/evm/index.ts';
import { twitterHandle } from '../query-api/discovery-filters.ts';
import { base58Encode } from '../ingest/solana/base58.ts';
import { TOKEN_PROGRAM } from '../ingest/solana/constants.ts';
import type { SolanaTransaction } from '../ingest/solana/transaction.ts';

describe('enrichment: stage on the simulator', function () {
  this.timeout(60_000);

  it('answers the simulated launches with metadata (socials, reused handles, hostile hosts skipped) and varied security facts', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-enrich-'));
    const ctx = createContext(loadConfig({ SPOT_DATA_DIR: dir }), createLogger('silent'));
    const stage = await startSimEnrichment(ctx, {
      seed: 7,
      chains: ['solana', 'bsc'],
      slowMs: 2_000,
      fetchTimeoutMs: 300,
    });
    const published: IngestRecords[] = [];
    const inner: IngestPublisher = {
      async publish(records) {
        published.push(records);
      },
      async flush() {},
    };
    const publisher = stage.wrap(inner);
    const created = (chain: 'solana' | 'bsc', n: number): TokenEvent => {
      const token = chain === 'solana' ? solanaAddress(`stage:${n}`) : seedAddress(`stage:${n}`);
      return {
        id: `${chain}:tx${n}:0`,
        chain,
        transactionHash: `tx${n}`,
        eventIndex: 0,
        blockNumber: n,
        blockTime: 1_700_000_000_000 + n,
        kind: 'created',
        token,
        name: `T${n}`,
        symbol: `T${n}`,
        uri: chain === 'solana' ? `https://${SIM_METADATA_HOST}/meta/solana/t${n}.json` : '',
        decimals: chain === 'solana' ? 6 : 18,
        supply: '1000',
        creator: chain === 'solana' ? solanaAddress('creator') : seedAddress('creator'),
        launchpad: null,
        pool: chain === 'solana' ? null : seedAddress(`stage pair ${n}`),
        quoteAsset: null,
      };
    };
    const N = 200;
    const events = [
      ...Array.from({ length: N }, (_, n) => created('solana', n)),
      ...Array.from({ length: 60 }, (_, n) => created('bsc', n)),
    ];
    const started = Date.now();
    await publisher.publish({ swaps: [], events });
    assert.ok(Date.now() - started < 200, 'publishing does not wait for enrichment');
    await stage.idle();
    stage.close();

    const out = published.slice(1).flatMap((r) => r.events);
    for (const e of out) assert.ok(isTopicValue(TOPICS.tokenEvents, e), JSON.stringify(e));
    const metadata = out.filter((e) => e.kind === 'metadata');
    const okPaths = Array.from({ length: N }, (_, n) => `/meta/solana/t${n}.json`).filter(
      (p) => simAnswerOf(7, p) === 'ok' || simAnswerOf(7, p) === 'slow' || simAnswerOf(7, p) === 'wrong-types',
    );
    // ok answers become events; hostile ones (bad JSON, UTF-8, huge, 404, 503, too slow) do not
    assert.ok(
      metadata.length >= okPaths.length * 0.9 && metadata.length <= okPaths.length,
      `${metadata.length} of ${okPaths.length}`,
    );
    const withTwitter = metadata.filter((e) => e.kind === 'metadata' && e.twitter !== null);
    assert.ok(withTwitter.length > metadata.length * 0.35 && withTwitter.length < metadata.length * 0.75);
    const handles = withTwitter.map((e) => (e.kind === 'metadata' ? twitterHandle(e.twitter) : null));
    assert.ok(new Set(handles).size < handles.length, 'some handles are reused');

    const security = out.filter((e) => e.kind === 'security');
    assert.equal(security.length, N + 60, 'one security event per created token');
    const facts = (pick: (e: Extract<TokenEvent, { kind: 'security' }>) => unknown) =>
      new Set(security.map((e) => (e.kind === 'security' ? JSON.stringify(pick(e)) : '')));
    assert.deepEqual(facts((e) => e.mintDisabled).size, 2, 'both minting states occur');
    assert.deepEqual(facts((e) => e.transferBlockable).size, 2, 'both transfer states occur');
    assert.ok(facts((e) => e.transferFeeBps).size >= 3, 'several transfer fees occur');
    assert.ok(facts((e) => e.lpBurntPct).size >= 2, 'LP burnt shares vary on EVM pairs');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reads token-program changes of a decoded Solana transaction: an authority change re-reads the mint', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spot-enrich-'));
    const ctx = createContext(loadConfig({ SPOT_DATA_DIR: dir }), createLogger('silent'));
    const stage = await startSimEnrichment(ctx, { seed: 7, chains: ['solana'] });
    const published: IngestRecords[] = [];
    stage.wrap({ publish: async (r) => void published.push(r), flush: async () => {} });
    const payer = solanaAddress('stage payer');
    const mint = solanaAddress('stage mint');
    const tx = (err: unknown): SolanaTransaction => ({
      slot: 9,
      blockTime: 1_700_000_000,
      transaction: {
        signatures: ['sigAuth'],
        message: {
          accountKeys: [payer, mint, TOKEN_PROGRAM],
          // SetAuthority(MintTokens → None)
          instructions: [{ programIdIndex: 2, accounts: [1, 0], data: base58Encode(Uint8Array.from([6, 0, 0])) }],
        },
      },
      meta: { err, fee: 5000, innerInstructions: [], logMessages: [] },
    });
    stage.observeSolana(tx({ InstructionError: [0, 'Custom'] }), { swaps: [], events: [] });
    await stage.idle();
    assert.equal(published.length, 0, 'a failed transaction changed nothing');
    stage.observeSolana(tx(null), { swaps: [], events: [] });
    await stage.idle();
    stage.close();
    const [event] = published.flatMap((r) => r.events);
    assert.equal(event?.kind, 'security');
    assert.equal(event?.token, mint);
    assert.equal(event?.id, `solana:sigAuth:0:security:${mint}`);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
