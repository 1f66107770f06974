// A link's rules and split as the link host applies them (CONTRACT.md, "Link rules, splits and
// passwords"): the first rule whose conditions all hold decides the hit's destination, a split
// picks a variant per visitor, and what is left goes to the link's top-level split.
//
// The hit's one query returns a link's rules and split as JSON text (getHostedLink). Compiling
// that text (parsing, sets, CIDR ranges, cumulative weights) is a pure function of it, so the
// compiled form is kept keyed by the text itself: an edit is new text, never a stale entry, on
// every instance at once, and a popular link's hits skip JSON.parse.
import ipaddr from "ipaddr.js";
import { ByteCache, stringBytes } from "../../infra/byte_cache.ts";

/** The platform the link host reads from a hit's User-Agent (./host.ts, detectPlatform). */
export type Platform = "ios" | "android" | "desktop";

/** A rule's conditions as stored (inputs/link_rules.ts checks them on the way in). */
export interface RuleConditions {
  country?: string[] | undefined;
  language?: string[] | undefined;
  platform?: ("ios" | "android" | "desktop")[] | undefined;
  os?: string[] | undefined;
  query?: Record<string, string> | undefined;
  referrer_host?: string[] | undefined;
  ip?: string[] | undefined;
  /** ISO 8601 instants. */
  from?: string | undefined;
  until?: string | undefined;
}

/** Weighted variants, 2 to 10. */
export type LinkSplit = { url: string; weight: number }[];

/** A rule as stored: its conditions, and a URL or a split. */
export interface LinkRule {
  name?: string | undefined;
  when: RuleConditions;
  url?: string | undefined;
  split?: LinkSplit | undefined;
}

/** What a hit offers the conditions. Each is read only when a rule asks for it. */
export interface HitFacts {
  platform: Platform;
  now: number;
  country(): string | null;
  /** The visitor's most preferred primary language subtag (lower case), or null. */
  language(): string | null;
  os(): string | null;
  query(): URLSearchParams;
  referrerHost(): string | null;
  address(): string | null;
}

interface CompiledSplit {
  urls: string[];
  /** Running sums of the weights: variant i takes [cumulative[i-1], cumulative[i]). */
  cumulative: number[];
  total: number;
}

interface CompiledRule {
  /** `attribution.rule`: the rule's name, or its 1-based index. */
  label: string | number;
  index: number;
  test: (hit: HitFacts) => boolean;
  url: string | null;
  split: CompiledSplit | null;
}

export interface Routing {
  rules: CompiledRule[];
  split: CompiledSplit | null;
  forwardQuery: boolean;
  appendUtm: boolean;
  passwordProtected: boolean;
}

/** What decided a hit: its destination, and the rule and variant when they did. */
export interface RouteChoice {
  url: string;
  rule: string | number | null;
  variant: number | null;
  /** Whether a split chose (the visitor's id then decided, and must be kept in its cookie). */
  split: boolean;
}

function compileSplit(split: LinkSplit): CompiledSplit {
  const cumulative: number[] = [];
  let total = 0;
  for (const v of split) cumulative.push(total += v.weight);
  return { urls: split.map((v) => v.url), cumulative, total };
}

type Test = (hit: HitFacts) => boolean;

