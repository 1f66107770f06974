// The funnel (CONTRACT, "Attribution"): for an environment, one link, or the top links by
// revenue, how many views brought how many installs, paying users, purchases and how much
// revenue, each step's rate, and the median time from click to install. Read from what ingestion
// writes when it attributes (migration 00028): attributed_installs, one row per attributed install
// with its click-to-install seconds, and purchase_versions, the current version of each purchase
// with its link and user; views from the analytics rollups (./rollups.ts) and the links' days
// kept from them (./link_days.ts).
//
// Period membership, as analytics counts: an install by its occurred_at, a purchase by the hour
// of its current version's event, a view by its rollup hour. The range is widened to whole hours
// of `tz` (./query.ts queryRange), so the three agree; the figures of a range equal counts over
// the stored events with the same rules.
//
// Purchases follow the revenue metric (./rollups.ts purchaseRollupRows): only the current
// version of each (transaction_id, name) counts, in the reporting currency; one that no
// exchange rate converts counts in none of purchases, revenue and purchasers (analytics'
// unconverted_purchases counts it).
//
// Speed: the ranking is computed from the two small tables (a row per install or purchase), and
// views only for the links listed (and those tied with the last of them), from the links' days
// (./link_days.ts); the environment's views come from the margins (./query.ts environmentViews),
// its installs and their median from the installs' days (../attribution/install_days.ts).
// Users are told apart byte by byte (collate "C": the same distinct values as the default
// collation's equality, without its slower comparisons).
import type { Db, Sql } from "../../db/connect.ts";
import { environmentInstalls } from "../attribution/install_days.ts";
import { ApiError } from "../errors.ts";
import { linkViewsSelect } from "./link_days.ts";
import { parseAnalyticsParams } from "./params.ts";
import { type AnalyticsQuery, environmentViews, queryRange, type Range } from "./query.ts";

/** A funnel's figures. Revenue is in minor units of the answer's `currency`. */
export interface FunnelFigures {
  views: number;
  installs: number;
  /** Distinct `user.id`s with an attributed purchase. */
  purchasers: number;
  purchases: number;
  revenue: number;
  /** installs / views; null when there are no views. */
  installs_per_view: number | null;
  /** purchasers / installs; null when there are no installs. */
  purchasers_per_install: number | null;
  /** purchases / purchasers; null when there are no purchasers. */
  purchases_per_purchaser: number | null;
  /** The median of the installs' seconds from click to install; null when none has a click. */
  median_seconds_to_install: number | null;
}

/** A link's funnel among the top links: `key` is its path. */
export interface FunnelGroup {
  key: string;
  totals: FunnelFigures;
}

/** The answer of the REST route (and the MCP tool). */
export interface FunnelAnswer {
  from: string;
  to: string;
  tz: string;
  /** The project's reporting currency (ISO 4217): revenue's unit, in minor units. */
  currency: string;
  totals: FunnelFigures;
  /** With group_by=link: the top links, by revenue first. */
  groups?: FunnelGroup[];
}

/** What queryFunnel answers: REST's answer, each group with its link's id (GraphQL's link). */
export type FunnelResult = Omit<FunnelAnswer, "groups"> & {
  groups?: (FunnelGroup & { linkId: number })[];
};

/** A result as REST answers it (the ids are GraphQL's business). */
export function funnelAnswer(result: FunnelResult): FunnelAnswer {
  const { groups, ...rest } = result;
  return groups ? { ...rest, groups: groups.map(({ key, totals }) => ({ key, totals })) } : rest;
}

export interface FunnelQuery {
  environmentId: number;
  from: Date;
  to: Date;
  tz: string;
  /** Only this link (its path). */
  link: string | null;
  groupByLink: boolean;
  limit: number;
}

/** What a request carries, as text (query strings); the analytics parser checks each. */
export interface RawFunnelParams {
  from?: string | undefined;
  to?: string | undefined;
  tz?: string | undefined;
  link?: string | undefined;
  group_by?: string | undefined;
  limit?: string | undefined;
}

/**
 * The funnel query of `raw`, checked as the analytics route checks its parameters (the same
 * parser: from/to default to the 30 days up to now, at most 400 days apart, an IANA zone, limit
 * 1–1000 with 10 by default); `group_by` can only be `link`.
 */
