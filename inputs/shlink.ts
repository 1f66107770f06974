// Moving from Shlink (docs/links.md, "Moving from another shortener"): Shlink's short URLs, with
// their redirect rules, turned into rows of the links CSV that the import takes. Pure functions
// of Shlink's JSON (its REST API's `GET /rest/v3/short-urls` items and each one's
// `GET /rest/v3/short-urls/{shortCode}/redirect-rules`); cli/shlink.ts reads them from a file or
// from a Shlink server.
//
// Where a link goes: Shlink's `longUrl` is the link's web destination (`desktop_url`), which the
// link host also sends phones to when they have no app or URL of their own, so an imported link
// works on every device. Shlink 3's `deviceLongUrls` become the platform URLs, and Shlink 4's
// redirect rules become `rules`, in their priority order.
import { stringify } from "csv-stringify/sync";
import { IMPORT_COLUMNS } from "./links.ts";
import type { LinkRule } from "../services/links/rules.ts";

export interface ShlinkCondition {
  type: string;
  matchKey?: string | null;
  matchValue?: string | null;
}

export interface ShlinkRule {
  longUrl: string;
  priority?: number;
  conditions: ShlinkCondition[];
}

export interface ShlinkShortUrl {
  shortCode: string;
  longUrl: string;
  title?: string | null;
  tags?: string[];
  meta?: { validSince?: string | null; validUntil?: string | null; maxVisits?: number | null };
  forwardQuery?: boolean;
  deviceLongUrls?: { android?: string | null; ios?: string | null; desktop?: string | null };
  /** Added by the reader from the redirect-rules endpoint (its `redirectRules`). */
  redirectRules?: ShlinkRule[];
}

/** What a conversion could not carry over, by short code, for the person importing. */
export interface ShlinkWarning {
  shortCode: string;
  message: string;
}

/** Shlink's device values as the link host's platforms, or analytics' OS families. */
const DEVICES: Record<string, { platform?: string[]; os?: string[] }> = {
  android: { platform: ["android"] },
  ios: { platform: ["ios"] },
  mobile: { platform: ["ios", "android"] },
  desktop: { platform: ["desktop"] },
  windows: { os: ["Windows"] },
  macos: { os: ["Mac OS"] },
  linux: { os: ["Linux"] },
  chromeos: { os: ["Chromium OS"] },
};

/** Shlink's IP condition (an address, a CIDR range, or a pattern with `*` octets) as CIDR. */
export function shlinkIpRange(value: string): string | null {
  const wild = /^(\d{1,3}|\*)\.(\d{1,3}|\*)\.(\d{1,3}|\*)\.(\d{1,3}|\*)$/.exec(value);
  if (wild && value.includes("*")) {
    const octets = wild.slice(1, 5);
    const fixed = octets.findIndex((o) => o === "*");
    if (octets.slice(fixed).some((o) => o !== "*")) return null;
    const base = octets.map((o) => (o === "*" ? "0" : o)).join(".");
    return `${base}/${fixed * 8}`;
  }
  return value;
}

function add(when: Record<string, unknown>, key: string, values: string[]) {
  when[key] = [...new Set([...((when[key] as string[] | undefined) ?? []), ...values])];
}

/** One Shlink rule as a rule here, or a reason it cannot be one. */
export function convertShlinkRule(rule: ShlinkRule): LinkRule | { problem: string } {
  const when: Record<string, unknown> = {};
  for (const c of rule.conditions) {
    const value = c.matchValue ?? "";
    switch (c.type) {
      case "device": {
        const device = DEVICES[value.toLowerCase()];
        if (!device) return { problem: `device ${JSON.stringify(value)} has no equivalent` };
        if (device.platform) add(when, "platform", device.platform);
        if (device.os) add(when, "os", device.os);
        break;
      }
      case "language": {
        // Shlink may match a region (es-ES); the host matches the primary language (es).
        const primary = value.split(/[-_]/)[0]!.toLowerCase();
        add(when, "language", [primary]);
        break;
      }
      case "query-param":
        when.query = { ...(when.query as object), [c.matchKey ?? ""]: value };
        break;
      case "any-value-query-param":
      case "valueless-query-param":
        when.query = { ...(when.query as object), [c.matchKey ?? ""]: "*" };
        break;
      case "ip-address": {
        const range = shlinkIpRange(value);
        if (!range) return { problem: `ip-address ${JSON.stringify(value)} is not a range` };
        add(when, "ip", [range]);
        break;
      }
      case "geolocation-country-code":
        add(when, "country", [value.toUpperCase()]);
        break;
      default:
        return { problem: `condition ${JSON.stringify(c.type)} has no equivalent` };
    }
  }
  return { when, url: rule.longUrl } as LinkRule;
}

/**
 * Shlink's short URLs as the import's CSV (header row included), and what could not come
 * across. A rule that cannot is left out of its link, and said so: the link keeps working, by
 * its other rules and its long URL.
 */
export function shlinkToCsv(shortUrls: readonly ShlinkShortUrl[]): {
  csv: string;
  warnings: ShlinkWarning[];
} {
  const warnings: ShlinkWarning[] = [];
  const rows = shortUrls.map((s) => {
    const warn = (message: string) => warnings.push({ shortCode: s.shortCode, message });
    const rules: LinkRule[] = [];
    const ordered = [...(s.redirectRules ?? [])].sort((a, b) =>
      (a.priority ?? 0) - (b.priority ?? 0)
    );
    ordered.forEach((rule, i) => {
      const converted = convertShlinkRule(rule);
      if ("problem" in converted) {
        warn(`redirect rule ${i + 1} left out: ${converted.problem}`);
      } else rules.push({ name: `shlink ${rule.priority ?? i + 1}`, ...converted });
    });
    if (s.meta?.validSince) warn("validSince has no equivalent: the link works at once");
    const cells: Record<string, unknown> = {
      path: s.shortCode,
      title: s.title ?? "",
      tags: s.tags?.length ? JSON.stringify(s.tags) : "",
      desktop_url: s.deviceLongUrls?.desktop ?? s.longUrl,
      ios_url: s.deviceLongUrls?.ios ?? "",
      android_url: s.deviceLongUrls?.android ?? "",
      expires_at: s.meta?.validUntil ?? "",
      max_views: s.meta?.maxVisits ?? "",
      rules: rules.length ? JSON.stringify(rules) : "",
      // Shlink forwards the query by default.
      forward_query: s.forwardQuery ?? true,
    };
    return IMPORT_COLUMNS.map((c) => cells[c] ?? "");
  });
  return { csv: stringify([IMPORT_COLUMNS, ...rows]), warnings };
}
