// SPL Token / Token-2022 instructions that change a mint's security facts: InitializeMint(2) sets
// the mint and freeze authorities, SetAuthority changes one (None = revoked), Burn(Checked) destroys
// tokens (an LP mint's burns are the LP burnt share). Instruction data: tag u8, then
// InitializeMint: decimals u8, mint_authority 32, freeze_authority COption (u8 tag + 32);
// SetAuthority: authority_type u8, new_authority COption (u8 tag + 32); Burn: amount u64 (+ decimals).
import { base58Encode } from './base58.ts';
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from './constants.ts';
import type { Instruction } from './transaction.ts';

export const TOKEN_IX = {
  initializeMint: 0,
  setAuthority: 6,
  burn: 8,
  burnChecked: 15,
  initializeMint2: 20,
} as const;

/** SetAuthority's authority types that concern a mint. */
export const AUTHORITY = { mintTokens: 0, freezeAccount: 1 } as const;

export type MintChange =
  | { kind: 'initializeMint'; mint: string; mintAuthority: string; freezeAuthority: string | null }
  | { kind: 'setAuthority'; mint: string; authority: 'mint' | 'freeze'; newAuthority: string | null }
  | { kind: 'burn'; mint: string; amount: bigint };

const TOKEN_PROGRAMS = new Set([TOKEN_PROGRAM, TOKEN_2022_PROGRAM]);

function optionalKey(data: Uint8Array, at: number): string | null {
  return data[at] === 1 && data.length >= at + 33 ? base58Encode(data.subarray(at + 1, at + 33)) : null;
}

/** The mint change an instruction makes, or null (not a token-program instruction of interest, or malformed). */
export function decodeMintChange(ix: Instruction): MintChange | null {
  if (!TOKEN_PROGRAMS.has(ix.programId) || ix.data.length === 0) return null;
  const data = ix.data;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  switch (data[0]) {
    case TOKEN_IX.initializeMint:
    case TOKEN_IX.initializeMint2: {
      const mint = ix.accounts[0];
      if (!mint || data.length < 35) return null;
      return {
        kind: 'initializeMint',
        mint,
        mintAuthority: base58Encode(data.subarray(2, 34)),
        freezeAuthority: optionalKey(data, 34),
      };
    }
    case TOKEN_IX.setAuthority: {
      const target = ix.accounts[0];
      const type = data[1];
      if (!target || data.length < 3 || (type !== AUTHORITY.mintTokens && type !== AUTHORITY.freezeAccount))
        return null;
      return {
        kind: 'setAuthority',
        mint: target,
        authority: type === AUTHORITY.mintTokens ? 'mint' : 'freeze',
        newAuthority: optionalKey(data, 2),
      };
    }
    case TOKEN_IX.burn:
    case TOKEN_IX.burnChecked: {
      const mint = ix.accounts[1];
      if (!mint || data.length < 9) return null;
      return { kind: 'burn', mint, amount: view.getBigUint64(1, true) };
    }
    default:
      return null;
  }
}

/** Every mint change of a transaction's instructions (top-level and inner), in execution order. */
export function mintChangesOf(groups: readonly { top: Instruction; inner: Instruction[] }[]): MintChange[] {
  const out: MintChange[] = [];
  for (const group of groups) {
    for (const ix of [group.top, ...group.inner]) {
      const change = decodeMintChange(ix);
      if (change) out.push(change);
    }
  }
  return out;
}
