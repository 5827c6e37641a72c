// Wallet facts, a keyed stage of their own (wallet key → WalletState): labels, first funding and
// funders, trade count, and which tokens' figures depend on the wallet (held, created). Token
// state reads them; they are chain-wide (every distributed instance keeps all of them). A wallet
// that holds nothing, created nothing, carries no label and was idle for WALLET_IDLE_MS of its
// chain's event time is forgotten (docs/holders.md): memory follows the active wallets.
import { tokenKey, type Chain } from '../core/chains.ts';
import type { WalletState } from './state.ts';

export const WALLET_IDLE_MS = 24 * 3_600_000;
/** Idle wallets are looked for each time a chain's watermark enters a new hour. */
export const WALLET_EXPIRY_TICK_MS = 3_600_000;

export interface WalletFacts {
  /** The wallet's facts, created empty when it has none. */
  get(chain: Chain, address: string): WalletState;
  /** The wallet's facts, if it has any. */
  peek(chain: Chain, address: string): WalletState | undefined;
  /** Records activity at `time` (event time): a trade, a funding received, a label, a balance change. */
  touch(wallet: WalletState, time: number): void;
  /** The chain's watermark moved from `old` to `time`: on a new hour, forgets its idle wallets. */
  tick(chain: Chain, old: number, time: number): number;
}

/** A wallet's key in the wallet-facts stage: `chain:address`, as token keys. */
export function walletKey(chain: Chain, wallet: string): string {
  return tokenKey(chain, wallet);
}

export const newWallet = (at: number): WalletState => ({
  labels: [],
  name: null,
  funder: null,
  fundedBy: [],
  trades: 0,
  created: [],
  at,
});

/** True when nothing depends on the wallet's facts but its own future trades. */
function unpinned(w: WalletState): boolean {
  return w.held === undefined && w.created.length === 0 && w.labels.length === 0;
}

const NONE: ReadonlySet<string> = new Set();

/** The tokens the wallet holds a balance of. */
export const holdings = (w: WalletState): ReadonlySet<string> => w.held ?? NONE;

/** Records whether the wallet holds a balance of the token (the set exists only while non-empty). */
export function setHolding(w: WalletState, key: string, holds: boolean): void {
  if (holds) (w.held ??= new Set()).add(key);
  else if (w.held?.delete(key) && w.held.size === 0) w.held = undefined;
}

export function createWalletFacts(wallets: Map<string, WalletState>, options: { expire: boolean }): WalletFacts {
  return {
    get(chain, address) {
      const key = walletKey(chain, address);
      let w = wallets.get(key);
      if (!w) wallets.set(key, (w = newWallet(0)));
      return w;
    },

    peek: (chain, address) => wallets.get(walletKey(chain, address)),

    touch(w, time) {
      if (time > w.at) w.at = time;
    },

    tick(chain, old, time) {
      if (!options.expire || Math.floor(time / WALLET_EXPIRY_TICK_MS) === Math.floor(old / WALLET_EXPIRY_TICK_MS))
        return 0;
      const prefix = `${chain}:`;
      const idleBefore = time - WALLET_IDLE_MS;
      let forgotten = 0;
      for (const [key, w] of wallets) {
        if (w.at <= idleBefore && unpinned(w) && key.startsWith(prefix)) {
          wallets.delete(key);
          forgotten++;
        }
      }
      return forgotten;
    },
  };
}
