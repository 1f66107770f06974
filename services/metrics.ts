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
 * json_agg over a row is about twice as fast as json_build_object per row. A null
 * tracking_campaign is then dropped from the text (the item may omit it, but not carry a null
 * where a string is due): that exact sequence can only be structure, since a quote inside a
 * string value is escaped. On 10,000 links json_strip_nulls costs ~40 ms of PostgreSQL,
 * replace() ~12 ms, and JavaScript's replaceAll ~3 ms.
 */
export async function projectMetricsJson(db: Db, environmentId: number): Promise<string> {
  const [row] = await db<{ body: string }[]>`
    select coalesce(json_agg(m order by m.total_views desc, m.id), '[]')::text as body
    from (
      select l.id, case when l.title = '' then l.path else l.title end as name, l.path, l.title,
        l.active, l.sdk_generated, l.tags, l.tracking_campaign, c.total_views, c.total_opens,
        c.total_installs, c.total_reinstalls, c.total_time_spent, c.total_reactivations,
        c.total_app_opens, c.total_user_referred, c.total_revenue
      from links l join link_counters c on c.link_id = l.id
      where l.environment_id = ${environmentId} and l.active
    ) m
  `;
  return row!.body.replaceAll(',"tracking_campaign":null', "");
}
