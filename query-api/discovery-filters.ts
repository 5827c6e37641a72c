// Discovery filters: the caller's filters of one column, plus the column defaults, compiled once
// per request into one predicate over a token. Defaults and caller filters are both applied, so
// a caller filter can only tighten a default (a holderCount min of 3 on graduated still needs 10).
import { isEvmAddress, looksLikeAddress } from '../core/chains.ts';
import * as dec from '../core/decimal.ts';
import type { Column, DiscoveryFilters } from '../core/schemas.ts';
import type { DiscoveryFields } from './discovery-fields.ts';
import type { Problems } from './validation.ts';

const MINUTE = 60_000;
export const STALE_AFTER_MS = 24 * 60 * MINUTE;
export const GRADUATING_STALE_MINUTES = 60;
export const CURVE_EXEMPT_PCT = 99.5;

export type TokenPredicate = (token: DiscoveryFields, now: number) => boolean;

interface Range<T> {
  min: T | null;
  max: T | null;
}

type RangeFields<T> = {
  [K in keyof DiscoveryFilters]: NonNullable<DiscoveryFilters[K]> extends { min?: T | null; max?: T | null }
    ? K
    : never;
}[keyof DiscoveryFilters];

const INT_RANGES = [
  'ageMinutes',
  'buys',
  'holderCount',
  'sells',
  'twitterReuseCount',
  'txns',
] as const satisfies readonly RangeFields<number>[];
const NUMBER_RANGES = [
  'bondingCurvePercent',
  'devHoldingPercent',
  'snipersSupplyPercent',
  'top10HoldersPercent',
] as const satisfies readonly RangeFields<number>[];
const DECIMAL_RANGES = [
  'globalFeesPaidUsd',
  'liquidityUsd',
  'marketCapUsd',
  'volumeUsd',
] as const satisfies readonly RangeFields<string>[];

/** Adds a problem for every range whose min is above its max (field e.g. `graduated.filters.marketCapUsd`). */
export function checkRanges(column: Column, filters: DiscoveryFilters, problems: Problems): void {
  for (const name of [...INT_RANGES, ...NUMBER_RANGES]) {
    const range = filters[name];
    if (range && range.min != null && range.max != null && range.min > range.max) {
      problems.add(`${column}.filters.${name}`, `min (${range.min}) is above max (${range.max}).`);
    }
  }
  for (const name of DECIMAL_RANGES) {
    const range = filters[name];
    if (range && range.min != null && range.max != null && dec.parse(range.min) > dec.parse(range.max)) {
      problems.add(`${column}.filters.${name}`, `min (${range.min}) is above max (${range.max}).`);
    }
  }
}

const inRange = <T extends number | bigint>(value: T, range: Range<T>) =>
  (range.min === null || value >= range.min) && (range.max === null || value <= range.max);

function numberRange(range: { min?: number | null; max?: number | null } | undefined): Range<number> | null {
  if (!range || (range.min == null && range.max == null)) return null;
  return { min: range.min ?? null, max: range.max ?? null };
}

function decimalRange(range: { min?: string | null; max?: string | null } | undefined): Range<bigint> | null {
  if (!range || (range.min == null && range.max == null)) return null;
  return { min: range.min == null ? null : dec.parse(range.min), max: range.max == null ? null : dec.parse(range.max) };
}

/** An address as compared: EVM addresses ignore case, others are exact. */
const addressKey = (address: string) => (isEvmAddress(address) ? address.toLowerCase() : address);

