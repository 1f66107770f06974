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
 */
export async function projectMetricsJson(db: Db, environmentId: number): Promise<string> {
  const [row] = await db<{ body: string }[]>`
    select coalesce(
      json_agg(json_strip_nulls(json_build_object(
        'id', l.id,
        'name', case when l.title = '' then l.path else l.title end,
        'path', l.path,
        'title', l.title,
        'active', l.active,
        'sdk_generated', l.sdk_generated,
        'tags', l.tags,
        'tracking_campaign', l.tracking_campaign,
        'total_views', c.total_views,
        'total_opens', c.total_opens,
        'total_installs', c.total_installs,
        'total_reinstalls', c.total_reinstalls,
        'total_time_spent', c.total_time_spent,
        'total_reactivations', c.total_reactivations,
        'total_app_opens', c.total_app_opens,
        'total_user_referred', c.total_user_referred,
        'total_revenue', c.total_revenue
      )) order by c.total_views desc, l.id),
      '[]'
    )::text as body
    from links l join link_counters c on c.link_id = l.id
    where l.environment_id = ${environmentId} and l.active
  `;
  return row!.body;
}
