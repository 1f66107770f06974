// What a link-host view records of its visitor beside the platform (CONTRACT, "Analytics"): the
// OS and browser families from the User-Agent (ua-parser-js, MIT), the referrer's host, and
// whether the visitor is a known bot (the crawler-user-agents list, MIT), which is no view.
import crawlers from "crawler-user-agents";
import { UAParser } from "ua-parser-js";
import { ByteCache, stringBytes } from "../../infra/byte_cache.ts";

export interface Visitor {
  /** The OS family (`iOS`, `Android`, `Windows`, …), null when unknown. */
  os: string | null;
  /** The browser family (`Mobile Safari`, `Chrome`, …), null when unknown. */
  browser: string | null;
  /** The host the visitor came from; null when direct or from the link's own host. */
  referrerHost: string | null;
  /**
   * The country of the visitor's address (ISO 3166-1 alpha-2, services/link_host/geoip.ts), null when
   * unknown. The address itself goes nowhere.
   */
  country: string | null;
}

/** Every pattern of the list as one expression, compiled once. */
const BOTS = new RegExp(crawlers.map((c: { pattern: string }) => `(?:${c.pattern})`).join("|"));

interface Agent {
  os: string | null;
  browser: string | null;
  bot: boolean;
}

/**
 * Parsed User-Agents, kept for the most recent: parsing costs tens of microseconds, and a link's
 * visitors send a few thousand distinct ones between them.
 */
const agents = new ByteCache<string, Agent>({
  name: "link host user agents",
  maxBytes: 4 * 1024 * 1024,
  sizeOf: (a, ua) =>
    stringBytes(ua.length) + stringBytes(a.os?.length ?? 0) + stringBytes(a.browser?.length ?? 0) +
    64,
});

function agent(userAgent: string): Agent {
  let parsed = agents.get(userAgent);
  if (!parsed) {
    const result = new UAParser(userAgent).getResult();
    parsed = {
      os: result.os.name ?? null,
      browser: result.browser.name ?? null,
      bot: BOTS.test(userAgent),
    };
    agents.set(userAgent, parsed);
  }
  return parsed;
}

/** A known bot (search engines, link checkers, monitoring, scripts): its hits are no views. */
export function isKnownBot(userAgent: string): boolean {
  return agent(userAgent).bot;
}

/**
 * The visitor of a hit on this service, whose own host names (lower case: the request's, and
 * LINK_BASE_URL's) are `ownHosts`. The Referer's host only when it is an http(s) URL of
 * another host.
 */
export function describeVisitor(
  userAgent: string,
  referer: string | undefined,
  ownHosts: readonly string[],
  country: string | null = null,
): Visitor {
  const { os, browser } = agent(userAgent);
  let referrerHost: string | null = null;
  if (referer) {
    try {
      const url = new URL(referer);
      const host = url.hostname.toLowerCase().replace(/\.$/, "");
      if (
        (url.protocol === "https:" || url.protocol === "http:") && host && !ownHosts.includes(host)
      ) {
        referrerHost = host;
      }
    } catch {
      // Not a URL: no referrer.
    }
  }
  return { os, browser, referrerHost, country };
}
