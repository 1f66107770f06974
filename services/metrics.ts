import type { Db } from "../db/connect.ts";

/** An item of the metrics array, as `projectMetricsJson` serialises it. */
export interface LinkMetrics {
  id: number;
  /** Links have no separate name: the title, or the path when the title is empty. */
  name: string;
  path: string;
  title: string;
  active: boolean;
  sdk_generated: boolean;
  tags: unknown[];
  /** Absent when the link has no campaign. */
  tracking_campaign?: string;
  total_views: number;
  total_opens: number;
  total_installs: number;
  total_reinstalls: number;
  total_time_spent: number;
  total_reactivations: number;
  total_app_opens: number;
  total_user_referred: number;
  total_revenue: number;
}

/**
 * Lifetime metrics of every active link of the environment, sorted by total_views descending
 * and then by id, as the JSON text of an array. One query whatever the number of links, and
 * PostgreSQL builds the JSON: 10,000 links are never parsed and re-serialised in JavaScript.
 *
 * The items are concatenated as text rather than built by json_agg: on 10,000 links that is
 * ~25% less PostgreSQL time, and it leaves `tracking_campaign` out of an item without a campaign
 * (an item may omit it, but must not carry a null where a string is due). Strings go through
 * to_json, which escapes them; numbers, booleans and the jsonb tags print as JSON already.
 */
export async function projectMetricsJson(
  db: Db,
  environmentId: number,
): Promise<{ body: string; etag: string }> {
  const [row] = await db<{ body: string; etag: string }[]>`
    select ${etagSql(db, environmentId)} as etag, '[' || coalesce(string_agg(
      '{"id":' || l.id
        || ',"name":' || to_json(case when l.title = '' then l.path else l.title end)::text
        || ',"path":' || to_json(l.path)::text
        || ',"title":' || to_json(l.title)::text
        || ',"active":' || l.active
        || ',"sdk_generated":' || l.sdk_generated
        || ',"tags":' || l.tags::text
        || coalesce(',"tracking_campaign":' || to_json(l.tracking_campaign)::text, '')
        || ',"total_views":' || c.total_views
        || ',"total_opens":' || c.total_opens
        || ',"total_installs":' || c.total_installs
        || ',"total_reinstalls":' || c.total_reinstalls
        || ',"total_time_spent":' || c.total_time_spent
        || ',"total_reactivations":' || c.total_reactivations
        || ',"total_app_opens":' || c.total_app_opens
        || ',"total_user_referred":' || c.total_user_referred
        || ',"total_revenue":' || c.total_revenue
        || '}',
      ',' order by c.total_views desc, l.id
    ), '') || ']' as body
    from links l join link_counters c on c.link_id = l.id
    where l.environment_id = ${environmentId} and l.active
  `;
  return row!;
}

/**
 * The entity tag of the metrics answer, computed without building it: the number of rows and
 * a sum of one hash per row over the link's id and the row versions (xmin) of the link and its
 * counters. Every write that changes an item (a counter moved, a link renamed, retagged,
 * activated or deactivated) writes a new row version, and so a new tag; a sum rather than XOR,
 * so that two changes cannot cancel out.
 */
const etagSql = (db: Db, environmentId: number) =>
  db`'"m-' || ${environmentId}::int || '-' || count(*) || '-' || coalesce(sum(
    hashtextextended(l.id || ':' || l.xmin || ':' || c.xmin, 0)::numeric
  ), 0) || '"'`;

/** The current tag of the environment's metrics (see etagSql), for conditional requests. */
export async function projectMetricsEtag(db: Db, environmentId: number): Promise<string> {
  const [row] = await db<{ etag: string }[]>`
    select ${etagSql(db, environmentId)} as etag
    from links l join link_counters c on c.link_id = l.id
    where l.environment_id = ${environmentId} and l.active
  `;
  return row!.etag;
}
