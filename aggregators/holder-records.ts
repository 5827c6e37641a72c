// A holder record packed in one bigint: balance << 20 | attributes << 10 | (mask + 1). The busy
// tokens of a mainnet start hold ~85k records; as objects of four fields they took ~111 B of heap
// each and ~62 B of each snapshot, packed ~68 B and ~17 B. The balance may be negative (the sum of
// an EVM token's transfers seen); the shift and the low bits stay exact for it (two's complement).
import type { HolderRec } from './state.ts';

const META_WIDTH = 20;
const META_BITS = BigInt(META_WIDTH);
const MASK_BITS = 10;
const LOW_MASK = (1 << MASK_BITS) - 1;

/** A record's (or parked row's) mask when its token's index does not count the holder. */
export const NOT_COUNTED = -1;

/** A record from its balance, attributes (ATTR bits) and the mask its token's index counts it in (-1: none). */
export const holderRec = (bal: bigint, attrs: number, mask: number): HolderRec =>
  (bal << META_BITS) | BigInt((attrs << MASK_BITS) | (mask + 1));

/** A holder that has nothing: balance 0, no attributes, not counted. */
export const EMPTY_HOLDER: HolderRec = holderRec(0n, 0, NOT_COUNTED);

export const balOf = (rec: HolderRec): bigint => rec >> META_BITS;

const metaOf = (rec: HolderRec): number => Number(BigInt.asUintN(META_WIDTH, rec));

export const attrsOf = (rec: HolderRec): number => metaOf(rec) >>> MASK_BITS;

/** The categories the token's holder index counts the holder in; -1 when it does not count it. */
export const maskOf = (rec: HolderRec): number => (metaOf(rec) & LOW_MASK) - 1;

export const withBal = (rec: HolderRec, bal: bigint): HolderRec => (bal << META_BITS) | BigInt.asUintN(META_WIDTH, rec);

export const withAttrs = (rec: HolderRec, attrs: number): HolderRec => holderRec(balOf(rec), attrs, maskOf(rec));

export const withMask = (rec: HolderRec, mask: number): HolderRec => holderRec(balOf(rec), attrsOf(rec), mask);

/** A record of the object format (before 2026-11-30), in the packed one. */
export interface HolderRecObject {
  bal: bigint;
  attrs: number;
  mask?: number;
  counted?: bigint;
}

export const packedRec = (rec: HolderRecObject): HolderRec => holderRec(rec.bal, rec.attrs, rec.mask ?? NOT_COUNTED);

/** What an object record's index counted it at, as a packed record (its mask, and the balance counted). */
export const countedRec = (rec: HolderRecObject): HolderRec =>
  holderRec(rec.counted ?? 0n, rec.attrs, rec.mask ?? NOT_COUNTED);
