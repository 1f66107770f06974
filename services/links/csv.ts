// Links in bulk: an import that stores every row or none, and an export of every link with its
// counters. Both stream: rows go to PostgreSQL in batches as they arrive, and leave it in
// batches as the client reads, so memory stays flat however many there are.
import type { Db, Sql } from "../../db/connect.ts";
import { type AuditContext, recordAudit } from "../access/audit.ts";
import { ApiError } from "../errors.ts";
import { getEnvironmentOrThrow } from "../projects/projects.ts";
import { type ManagedNewLink, randomLinkPath, routingSql } from "./links.ts";
import type { ManagedLinkRow } from "./manage.ts";
import { LIFETIME_COUNTERS } from "./counters.ts";

export const MAX_IMPORT_ROWS = 100_000;
export const MAX_IMPORT_ERRORS = 100;
const BATCH = 1000;

export interface ImportError {
  /** 1 is the first row after the header; 0 the header itself. */
  row: number;
  field: string;
  message: string;
}

/** A row as the transport read it: the link it holds, or why it holds none. */
export type ImportInput =
  | { row: number; link: ManagedNewLink; errors?: undefined }
  | { row: number; link?: undefined; errors: ImportError[] };

/**
 * An import refused: the contract's 400 with every problem of every bad row (up to
 * MAX_IMPORT_ERRORS problems). The message counts rows, not problems: a row with two bad
 * fields is one bad row.
 */
export class ImportRefused extends ApiError {
  constructor(readonly errors: ImportError[]) {
    const rows = new Set(errors.map((e) => e.row)).size;
    super(
      "invalid_field",
      `the file has ${rows}${errors.length >= MAX_IMPORT_ERRORS ? " or more" : ""} bad row${
        rows === 1 ? "" : "s"
      }; nothing was imported`,
      { field: "file", details: { errors } },
    );
  }
}

interface Pending {
  n: number;
  link: ManagedNewLink;
  path: string;
  chosen: boolean;
}

/**
 * Imports links into the environment behind `projectId`, all or nothing: one transaction, its
 * rows inserted a batch at a time as `rows` yields them; any bad row (invalid, or a path taken
 * now or ever, or twice in the file) rolls the whole of it back and is reported by its number.
 * Rows keep their `path` when they give one (a team moving here keeps its printed links). An
 * import is one audit entry (`link.import`, with the count), not one per link.
 */
export async function importLinks(
  sql: Sql,
  projectId: string | number,
  rows: AsyncIterable<ImportInput>,
  audit: AuditContext,
): Promise<{ imported: number }> {
  const env = await getEnvironmentOrThrow(sql, projectId);
  const errors: ImportError[] = [];
  const fail = (e: ImportError) => {
    if (errors.length < MAX_IMPORT_ERRORS) errors.push(e);
  };
  let imported = 0;
  const result = await sql.begin(async (tx) => {
    let batch: Pending[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const taken = await insertBatch(tx, env.id, batch);
      for (const p of batch) {
        if (!taken.has(p.n)) imported++;
        else if (p.chosen) {
          fail({ row: p.n, field: "path", message: "is taken (by a link, now or in the past)" });
        } else {
          fail({ row: p.n, field: "path", message: "no free random path was found; retry" });
        }
      }
      batch = [];
    };
    // Paths chosen twice within one batch; across batches the unique index tells.
    let inBatch = new Set<string>();
    for await (const input of rows) {
      if (input.errors) {
        for (const e of input.errors) fail(e);
      } else {
        const chosen = input.link.path !== undefined;
        const path = input.link.path ?? randomLinkPath();
        if (inBatch.has(path)) {
          fail({ row: input.row, field: "path", message: "appears twice in the file" });
        } else {
          inBatch.add(path);
          batch.push({ n: input.row, link: input.link, path, chosen });
        }
      }
      if (errors.length >= MAX_IMPORT_ERRORS) break;
      if (batch.length >= BATCH) {
        await flush();
        inBatch = new Set();
      }
    }
    if (errors.length < MAX_IMPORT_ERRORS) await flush();
    if (errors.length > 0) throw new ImportRefused(errors.sort((a, b) => a.row - b.row));
    await recordAudit(tx, audit, {
      action: "link.import",
      project: { environmentId: env.id },
      target: { type: "environment", id: env.id },
      detail: { count: imported },
    });
    return { imported };
  });
  return result;
}

/**
 * Inserts a batch; answers the row numbers whose path was taken (by a link, or retired). A
 * path retired by a delete that committed while this insert waited for it is seen by the second
 * statement, which reads a fresh snapshot: no path is ever given twice.
 */
