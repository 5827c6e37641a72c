// `spot decode [--chain C] [FILE|-]`: a Solana getTransaction result or an EVM receipt in,
// the decoded raw swaps and token events out as JSON lines.
import fs from 'node:fs';
import type { Context } from '../core/context.ts';
import { createMetrics, type Metrics } from '../core/metrics.ts';
import { isChain, type Chain } from '../core/chains.ts';
import { decodeSolanaJson } from '../ingest/solana/index.ts';
import { decodeEvmJson } from '../ingest/evm/index.ts';

async function readInput(file: string | undefined): Promise<string> {
  if (file && file !== '-') {
    try {
      return fs.readFileSync(file, 'utf8');
    } catch (error) {
      throw new InputError(`cannot read ${file}: ${(error as Error).message}`);
    }
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

class InputError extends Error {}

/** Why an EVM input gave nothing, from the decoder's skip counters; null when nothing was skipped. */
function skippedHint(metrics: Metrics, chain: Chain): string | null {
  const prefix = `ingest.evm.${chain}.skipped_`;
  const skipped = Object.entries(metrics.snapshot())
    .filter(([name, n]) => name.startsWith(prefix) && n > 0)
    .map(([name, n]) => [name.slice(prefix.length), n] as const);
  if (skipped.length === 0) return null;
  const why: Record<string, string> = {
    unknown_pool:
      'a swap in a pool whose creation is not in the input (decode without RPC knows only pools created in the same input: pass [creationReceipt, swapReceipt] as one array)',
    unknown_decimals: 'a token whose decimals are unknown (add "decimals": {"<token address>": 18} beside the receipt)',
    reverted: 'a reverted receipt (status 0x0)',
    undecodable: 'a known event whose log does not fit its layout',
  };
  return skipped.map(([what, n]) => `${n} log(s) skipped, ${what}: ${why[what] ?? what}`).join('\n');
}

/** A Solana transaction has transaction.message; an EVM receipt has logs. */
function looksSolana(value: unknown): boolean {
  const body = (value as { result?: unknown })?.result ?? value;
  const first = Array.isArray(body) ? body[0] : body;
  return typeof first === 'object' && first !== null && 'transaction' in first && !('logs' in first);
}

export async function decodeCommand(ctx: Context, args: string[]): Promise<number> {
  let chain: Chain | undefined;
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--chain' || arg.startsWith('--chain=')) {
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[++i];
      if (!value || !isChain(value)) {
        process.stderr.write(`spot decode: --chain must be one of solana, base, bsc, robinhood, arc\n`);
        return 2;
      }
      chain = value;
    } else {
      files.push(arg);
    }
  }
  if (files.length > 1) {
    process.stderr.write(`spot decode: one input at a time (FILE or - for stdin), got ${files.length}\n`);
    return 2;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readInput(files[0]));
  } catch (error) {
    process.stderr.write(
      error instanceof InputError
        ? `spot decode: ${error.message}\n`
        : `spot decode: input is not JSON: ${(error as Error).message}\n`,
    );
    return 1;
  }
  const target: Chain | undefined = chain ?? (looksSolana(parsed) ? 'solana' : undefined);
  if (!target) {
    process.stderr.write('spot decode: an EVM receipt needs --chain base|bsc|robinhood|arc\n');
    return 2;
  }
  try {
    const metrics = createMetrics();
    const records =
      target === 'solana'
        ? decodeSolanaJson(parsed, { logger: ctx.logger })
        : decodeEvmJson(target, parsed, { metrics });
    for (const event of records.events) process.stdout.write(JSON.stringify({ type: 'tokenEvent', ...event }) + '\n');
    for (const swap of records.swaps) process.stdout.write(JSON.stringify({ type: 'swap', ...swap }) + '\n');
    if (records.swaps.length === 0 && records.events.length === 0) {
      const hint = target === 'solana' ? null : skippedHint(metrics, target);
      process.stderr.write(`spot decode: no swaps or token events in the input${hint ? `\n${hint}` : ''}\n`);
    }
    return 0;
  } catch (error) {
    process.stderr.write(`spot decode: ${(error as Error).message}\n`);
    return 1;
  }
}
