// The analytics figures computed the slow way, from the raw events in SQL, independently of the
// rollups: what tests compare the service's answers against. The rules are spelled here again
// on purpose (CONTRACT, "Analytics"): each event counts in the bucket of its occurred_at; a
// purchase counts only in its transaction's current version (the highest, the first stored
// among equals), with that version's amount; dimensions are the envelope's country, platform
// and os when strings, and for views the browser and referrer host; campaign, source and
// medium are the link's.
import type { Sql } from "../../db/connect.ts";
import { setTransactionTimeZone } from "../../services/analytics/query.ts";

export const REFERENCE_METRICS: Record<string, string> = {
  views: "count(*) filter (where type = 'view')",
  opens: "count(*) filter (where type = 'open')",
  installs: "count(*) filter (where type = 'install')",
  reinstalls: "count(*) filter (where type = 'reinstall')",
  reactivations: "count(*) filter (where type = 'reactivation')",
  app_opens: "count(*) filter (where type = 'app_open')",
  user_referred: "count(*) filter (where type = 'user_referred')",
  sessions: "count(*) filter (where type = 'session')",
  time_spent: "coalesce(sum(secs) filter (where type = 'session'), 0)",
  purchases: "count(*) filter (where type = 'purchase')",
  revenue: "coalesce(sum(amount) filter (where type = 'purchase'), 0)",
  custom: "count(*) filter (where type = 'custom')",
};

const DIMENSION: Record<string, string> = {
  link: "l.path",
  country: "f.b -> 'geo' ->> 'country'",
  platform:
    "case when json_typeof(f.b -> 'device' -> 'platform') = 'string' then f.b -> 'device' ->> 'platform' end",
  os: "case when json_typeof(f.b -> 'device' -> 'os') = 'string' then f.b -> 'device' ->> 'os' end",
  browser:
    "case when f.type = 'view' and json_typeof(f.b -> 'device' -> 'browser') = 'string' then f.b -> 'device' ->> 'browser' end",
  referrer:
    "case when f.type = 'view' and json_typeof(f.b -> 'attribution' -> 'referrer_host') = 'string' then f.b -> 'attribution' ->> 'referrer_host' end",
  campaign: "l.tracking_campaign",
  source: "l.tracking_source",
  medium: "l.tracking_medium",
  event_name: "f.name",
  rule: `case when json_typeof(f.b -> 'attribution' -> 'rule') = 'string'
      and length(f.b -> 'attribution' ->> 'rule') between 1 and 100 then f.b -> 'attribution' ->> 'rule'
    when json_typeof(f.b -> 'attribution' -> 'rule') = 'number'
      and (f.b -> 'attribution' ->> 'rule') ~ '^[0-9]+$'
      and (f.b -> 'attribution' ->> 'rule')::int between 1 and 50
      then f.b -> 'attribution' ->> 'rule' end`,
  variant: `case when json_typeof(f.b -> 'attribution' -> 'variant') = 'number'
      and (f.b -> 'attribution' ->> 'variant') ~ '^[0-9]+$'
      and (f.b -> 'attribution' ->> 'variant')::int between 1 and 10
      then f.b -> 'attribution' ->> 'variant' end`,
};

export interface ReferenceQuery {
  environmentId: number;
  from: Date;
  to: Date;
  tz: string;
  interval: string | null;
  metrics: string[];
  groupBy: string | null;
  filters: Record<string, string>;
}

export interface ReferenceRow {
  bucket: string | null;
  key: string | null;
  [metric: string]: unknown;
}

/** Sums per (bucket start as the answer prints it, group key) of the raw events in range. */
export async function referenceFigures(sql: Sql, q: ReferenceQuery): Promise<ReferenceRow[]> {
  const params: unknown[] = [q.environmentId, q.from.toISOString(), q.to.toISOString()];
  const conditions = ["f.occurred_at >= $2::timestamptz", "f.occurred_at < $3::timestamptz"];
  for (const [dimension, value] of Object.entries(q.filters)) {
    params.push(value);
    conditions.push(`${DIMENSION[dimension]} = $${params.length}`);
  }
  const bucket = q.interval
    ? `to_char(date_trunc('${q.interval}', f.occurred_at), 'YYYY-MM-DD"T"HH24:MI:SSTZH:TZM')`
    : "null";
  const key = q.groupBy ? `(${DIMENSION[q.groupBy]})::text` : "null";
  const sums = q.metrics.map((m) => `${REFERENCE_METRICS[m]} as ${m}`).join(", ");
  return await sql.begin(async (tx) => {
    await setTransactionTimeZone(tx, q.tz);
    return await tx.unsafe<ReferenceRow[]>(
      `with ev as (
        select occurred_at, link_id, type, name, event_id, body::json as b
        from analytics_events where environment_id = $1
      ), current_purchases as (
        select distinct on (b -> 'purchase' ->> 'transaction_id', name) *
        from ev where type = 'purchase'
        order by b -> 'purchase' ->> 'transaction_id', name,
          (b -> 'purchase' ->> 'version')::int desc, event_id
      ), f as (
        select occurred_at, link_id, type, name, b, (b ->> 'time_spent')::bigint as secs,
          0::bigint as amount
        from ev where type <> 'purchase'
        union all
        select occurred_at, link_id, type, name, b, 0, (b -> 'purchase' ->> 'amount')::bigint
        from current_purchases
      )
      select ${bucket} as bucket, ${key} as key, ${sums}
      from f left join links l on l.id = f.link_id
      where ${conditions.join(" and ")}
      group by 1, 2`,
      params as never[],
    );
  });
}
