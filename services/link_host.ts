// What the link host does with a hit: which platform asks, whether it is a preview crawler,
// and whether to redirect or show the preview page. Views are recorded by view_recorder.ts.
import { isHttpUrl, type LinkRow, type Redirect } from "./links.ts";

export type Platform = "ios" | "android" | "desktop";

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
  | { action: "page"; destination: string | null };

function redirectUrl(redirect: Redirect | null | undefined): string | null {
  const url = redirect?.url;
  // Normalised again here: a Location header takes only what URL.href produces.
  return typeof url === "string" && isHttpUrl(url) ? new URL(url).href : null;
}

/**
 * iOS and Android follow their custom redirect unless the link asks for a preview there; the
 * desktop has no preview flag, so its redirect is always followed. Without a redirect (or for a
 * crawler) the answer is the preview page, linking to the platform's destination if it has one.
 * `open_app_if_installed` needs the app SDK on the device; the web host cannot act on it.
 */
export function decideHit(link: LinkRow, platform: Platform, crawler: boolean): LinkHit {
  const redirect = platform === "ios"
    ? link.ios_custom_redirect
    : platform === "android"
    ? link.android_custom_redirect
    : link.desktop_custom_redirect;
  const destination = redirectUrl(redirect);
  const preview = platform === "ios"
    ? link.show_preview_ios
    : platform === "android"
    ? link.show_preview_android
    : false;
  if (destination && !preview && !crawler) return { action: "redirect", url: destination };
  return { action: "page", destination };
}
