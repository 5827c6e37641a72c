// Token events applied to the state: creation, curve, graduation, metadata, security, balances
// (solana, absolute), transfers (EVM, deltas), paid promotions, wallet labels and funding. Holders
// come only from here.
import { CHAIN_INFO, normalizeAddress, tokenKey, type Chain } from '../core/chains.ts';
import { ZERO, fromUnits, mul } from '../core/decimal.ts';
import type { TokenEvent } from '../core/topics.ts';
import { walletKey } from './wallet-facts.ts';
import { holderChanged, holdersReset, setHolderRec } from './holder-index.ts';
import { attrsOf, balOf, withAttrs } from './holder-records.ts';
import { markOf } from './pricing.ts';
import type { BatchOutput } from './contracts.ts';
import { clampPct } from './format.ts';
import {
  ATTR,
  type AggregatorState,
  type HolderRec,
  type Promotion,
  type TokenState,
  type WalletState,
} from './state.ts';

/** Promotions kept per token: the newest, so a token bought promotions for years stays small. */
export const MAX_PROMOTIONS = 10;

/**
 * Adds a paid promotion: one per platform and payment time, newest first (ties by platform), the
 * newest MAX_PROMOTIONS kept. The result is the same set whatever order the events came in, so a
 * replay gives the same list.
 */
export function addPromotion(t: TokenState, promotion: Promotion): void {
  const list = t.promotions ?? [];
  if (list.some((p) => p.platform === promotion.platform && p.paidAt === promotion.paidAt)) return;
  list.push({ platform: promotion.platform, paidAt: promotion.paidAt });
  list.sort((a, b) => b.paidAt - a.paidAt || (a.platform < b.platform ? -1 : a.platform > b.platform ? 1 : 0));
  if (list.length > MAX_PROMOTIONS) list.length = MAX_PROMOTIONS;
  t.promotions = list;
}

/** The state accessors the processor shares with the token-event handlers. */
export interface StateOps {
  state: AggregatorState;
  wallet(chain: Chain, address: string): WalletState;
  /** The wallet's facts if it has any (not created). */
  peekWallet(chain: Chain, address: string): WalletState | undefined;
  /** Records the wallet's activity at an event time (wallet-facts.ts). */
  touch(wallet: WalletState, time: number): void;
  token(chain: Chain, address: string, decimals: number, time: number): TokenState;
  holder(t: TokenState, address: string): HolderRec;
  /** `key` is tokenKey(t.chain, t.address). */
  setBalance(t: TokenState, key: string, address: string, bal: bigint, time: number, out: BatchOutput): void;
  /** After a change of the wallet's facts: its holdings' figures and tokens change with it. */
  markWallet(w: WalletState, address: string, out: BatchOutput): void;
}