export async function parseFunnelParams(
  sql: Sql,
  environmentId: number,
  raw: RawFunnelParams,
  now: Date,
): Promise<FunnelQuery> {
  if (raw.group_by !== undefined && raw.group_by !== "" && raw.group_by !== "link") {
    throw new ApiError(
      "invalid_field",
      `group_by: must be link (got ${JSON.stringify(raw.group_by)})`,
      { field: "group_by" },
    );
  }
  const q = await parseAnalyticsParams(sql, environmentId, { ...raw, filters: {} }, now);
  return {
    environmentId,
    from: q.from,
    to: q.to,
    tz: q.tz,
    link: q.filters.link ?? null,
    groupByLink: q.groupBy === "link",
    limit: q.limit,
  };
}

/** What the statements answer per funnel, as PostgreSQL returns them (bigints as text). */
interface FunnelRow {
  views: string | number;
  installs: string | number;
  purchasers: string | number;
  purchases: string | number;
  revenue: string | number;
  median: number | null;
}

function funnelFigures(row: FunnelRow): FunnelFigures {
  const views = Number(row.views);
  const installs = Number(row.installs);
  const purchasers = Number(row.purchasers);
  const purchases = Number(row.purchases);
  const rate = (n: number, d: number) => (d === 0 ? null : n / d);
  return {
    views,
    installs,
    purchasers,
    purchases,
    revenue: Number(row.revenue),
    installs_per_view: rate(installs, views),
    purchasers_per_install: rate(purchasers, installs),
    purchases_per_purchaser: rate(purchases, purchasers),
    median_seconds_to_install: row.median === null ? null : Number(row.median),
  };
}

/**
 * The funnel of `q`, from three transactions at the same time, each on a connection of its own:
 * the installs with the views and the currency; the purchases with their buyers; and the top
 * links, when grouped. Each of the three main statements takes tens of milliseconds, and on one
 * connection PostgreSQL runs them one after the other on one core; side by side the answer
 * waits for the longest only. A request costs the database no more than in one transaction; it
 * holds up to three of the pool's connections instead of one (no more than that: none waits for
 * another while holding one, so a pool of one, the embedded database, runs them in turn). Each
 * transaction reads the range in the query's zone, with rangeForFunnel's settings. Grouped, the
 * top links' statement, which sums the range's purchases per link, also answers their total and
 * revenue, and the second transaction only counts their buyers.
 */
export async function queryFunnel(sql: Sql, q: FunnelQuery): Promise<FunnelResult> {
  const env = q.environmentId;
  const inRange = async <T>(read: (tx: Db, range: Range) => Promise<T>): Promise<T> =>
    // postgres.js types begin's answer as the callback's with any arrays in it unwrapped.
    (await sql.begin(async (tx) => await read(tx, await rangeForFunnel(tx, q)))) as T;
  const [head, bought, groups] = await Promise.all([
    inRange(async (tx, range) => {
      const [installed, views, currency] = await Promise.all([
        installsOf(tx, env, range.from_at, range.to_at, q.link),
        q.link === null
          ? environmentViews(tx, env, range.from_at, range.to_at)
          : linkViews(tx, env, range.from_at, range.to_at, q.link),
        reportingCurrency(tx, env),
      ]);
      return { range, installed, views, currency };
    }),
    inRange((tx, range) =>
      q.groupByLink
        ? buyersOf(tx, env, range.from_at, range.to_at, q.link)
        : purchasesOf(tx, env, range.from_at, range.to_at, q.link)
    ),
    q.groupByLink ? inRange((tx, range) => topLinks(tx, q, range.from_at, range.to_at)) : null,
  ]);
  const { range, installed, views, currency } = head;
  const purchases = groups
    ? { purchases: groups.purchases, revenue: groups.revenue, purchasers: bought.purchasers }
    : bought as Pick<FunnelRow, "purchases" | "revenue" | "purchasers">;
  const answer: FunnelResult = {
    from: range.from_text,
    to: range.to_text,
    tz: q.tz,
    currency,
    totals: funnelFigures({ ...installed, ...purchases, views }),
  };
  if (groups) {
    answer.groups = groups.links.map((g) => ({
      key: g.path,
      linkId: Number(g.link_id),
      totals: funnelFigures(g),
    }));
  }
  return answer;
}

/**
 * The funnel of each of `linkIds` apart (GraphQL's Link.funnel across a page), in the same
 * statements whatever their number. Every id given is in the map (zeros when nothing counted).
 */
