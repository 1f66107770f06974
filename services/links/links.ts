import type { Db, Sql } from "../../db/connect.ts";
import { type AuditContext, recordAudit } from "../access/audit.ts";
import { isUniqueViolation, notFound } from "../errors.ts";
import { authenticateSdk, LINK_ENVIRONMENTS, type SdkHeaders } from "../access/sdk_auth.ts";
import { createLinkCounters } from "./counters.ts";
import { checkChosenPath, lockPath, pathTaken } from "./paths.ts";
import { hashSecret, plausibleSecret } from "../../infra/secrets.ts";
import { wrongProjectKey } from "../projects/projects.ts";
import type { Apps, LinkHost } from "../link_host/apps.ts";
import type { LinkRule, LinkSplit } from "./rules.ts";

export interface Redirect {
  url?: string;
  open_app_if_installed?: boolean;
}

/** The specification's Link object. */
export interface Link {
  id: number;
  title: string;
  subtitle: string;
  path: string;
  access_path: string;
  updated_at: string;
  generated_from_platform: string;
  data: Record<string, unknown>;
  sdk_generated: boolean;
  tags: string[];
  active: boolean;
  tracking_campaign: string | null;
  tracking_source: string | null;
  tracking_medium: string | null;
  show_preview: boolean;
  image: string | null;
  ios_custom_redirect: Redirect;
  android_custom_redirect: Redirect;
  desktop_custom_redirect: Redirect;
}

export interface LinkRow {
  id: number;
  environment_id: number;
  path: string;
  title: string;
  subtitle: string;
  image: string | null;
  data: Record<string, unknown>;
  tags: string[];
  ios_custom_redirect: Redirect;
  android_custom_redirect: Redirect;
  desktop_custom_redirect: Redirect;
  show_preview_ios: boolean;
  show_preview_android: boolean;
  tracking_campaign: string | null;
  tracking_source: string | null;
  tracking_medium: string | null;
  sdk_generated: boolean;
  generated_from_platform: string;
  active: boolean;
  archived: boolean;
  expires_at: Date | null;
  /** Null: no limit on views. */
  max_views: number | null;
  expired_url: string | null;
  /** Ordered redirect rules (services/links/rules.ts), null when none. */
  rules: LinkRule[] | null;
  /** The split for hits no rule took, null when none. */
  split: LinkSplit | null;
  forward_query: boolean;
  append_utm: boolean;
  /** Whether the link host appends the view's `click_id` to the link's web destinations. */
  pass_click_id: boolean;
  /** Never leaves the service: the managed link shows `password_protected`. */
  password_hash: string | null;
  created_at: Date;
  updated_at: Date;
  /** The project's link domain when the row was read (a join, not a column of links). */
  link_domain: string | null;
}

/** What a new link may carry; everything is optional, as on `generate_link`. */
export interface NewLink {
  title?: string | undefined;
  subtitle?: string | undefined;
  image?: string | undefined;
  data?: Record<string, unknown> | undefined;
  tags?: string[] | undefined;
  ios_custom_redirect?: Redirect | undefined;
  android_custom_redirect?: Redirect | undefined;
  desktop_custom_redirect?: Redirect | undefined;
  show_preview_ios?: boolean | undefined;
  show_preview_android?: boolean | undefined;
  tracking_campaign?: string | undefined;
  tracking_source?: string | undefined;
  tracking_medium?: string | undefined;
}

/** What the admin routes may add to a new link: a chosen path and its expiry. */
export interface ManagedNewLink extends NewLink {
  path?: string | undefined;
  expires_at?: Date | undefined;
  max_views?: number | undefined;
  expired_url?: string | undefined;
  rules?: LinkRule[] | undefined;
  split?: LinkSplit | undefined;
  forward_query?: boolean | undefined;
  append_utm?: boolean | undefined;
  pass_click_id?: boolean | undefined;
  /** The password's hash (services/access/passwords.ts), never the password. */
  password_hash?: string | undefined;
}

/**
 * The `routing` column the link host reads: everything that decides a hit beyond the platform
 * redirects, `[rules, split, forward_query, append_utm, password_protected]` as JSON text, or
 * null when the link has none of them: a plain link's hit reads one null more than before.
 * routingSql is the same over a row's columns (its text may be spaced differently: both parse
 * alike).
 */
