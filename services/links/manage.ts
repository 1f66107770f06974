// Managing an environment's links through the admin routes: the managed link (the Link object
// with its lifecycle and views), the cursor-paged list, edits, archive and delete.
import type { Db, Sql } from "../../db/connect.ts";
import { type AuditContext, recordAudit } from "../access/audit.ts";
import { ApiError, notFound } from "../errors.ts";
import { getEnvironmentOrThrow } from "../projects/projects.ts";
import {
  createLink,
  isLinkPath,
  type LinkRow,
  type ManagedNewLink,
  type Redirect,
  routingSql,
  toLink,
} from "./links.ts";
import type { Link } from "./links.ts";
import { lockPath } from "./paths.ts";
import type { LinkRule, LinkSplit } from "./rules.ts";
import { hashPassword } from "../access/passwords.ts";

export type LinkState = "active" | "inactive" | "archived" | "expired";
export const LINK_STATES: readonly LinkState[] = ["active", "inactive", "archived", "expired"];

/** The specification's Link object with its lifecycle and its views. */
export interface ManagedLink extends Link {
  created_at: string;
  archived: boolean;
  expires_at: string | null;
  max_views: number | null;
  expired_url: string | null;
  state: LinkState;
  total_views: number;
  rules: LinkRule[];
  split: LinkSplit | null;
  forward_query: boolean;
  append_utm: boolean;
  pass_click_id: boolean;
  password_protected: boolean;
}

export type ManagedLinkRow = LinkRow & { total_views: number; limited_views: number };

/**
 * A link's state at `now`: archived first, then switched off, then expired (by date, or once
 * max_views views were claimed), else active. listLinks' filter is the same rule in SQL.
 */
export function linkState(
  row: Pick<LinkRow, "archived" | "active" | "expires_at" | "max_views"> & {
    limited_views: number;
  },
  now: Date,
): LinkState {
  if (row.archived) return "archived";
  if (!row.active) return "inactive";
  if (row.expires_at !== null && row.expires_at <= now) return "expired";
  if (row.max_views !== null && row.limited_views >= row.max_views) return "expired";
  return "active";
}

export function toManagedLink(row: ManagedLinkRow, linkBaseUrl: string, now: Date): ManagedLink {
  return {
    ...toLink(row, linkBaseUrl),
    created_at: row.created_at.toISOString(),
    archived: row.archived,
    expires_at: row.expires_at?.toISOString() ?? null,
    max_views: row.max_views,
    expired_url: row.expired_url,
    state: linkState(row, now),
    total_views: row.total_views,
    rules: row.rules ?? [],
    split: row.split,
    forward_query: row.forward_query,
    append_utm: row.append_utm,
    pass_click_id: row.pass_click_id,
    password_protected: row.password_hash !== null,
  };
}

/** The managed link at `path` of the environment, or 404. */
export async function getManagedLinkOrThrow(
  db: Db,
  environmentId: number,
  path: string,
): Promise<ManagedLinkRow> {
  const [row] = isLinkPath(path)
    ? await db<ManagedLinkRow[]>`
      select l.*, p.link_domain, c.total_views::float8 as total_views,
        c.limited_views::float8 as limited_views
      from links l join link_counters c on c.link_id = l.id join projects p on p.id = l.project_id
      where l.environment_id = ${environmentId} and l.path = ${path}
    `
    : [];
  if (!row) throw notFound("link");
  return row;
}

/**
 * Creates a link through the admin API or the dashboard and reads it back; audited as
 * `link.create` in the same transaction.
 */
export async function createManagedLink(
  sql: Sql,
  projectId: string | number,
  input: ManagedNewLink & { password?: string | undefined },
  origin: "api" | "dashboard",
  audit: AuditContext,
): Promise<ManagedLinkRow> {
  const env = await getEnvironmentOrThrow(sql, projectId);
  const { password, ...fields } = input;
  const row = await createLink(
    sql,
    env.id,
    {
      ...fields,
      // Hashed as account passwords are; the password itself is never stored or logged.
      ...(password === undefined ? {} : { password_hash: await hashPassword(password) }),
    },
    origin,
    audit,
  );
  return { ...row, total_views: 0, limited_views: 0 };
}

/**
 * What an edit may change. `undefined` leaves a field as it is; `null` clears an optional one
 * (a text to empty, JSON to its empty value, the rest to null).
 */
export interface LinkPatch {
  title?: string | null | undefined;
  subtitle?: string | null | undefined;
  image?: string | null | undefined;
  data?: Record<string, unknown> | null | undefined;
  tags?: string[] | null | undefined;
  ios_custom_redirect?: Redirect | null | undefined;
  android_custom_redirect?: Redirect | null | undefined;
  desktop_custom_redirect?: Redirect | null | undefined;
  show_preview_ios?: boolean | undefined;
  show_preview_android?: boolean | undefined;
  tracking_campaign?: string | null | undefined;
  tracking_source?: string | null | undefined;
  tracking_medium?: string | null | undefined;
  active?: boolean | undefined;
  archived?: boolean | undefined;
  expires_at?: Date | null | undefined;
  max_views?: number | null | undefined;
  expired_url?: string | null | undefined;
  rules?: LinkRule[] | null | undefined;
  split?: LinkSplit | null | undefined;
  forward_query?: boolean | undefined;
  append_utm?: boolean | undefined;
  pass_click_id?: boolean | undefined;
  /** A new password (hashed here), or null to remove it. */
  password?: string | null | undefined;
}