export async function queryFunnelByLink(
  sql: Sql,
  q: FunnelQuery,
  linkIds: readonly number[],
): Promise<Map<number, FunnelResult>> {
  return await sql.begin(async (tx) => {
    const range = await rangeForFunnel(tx, q);
    const [rows, currency] = await Promise.all([
      perLink(tx, q.environmentId, range.from_at, range.to_at, linkIds),
      reportingCurrency(tx, q.environmentId),
    ]);
    const byId = new Map(rows.map((r) => [Number(r.link_id), r]));
    const zero: FunnelRow = {
      views: 0,
      installs: 0,
      purchasers: 0,
      purchases: 0,
      revenue: 0,
      median: null,
    };
    return new Map(linkIds.map((id) => [id, {
      from: range.from_text,
      to: range.to_text,
      tz: q.tz,
      currency,
      totals: funnelFigures(byId.get(id) ?? zero),
    }]));
  });
}

/**
 * The range (./query.ts queryRange, which sets the zone for the transaction) and the planner's
 * settings for the rest of the transaction, sent first, in the same round trip:
 * - no JIT: the top links' statement is planned for every link (its cut is known only when it
 *   runs), and the compilation that estimate triggered took seconds (2-4 s at 3M events,
 *   bench/analytics.ts) against a statement of tens of milliseconds;
 * - no parallel workers: they were started for the branch the cut turns off (28 ms at 10M
 *   events for no row) and for scans of a few thousand pages, where starting them cost more than
 *   they saved (the grouped funnel 253 against 196 ms without them);
 * - random_page_cost 1.1 (PostgreSQL's default is 4, for disks that seek): the funnel reads
 *   small tables that stay in memory, and at 4 the planner grouped the range's purchases by link
 *   from a sequential scan and a hash (102 ms for the top links' statement at 10M events) rather
 *   than from their index by link, already in link order (65 ms).
 * Settings are read when a statement is planned, and postgres.js prepares every statement: a plan
 * PostgreSQL keeps for one (per connection) serves it later whatever the settings then. The
 * funnel's own statements are only ever planned under these; of the two it shares with analytics,
 * the range's reads no table and the environment's views go unprepared (the statement log shows
 * them parsed each time), so neither keeps a plan made here.
 */
async function rangeForFunnel(tx: Db, q: FunnelQuery): Promise<Range> {
  const [, range] = await Promise.all([
    tx`select set_config('jit', 'off', true),
      set_config('max_parallel_workers_per_gather', '0', true),
      set_config('random_page_cost', '1.1', true)`.execute(),
    queryRange(tx, asAnalytics(q)),
  ]);
  return range;
}

/** The analytics query whose range the funnel's is: totals only, so whole hours of `tz`. */
function asAnalytics(q: FunnelQuery): AnalyticsQuery {
  return {
    environmentId: q.environmentId,
    from: q.from,
    to: q.to,
    interval: null,
    tz: q.tz,
    metrics: ["views"],
    groupBy: null,
    limit: q.limit,
    filters: {},
  };
}

async function reportingCurrency(tx: Db, environmentId: number): Promise<string> {
  const [row] = await tx<{ currency: string }[]>`
    select p.reporting_currency as currency
    from environments e join projects p on p.id = e.project_id
    where e.id = ${environmentId}`;
  return row?.currency ?? "USD";
}

/**
 * Installs and their median seconds over the range, the environment's or one link's (a path
 * that names no link counts nothing, as analytics' link= does). The environment's come from
 * their days (services/attribution/install_days.ts); a link's from its rows, through the
 * installs' index by link, count and median in one scan (the median skips installs without a
 * click, whose seconds are null).
 */
async function installsOf(
  tx: Db,
  environmentId: number,
  from: Date,
  to: Date,
  link: string | null,
): Promise<Pick<FunnelRow, "installs" | "median">> {
  if (link === null) return await environmentInstalls(tx, environmentId, from, to);
  const [row] = await tx<{ installs: string; median: number | null }[]>`
    select count(*) as installs,
      percentile_cont(0.5) within group (order by seconds) as median
    from attributed_installs
    where environment_id = ${environmentId} and occurred_at >= ${from}
      and occurred_at < ${to} ${ofLink(tx, environmentId, link)}`;
  return row!;
}

/**
 * The purchases of the range, their revenue and their distinct buyers, the environment's or
 * one link's. Per buyer first (the purchases without one are a group of their own, which
 * count(u) leaves out): read in the buyers' order from their index (migration 00034), where
 * count(distinct) sorted every purchase of the range.
 */
