// Raydium AMM v4 `ray_log` (bincode: LE integers, no padding), swap records only.
export const RAY_LOG_PREFIX = 'Program log: ray_log: ';

export interface RaySwapLog {
  kind: 'swapBaseIn' | 'swapBaseOut';
  /** 1 = PC2Coin (pc in, coin out), 2 = Coin2PC */
  direction: bigint;
  userSource: bigint;
  /** Pool reserves before the swap. */
  poolCoin: bigint;
  poolPc: bigint;
  /** What the user paid and received (base-in: amount_in/out_amount; base-out: deduct_in/amount_out). */
  amountIn: bigint;
  amountOut: bigint;
  /** base-in: minimum_out; base-out: max_in. */
  limit: bigint;
}

const SWAP_LENGTH = 57;

/** Null for the non-swap log types (init, deposit, withdraw) and malformed lines. */
export function parseRayLog(base64: string): RaySwapLog | null {
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length < SWAP_LENGTH) return null;
  const type = bytes.readUInt8(0);
  if (type !== 3 && type !== 4) return null;
  const word = (i: number) => bytes.readBigUInt64LE(1 + 8 * i);
  const common = { direction: word(2), userSource: word(3), poolCoin: word(4), poolPc: word(5) };
  if (common.direction !== 1n && common.direction !== 2n) return null;
  return type === 3
    ? { kind: 'swapBaseIn', ...common, amountIn: word(0), limit: word(1), amountOut: word(6) }
    : { kind: 'swapBaseOut', ...common, limit: word(0), amountOut: word(1), amountIn: word(6) };
}

export function encodeRayLog(log: RaySwapLog): string {
  const bytes = Buffer.alloc(SWAP_LENGTH);
  bytes.writeUInt8(log.kind === 'swapBaseIn' ? 3 : 4, 0);
  const words =
    log.kind === 'swapBaseIn'
      ? [log.amountIn, log.limit, log.direction, log.userSource, log.poolCoin, log.poolPc, log.amountOut]
      : [log.limit, log.amountOut, log.direction, log.userSource, log.poolCoin, log.poolPc, log.amountIn];
  words.forEach((word, i) => bytes.writeBigUInt64LE(word, 1 + 8 * i));
  return bytes.toString('base64');
}
