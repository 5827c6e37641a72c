// A key store with one key, and budgets large enough that the bench measures speed, not limits.
import path from 'node:path';
import type { Context } from '../../core/context.ts';
import { createKeyStore, type KeyStore } from '../../core/auth/keys.ts';
import { createRateLimiter, type RateLimiter } from '../../core/auth/rate-limit.ts';

export const BENCH_BUDGET_PER_MINUTE = 1_000_000_000;

export interface BenchKeys {
  keys: KeyStore;
  authorization: string;
  limiters: { key: RateLimiter; ip: RateLimiter };
  close(): void;
}

export function benchKeys(ctx: Context): BenchKeys {
  const keys = createKeyStore(ctx, { path: path.join(ctx.config.dataDir, 'keys.sqlite') });
  const { key } = keys.create({ label: 'bench' });
  const limiters = {
    key: createRateLimiter({ perMinute: BENCH_BUDGET_PER_MINUTE }),
    ip: createRateLimiter({ perMinute: BENCH_BUDGET_PER_MINUTE }),
  };
  return {
    keys,
    authorization: `Bearer ${key}`,
    limiters,
    close() {
      limiters.key.stop();
      limiters.ip.stop();
      keys.close();
    },
  };
}
