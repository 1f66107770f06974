// The links made in the dashboard (never those of generate_link): listing with search
// and pages, and the lifetime counters shown beside each.
import type { Db } from "../../db/connect.ts";
import type { LinkRow } from "./links.ts";
import { type LinkState, linkState } from "./manage.ts";
import { getEnvironmentOrThrow } from "../projects/projects.ts";

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

export type DashboardLinkRow = LinkRow & { counters: LinkCounters; state: LinkState };

/** The list's states: archived links are listed only when asked for. */
export const DASHBOARD_LINK_STATES = ["active", "inactive", "expired", "archived"] as const;

type CounterRow = LinkRow & LinkCounters & { limited_views: number };

const COUNTERS = `c.total_views::float8 as total_views, c.total_opens::float8 as total_opens,
  c.total_installs::float8 as total_installs, c.total_reinstalls::float8 as total_reinstalls,
  c.total_reactivations::float8 as total_reactivations,
  c.total_app_opens::float8 as total_app_opens,
  c.total_user_referred::float8 as total_user_referred,
  c.total_revenue::float8 as total_revenue, c.limited_views::float8 as limited_views`;

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
 * `state` keeps the links in that state at `now` (manage.ts's linkState); without it, every link
 * but the archived ones.
 */
export async function listDashboardLinks(
  db: Db,
  projectId: string | number,
  options: {
    search?: string | undefined;
    page?: number | undefined;
    perPage?: number;
    state?: LinkState | undefined;
    now: Date;
  },
): Promise<DashboardLinkPage> {
  const env = await getEnvironmentOrThrow(db, projectId);
  const perPage = options.perPage ?? DASHBOARD_LINKS_PER_PAGE;
  const page = Math.max(1, Math.min(options.page ?? 1, 100_000));
  const search = options.search?.trim() ?? "";
  const pattern = "%" + search.replace(/[\\%_]/g, (c) => "\\" + c) + "%";
  const state = options.state ?? "";
  const now = options.now;
  // The same rule as linkState, in SQL.
  const where = db`
    l.environment_id = ${env.id} and not l.sdk_generated
    and (${search === ""} or l.title ilike ${pattern} or l.path ilike ${pattern}
      or exists (select 1 from jsonb_array_elements_text(l.tags) t where t ilike ${pattern}))
    and case ${state}
      when 'archived' then l.archived
      when 'inactive' then not l.archived and not l.active
      when 'expired' then not l.archived and l.active
        and (l.expires_at <= ${now} or c.limited_views >= l.max_views)
      when 'active' then not l.archived and l.active
        and (l.expires_at is null or l.expires_at > ${now})
        and (l.max_views is null or c.limited_views < l.max_views)
      else not l.archived
    end
  `;
  const rows = await db<(CounterRow & { total: number })[]>`
    select l.*, ${db.unsafe(COUNTERS)}, count(*) over ()::int as total
    from links l join link_counters c on c.link_id = l.id
    where ${where}
    order by l.id desc
    limit ${perPage} offset ${(page - 1) * perPage}
  `;
  let total = rows[0]?.total ?? 0;
  if (rows.length === 0 && page > 1) {
    // Past the last page: the window count is not there to tell how many there are.
    const [row] = await db<{ n: number }[]>`
      select count(*)::int as n from links l join link_counters c on c.link_id = l.id
      where ${where}
    `;
    total = row!.n;
  }
  return {
    links: rows.map((r) => splitCounters(r, now)),
    page,
    per_page: perPage,
    total,
  };
}

/** One dashboard link of the environment by path, with its counters, or undefined. */
export async function getDashboardLink(
  db: Db,
  projectId: string | number,
  path: string,
  now: Date,
): Promise<DashboardLinkRow | undefined> {
  const env = await getEnvironmentOrThrow(db, projectId);
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(path)) return undefined;
  const [row] = await db<CounterRow[]>`
    select l.*, ${db.unsafe(COUNTERS)}
    from links l join link_counters c on c.link_id = l.id
    where l.environment_id = ${env.id} and l.path = ${path} and not l.sdk_generated
  `;
  return row ? splitCounters(row, now) : undefined;
}

/** The environment's active dashboard links with the most views first (the metrics page). */
export async function topDashboardLinks(
  db: Db,
  projectId: string | number,
  now: Date,
  limit = 50,
): Promise<DashboardLinkRow[]> {
  const env = await getEnvironmentOrThrow(db, projectId);
  const rows = await db<CounterRow[]>`
    select l.*, ${db.unsafe(COUNTERS)}
    from links l join link_counters c on c.link_id = l.id
    where l.environment_id = ${env.id} and not l.sdk_generated and l.active and not l.archived
    order by c.total_views desc, l.id
    limit ${limit}
  `;
  return rows.map((r) => splitCounters(r, now));
}

function splitCounters(row: CounterRow & { total?: number }, now: Date): DashboardLinkRow {
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
    limited_views,
    ...link
  } = row;
  return {
    ...link,
    state: linkState({ ...link, limited_views }, now),
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
