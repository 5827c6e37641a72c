// `spot keys create|list|revoke`.
import type { Context } from '../core/context.ts';
import { keysCommand as runKeys } from '../query-api/keys-cli.ts';

export async function keysCommand(ctx: Context, args: string[]): Promise<number> {
  return runKeys(ctx, args, process.stdout);
}
