// Token buckets: capacity = a full minute's budget (spendable at once), refilled evenly at
// budget/60 per second. An idle bucket refills to full, which is the same as no bucket, so
// idle buckets are dropped: memory stays bounded by the callers active in the last minute.

export interface RateDecision {
  allowed: boolean;
  /** Whole requests left after this one (0 when refused). */
  remaining: number;
  /** Seconds until one request is allowed again: whole, at least 1 (meaningful when refused). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /** Spends one request of `id`'s budget when there is one. */
  take(id: string, now?: number): RateDecision;
  /** Requests left without spending any. */
  remaining(id: string, now?: number): number;
  /** Buckets currently held (tests and metrics). */
  size(): number;
  stop(): void;
}

export interface RateLimiterOptions {
  /** Requests per minute. */
  perMinute: number;
  /** Hard cap on buckets kept; beyond it the least recently created idle-most buckets go first. */
  maxBuckets?: number;
  /** How often idle buckets are swept, ms. */
  sweepIntervalMs?: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export const KEY_BUDGET_PER_MINUTE = 12_000;
export const IP_BUDGET_PER_MINUTE = 60_000;

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const capacity = options.perMinute;
  if (!(capacity > 0)) throw new RangeError('perMinute must be positive');
  const perMs = capacity / 60_000;
  const fullAfterMs = 60_000;
  const maxBuckets = options.maxBuckets ?? 200_000;
  const buckets = new Map<string, Bucket>();

  const refill = (bucket: Bucket, now: number) => {
    if (now > bucket.updatedAt) {
      bucket.tokens = Math.min(capacity, bucket.tokens + (now - bucket.updatedAt) * perMs);
      bucket.updatedAt = now;
    }
  };

  const sweep = (now: number) => {
    for (const [id, bucket] of buckets) {
      if (now - bucket.updatedAt >= fullAfterMs) buckets.delete(id);
    }
    // Still too many active callers: drop the oldest entries (they restart with a full budget).
    if (buckets.size >= maxBuckets) {
      let excess = buckets.size - maxBuckets + 1;
      for (const id of buckets.keys()) {
        if (excess-- <= 0) break;
        buckets.delete(id);
      }
    }
  };

  const timer = setInterval(() => sweep(Date.now()), options.sweepIntervalMs ?? 30_000);
  timer.unref();

  return {
    take(id, now = Date.now()) {
      let bucket = buckets.get(id);
      if (!bucket) {
        if (buckets.size >= maxBuckets) sweep(now);
        bucket = { tokens: capacity, updatedAt: now };
        buckets.set(id, bucket);
      } else {
        refill(bucket, now);
      }
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return { allowed: true, remaining: Math.floor(bucket.tokens), retryAfterSeconds: 0 };
      }
      const waitMs = (1 - bucket.tokens) / perMs;
      return { allowed: false, remaining: 0, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
    },
    remaining(id, now = Date.now()) {
      const bucket = buckets.get(id);
      if (!bucket) return capacity;
      refill(bucket, now);
      return Math.floor(bucket.tokens);
    },
    size() {
      return buckets.size;
    },
    stop() {
      clearInterval(timer);
    },
  };
}