export function routingText(link: {
  rules?: readonly unknown[] | null | undefined;
  split?: readonly unknown[] | null | undefined;
  forward_query?: boolean | undefined;
  append_utm?: boolean | undefined;
  password_hash?: string | null | undefined;
}): string | null {
  const rules = link.rules?.length ? link.rules : null;
  const split = link.split ?? null;
  const forward = link.forward_query ?? false;
  const utm = link.append_utm ?? false;
  const password = (link.password_hash ?? null) !== null;
  if (rules === null && split === null && !forward && !utm && !password) return null;
  return JSON.stringify([rules, split, forward, utm, password]);
}

/** routingText in SQL, over the columns of `alias` (a table alias, or none). */
export function routingSql(alias = ""): string {
  const c = (name: string) => (alias ? `${alias}.${name}` : name);
  return `case when ${c("rules")} is null and ${c("split")} is null and not ${c("forward_query")}
      and not ${c("append_utm")} and ${c("password_hash")} is null then null
    else json_build_array(${c("rules")}, ${c("split")}, ${c("forward_query")},
      ${c("append_utm")}, ${c("password_hash")} is not null)::text end`;
}

/** An absolute http(s) URL with a host: the only redirect targets the link host follows. */
export function isHttpUrl(value: string): boolean {
  if (!/^https?:\/\//i.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

/**
 * Whether `path` could be a link path at all. Anything else is simply not found, before any
 * query: a NUL or a malformed escape in a URL must not reach PostgreSQL.
 */
export function isLinkPath(path: string): boolean {
  return /^[A-Za-z0-9_-]{1,128}$/.test(path);
}

/**
 * The link's URL: on its project's link domain, or on LINK_BASE_URL when the project has none.
 * Derived whenever a link is read, so a domain change moves every link of the project at once.
 */
export function accessPath(
  linkBaseUrl: string,
  link: { path: string; link_domain: string | null },
): string {
  return `${link.link_domain ? `https://${link.link_domain}` : linkBaseUrl}/${link.path}`;
}

/** A link shows the preview page if it does so on either platform. */
export function showsPreview(row: Pick<LinkRow, "show_preview_ios" | "show_preview_android">) {
  return row.show_preview_ios || row.show_preview_android;
}

export function toLink(row: LinkRow, linkBaseUrl: string): Link {
  return {
    id: row.id,
    title: row.title,
    subtitle: row.subtitle,
    path: row.path,
    access_path: accessPath(linkBaseUrl, row),
    updated_at: row.updated_at.toISOString(),
    generated_from_platform: row.generated_from_platform,
    data: row.data,
    sdk_generated: row.sdk_generated,
    tags: row.tags,
    active: row.active,
    tracking_campaign: row.tracking_campaign,
    tracking_source: row.tracking_source,
    tracking_medium: row.tracking_medium,
    show_preview: showsPreview(row),
    image: row.image,
    ios_custom_redirect: row.ios_custom_redirect,
    android_custom_redirect: row.android_custom_redirect,
    desktop_custom_redirect: row.desktop_custom_redirect,
  };
}

const PATH_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const PATH_LENGTH = 10;

/** A random path of PATH_LENGTH characters from the CSPRNG, without modulo bias. */
export function randomLinkPath(): string {
  let out = "";
  const buf = new Uint8Array(32);
  while (out.length < PATH_LENGTH) {
    crypto.getRandomValues(buf);
    for (const b of buf) {
      // 248 = 4 × 62: bytes above it would favour the first characters.
      if (b < 248 && out.length < PATH_LENGTH) out += PATH_ALPHABET[b % 62];
    }
  }
  return out;
}

const MAX_PATH_ATTEMPTS = 5;

/**
 * Where a link was made: `generate_link` (the default), the dashboard, the admin API or an
 * import. Only generate_link's links are `sdk_generated`.
 */
export type LinkOrigin = "sdk" | "dashboard" | "api" | "import";

const PLATFORM: Record<LinkOrigin, string> = {
  sdk: "API",
  dashboard: "Dashboard",
  api: "API",
  import: "Import",
};

/**
 * Inserts a link with its chosen path, or a fresh random one (a collision is retried, never
 * returned). A path any link ever had, deleted ones included, is never given again: a chosen one
 * is refused with a 400 naming `path`.
 */
export async function createLink(
  sql: Sql,
  environmentId: number,
  input: ManagedNewLink,
  origin: LinkOrigin = "sdk",
  /** A change by a person or a program (not an app's SDK) is audited in the same transaction. */
  audit?: AuditContext,
): Promise<LinkRow> {
  const chosen = input.path;
  if (chosen !== undefined) checkChosenPath(chosen);
  for (let attempt = 1;; attempt++) {
    const path = chosen ?? randomLinkPath();
    try {
      const row = await sql.begin(async (tx) => {
        // Taken with deleteLink's: a path being retired is either still a link here (unique
        // violation) or already retired (no row), never free in between.
        if (chosen !== undefined) await lockPath(tx, chosen);
        const [row] = await tx<LinkRow[]>`
          with l as (insert into links (
            environment_id, project_id, path, title, subtitle, image, data, tags,
            ios_custom_redirect, android_custom_redirect, desktop_custom_redirect,
            show_preview_ios, show_preview_android,
            tracking_campaign, tracking_source, tracking_medium,
            sdk_generated, generated_from_platform, expires_at, max_views, expired_url,
            rules, split, forward_query, append_utm, password_hash, routing, pass_click_id
          ) select
            ${environmentId}, (select project_id from environments where id = ${environmentId}),
            ${path}, ${input.title ?? ""}, ${input.subtitle ?? ""},
            ${input.image ?? null}, ${tx.json((input.data ?? {}) as never)},
            ${tx.json((input.tags ?? []) as never)},
            ${tx.json((input.ios_custom_redirect ?? {}) as never)},
            ${tx.json((input.android_custom_redirect ?? {}) as never)},
            ${tx.json((input.desktop_custom_redirect ?? {}) as never)},
            ${input.show_preview_ios ?? false}, ${input.show_preview_android ?? false},
            ${input.tracking_campaign ?? null}, ${input.tracking_source ?? null},
            ${input.tracking_medium ?? null},
            ${origin === "sdk"}, ${PLATFORM[origin]}, ${input.expires_at ?? null},
            ${input.max_views ?? null}, ${input.expired_url ?? null},
            ${input.rules?.length ? tx.json(input.rules as never) : null},
            ${input.split ? tx.json(input.split as never) : null},
            ${input.forward_query ?? false}, ${input.append_utm ?? false},
            ${input.password_hash ?? null}, ${routingText(input)}, ${input.pass_click_id ?? false}
          where not exists (select 1 from retired_link_paths r where r.path = ${path})
          returning *)
          select l.*, p.link_domain
          from l join projects p on p.id = l.project_id
        `;
        if (row) {
          await createLinkCounters(tx, row.id, environmentId);
          if (audit) {
            await recordAudit(tx, audit, {
              action: "link.create",
              project: { environmentId },
              target: { type: "link", id: row.path },
            });
          }
        }
        return row;
      });
      if (row) return row;
      if (chosen !== undefined) throw pathTaken();
    } catch (err) {
      if (isUniqueViolation(err, "links_path_key")) {
        if (chosen !== undefined) throw pathTaken();
        if (attempt < MAX_PATH_ATTEMPTS) continue;
      }
      throw err;
    }
    if (attempt >= MAX_PATH_ATTEMPTS) throw new Error("no free link path after retries");
  }
}

/** The link at `path` in the environment, active or not. */
export async function getLinkByPath(
  db: Db,
  environmentId: number,
  path: string,
): Promise<LinkRow | undefined> {
  if (!isLinkPath(path)) return undefined;
  const [row] = await db<LinkRow[]>`
    select l.*, p.link_domain
    from links l join projects p on p.id = l.project_id
    where l.path = ${path} and l.environment_id = ${environmentId}
  `;
  return row;
}

/**
 * The columns of links that the driver reads as plain values (text, numbers, booleans), and the
 * project's link domain: no JSON, array or timestamp, which cost the most of a row to parse.
 */
export const PLAIN_LINK_COLUMNS: ReadonlySet<LinkColumn> = new Set<LinkColumn>([
  "id",
  "environment_id",
  "path",
  "title",
  "subtitle",
  "image",
  "show_preview_ios",
  "show_preview_android",
  "tracking_campaign",
  "tracking_source",
  "tracking_medium",
  "sdk_generated",
  "generated_from_platform",
  "active",
  "archived",
  "max_views",
  "expired_url",
  "link_domain",
]);

/**
 * REST link lookup in one round trip: the SDK headers are authenticated in the same query that
 * finds the link (a left join tells a wrong key, 401, from a missing link, 404). It is the
 * hottest SDK path, and a second query would cost a third of its throughput. Anything unusual
 * (no key, a bad ENVIRONMENT, a path that cannot be a link) takes authenticateSdk's path, so the
 * answers and their order stay exactly those of every other SDK endpoint.
 */
export async function getLinkForSdkOrThrow(
  db: Db,
  headers: SdkHeaders,
  path: string,
): Promise<LinkRow> {
  const trip = oneTrip(headers, path);
  if (!trip) return await lookupAfterAuthentication(db, headers, path);
  const [row] = await db<LookupRow[]>`
    select l.*, p.link_domain
    from projects p
      join environments e on e.project_id = p.id and e.kind = ${trip.kind}
      left join links l on l.environment_id = e.id and l.path = ${path}
    where p.key_hash = ${trip.keyHash}
  `;
  return foundLink(row);
}

/**
 * getLinkForSdkOrThrow with the same checks and answers, whose row holds PLAIN_LINK_COLUMNS and
 * those only when the link is found in one round trip (any other path reads every column):
 * GraphQL's `link(path)` when its selection needs no more. Its own function and its own whole
 * statement: one function switching between the two statements made the REST lookup slower in
 * the same process once GraphQL had run it (1.11 and 1.21 of its CPU per request, per pair), and
 * a column list as a nested fragment is a query object built anew on every call.
 */
export async function getPlainLinkForSdkOrThrow(
  db: Db,
  headers: SdkHeaders,
  path: string,
): Promise<LinkRow> {
  const trip = oneTrip(headers, path);
  if (!trip) return await lookupAfterAuthentication(db, headers, path);
  const [row] = await db<LookupRow[]>`
    select l.id, l.environment_id, l.path, l.title, l.subtitle, l.image, l.show_preview_ios,
      l.show_preview_android, l.tracking_campaign, l.tracking_source, l.tracking_medium,
      l.sdk_generated, l.generated_from_platform, l.active, l.archived, l.max_views,
      l.expired_url, p.link_domain
    from projects p
      join environments e on e.project_id = p.id and e.kind = ${trip.kind}
      left join links l on l.environment_id = e.id and l.path = ${path}
    where p.key_hash = ${trip.keyHash}
  `;
  return foundLink(row);
}

/** A lookup's row: the link's, or nulls when the key is right and there is no such link. */
type LookupRow = LinkRow | { [K in keyof LinkRow]: null };

/**
 * What a one-trip lookup joins on (the environment kind, the key's hash), or null when anything
 * is unusual (no key, a bad ENVIRONMENT, a path that cannot be a link):
 * lookupAfterAuthentication answers then.
 */
function oneTrip(headers: SdkHeaders, path: string) {
  const kind = headers.environment == null ? undefined : LINK_ENVIRONMENTS.get(headers.environment);
  if (!plausibleSecret(headers.projectKey) || kind === undefined || !isLinkPath(path)) return null;
  return { kind, keyHash: hashSecret(headers.projectKey) };
}

/** The lookup through authenticateSdk, with every other SDK endpoint's answers and order. */
async function lookupAfterAuthentication(
  db: Db,
  headers: SdkHeaders,
  path: string,
): Promise<LinkRow> {
  const environment = await authenticateSdk(db, headers, LINK_ENVIRONMENTS);
  return await getLinkByPathOrThrow(db, environment.id, path);
}

/** A one-trip lookup's answer: no row is a wrong key (401), a row of nulls a missing link. */
function foundLink(row: LookupRow | undefined): LinkRow {
  if (!row) throw wrongProjectKey();
  if (row.id === null) throw notFound("link");
  return row as LinkRow;
}

/** The link at `path` in the environment, active or not, or 404 `not_found`. */
export async function getLinkByPathOrThrow(
  db: Db,
  environmentId: number,
  path: string,
): Promise<LinkRow> {
  const row = await getLinkByPath(db, environmentId, path);
  if (!row) throw notFound("link");
  return row;
}

/** What the link host needs of a link: its routing, its preview, and what a view records. */
export type HostedLink =
  & Pick<
    LinkRow,
    | "id"
    | "environment_id"
    | "path"
    | "link_domain"
    | "title"
    | "subtitle"
    | "image"
    | "ios_custom_redirect"
    | "android_custom_redirect"
    | "desktop_custom_redirect"
    | "show_preview_ios"
    | "show_preview_android"
    | "tracking_campaign"
    | "tracking_source"
    | "tracking_medium"
    | "expires_at"
    | "max_views"
    | "expired_url"
    | "pass_click_id"
  >
  & {
    apps: Apps;
    /** What decides beyond the platform redirects (routingText), null when nothing does. */
    routing: string | null;
  };

/**
 * The active, unarchived link at `path` if its project is served on `host` (services/link_host/apps.ts):
 * a project with a link domain only there, the others on the default host. Paths are unique on
 * the instance, so the path alone finds the link; the host only admits it.
 *
 * Every hit reads the link here, in the hit's one query: no instance keeps a link between hits,
 * so an edit, an archive or a delete made on any instance is what the next hit on every instance
 * sees, with no notification to miss. The caches on the way are keyed by their source's own
 * text: redirect URLs (services/links/host.ts) and compiled rules (services/links/rules.ts), so
 * an edit is a new key, never a stale value.
 */
export async function getHostedLink(
  db: Db,
  host: LinkHost,
  path: string,
): Promise<HostedLink | undefined> {
  if (!isLinkPath(path)) return undefined;
  const [row] = await db<HostedLink[]>`
    -- Only the columns a hit uses: the link's data and tags (up to 64 KiB of JSON) are not
    -- fetched and parsed on every redirect.
    select l.id, l.environment_id, l.path, p.link_domain, l.title, l.subtitle, l.image,
      l.ios_custom_redirect, l.android_custom_redirect, l.desktop_custom_redirect,
      l.show_preview_ios, l.show_preview_android, l.tracking_campaign, l.tracking_source,
      l.tracking_medium, l.expires_at, l.max_views, l.expired_url, l.pass_click_id, p.apps,
      -- Rules, split, forwarding and password as stored text (null for a plain link):
      -- compiled once per distinct text (services/links/rules.ts), not serialised or parsed
      -- on every hit.
      l.routing
    from links l join projects p on p.id = l.project_id
    where l.path = ${path} and l.active and not l.archived
      -- The projects served on the host: the one whose link domain it is, or, on the default
      -- host, every project without one (link domains are never the default host: projects.ts
      -- refuses it, and inputs/project_settings.ts refuses IP addresses and single labels).
      -- Written here rather than as a fragment: a nested fragment cost every hit the building
      -- of a second query object.
      and (p.link_domain = ${host.name} or (${host.isDefault} and p.link_domain is null))
  `;
  return row;
}

/** A column listLinksByIds can read: the link's, or its counters' count of views toward max_views. */
export type LinkColumn = keyof LinkRow | "limited_views";

/**
 * Links by id, in one query (a GraphQL page's links): every column, or only `columns` (the rows
 * then hold just those; `limited_views` comes from the link's counters).
 */
export async function listLinksByIds(
  db: Db,
  ids: readonly number[],
  columns?: readonly LinkColumn[],
): Promise<(LinkRow & { limited_views?: number })[]> {
  if (ids.length === 0) return [];
  const counters = columns?.includes("limited_views") ?? false;
  const selected = columns
    ? db(
      columns.map((c) =>
        c === "link_domain" ? "p.link_domain" : c === "limited_views" ? "limited_views" : `l.${c}`
      ),
    )
    : db`l.*, p.link_domain`;
  if (!counters) {
    return await db<LinkRow[]>`
      select ${selected}
      from links l join projects p on p.id = l.project_id
      where l.id = any(${ids as number[]}::int[])
    `;
  }
  return await db<LinkRow[]>`
    select ${selected}
    from links l join projects p on p.id = l.project_id
      join lateral (select c.limited_views::float8 as limited_views
        from link_counters c where c.link_id = l.id) c on true
    where l.id = any(${ids as number[]}::int[])
  `;
}