const JSON_COLUMNS = new Set([
  "rules",
  "split",
  "data",
  "tags",
  "ios_custom_redirect",
  "android_custom_redirect",
  "desktop_custom_redirect",
]);
const CLEARED: Record<string, unknown> = {
  title: "",
  subtitle: "",
  data: {},
  tags: [],
  ios_custom_redirect: {},
  android_custom_redirect: {},
  desktop_custom_redirect: {},
};

/**
 * Applies `patch` to the link at `path`; `updated_at` moves. Setting a limit on a link that had
 * none counts the views it already has toward it. Every edit (activating, archiving and bringing
 * back included) is audited as `link.update` in the same transaction.
 */
export async function updateLink(
  sql: Sql,
  projectId: string | number,
  path: string,
  patch: LinkPatch,
  audit: AuditContext,
): Promise<ManagedLinkRow> {
  const env = await getEnvironmentOrThrow(sql, projectId);
  if (!isLinkPath(path)) throw notFound("link");
  const values: Record<string, unknown> = {};
  const { password, ...fields } = patch;
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    // No rules is null, as on a link that never had any (the link host then skips them).
    const v = value === null || (key === "rules" && Array.isArray(value) && value.length === 0)
      ? (CLEARED[key] ?? null)
      : value;
    values[key] = JSON_COLUMNS.has(key) && v !== null ? sql.json(v as never) : v;
  }
  if (password !== undefined) {
    values.password_hash = password === null ? null : await hashPassword(password);
  }
  const columns = Object.keys(values);
  return await sql.begin(async (tx) => {
    const [old] = await tx<{ id: number; max_views: number | null }[]>`
      select id, max_views from links
      where environment_id = ${env.id} and path = ${path} for update
    `;
    if (!old) throw notFound("link");
    if (columns.length > 0) {
      await tx`
        update links set ${tx(values, ...columns)}, updated_at = now() where id = ${old.id}
      `;
    } else {
      await tx`update links set updated_at = now() where id = ${old.id}`;
    }
    if (
      patch.rules !== undefined || patch.split !== undefined || patch.password !== undefined ||
      patch.forward_query !== undefined || patch.append_utm !== undefined
    ) {
      // What the link host reads (services/links/links.ts routingText), from the new values.
      await tx`update links set routing = ${tx.unsafe(routingSql())} where id = ${old.id}`;
    }
    if (old.max_views === null && patch.max_views != null) {
      await tx`update link_counters set limited_views = total_views where link_id = ${old.id}`;
    }
    await recordAudit(tx, audit, {
      action: "link.update",
      project: { environmentId: env.id },
      target: { type: "link", id: path },
    });
    return await getManagedLinkOrThrow(tx, env.id, path);
  });
}

/**
 * Deletes the link at `path` with its counters; its path is retired, never given again. The
 * analytics history and captured feed events keep their envelopes as they were recorded (their
 * link id then leads nowhere). Audited as `link.delete` in the same transaction.
 */
export async function deleteLink(
  sql: Sql,
  projectId: string | number,
  path: string,
  audit: AuditContext,
): Promise<void> {
  const env = await getEnvironmentOrThrow(sql, projectId);
  if (!isLinkPath(path)) throw notFound("link");
  await sql.begin(async (tx) => {
    await lockPath(tx, path);
    const [row] = await tx<{ path: string }[]>`
      delete from links where environment_id = ${env.id} and path = ${path} returning path
    `;
    if (!row) throw notFound("link");
    await tx`insert into retired_link_paths (path) values (${path}) on conflict do nothing`;
    await recordAudit(tx, audit, {
      action: "link.delete",
      project: { environmentId: env.id },
      target: { type: "link", id: path },
    });
  });
}

export type LinkOrderField = "created_at" | "updated_at" | "views";
export interface LinkOrder {
  field: LinkOrderField;
  desc: boolean;
}

export interface LinkListQuery {
  limit: number;
  after?: string | undefined;
  q?: string | undefined;
  tag?: string | undefined;
  campaign?: string | undefined;
  source?: string | undefined;
  medium?: string | undefined;
  state?: LinkState | undefined;
  sdk_generated?: boolean | undefined;
  order: LinkOrder;
}

export interface LinkListPage {
  links: ManagedLinkRow[];
  next_after: string | null;
  /** Each link's own cursor: `after` it reads on right after that link (GraphQL's edges). */
  cursors: string[];
}

/** A cursor: the order it belongs to, the last row's key (as PostgreSQL's text) and id. */
type Cursor = [order: string, key: string, id: number];