export function applyTokenEvent(ops: StateOps, e: TokenEvent, raw: string, out: BatchOutput): void {
  const { state, wallet, peekWallet, touch, token, holder, setBalance, markWallet } = ops;
  const chain = e.chain;
  const tokenAddress = e.token === null ? '' : normalizeAddress(chain, e.token);
  out.tokenEvents.push({ id: e.id, chain, token: tokenAddress, kind: e.kind, blockTime: e.blockTime, body: raw });
  if (e.kind === 'walletLabel') {
    const address = normalizeAddress(chain, e.wallet);
    const w = wallet(chain, address);
    touch(w, e.blockTime);
    w.labels = [...e.labels];
    w.name = e.name;
    out.labels.set(walletKey(chain, address), {
      chain,
      wallet: address,
      labels: w.labels,
      name: e.name,
      updatedAt: e.blockTime,
    });
    markWallet(w, address, out);
  } else if (e.kind === 'funding') {
    const to = normalizeAddress(chain, e.to);
    const from = normalizeAddress(chain, e.from);
    const w = wallet(chain, to);
    touch(w, e.blockTime);
    // concat, not push: a first push gives the array room for 17 (152 B), and most wallets keep one.
    if (!w.fundedBy.includes(from) && w.fundedBy.length < 16) w.fundedBy = w.fundedBy.concat(from);
    if (!w.funder) {
      const amountN = fromUnits(e.amount, CHAIN_INFO[chain].native.decimals);
      const label = e.fromLabel ?? peekWallet(chain, from)?.labels.find((l) => l.startsWith('cex:')) ?? null;
      w.funder = { from, label, amountN, amountU: mul(amountN, markOf(state.marks, chain)), at: e.blockTime };
    }
    markWallet(w, to, out);
  } else {
    const address = tokenAddress;
    const key = tokenKey(chain, address);
    const t = token(chain, address, e.kind === 'created' ? e.decimals : 0, e.blockTime);
    if (e.blockTime > t.updatedAt) t.updatedAt = e.blockTime;
    out.changed.add(key);
    switch (e.kind) {
      case 'created': {
        t.known = true;
        t.name = e.name;
        t.symbol = e.symbol;
        t.decimals = e.decimals;
        t.supply = BigInt(e.supply);
        t.supplyHuman = fromUnits(e.supply, e.decimals);
        t.creator = normalizeAddress(chain, e.creator);
        t.createdAt = e.blockTime;
        t.createdBlock = e.blockNumber;
        t.launchpad = e.launchpad ?? t.launchpad;
        if (e.mayhemMode) t.mayhem = true;
        if (e.pool) {
          const pool = normalizeAddress(chain, e.pool);
          if (!t.pools.has(pool)) {
            const quote = e.quoteAsset ? normalizeAddress(chain, e.quoteAsset) : CHAIN_INFO[chain].native.wrapped;
            t.pools.set(pool, { dex: e.launchpad ?? '', quote, curve: false, liqN: ZERO, liqU: ZERO });
          }
        }
        const creator = wallet(chain, t.creator);
        if (!creator.created.includes(key)) creator.created = creator.created.concat(key);
        holdersReset(t); // creator, supply and pools
        break;
      }
      case 'curve':
        if (t.graduatedAt === null) t.bondingCurvePct = clampPct(e.progressPct);
        break;
      case 'graduated': {
        t.graduatedAt = e.blockTime;
        t.graduatedToPool = normalizeAddress(chain, e.pool);
        t.graduatedToDex = e.dex;
        t.bondingCurvePct = '100';
        for (const ps of t.pools.values()) {
          if (ps.curve) {
            ps.liqN = ZERO;
            ps.liqU = ZERO;
          }
        }
        const pool = normalizeAddress(chain, e.pool);
        if (!t.pools.has(pool)) {
          const anyQuote = [...t.pools.values()][0]?.quote ?? CHAIN_INFO[chain].native.wrapped;
          t.pools.set(pool, { dex: e.dex, quote: anyQuote, curve: false, liqN: ZERO, liqU: ZERO });
          holderChanged(t, pool); // a pool is no holder
        }
        break;
      }
      case 'metadata':
        t.metadata = {
          description: e.description,
          twitter: e.twitter,
          website: e.website,
          telegram: e.telegram,
          discord: e.discord,
        };
        break;
      case 'security':
        if (e.mintDisabled !== undefined) t.security.mintDisabled = e.mintDisabled;
        if (e.transferBlockable !== undefined) t.security.transferBlockable = e.transferBlockable;
        if (e.lpBurntPct !== undefined) t.security.lpBurntPct = clampPct(e.lpBurntPct);
        if (e.transferFeeBps !== undefined) t.security.transferFeeBps = e.transferFeeBps;
        break;
      case 'promotion':
        addPromotion(t, { platform: e.platform, paidAt: e.paidAt });
        break;
      case 'balance':
        setBalance(t, key, normalizeAddress(chain, e.owner), BigInt(e.amount), e.blockTime, out);
        break;
      case 'transfer': {
        const from = normalizeAddress(chain, e.from);
        const to = normalizeAddress(chain, e.to);
        const amount = BigInt(e.amount);
        if (from !== '0x0000000000000000000000000000000000000000')
          setBalance(t, key, from, balOf(holder(t, from)) - amount, e.blockTime, out);
        setBalance(t, key, to, balOf(holder(t, to)) + amount, e.blockTime, out);
        if (t.creator !== '' && from === t.creator && to !== t.creator) {
          const h = holder(t, to);
          setHolderRec(t, to, h, withAttrs(h, attrsOf(h) | ATTR.insider));
        }
        break;
      }
    }
  }
}
