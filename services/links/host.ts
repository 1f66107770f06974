// What the link host does with a hit: which platform asks, whether it is a preview crawler, and
// where to send it (CONTRACT.md, "The link host" and "Link domains and app association"). Views
// are recorded by view_recorder.ts.
import { ByteCache, stringBytes } from "../../infra/byte_cache.ts";
import { appSchemeUrl, appStoreUrl, intentUrl, playStoreUrl } from "../link_host/apps.ts";
import { type HostedLink, isHttpUrl, type Redirect } from "./links.ts";

import type { Platform } from "./rules.ts";
export type { Platform };

const CRAWLERS =
  /Slackbot|Twitterbot|facebookexternalhit|LinkedInBot|Discordbot|WhatsApp|TelegramBot/i;

export function detectPlatform(userAgent: string): Platform {
  if (/iPhone|iPad|iPod/.test(userAgent)) return "ios";
  if (/Android/i.test(userAgent)) return "android";
  return "desktop";
}

/** Link-preview crawlers always get the page with its meta tags and are never counted. */
export function isPreviewCrawler(userAgent: string): boolean {
  return CRAWLERS.test(userAgent);
}

/**
 * Which hits are views: a person's GET. A HEAD (link checkers, prefetchers) and a preview
 * crawler see the link without a person having opened it.
 */
export function countsAsView(method: string, crawler: boolean): boolean {
  return method === "GET" && !crawler;
}

export type LinkHit =
  | { action: "redirect"; url: string }
  /** The preview page; `destination` is where its button leads (null: nowhere on this device). */
  | { action: "page"; destination: string | null }
  /**
   * iOS with an app to open: a page that tries `appUrl` and, if the app did not take over,
   * goes to `fallback`. `auto`: at once; otherwise (preview first) on the visitor's tap.
   * `storeUrl` is the App Store button that copies the link for a deferred deep link.
   */
  | {
    action: "open_app";
    appUrl: string;
    fallback: string | null;
    storeUrl: string | null;
    auto: boolean;
  };

/**
 * Stored redirect URLs as a Location header takes them (what URL.href produces), or null for
 * one the host does not follow. A pure function of the text, kept for the most recent URLs: a
 * popular link's every hit would otherwise parse its URL twice.
 */
const normalisedUrls = new ByteCache<string, { href: string | null }>({
  name: "link host redirect URLs",
  maxBytes: 4 * 1024 * 1024,
  sizeOf: ({ href }, url) => stringBytes(url.length) + stringBytes(href?.length ?? 0) + 64,
});

export function redirectUrl(redirect: Redirect | null | undefined): string | null {
  const url = redirect?.url;
  if (typeof url !== "string") return null;
  let normalised = normalisedUrls.get(url);
  if (!normalised) {
    normalised = { href: isHttpUrl(url) ? new URL(url).href : null };
    normalisedUrls.set(url, normalised);
  }
  return normalised.href;
}

/**
 * `url` with the query parameter `click_id` (pass_click_id) last. A `click_id` the visitor's
 * query forwarded, or the destination had, goes: it never stands beside the view's own. The
 * rest of the query is kept as written (URLSearchParams would re-encode all of it: `%20` as
 * `+`, which a destination that signs its URLs would refuse).
 */
export function withClickId(url: string, clickId: string): string {
  const out = new URL(url);
  const kept = out.search.slice(1).split("&").filter((pair) =>
    pair !== "" && queryKey(pair) !== "click_id"
  );
  kept.push(`click_id=${encodeURIComponent(clickId)}`);
  out.search = kept.join("&");
  return out.href;
}

/** The decoded name of a `name=value` query pair (as written when it does not decode). */
function queryKey(pair: string): string {
  const at = pair.indexOf("=");
  const name = (at === -1 ? pair : pair.slice(0, at)).replaceAll("+", " ");
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/** A web destination with what forward_query, append_utm and pass_click_id add (`web`). */
function decorate(url: string | null, web: ((url: string) => string) | null): string | null {
  return url !== null && web !== null ? web(url) : url;
}

/**
 * A request only reaches the link host when the OS did not open the app for the URL (no app, or
 * one without the association). Then, per platform:
 * - iOS: `open_app_if_installed` and an app scheme: the page that tries the scheme, falling
 *   back to the custom redirect, else the App Store, else the web destination. Otherwise the
 *   custom redirect, else the App Store, else the web destination, else the preview page.
 * - Android: `open_app_if_installed` and an app scheme: Chrome's `intent://` URL, whose browser
 *   fallback is the custom redirect, else the Play Store, else the web destination. Otherwise
 *   the custom redirect, else the Play Store, else the web destination, else the preview page.
 *   Play Store URLs carry the install referrer.
 * - Desktop: the custom redirect (the web destination), else the preview page.
 * The web destination is the desktop redirect's `url`: a link with only that URL leads phone
 * visitors there too rather than to a dead end. A rule's or split variant's `url` (`chosen`)
 * takes the place of the platform's custom redirect. `show_preview_ios`/`_android` show the
 * preview first, its button leading where the redirect would have; a crawler always gets the
 * preview page. `web` adds what forward_query, append_utm and pass_click_id ask for to a web
 * destination; `clickId` (a counted view's) goes into the Play Store's install referrer.
 */
export function decideHit(
  link: HostedLink,
  platform: Platform,
  crawler: boolean,
  chosen: string | null = null,
  web: ((url: string) => string) | null = null,
  clickId: string | null = null,
): LinkHit {
  let target: string | null;
  let preview = false;
  if (platform === "ios") {
    const app = link.apps.ios;
    const custom = decorate(chosen ?? redirectUrl(link.ios_custom_redirect), web);
    const store = appStoreUrl(app);
    preview = link.show_preview_ios;
    const fallback = custom ?? store ?? decorate(redirectUrl(link.desktop_custom_redirect), web);
    if (!crawler && link.ios_custom_redirect.open_app_if_installed === true && app?.scheme) {
      return {
        action: "open_app",
        appUrl: appSchemeUrl(app.scheme, link.path),
        fallback,
        storeUrl: store,
        auto: !preview,
      };
    }
    target = fallback;
  } else if (platform === "android") {
    const app = link.apps.android;
    const custom = decorate(chosen ?? redirectUrl(link.android_custom_redirect), web);
    const fallback = custom ?? (app ? playStoreUrl(app, link, clickId) : null) ??
      decorate(redirectUrl(link.desktop_custom_redirect), web);
    preview = link.show_preview_android;
    const scheme = app?.scheme;
    target = link.android_custom_redirect.open_app_if_installed === true && app && scheme &&
        fallback
      ? intentUrl({ ...app, scheme }, link.path, fallback)
      : fallback;
  } else {
    target = decorate(chosen ?? redirectUrl(link.desktop_custom_redirect), web);
  }
  if (target && !preview && !crawler) return { action: "redirect", url: target };
  return { action: "page", destination: target };
}