function compileConditions(when: RuleConditions): Test {
  const tests: Test[] = [];
  if (when.platform) {
    const set = new Set<string>(when.platform);
    tests.push((hit) => set.has(hit.platform));
  }
  if (when.country) {
    const set = new Set(when.country);
    tests.push((hit) => {
      const c = hit.country();
      return c !== null && set.has(c);
    });
  }
  if (when.language) {
    const set = new Set(when.language);
    tests.push((hit) => {
      const l = hit.language();
      return l !== null && set.has(l);
    });
  }
  if (when.os) {
    const set = new Set(when.os.map((o) => o.toLowerCase()));
    tests.push((hit) => {
      const os = hit.os();
      return os !== null && set.has(os.toLowerCase());
    });
  }
  if (when.query) {
    const entries = Object.entries(when.query);
    tests.push((hit) => {
      const q = hit.query();
      return entries.every(([k, v]) => (v === "*" ? q.has(k) : q.getAll(k).includes(v)));
    });
  }
  if (when.referrer_host) {
    const set = new Set(when.referrer_host);
    tests.push((hit) => {
      const h = hit.referrerHost();
      return h !== null && set.has(h);
    });
  }
  if (when.ip) {
    const parsed = when.ip.map((r) => ipaddr.parseCIDR(r));
    // IPv4 ranges as (network, mask) integers: a visitor's IPv4 address is matched without
    // ipaddr.js, whose parsing would cost every hit several microseconds.
    const v4 = parsed.filter(([range]) => range.kind() === "ipv4").map(([range, bits]) => {
      const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
      return [(ipv4Number(range.toString())! & mask) >>> 0, mask] as const;
    });
    const v6 = parsed.filter(([range]) => range.kind() === "ipv6");
    tests.push((hit) => {
      const raw = hit.address();
      if (!raw) return false;
      // An IPv4-mapped IPv6 address (::ffff:1.2.3.4) is its IPv4 address.
      const n = ipv4Number(raw.startsWith("::ffff:") ? raw.slice(7) : raw);
      if (n !== null) return v4.some(([network, mask]) => ((n & mask) >>> 0) === network);
      if (v6.length === 0 || !ipaddr.IPv6.isValid(raw)) return false;
      const address = ipaddr.IPv6.parse(raw);
      return v6.some(([range, bits]) => address.match(range, bits));
    });
  }
  const from = when.from ? Date.parse(when.from) : null;
  const until = when.until ? Date.parse(when.until) : null;
  if (from !== null) tests.push((hit) => hit.now >= from);
  if (until !== null) tests.push((hit) => hit.now < until);
  if (tests.length === 0) return () => true;
  if (tests.length === 1) return tests[0]!;
  return (hit) => {
    for (const t of tests) if (!t(hit)) return false;
    return true;
  };
}

/** A dotted-quad IPv4 address as an unsigned 32-bit number, or null when it is not one. */
export function ipv4Number(text: string): number | null {
  let n = 0;
  let octet = -1;
  let dots = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      if (octet < 0 || ++dots > 3) return null;
      n = n * 256 + octet;
      octet = -1;
    } else if (c >= 48 && c <= 57) {
      octet = octet < 0 ? c - 48 : octet * 10 + c - 48;
      if (octet > 255) return null;
    } else return null;
  }
  if (dots !== 3 || octet < 0) return null;
  return n * 256 + octet;
}

/** Compiles stored rules and split (already validated when they were written). */
export function compileRouting(
  rules: LinkRule[] | null,
  split: LinkSplit | null,
  flags: { forwardQuery?: boolean; appendUtm?: boolean; passwordProtected?: boolean } = {},
): Routing {
  return {
    forwardQuery: flags.forwardQuery ?? false,
    appendUtm: flags.appendUtm ?? false,
    passwordProtected: flags.passwordProtected ?? false,
    rules: (rules ?? []).map((rule, i) => ({
      label: rule.name ?? i + 1,
      index: i + 1,
      test: compileConditions(rule.when ?? {}),
      url: rule.url ?? null,
      split: rule.split ? compileSplit(rule.split) : null,
    })),
    split: split ? compileSplit(split) : null,
  };
}

const compiled = new ByteCache<string, Routing>({
  name: "link host rules",
  maxBytes: 8 * 1024 * 1024,
  // A compiled rule set takes a few times its text: sets, closures, parsed ranges.
  sizeOf: (_r, text) => stringBytes(text.length) * 4 + 256,
});

/**
 * The routing of a hosted link from its `routing` column (services/links/links.ts
 * routingText: JSON text of `[rules, split, forward_query, append_utm, password_protected]`,
 * null for a plain link), compiled once per distinct text.
 */
export function routingOf(text: string | null): Routing | null {
  if (text === null) return null;
  let routing = compiled.get(text);
  if (!routing) {
    const [rules, split, forwardQuery, appendUtm, passwordProtected] = JSON.parse(text) as [
      LinkRule[] | null,
      LinkSplit | null,
      boolean,
      boolean,
      boolean,
    ];
    routing = compileRouting(rules, split, { forwardQuery, appendUtm, passwordProtected });
    compiled.set(text, routing);
  }
  return routing;
}

/**
 * cyrb53 (a public-domain 53-bit string hash): the variant must be a function of (visitor,
 * link, rule) that spreads visitors evenly, cheap enough for every hit. Not a secret: the
 * visitor id is random, and knowing the hash gains a visitor nothing.
 */