function orderName(order: LinkOrder): string {
  return (order.desc ? "-" : "") + order.field;
}

function encodeCursor(cursor: Cursor): string {
  return btoa(JSON.stringify(cursor)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

const TIMESTAMP_TEXT = /^\d{4,5}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?[+-]\d\d(:\d\d){0,2}$/;

function decodeCursor(raw: string, order: LinkOrder): Cursor {
  const bad = () => new ApiError("bad_cursor", "after is not a cursor of this list and order");
  let parsed: unknown;
  try {
    parsed = JSON.parse(atob(raw.replace(/-/g, "+").replace(/_/g, "/")));
  } catch {
    throw bad();
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) throw bad();
  const [name, key, id] = parsed;
  if (name !== orderName(order) || typeof key !== "string" || !Number.isSafeInteger(id)) {
    throw bad();
  }
  const keyOk = order.field === "views" ? /^[0-9]{1,19}$/.test(key) : TIMESTAMP_TEXT.test(key);
  if (!keyOk || id < 1 || id > 2_147_483_647) throw bad();
  return [name, key, id];
}

/**
 * One page of the environment's links, in `order` with the id as tie-break. The cursor is the
 * last row's sort key and id, so a page reads on from there whatever was added meanwhile (no
 * offset). Each order reads its own index (links_environment_created, …_updated, and
 * link_counters_views for views): a page deep in 100,000 links costs what the first one does.
 */
export async function listLinks(
  db: Db,
  projectId: string | number,
  query: LinkListQuery,
  now: Date,
): Promise<LinkListPage> {
  const env = await getEnvironmentOrThrow(db, projectId);
  const { order } = query;
  const cursor = query.after === undefined ? undefined : decodeCursor(query.after, order);
  const key = order.field === "views"
    ? db`c.total_views`
    : order.field === "created_at"
    ? db`l.created_at`
    : db`l.updated_at`;
  const id = order.field === "views" ? db`c.link_id` : db`l.id`;
  const keyText = order.field === "views"
    ? db`c.total_views::text`
    : order.field === "created_at"
    ? db`l.created_at::text`
    : db`l.updated_at::text`;
  let after = db``;
  if (cursor) {
    // The key goes as text: a parameter PostgreSQL types as timestamptz would be serialised by
    // postgres.js through a Date, losing the microseconds, and the page would start at the
    // cursor's own link again.
    const value = order.field === "views"
      ? db`${cursor[1]}::bigint`
      : db`${cursor[1]}::text::timestamptz`;
    after = order.desc
      ? db`and (${key}, ${id}) < (${value}, ${cursor[2]}::int)`
      : db`and (${key}, ${id}) > (${value}, ${cursor[2]}::int)`;
  }
  const expired = db`(coalesce(l.expires_at <= ${now}, false)
    or (l.max_views is not null and c.limited_views >= l.max_views))`;
  const state = query.state === undefined
    ? db`not l.archived`
    : query.state === "archived"
    ? db`l.archived`
    : query.state === "inactive"
    ? db`not l.archived and not l.active`
    : query.state === "expired"
    ? db`not l.archived and l.active and ${expired}`
    : db`not l.archived and l.active and not ${expired}`;
  const pattern = query.q === undefined
    ? undefined
    : "%" + query.q.replace(/[\\%_]/g, (c) => "\\" + c) + "%";
  const rows = await db<(ManagedLinkRow & { sort_key: string })[]>`
    select l.*, p.link_domain, c.total_views::float8 as total_views,
      c.limited_views::float8 as limited_views, ${keyText} as sort_key
    from links l join link_counters c on c.link_id = l.id
      join projects p on p.id = ${env.projectId}
    where l.environment_id = ${env.id} and c.environment_id = ${env.id} and ${state}
      ${after}
      ${
    pattern === undefined
      ? db``
      : db`and (l.title ilike ${pattern} or l.subtitle ilike ${pattern} or l.path ilike ${pattern})`
  }
      ${query.tag === undefined ? db`` : db`and l.tags @> jsonb_build_array(${query.tag}::text)`}
      ${query.campaign === undefined ? db`` : db`and l.tracking_campaign = ${query.campaign}`}
      ${query.source === undefined ? db`` : db`and l.tracking_source = ${query.source}`}
      ${query.medium === undefined ? db`` : db`and l.tracking_medium = ${query.medium}`}
      ${query.sdk_generated === undefined ? db`` : db`and l.sdk_generated = ${query.sdk_generated}`}
    order by ${key} ${order.desc ? db`desc` : db`asc`}, ${id} ${order.desc ? db`desc` : db`asc`}
    limit ${query.limit + 1}
  `;
  const more = rows.length > query.limit;
  const page = more ? rows.slice(0, query.limit) : rows;
  const last = page.at(-1);
  return {
    links: page.map(({ sort_key: _k, ...row }) => row),
    next_after: more && last ? encodeCursor([orderName(order), last.sort_key, last.id]) : null,
    cursors: page.map((row) => encodeCursor([orderName(order), row.sort_key, row.id])),
  };
}
