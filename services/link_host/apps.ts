// A project's apps on its link host: which host serves which project, the two association files
// Apple and Google fetch from it, and the store and app URLs the link host sends devices to.
import type { Db } from "../../db/connect.ts";

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

/** The host a link-host request was made to. */
export interface LinkHost {
  /** Lower case, without port and trailing dot. */
  name: string;
  /** LINK_BASE_URL's host or a direct address: where projects without a link domain are served. */
  isDefault: boolean;
}

// LINK_BASE_URL's host name, parsed once rather than on every hit.
let defaultHost: { base: string; name: string } | undefined;
function defaultHostname(linkBaseUrl: string): string {
  if (defaultHost?.base !== linkBaseUrl) {
    defaultHost = { base: linkBaseUrl, name: new URL(linkBaseUrl).hostname };
  }
  return defaultHost.name;
}

/**
 * Reads the `Host` header (behind a proxy, whatever the proxy forwards in it; no
 * X-Forwarded-Host is read, a client could set it to anything). The default host is
 * LINK_BASE_URL's, and also `localhost` and any IP address, so that the service answers when
 * reached directly (health checks, local development). Any other name is a project's link
 * domain or nothing: a domain pointed at the service by someone else serves no link.
 */
export function requestHost(hostHeader: string | undefined, linkBaseUrl: string): LinkHost {
  const host = (hostHeader ?? "").trim().toLowerCase();
  const bare = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.split(":")[0]!;
  const name = bare.replace(/\.$/, "");
  const isDefault = name === defaultHostname(linkBaseUrl) || name === "localhost" ||
    name.startsWith("[") || /^[0-9.]+$/.test(name);
  return { name, isDefault };
}

/**
 * The apps the association files of `host` declare: on a project's link domain, that project's;
 * on the default host, only the project the instance admin names as its owner
 * (DEFAULT_HOST_APPS_PROJECT), and only while it has no link domain of its own; otherwise none.
 *
 * Why not every project served there: the files grant an app every path of the host, and the
 * OS then hands that app any URL of the host instead of opening it. On a host several projects
 * share, each one's app would take the others' links too: one project could claim another's
 * links (and read the paths of links meant for another app). So a host declares apps only where
 * one project owns it: its own link domain, or the default host when the instance admin says
 * whose it is (typically an instance that serves a single project).
 */
export async function associatedApps(
  db: Db,
  host: LinkHost,
  defaultHostOwner: string | null,
): Promise<Apps | null> {
  if (host.isDefault && defaultHostOwner === null) return null;
  const owner = host.isDefault
    ? db`p.hashid = ${defaultHostOwner} and p.link_domain is null`
    : db`p.link_domain = ${host.name}`;
  const [row] = await db<{ apps: Apps }[]>`select p.apps from projects p where ${owner}`;
  return row?.apps ?? null;
}

/**
 * apple-app-site-association (Apple's "Supporting associated domains"): every path of the host
 * opens the app. `components` is the iOS 13+ form; `paths` (with the empty `apps` array) is
 * what iOS 12 and earlier read. Null when no iOS app is configured on the host.
 */
export function appleAppSiteAssociation(apps: Apps | null): unknown {
  const ios = apps?.ios ? [apps.ios] : [];
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
 * assetlinks.json (Google's Digital Asset Links): a statement granting the Android app every
 * URL of the host. Null when no Android app is configured on the host.
 */
export function assetLinks(apps: Apps | null): unknown {
  const android = apps?.android ? [apps.android] : [];
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
 * The install referrer: `link_path=<path>&click_id=…&utm_campaign=…&utm_source=…&utm_medium=…`,
 * each value form-encoded. This is the string the Install Referrer API hands the app (Play
 * decodes the `referrer` parameter once), so the app parses it as a query string. `click_id`
 * is the counted view's (none for a hit that is no view: a crawler, a bot, a HEAD).
 */
export function installReferrer(link: ReferrerLink, clickId: string | null = null): string {
  const params = new URLSearchParams({ link_path: link.path });
  if (clickId !== null) params.set("click_id", clickId);
  if (link.tracking_campaign) params.set("utm_campaign", link.tracking_campaign);
  if (link.tracking_source) params.set("utm_source", link.tracking_source);
  if (link.tracking_medium) params.set("utm_medium", link.tracking_medium);
  return params.toString();
}

/** The Play Store page of the app, carrying the install referrer of the link (and the click). */
export function playStoreUrl(
  app: AndroidApp,
  link: ReferrerLink,
  clickId: string | null = null,
): string {
  const url = new URL("https://play.google.com/store/apps/details");
  url.searchParams.set("id", app.package);
  url.searchParams.set("referrer", installReferrer(link, clickId));
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

/**
 * What is wrong with DEFAULT_HOST_APPS_PROJECT, for a warning at start-up: it names no project,
 * or one with a link domain (whose apps are then declared there, not on the default host).
 */
export async function defaultHostOwnerProblem(db: Db, hashid: string): Promise<string | null> {
  const [row] = await db<{ link_domain: string | null }[]>`
    select link_domain from projects where hashid = ${hashid}
  `;
  if (!row) return "names no project: the default host declares no app";
  if (row.link_domain !== null) {
    return `names a project with the link domain ${row.link_domain}: its apps are declared ` +
      "there, and the default host declares none";
  }
  return null;
}