async function purchasesOf(
  tx: Db,
  environmentId: number,
  from: Date,
  to: Date,
  link: string | null,
): Promise<Pick<FunnelRow, "purchases" | "revenue" | "purchasers">> {
  const [row] = await tx<Pick<FunnelRow, "purchases" | "revenue" | "purchasers">[]>`
    select coalesce(sum(n), 0) as purchases, coalesce(sum(r), 0) as revenue,
      count(u) as purchasers
    from (
      select user_id collate "C" as u, count(*) as n, sum(converted) as r
      from purchase_versions
      where ${countedPurchases(tx, environmentId, from, to, link)}
      group by 1
    ) buyers`;
  return row!;
}

/**
 * The range's distinct buyers (of the purchases purchasesOf counts), one at a time from their
 * index, for the grouped funnel, whose top links' statement sums the purchases themselves.
 */
async function buyersOf(
  tx: Db,
  environmentId: number,
  from: Date,
  to: Date,
  link: string | null,
): Promise<Pick<FunnelRow, "purchasers">> {
  const [row] = await tx<Pick<FunnelRow, "purchasers">[]>`
    select count(*) as purchasers
    from (
      select
      from purchase_versions
      where ${countedPurchases(tx, environmentId, from, to, link)} and user_id is not null
      group by user_id collate "C"
    ) buyers`;
  return row!;
}

/**
 * The purchase versions the funnel counts over [from, to) (of one link, when given): current,
 * attributed and converted into the reporting currency, by the hour of their event.
 */
function countedPurchases(
  tx: Db,
  environmentId: number,
  from: Date,
  to: Date,
  link: string | null,
) {
  return tx`environment_id = ${environmentId} and version > 0 and link_id is not null
    and converted is not null and hour >= ${from} and hour < ${to}
    ${ofLink(tx, environmentId, link)}`;
}

/** The condition on `link_id` that keeps one link's rows (the link of its path), or none. */
function ofLink(tx: Db, environmentId: number, link: string | null) {
  return link === null ? tx`` : tx`and link_id = (
    select id from links where environment_id = ${environmentId} and path = ${link})`;
}

/** One link's views of the range, from its days (./link_days.ts). */
async function linkViews(
  tx: Db,
  environmentId: number,
  from: Date,
  to: Date,
  link: string,
): Promise<number> {
  const ids = tx`array(select id from links where environment_id = ${environmentId}
    and path = ${link})`;
  const [row] = await tx<{ views: string }[]>`
    select coalesce(sum(views), 0) as views
    from (${linkViewsSelect(tx, environmentId, from, to, ids)}) v`;
  return Number(row?.views ?? 0);
}

type LinkRow = FunnelRow & { link_id: number; path: string };

/**
 * The top `q.limit` links of the range (only `q.link` when given) by revenue, purchases,
 * installs, views, then id: among the links with an attributed install or a counted purchase in
 * the range that still exist. One statement:
 * - each link's purchases and revenue (the smaller table, read whole for the range; its
 *   distinct users only for the links listed, in one more pass);
 * - when the limit-th link with purchases is above a link without any (revenue and purchases
 *   above zero), no link without purchases can be listed, and installs are counted only for the
 *   links as good as it on revenue and purchases (through the installs' index by link); else
 *   every link's installs are counted (the range's installs read whole);
 * - the cut: the links as good as the limit-th on revenue, purchases and installs, ties
 *   included, as views may reorder them; their views from their days (./link_days.ts); the
 *   order; the medians of the links kept.
 */