function hash53(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** The 1-based variant of `split` for a visitor of link `linkId` under rule `rule` (0: none). */
export function pickVariant(
  split: { cumulative: number[]; total: number },
  visitorId: string,
  linkId: number,
  rule: number,
): number {
  const point = (hash53(`${visitorId}:${linkId}:${rule}`) / 2 ** 53) * split.total;
  const { cumulative } = split;
  for (let i = 0; i < cumulative.length; i++) if (point < cumulative[i]!) return i + 1;
  return cumulative.length;
}

/**
 * Where `routing` sends this hit, or null when no rule matched and there is no split (the
 * link's usual destinations then apply). `visitorId` is read only when a split decides.
 */
export function chooseRoute(
  routing: Pick<Routing, "rules" | "split">,
  hit: HitFacts,
  linkId: number,
  visitorId: () => string,
): RouteChoice | null {
  for (const rule of routing.rules) {
    if (!rule.test(hit)) continue;
    if (rule.url !== null) return { url: rule.url, rule: rule.label, variant: null, split: false };
    const variant = pickVariant(rule.split!, visitorId(), linkId, rule.index);
    return { url: rule.split!.urls[variant - 1]!, rule: rule.label, variant, split: true };
  }
  if (!routing.split) return null;
  const variant = pickVariant(routing.split, visitorId(), linkId, 0);
  return { url: routing.split.urls[variant - 1]!, rule: null, variant, split: true };
}

/**
 * The visitor's most preferred primary language in an Accept-Language header: the highest
 * `q`, the first on ties; `*` and malformed entries are skipped.
 */
export function preferredLanguage(header: string | undefined): string | null {
  if (!header) return null;
  const known = languages.get(header);
  if (known !== undefined) return known.language;
  const language = parseLanguage(header);
  languages.set(header, { language });
  return language;
}

/**
 * Accept-Language headers read, kept for the most recent: browsers send a few hundred distinct
 * ones between them, and a rule on language would otherwise parse the header on every hit.
 */
const languages = new ByteCache<string, { language: string | null }>({
  name: "link host languages",
  maxBytes: 1024 * 1024,
  sizeOf: (_v, header) => stringBytes(header.length) + 64,
});

function parseLanguage(header: string): string | null {
  let best: string | null = null;
  let bestQ = -1;
  for (const part of header.slice(0, 1024).split(",")) {
    const [tag, ...params] = part.trim().split(";");
    const primary = tag?.trim().split("-")[0]?.toLowerCase() ?? "";
    if (!/^[a-z]{2,3}$/.test(primary)) continue;
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p);
      if (m) q = Number(m[1]);
    }
    if (!(q >= 0 && q <= 1) || q === 0) continue;
    if (q > bestQ) {
      best = primary;
      bestQ = q;
    }
  }
  return best;
}

/** The destination with the hit's query added (its own parameters win). */
export function forwardQuery(destination: string, query: URLSearchParams): string {
  if (query.size === 0) return destination;
  const url = new URL(destination);
  const own = new Set(url.searchParams.keys());
  for (const [k, v] of query) if (!own.has(k)) url.searchParams.append(k, v);
  return url.href;
}

/** The destination with the link's tracking fields as utm_* where it lacks them. */
export function appendUtm(
  destination: string,
  tracking: { campaign: string | null; source: string | null; medium: string | null },
): string {
  const url = new URL(destination);
  let changed = false;
  for (
    const [key, value] of [
      ["utm_campaign", tracking.campaign],
      ["utm_source", tracking.source],
      ["utm_medium", tracking.medium],
    ] as const
  ) {
    if (value && !url.searchParams.has(key)) {
      url.searchParams.append(key, value);
      changed = true;
    }
  }
  return changed ? url.href : destination;
}

/** The visitor cookie's name and a fresh id: 16 random bytes, base64url. */
export const VISITOR_COOKIE = "lv_id";

export function newVisitorId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** The visitor id from a Cookie header, or null when absent or not one of ours. */
export function visitorIdFromCookie(header: string | undefined): string | null {
  if (!header) return null;
  const at = header.indexOf(`${VISITOR_COOKIE}=`);
  if (at === -1 || (at > 0 && header[at - 1] !== " " && header[at - 1] !== ";")) return null;
  const start = at + VISITOR_COOKIE.length + 1;
  const end = header.indexOf(";", start);
  const value = header.slice(start, end === -1 ? undefined : end).trim();
  return /^[A-Za-z0-9_-]{16,64}$/.test(value) ? value : null;
}
