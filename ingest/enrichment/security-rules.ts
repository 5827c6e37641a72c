// The security rules: chain facts in, the token's security fields out. Each rule is written in
// docs/token-fields.md; the readers (security-resolver.ts) only gather the facts.
import { toFunctionSelector } from 'viem';
import { toFixedString, pct, fromInt } from '../../core/decimal.ts';
import type { MintFacts } from '../solana/mint-account.ts';

export interface SecurityFields {
  mintDisabled?: boolean;
  transferBlockable?: boolean;
  lpBurntPct?: string;
  transferFeeBps?: number;
}

/**
 * Solana mint: minting is disabled once the mint authority is None; transfers can be blocked by a
 * freeze authority or by Token-2022 extensions (permanent delegate, default frozen state, transfer
 * hook, non-transferable, pausable); the transfer fee is the fee of the current epoch.
 */
export function solanaMintSecurity(facts: MintFacts): SecurityFields {
  return {
    mintDisabled: facts.mintAuthority === null,
    transferBlockable:
      facts.freezeAuthority !== null ||
      facts.permanentDelegate !== null ||
      facts.defaultFrozen ||
      facts.transferHookProgram !== null ||
      facts.nonTransferable ||
      facts.pausable,
    transferFeeBps: facts.transferFeeBps,
  };
}

/** Share of an LP token's issued supply that is burnt, in percent with 2 decimals ("0" when none issued). */
export function lpBurntPct(burnt: bigint, issued: bigint): string {
  if (issued <= 0n || burnt <= 0n) return '0';
  const capped = burnt > issued ? issued : burnt;
  return toFixedString(pct(fromInt(capped), fromInt(issued)), 2);
}

const selector = (signature: string) => toFunctionSelector(signature).slice(2);

/** Function selectors looked for in a contract's bytecode, by what they let an owner do. */
export const EVM_PRIVILEGES = {
  mint: ['mint(address,uint256)', 'mint(uint256)', 'mintTo(address,uint256)', 'issue(uint256)'].map(selector),
  blacklist: [
    'blacklist(address)',
    'addToBlacklist(address)',
    'setBlacklist(address,bool)',
    'addBlackList(address)',
    'blacklistAddress(address,bool)',
    'isBlacklisted(address)',
    'setBots(address[])',
  ].map(selector),
  pause: ['pause()', 'setPaused(bool)', 'paused()'].map(selector),
  maxTx: [
    'maxTxAmount()',
    '_maxTxAmount()',
    'maxTransactionAmount()',
    'setMaxTxAmount(uint256)',
    'maxWalletSize()',
    '_maxWalletSize()',
  ].map(selector),
} as const;

/** Selectors a contract dispatches on: every PUSH4 operand (solc's dispatcher compares calldata with them). */
export function bytecodeSelectors(code: string): Set<string> {
  const bytes = Buffer.from(code.replace(/^0x/, ''), 'hex');
  const out = new Set<string>();
  for (let i = 0; i < bytes.length; i++) {
    const op = bytes[i]!;
    if (op === 0x63 && i + 4 < bytes.length) out.add(bytes.subarray(i + 1, i + 5).toString('hex'));
    if (op >= 0x60 && op <= 0x7f) i += op - 0x5f; // skip every PUSH operand: data is no opcode
  }
  return out;
}

export interface EvmContractFacts {
  selectors: Set<string>;
  /** owner()/getOwner() answer; undefined when the contract has neither. */
  owner: string | undefined;
  /** A small transfer out of the pool, simulated: null when it could not be simulated. */
  smallTransfer: SimulatedTransfer | null;
  /** A transfer of 2% of supply out of the pool: reverting when the small one passes means a max-tx limit. */
  largeTransfer: SimulatedTransfer | null;
  /** The pool's LP token (V2 pair) issued and burnt amounts; null when the pool has no fungible LP token. */
  lp: { issued: bigint; burnt: bigint } | null;
}

export interface SimulatedTransfer {
  reverted: boolean;
  sent: bigint;
  /** What the recipient's balance grew by (Transfer logs to it). */
  received: bigint;
}

const RENOUNCED = new Set(['0x0000000000000000000000000000000000000000', '0x000000000000000000000000000000000000dead']);

/**
 * EVM contract: an owner who has not renounced (owner() not zero/dead, or no owner getter at all)
 * makes its privileged functions count: mint → minting possible; blacklist/pause → transfers
 * blockable. A simulated transfer that reverts, or a max-transaction limit (small transfer passes,
 * 2% of supply reverts), also makes transfers blockable. The fee is what the recipient did not get.
 */
export function evmContractSecurity(facts: EvmContractFacts): SecurityFields {
  const has = (list: readonly string[]) => list.some((s) => facts.selectors.has(s));
  const privileged = facts.owner === undefined || !RENOUNCED.has(facts.owner.toLowerCase());
  const small = facts.smallTransfer;
  const maxTxLimited = small !== null && !small.reverted && facts.largeTransfer?.reverted === true;
  const fields: SecurityFields = {
    mintDisabled: !(privileged && has(EVM_PRIVILEGES.mint)),
    transferBlockable:
      small?.reverted === true ||
      maxTxLimited ||
      (privileged && (has(EVM_PRIVILEGES.blacklist) || has(EVM_PRIVILEGES.pause))),
  };
  if (small && !small.reverted && small.sent > 0n) {
    const kept = small.sent - (small.received > small.sent ? small.sent : small.received);
    fields.transferFeeBps = Number((kept * 10_000n + small.sent - 1n) / small.sent);
  }
  if (facts.lp) fields.lpBurntPct = lpBurntPct(facts.lp.burnt, facts.lp.issued);
  return fields;
}
