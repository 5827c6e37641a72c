// Off-chain metadata JSON → the token's metadata fields. Launchpads write socials at the top level
// (pump.fun: twitter/telegram/website), Metaplex-style JSON under `extensions`, some under
// `properties`/`links`. Anything of the wrong type is ignored; links are rewritten to one canonical
// form so the discovery filters (twitterHandle, websiteHost) compare like with like.
import { twitterHandle } from '../../query-api/discovery-filters.ts';

export interface TokenMetadata {
  description: string | null;
  image: string | null;
  twitter: string | null;
  website: string | null;
  telegram: string | null;
  discord: string | null;
}

const MAX_DESCRIPTION = 1000;
const MAX_LINK = 300;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Visible text: control characters out, whitespace collapsed, capped; null when empty or not a string. */
function text(value: unknown, max: number): string | null {
  if (typeof value !== 'string') return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
  const clean = value.replace(/[\u0000-\u0008\u000b-\u001f\u007f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/g, '').trim();
  if (clean === '') return null;
  return clean.length > max ? clean.slice(0, max) : clean;
}

/** An http(s) URL (a bare domain gets https://), canonical; null otherwise (javascript:, data:, junk). */
function httpUrl(value: unknown): URL | null {
  const raw = text(value, MAX_LINK);
  if (!raw || /\s/.test(raw)) return null;
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:/i.test(raw) ? raw : `https://${raw}`);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    if (!url.hostname.includes('.') || url.username || url.password) return null;
    return url;
  } catch {
    return null;
  }
}

const X_HOST = /^(?:www\.|mobile\.)?(?:x|twitter)\.com$/i;
const RESERVED_X_PATHS = new Set(['i', 'home', 'search', 'intent', 'share', 'hashtag', 'explore']);

/** https://x.com/<handle> for a handle, @handle or profile URL; other x.com links (communities, posts) kept as URLs. */
export function normaliseTwitter(value: unknown): string | null {
  const raw = text(value, MAX_LINK);
  if (!raw) return null;
  if (/^@?[A-Za-z0-9_]{1,15}$/.test(raw)) return `https://x.com/${raw.replace(/^@/, '').toLowerCase()}`;
  const url = httpUrl(raw);
  if (!url || !X_HOST.test(url.hostname)) return null;
  const segments = url.pathname.split('/').filter(Boolean);
  const first = segments[0]?.replace(/^@/, '') ?? '';
  if (segments.length === 1 && /^[A-Za-z0-9_]{1,15}$/.test(first) && !RESERVED_X_PATHS.has(first.toLowerCase()))
    return `https://x.com/${twitterHandle(first)}`;
  if (segments.length === 0) return null;
  return `https://x.com${url.pathname.replace(/\/+$/, '')}`;
}

/** https://t.me/<name> for a t.me / telegram.me link or a bare @name. */
export function normaliseTelegram(value: unknown): string | null {
  const raw = text(value, MAX_LINK);
  if (!raw) return null;
  if (/^@?[A-Za-z0-9_]{4,64}$/.test(raw)) return `https://t.me/${raw.replace(/^@/, '')}`;
  const url = httpUrl(raw);
  if (!url || !/^(?:www\.)?(?:t\.me|telegram\.me|telegram\.dog)$/i.test(url.hostname)) return null;
  const path = url.pathname.replace(/\/+$/, '');
  return path === '' ? null : `https://t.me${path}`;
}

/** https://discord.gg/<code> for invite links (discord.gg, discord.com/invite); other discord.com links as URLs. */
export function normaliseDiscord(value: unknown): string | null {
  const url = httpUrl(value);
  if (!url) return null;
  const host = url.hostname.toLowerCase().replace(/^www\./, '');
  const invite = /^\/invite\/([A-Za-z0-9-]+)/.exec(url.pathname);
  if (host === 'discord.gg' && url.pathname.length > 1) return `https://discord.gg${url.pathname.replace(/\/+$/, '')}`;
  if ((host === 'discord.com' || host === 'discordapp.com') && invite) return `https://discord.gg/${invite[1]}`;
  if (host === 'discord.com' || host === 'discordapp.com') return url.href;
  return null;
}

/** A website: any http(s) URL that is not one of the social hosts above. */
export function normaliseWebsite(value: unknown): string | null {
  const url = httpUrl(value);
  if (!url) return null;
  if (X_HOST.test(url.hostname) || /^(?:www\.)?(?:t\.me|telegram\.me|discord\.gg|discord\.com)$/i.test(url.hostname))
    return null;
  url.hostname = url.hostname.toLowerCase();
  url.hash = '';
  return url.href;
}

/** image: http(s), ipfs:// or ar:// — kept as written (clients resolve it), other schemes dropped. */
function image(value: unknown): string | null {
  const raw = text(value, MAX_LINK);
  if (!raw) return null;
  if (/^(?:ipfs|ar):\/\/\S+$/i.test(raw)) return raw;
  return httpUrl(raw)?.href ?? null;
}

/** First non-null normalised value among the candidate places a field is written. */
function first(normalise: (value: unknown) => string | null, ...candidates: unknown[]): string | null {
  for (const candidate of candidates) {
    const value = normalise(candidate);
    if (value !== null) return value;
  }
  return null;
}

export const EMPTY_METADATA: TokenMetadata = {
  description: null,
  image: null,
  twitter: null,
  website: null,
  telegram: null,
  discord: null,
};

export function normaliseMetadata(json: unknown): TokenMetadata {
  if (!isObject(json)) return { ...EMPTY_METADATA };
  const ext = isObject(json.extensions) ? json.extensions : {};
  const links = isObject(json.links) ? json.links : {};
  const props = isObject(json.properties) ? json.properties : {};
  const files = Array.isArray(props.files) ? props.files : [];
  const firstFile = isObject(files[0]) ? files[0].uri : null;
  const description = (value: unknown) => text(value, MAX_DESCRIPTION);
  return {
    description: first(description, json.description, ext.description),
    image: first(image, json.image, json.image_uri, json.imageUri, firstFile),
    twitter: first(normaliseTwitter, json.twitter, ext.twitter, links.twitter, json.x, ext.x),
    website: first(normaliseWebsite, json.website, ext.website, links.website, json.external_url),
    telegram: first(normaliseTelegram, json.telegram, ext.telegram, links.telegram),
    discord: first(normaliseDiscord, json.discord, ext.discord, links.discord),
  };
}
