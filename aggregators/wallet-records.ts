// Which live tokens hold an in-memory holder record of each wallet in memory (embedded, with a
// wallet store): when a wallet parks, its records in those tokens follow it to disk at the next
// holder slice, instead of waiting for the pass through every live token's records, which took
// about two and a half minutes of a busy main thread on the spread mainnet market (515k records in
// memory at minute 25). Derived and partial: records that come back another way (a token unparked
// or reloaded, the holder index reading a parked row back, a restart) are left to that pass.

export interface WalletRecords {
  /** The wallet's record in the token came into memory (wallet and token keys, `chain:address`). */
  entered(wallet: string, token: string): void;
  /** The wallets left memory: their records are due to follow. */
  left(wallets: Iterable<string>): void;
  /** The next wallet that left memory, with the tokens its records were in; undefined when none is due. */
  nextDue(): [wallet: string, tokens: string[]] | undefined;
}

/** A wallet's list is pruned of records no longer in memory each time it doubles past this length. */
const PRUNE_FROM = 16;

/** `inMemory(wallet, token)`: whether the wallet's record in that token is still in memory. */
export function createWalletRecords(inMemory: (wallet: string, token: string) => boolean): WalletRecords {
  const tokensOf = new Map<string, string[]>();
  const due: Array<[string, string[]]> = [];
  let nextDue = 0;
  return {
    entered(wallet, token) {
      let tokens = tokensOf.get(wallet);
      if (!tokens) tokensOf.set(wallet, (tokens = []));
      else if (tokens.includes(token)) return;
      // A wallet in memory for hours (a bot) would otherwise keep every token it ever touched.
      if (tokens.length >= PRUNE_FROM && (tokens.length & (tokens.length - 1)) === 0) {
        tokens = tokens.filter((key) => inMemory(wallet, key));
        tokensOf.set(wallet, tokens);
      }
      tokens.push(token);
    },
    left(wallets) {
      for (const wallet of wallets) {
        const tokens = tokensOf.get(wallet);
        if (!tokens) continue;
        tokensOf.delete(wallet);
        due.push([wallet, tokens]);
      }
    },
    nextDue() {
      if (nextDue === due.length) return undefined;
      const next = due[nextDue++];
      // Taken from the front without shifting: the array is dropped once emptied.
      if (nextDue === due.length) {
        due.length = 0;
        nextDue = 0;
      }
      return next;
    },
  };
}
