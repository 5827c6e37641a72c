// `spot decode [--chain C] [FILE|-]`: a Solana getTransaction result or an EVM receipt in,
// the decoded raw swaps and token events out as JSON lines.
import fs from 'node:fs';
import type { Context } from '../core/context.ts';
import { isChain, type Chain } from '../core/chains.ts';
import { decodeSolanaJson } from '../ingest/solana/index.ts';
import { decodeEvmJson } from '../ingest/evm/index.ts';

async function readInput(file: string | undefined): Promise<string> {
  if (file && file !== '-') return fs.readFileSync(file, 'utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
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
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readInput(files[0]));
  } catch (error) {
    process.stderr.write(`spot decode: input is not JSON: ${(error as Error).message}\n`);
    return 1;
  }
  const target: Chain | undefined = chain ?? (looksSolana(parsed) ? 'solana' : undefined);
  if (!target) {
    process.stderr.write('spot decode: an EVM receipt needs --chain base|bsc|robinhood|arc\n');
    return 2;
  }
  try {
    const records = target === 'solana' ? decodeSolanaJson(parsed, { logger: ctx.logger }) : decodeEvmJson(target, parsed);
    for (const event of records.events) process.stdout.write(JSON.stringify({ type: 'tokenEvent', ...event }) + '\n');
    for (const swap of records.swaps) process.stdout.write(JSON.stringify({ type: 'swap', ...swap }) + '\n');
    return 0;
  } catch (error) {
    process.stderr.write(`spot decode: ${(error as Error).message}\n`);
    return 1;
  }
}