/** X handle from a handle, @handle or an x.com / twitter.com URL, lower-cased; null when none. */
export function twitterHandle(value: string | null | undefined): string | null {
  if (!value) return null;
  let text = value.trim();
  const url = /^(?:https?:\/\/)?(?:www\.|mobile\.)?(?:x|twitter)\.com\/(?:#!\/)?@?([^/?#\s]+)/i.exec(text);
  if (url) text = url[1]!;
  text = text.replace(/^@/, '').toLowerCase();
  return text === '' ? null : text;
}

/** Host of a URL or bare domain, lower-cased without `www.`; null when none. */
export function websiteHost(value: string | null | undefined): string | null {
  if (!value) return null;
  const text = value.trim();
  try {
    const host = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`).hostname.toLowerCase();
    return host.replace(/^www\./, '') || null;
  } catch {
    return null;
  }
}

const hasText = (value: string | null | undefined) => typeof value === 'string' && value.trim() !== '';

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Address words in a set, text words in one alternation run over the lower-cased symbol and
 * name: a token costs one set lookup and one native scan, not one comparison per word (the
 * lists hold up to 1,000 entries).
 */
function wordMatcher(words: string[]): (token: DiscoveryFields) => boolean {
  const addresses = new Set(words.filter(looksLikeAddress).map(addressKey));
  const texts = words.filter((w) => !looksLikeAddress(w)).map((w) => w.toLowerCase());
  const anyText = texts.length === 0 ? null : new RegExp(texts.map(escapeRegExp).join('|'));
  return (token) =>
    addresses.has(addressKey(token.address)) ||
    (anyText !== null && (anyText.test(token.symbol.toLowerCase()) || anyText.test(token.name.toLowerCase())));
}

/** True when `host` is one of `hosts` or a subdomain of one: one lookup per label of the host. */
function hostListed(host: string, hosts: Set<string>): boolean {
  for (let suffix = host; ; ) {
    if (hosts.has(suffix)) return true;
    const dot = suffix.indexOf('.');
    if (dot === -1) return false;
    suffix = suffix.slice(dot + 1);
  }
}

const pct = (value: string) => Number(value);
const curvePct = (token: DiscoveryFields) => (token.bondingCurvePct == null ? null : Number(token.bondingCurvePct));
const atCurveExemption = (token: DiscoveryFields) => {
  const curve = curvePct(token);
  return curve !== null && curve >= CURVE_EXEMPT_PCT;
};

/** One predicate: the column defaults, then every caller filter sent (unknown names ignored; an empty list sets no condition). */
export function compileFilters(column: Column, filters: DiscoveryFilters | null | undefined): TokenPredicate {
  const f = filters ?? {};
  const checks: TokenPredicate[] = [];

  // Column defaults (SPEC.md, Column defaults 1-3).
  checks.push((t, now) => t.updatedAt >= now - STALE_AFTER_MS);
  if (column === 'graduating' || column === 'graduated') {
    const minLiquidity = dec.fromInt(1000);
    const minMarketCap = dec.fromInt(5000);
    checks.push(
      (t) =>
        t.holderCount >= 10 && dec.parse(t.liquidityUsd) >= minLiquidity && dec.parse(t.marketCapUsd) >= minMarketCap,
    );
  }
  if (column === 'graduating') {
    checks.push((t, now) => t.updatedAt >= now - GRADUATING_STALE_MINUTES * MINUTE || atCurveExemption(t));
  }

  const intRange = (name: (typeof INT_RANGES)[number], value: (t: DiscoveryFields, now: number) => number) => {
    const range = numberRange(f[name] ?? undefined);
    if (range) checks.push((t, now) => inRange(value(t, now), range));
  };
  intRange('ageMinutes', (t, now) => Math.floor(Math.max(0, now - t.createdAt) / MINUTE));
  intRange('buys', (t) => t.buys24h);
  intRange('sells', (t) => t.sells24h);
  intRange('txns', (t) => t.buys24h + t.sells24h);
  intRange('holderCount', (t) => t.holderCount);
  // twitterReuseCount: accepted, validated, not applied (SPEC.md): every token passes.

  const pctRange = (name: (typeof NUMBER_RANGES)[number], value: (t: DiscoveryFields) => number | null) => {
    const range = numberRange(f[name] ?? undefined);
    if (range)
      checks.push((t) => {
        const v = value(t);
        return v !== null && inRange(v, range);
      });
  };
  pctRange('bondingCurvePercent', curvePct);
  pctRange('devHoldingPercent', (t) => pct(t.devPct));
  pctRange('snipersSupplyPercent', (t) => pct(t.sniperPct));
  pctRange('top10HoldersPercent', (t) => pct(t.top10Pct));

  const usdRange = (name: (typeof DECIMAL_RANGES)[number], value: (t: DiscoveryFields) => bigint) => {
    const range = decimalRange(f[name] ?? undefined);
    if (range) checks.push((t) => inRange(value(t), range));
  };
  // Fees traders paid to pools (dex) and launchpads (platform), all-time, in USD.
  usdRange('globalFeesPaidUsd', (t) => dec.parse(t.feesDexUsd) + dec.parse(t.feesPlatformUsd));
  usdRange('liquidityUsd', (t) => dec.parse(t.liquidityUsd));
  usdRange('marketCapUsd', (t) => dec.parse(t.marketCapUsd));
  usdRange('volumeUsd', (t) => dec.parse(t.volume24hUsd));

  if (f.lastActivityMinutes != null) {
    const window = f.lastActivityMinutes * MINUTE;
    checks.push((t, now) => t.updatedAt >= now - window);
  }
  if (f.maxGraduationStaleMinutes != null) {
    const window = f.maxGraduationStaleMinutes * MINUTE;
    checks.push((t, now) => t.updatedAt >= now - window || atCurveExemption(t));
  }
  if (f.anchorSymbols && f.anchorSymbols.length > 0) {
    const wanted = new Set(f.anchorSymbols.map((s) => s.toLowerCase()));
    checks.push((t) => t.anchorSymbol != null && wanted.has(t.anchorSymbol.toLowerCase()));
  }
  if (f.protocols && f.protocols.length > 0) {
    const wanted = new Set(f.protocols.map((s) => s.toLowerCase()));
    const mayhem = wanted.has('mayhem_mode');
    checks.push((t) => (t.launchpad != null && wanted.has(t.launchpad.toLowerCase())) || (mayhem && t.mayhem));
  }
  if (f.excludeDevAddresses && f.excludeDevAddresses.length > 0) {
    const listed = new Set(f.excludeDevAddresses.map(addressKey));
    checks.push((t) => !listed.has(addressKey(t.creator)));
  }
  if (f.excludeFundingAddresses && f.excludeFundingAddresses.length > 0) {
    const listed = new Set(f.excludeFundingAddresses.map(addressKey));
    checks.push((t) => t.funder == null || !listed.has(addressKey(t.funder)));
  }
  if (f.symbolOrName && f.symbolOrName.length > 0) {
    const matches = wordMatcher(f.symbolOrName);
    checks.push((t) => matches(t));
  }
  if (f.excludeSymbolOrName && f.excludeSymbolOrName.length > 0) {
    const matches = wordMatcher(f.excludeSymbolOrName);
    checks.push((t) => !matches(t));
  }
  if (f.excludeTwitter && f.excludeTwitter.length > 0) {
    const handles = new Set(f.excludeTwitter.map(twitterHandle).filter((h): h is string => h !== null));
    checks.push((t) => {
      const handle = twitterHandle(t.twitter);
      return handle === null || !handles.has(handle);
    });
  }
  if (f.excludeWebsites && f.excludeWebsites.length > 0) {
    const hosts = new Set(f.excludeWebsites.map(websiteHost).filter((h): h is string => h !== null));
    checks.push((t) => {
      const host = websiteHost(t.website);
      return host === null || !hostListed(host, hosts);
    });
  }
  if (f.withAtLeastOneSocial === true) {
    checks.push((t) => hasText(t.twitter) || hasText(t.website) || hasText(t.telegram) || hasText(t.discord));
  }

  return (token, now) => {
    for (const check of checks) if (!check(token, now)) return false;
    return true;
  };
}
