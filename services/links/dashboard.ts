// The links made in the dashboard (never those of generate_link): listing with search
// and pages, and the lifetime counters shown beside each.
import type { Db } from "../../db/connect.ts";
import type { LinkRow } from "./links.ts";
import { getEnvironmentOrThrow } from "../projects.ts";

export const DASHBOARD_LINKS_PER_PAGE = 20;

export interface LinkCounters {
  total_views: number;
  total_opens: number;
  total_installs: number;
  total_reinstalls: number;
  total_reactivations: number;
  total_app_opens: number;
  total_user_referred: number;
  total_revenue: number;
}

export type DashboardLinkRow = LinkRow & { counters: LinkCounters };

export interface DashboardLinkPage {
  links: DashboardLinkRow[];
  /** 1-based. */
  page: number;
  per_page: number;
  /** Links matching the search, over all pages. */
  total: number;
}

/**
 * One page of the environment's dashboard links, newest first. `search` matches a substring of
 * the title, the path, or any tag, case-insensitively; LIKE's wildcards in it are taken literally.
 */
export async function listDashboardLinks(
  db: Db,
  projectId: string | number,
  options: { search?: string | undefined; page?: number | undefined; perPage?: number } = {},
): Promise<DashboardLinkPage> {
  const env = await getEnvironmentOrThrow(db, projectId);
  const perPage = options.perPage ?? DASHBOARD_LINKS_PER_PAGE;
  const page = Math.max(1, Math.min(options.page ?? 1, 100_000));
  const search = options.search?.trim() ?? "";
  const pattern = "%" + search.replace(/[\\%_]/g, (c) => "\\" + c) + "%";
  const rows = await db<(LinkRow & LinkCounters & { total: number })[]>`
    select l.*, c.total_views::float8 as total_views, c.total_opens::float8 as total_opens,
      c.total_installs::float8 as total_installs, c.total_reinstalls::float8 as total_reinstalls,
      c.total_reactivations::float8 as total_reactivations,
      c.total_app_opens::float8 as total_app_opens,
      c.total_user_referred::float8 as total_user_referred,
      c.total_revenue::float8 as total_revenue,
      count(*) over ()::int as total
    from links l join link_counters c on c.link_id = l.id
    where l.environment_id = ${env.id} and not l.sdk_generated and not l.archived
      and (${search === ""} or l.title ilike ${pattern} or l.path ilike ${pattern}
        or exists (select 1 from jsonb_array_elements_text(l.tags) t where t ilike ${pattern}))
    order by l.id desc
    limit ${perPage} offset ${(page - 1) * perPage}
  `;
  let total = rows[0]?.total ?? 0;
  if (rows.length === 0 && page > 1) {
    // Past the last page: the window count is not there to tell how many there are.
    const [row] = await db<{ n: number }[]>`
      select count(*)::int as n from links l
      where l.environment_id = ${env.id} and not l.sdk_generated and not l.archived
        and (${search === ""} or l.title ilike ${pattern} or l.path ilike ${pattern}
          or exists (select 1 from jsonb_array_elements_text(l.tags) t where t ilike ${pattern}))
    `;
    total = row!.n;
  }
  return { links: rows.map(splitCounters), page, per_page: perPage, total };
}

/** One dashboard link of the environment by path, with its counters, or undefined. */
export async function getDashboardLink(
  db: Db,
  projectId: string | number,
  path: string,
): Promise<DashboardLinkRow | undefined> {
  const env = await getEnvironmentOrThrow(db, projectId);
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(path)) return undefined;
  const [row] = await db<(LinkRow & LinkCounters)[]>`
    select l.*, c.total_views::float8 as total_views, c.total_opens::float8 as total_opens,
      c.total_installs::float8 as total_installs, c.total_reinstalls::float8 as total_reinstalls,
      c.total_reactivations::float8 as total_reactivations,
      c.total_app_opens::float8 as total_app_opens,
      c.total_user_referred::float8 as total_user_referred,
      c.total_revenue::float8 as total_revenue
    from links l join link_counters c on c.link_id = l.id
    where l.environment_id = ${env.id} and l.path = ${path} and not l.sdk_generated
  `;
  return row ? splitCounters(row) : undefined;
}

/** The environment's active dashboard links with the most views first (the metrics page). */
export async function topDashboardLinks(
  db: Db,
  projectId: string | number,
  limit = 50,
): Promise<DashboardLinkRow[]> {
  const env = await getEnvironmentOrThrow(db, projectId);
  const rows = await db<(LinkRow & LinkCounters)[]>`
    select l.*, c.total_views::float8 as total_views, c.total_opens::float8 as total_opens,
      c.total_installs::float8 as total_installs, c.total_reinstalls::float8 as total_reinstalls,
      c.total_reactivations::float8 as total_reactivations,
      c.total_app_opens::float8 as total_app_opens,
      c.total_user_referred::float8 as total_user_referred,
      c.total_revenue::float8 as total_revenue
    from links l join link_counters c on c.link_id = l.id
    where l.environment_id = ${env.id} and not l.sdk_generated and l.active and not l.archived
    order by c.total_views desc, l.id
    limit ${limit}
  `;
  return rows.map(splitCounters);
}

function splitCounters(row: LinkRow & LinkCounters & { total?: number }): DashboardLinkRow {
  const {
    total_views,
    total_opens,
    total_installs,
    total_reinstalls,
    total_reactivations,
    total_app_opens,
    total_user_referred,
    total_revenue,
    total: _total,
    ...link
  } = row;
  return {
    ...link,
    counters: {
      total_views,
      total_opens,
      total_installs,
      total_reinstalls,
      total_reactivations,
      total_app_opens,
      total_user_referred,
      total_revenue,
    },
  };
}