async function topLinks(
  tx: Db,
  q: FunnelQuery,
  from: Date,
  to: Date,
): Promise<{ links: LinkRow[] } & Pick<FunnelRow, "purchases" | "revenue">> {
  const env = q.environmentId;
  const installs = tx`environment_id = ${env} and occurred_at >= ${from} and occurred_at < ${to}
    ${ofLink(tx, env, q.link)}`;
  const rows = await tx<(LinkRow & { all_purchases: string; all_revenue: string })[]>`
    with bought_any as (
      select link_id, count(*) as purchases, sum(converted) as revenue
      from purchase_versions
      where ${countedPurchases(tx, env, from, to, q.link)}
      group by link_id
    ), bought as (
      -- The links that still exist: looked up once a link, not once a purchase.
      select b.* from bought_any b
      where exists (select from links l where l.id = b.link_id and l.environment_id = ${env})
    ), bought_cut as (
      select revenue, purchases from bought
      order by revenue desc, purchases desc
      offset ${q.limit - 1} limit 1
    ), settled as (
      select coalesce(
        (select (revenue, purchases) > (0::numeric, 0::bigint) from bought_cut), false
      ) as yes
    ), installed as (
      select link_id, count(*) as installs
      from attributed_installs
      where (select yes from settled) and ${installs}
        and link_id = any(array(
          select link_id from bought
          where (revenue, purchases) >= (select revenue, purchases from bought_cut)
        ))
      group by link_id
      union all
      select link_id, count(*)
      from attributed_installs
      where not (select yes from settled) and ${installs}
      group by link_id
    ), per_link as (
      select coalesce(b.link_id, i.link_id) as link_id, coalesce(b.revenue, 0) as revenue,
        coalesce(b.purchases, 0) as purchases, coalesce(i.installs, 0) as installs
      from bought b full join installed i on i.link_id = b.link_id
      where b.link_id is not null
        or exists (select from links l where l.id = i.link_id and l.environment_id = ${env})
    ), cut as (
      select revenue, purchases, installs from per_link
      order by revenue desc, purchases desc, installs desc
      offset ${q.limit - 1} limit 1
    ), candidates as (
      select p.* from per_link p
      where not exists (select from cut)
        or (p.revenue, p.purchases, p.installs) >= (select revenue, purchases, installs from cut)
    ), viewed as (
      ${linkViewsSelect(tx, env, from, to, tx`array(select link_id from candidates)`)}
    ), top as (
      select c.*, coalesce(v.views, 0) as views
      from candidates c left join viewed v on v.link_id = c.link_id
      order by c.revenue desc, c.purchases desc, c.installs desc, coalesce(v.views, 0) desc,
        c.link_id
      limit ${q.limit}
    ), buyers as (
      -- Distinct users of the links listed only: one pass over the range's purchases.
      select link_id, count(distinct user_id collate "C") as purchasers
      from purchase_versions
      where environment_id = ${env} and version > 0 and converted is not null
        and hour >= ${from} and hour < ${to} and link_id = any(array(select link_id from top))
      group by link_id
    )
    select t.link_id, l.path, t.views, t.installs, t.purchases, t.revenue,
      coalesce(b.purchasers, 0) as purchasers,
      -- Every purchase of the range has a link that exists (a deleted link's are set null).
      (select coalesce(sum(purchases), 0) from bought) as all_purchases,
      (select coalesce(sum(revenue), 0) from bought) as all_revenue,
      (select percentile_cont(0.5) within group (order by i.seconds)
        from attributed_installs i
        where i.environment_id = ${env} and i.link_id = t.link_id and i.occurred_at >= ${from}
          and i.occurred_at < ${to}) as median
    from top t join links l on l.id = t.link_id left join buyers b on b.link_id = t.link_id
    order by t.revenue desc, t.purchases desc, t.installs desc, t.views desc, t.link_id`;
  // No row: no link has a purchase or an install in the range.
  return {
    links: rows,
    purchases: rows[0]?.all_purchases ?? 0,
    revenue: rows[0]?.all_revenue ?? 0,
  };
}

/** The funnel of each of `linkIds` over the range: one statement for them all. */
function perLink(
  tx: Db,
  environmentId: number,
  from: Date,
  to: Date,
  linkIds: readonly number[],
): Promise<(FunnelRow & { link_id: number })[]> {
  const ids = [...linkIds];
  return tx<(FunnelRow & { link_id: number })[]>`
    with ids as (select unnest(${ids}::int[]) as link_id),
    installed as (
      select link_id, count(*) as installs,
        percentile_cont(0.5) within group (order by seconds) as median
      from attributed_installs
      where environment_id = ${environmentId} and link_id = any(${ids}::int[])
        and occurred_at >= ${from} and occurred_at < ${to}
      group by link_id
    ), bought as (
      select link_id, count(*) as purchases, sum(converted) as revenue,
        count(distinct user_id collate "C") as purchasers
      from purchase_versions
      where environment_id = ${environmentId} and link_id = any(${ids}::int[]) and version > 0
        and converted is not null and hour >= ${from} and hour < ${to}
      group by link_id
    ), viewed as (
      ${linkViewsSelect(tx, environmentId, from, to, tx`${ids}::int[]`)}
    )
    select ids.link_id, coalesce(v.views, 0) as views, coalesce(i.installs, 0) as installs,
      i.median, coalesce(b.purchases, 0) as purchases, coalesce(b.revenue, 0) as revenue,
      coalesce(b.purchasers, 0) as purchasers
    from ids
    left join installed i on i.link_id = ids.link_id
    left join bought b on b.link_id = ids.link_id
    left join viewed v on v.link_id = ids.link_id`;
}
