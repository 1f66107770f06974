// A project's apps on its link host: which host serves which project, the two association files
// Apple and Google fetch from it, and the store and app URLs the link host sends devices to.
import type { Db } from "../db/connect.ts";

export interface IosApp {
  team_id: string;
  bundle_id: string;
  app_store_id?: string | undefined;
  scheme?: string | undefined;
}

export interface AndroidApp {
  package: string;
  sha256_cert_fingerprints: string[];
  scheme?: string | undefined;
}

/** A project's apps as stored (projects.apps): a platform is absent when none is configured. */
export interface Apps {
  ios?: IosApp | undefined;
  android?: AndroidApp | undefined;
}

/**
 * The host a request was made to, as the link host compares it with link domains: the `Host`
 * header (behind a proxy, whatever the proxy forwards in it) in lower case, without port and
 * trailing dot. No X-Forwarded-Host is read: a client could set it to anything.
 */
export function requestHost(hostHeader: string | undefined): string {
  const host = (hostHeader ?? "").trim().toLowerCase();
  const bare = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.split(":")[0]!;
  return bare.replace(/\.$/, "");
}

/**
 * The projects served on `host`: the one whose link domain it is, or, when it is no project's
 * domain (LINK_BASE_URL's host, or however else the service is reached), every project without
 * a link domain. As SQL, so the link host resolves host and path in one query.
 */
export function servedOnHost(db: Db, host: string) {
  return db`(p.link_domain = ${host} or (p.link_domain is null and not exists (
    select 1 from projects d where d.link_domain = ${host})))`;
}

/** The apps of the projects served on `host`, in project order. */
export async function appsOnHost(db: Db, host: string): Promise<Apps[]> {
  const rows = await db<{ apps: Apps }[]>`
    select p.apps from projects p
    where ${servedOnHost(db, host)} and p.apps <> '{}'::jsonb
    order by p.id
  `;
  return rows.map((r) => r.apps);
}

/**
 * apple-app-site-association (Apple's "Supporting associated domains"): every path of the host
 * opens each app. `components` is the iOS 13+ form; `paths` (with the empty `apps` array) is
 * what iOS 12 and earlier read. Null when no iOS app is configured on the host.
 */
export function appleAppSiteAssociation(apps: readonly Apps[]): unknown {
  const ios = apps.flatMap((a) => (a.ios ? [a.ios] : []));
  if (ios.length === 0) return null;
  return {
    applinks: {
      apps: [],
      details: ios.map((app) => ({
        appIDs: [`${app.team_id}.${app.bundle_id}`],
        appID: `${app.team_id}.${app.bundle_id}`,
        components: [{ "/": "*", comment: "every link on this host" }],
        paths: ["*"],
      })),
    },
  };
}

/**
 * assetlinks.json (Google's Digital Asset Links): one statement per Android app granting it
 * every URL of the host. Null when no Android app is configured on the host.
 */
export function assetLinks(apps: readonly Apps[]): unknown {
  const android = apps.flatMap((a) => (a.android ? [a.android] : []));
  if (android.length === 0) return null;
  return android.map((app) => ({
    relation: ["delegate_permission/common.handle_all_urls"],
    target: {
      namespace: "android_app",
      package_name: app.package,
      sha256_cert_fingerprints: app.sha256_cert_fingerprints,
    },
  }));
}

/** What a link tells a freshly installed app (Play Store `referrer=`). */
export interface ReferrerLink {
  path: string;
  tracking_campaign: string | null;
  tracking_source: string | null;
  tracking_medium: string | null;
}

/**
 * The install referrer: `link_path=<path>&utm_campaign=…&utm_source=…&utm_medium=…`, each value
 * form-encoded. This is the string the Install Referrer API hands the app (Play decodes the
 * `referrer` parameter once), so the app parses it as a query string.
 */
export function installReferrer(link: ReferrerLink): string {
  const params = new URLSearchParams({ link_path: link.path });
  if (link.tracking_campaign) params.set("utm_campaign", link.tracking_campaign);
  if (link.tracking_source) params.set("utm_source", link.tracking_source);
  if (link.tracking_medium) params.set("utm_medium", link.tracking_medium);
  return params.toString();
}

/** The Play Store page of the app, carrying the install referrer of the link. */
export function playStoreUrl(app: AndroidApp, link: ReferrerLink): string {
  const url = new URL("https://play.google.com/store/apps/details");
  url.searchParams.set("id", app.package);
  url.searchParams.set("referrer", installReferrer(link));
  return url.href;
}

/** The App Store page of the app, or null when its App Store id is not configured. */
export function appStoreUrl(app: IosApp | undefined): string | null {
  return app?.app_store_id ? `https://apps.apple.com/app/id${app.app_store_id}` : null;
}

/** `<scheme>://<path>`: what the iOS page tries to open. */
export function appSchemeUrl(scheme: string, path: string): string {
  return `${scheme}://${encodeURIComponent(path)}`;
}

/**
 * Chrome's intent URL: opens `<scheme>://<path>` in the package when it is installed, and
 * `fallback` otherwise (Chrome reads the extra URI-decoded, so it is encoded whole once).
 */
export function intentUrl(app: AndroidApp & { scheme: string }, path: string, fallback: string) {
  return `intent://${
    encodeURIComponent(path)
  }#Intent;scheme=${app.scheme};package=${app.package};` +
    `S.browser_fallback_url=${encodeURIComponent(fallback)};end`;
}