async function insertBatch(tx: Db, environmentId: number, batch: Pending[]): Promise<Set<number>> {
  const input = batch.map((p) => ({
    n: p.n,
    path: p.path,
    title: p.link.title ?? "",
    subtitle: p.link.subtitle ?? "",
    image: p.link.image ?? null,
    data: p.link.data ?? {},
    tags: p.link.tags ?? [],
    ios: p.link.ios_custom_redirect ?? {},
    android: p.link.android_custom_redirect ?? {},
    desktop: p.link.desktop_custom_redirect ?? {},
    show_preview_ios: p.link.show_preview_ios ?? false,
    show_preview_android: p.link.show_preview_android ?? false,
    tracking_campaign: p.link.tracking_campaign ?? null,
    tracking_source: p.link.tracking_source ?? null,
    tracking_medium: p.link.tracking_medium ?? null,
    expires_at: p.link.expires_at?.toISOString() ?? null,
    max_views: p.link.max_views ?? null,
    expired_url: p.link.expired_url ?? null,
    rules: p.link.rules?.length ? p.link.rules : null,
    split: p.link.split ?? null,
    forward_query: p.link.forward_query ?? false,
    append_utm: p.link.append_utm ?? false,
    pass_click_id: p.link.pass_click_id ?? false,
  }));
  // Two statements, the same on one server and on Citus: Citus refuses one statement whose
  // CTEs insert into both links (a reference table) and link_counters (distributed).
  const inserted = await tx<{ id: number; path: string }[]>`
    with input as (
      select * from jsonb_to_recordset(${tx.json(input as never)}) as r(
        n int, path text, title text, subtitle text, image text, data jsonb, tags jsonb,
        ios jsonb, android jsonb, desktop jsonb, show_preview_ios boolean,
        show_preview_android boolean, tracking_campaign text, tracking_source text,
        tracking_medium text, expires_at timestamptz, max_views int, expired_url text,
        rules jsonb, split jsonb, forward_query boolean, append_utm boolean,
        pass_click_id boolean,
        -- Never in a file: a password is set link by link (docs/links.md).
        password_hash text)
    )
    insert into links (
      environment_id, project_id, path, title, subtitle, image, data, tags,
      ios_custom_redirect, android_custom_redirect, desktop_custom_redirect,
      show_preview_ios, show_preview_android, tracking_campaign, tracking_source,
      tracking_medium, sdk_generated, generated_from_platform, expires_at, max_views,
      expired_url, rules, split, forward_query, append_utm, routing, pass_click_id
    )
    select ${environmentId}, (select project_id from environments where id = ${environmentId}),
      i.path, i.title, i.subtitle, i.image, i.data, i.tags, i.ios,
      i.android, i.desktop, i.show_preview_ios, i.show_preview_android, i.tracking_campaign,
      i.tracking_source, i.tracking_medium, false, 'Import', i.expires_at, i.max_views,
      i.expired_url, i.rules, i.split, i.forward_query, i.append_utm,
      ${tx.unsafe(routingSql("i"))}, i.pass_click_id
    from input i
    where not exists (select 1 from retired_link_paths r where r.path = i.path)
    order by i.n
    on conflict (path) do nothing
    returning id, path
  `;
  if (inserted.length > 0) {
    await tx`
      insert into link_counters (link_id, environment_id)
      select unnest(${inserted.map((r) => r.id)}::int[]), ${environmentId}
    `;
  }
  const insertedPaths = new Set(inserted.map((r) => r.path));
  const ok = new Set(batch.filter((p) => insertedPaths.has(p.path)).map((p) => p.n));
  const taken = new Set(batch.filter((p) => !ok.has(p.n)).map((p) => p.n));
  const retired = await tx<{ path: string }[]>`
    select path from retired_link_paths where path = any(${batch.map((p) => p.path)}::text[])
  `;
  if (retired.length > 0) {
    const paths = new Set(retired.map((r) => r.path));
    for (const p of batch) if (paths.has(p.path)) taken.add(p.n);
  }
  return taken;
}

/** The counters an export writes, after the link's own columns. */
export const EXPORT_COUNTERS = LIFETIME_COUNTERS;

export type ExportRow =
  & Omit<ManagedLinkRow, "total_views">
  & Record<(typeof EXPORT_COUNTERS)[number], string>;

/**
 * Every link of the environment (archived ones too; those of generate_link unless
 * `withSdkLinks` is false, as in the dashboard) with its counters, in id order, read
 * BATCH at a time as the consumer asks: no connection or transaction is held between batches,
 * so a slow download holds nothing but its place.
 */
export async function* exportLinks(
  sql: Sql,
  projectId: string | number,
  options: { withSdkLinks: boolean } = { withSdkLinks: true },
): AsyncGenerator<ExportRow> {
  const env = await getEnvironmentOrThrow(sql, projectId);
  let after = 0;
  for (;;) {
    const rows = await sql<ExportRow[]>`
      select l.*, null as link_domain, c.limited_views::float8 as limited_views,
        c.total_views::text as total_views, c.total_opens::text as total_opens,
        c.total_installs::text as total_installs, c.total_reinstalls::text as total_reinstalls,
        c.total_time_spent::text as total_time_spent,
        c.total_reactivations::text as total_reactivations,
        c.total_app_opens::text as total_app_opens,
        c.total_user_referred::text as total_user_referred,
        c.total_revenue::text as total_revenue
      from links l join link_counters c on c.link_id = l.id
      where l.environment_id = ${env.id} and l.id > ${after}
        and (${options.withSdkLinks} or not l.sdk_generated)
      order by l.id
      limit ${BATCH}
    `;
    for (const row of rows) yield row;
    if (rows.length < BATCH) return;
    after = rows.at(-1)!.id;
  }
}
