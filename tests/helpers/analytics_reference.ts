// The analytics figures computed the slow way, from the raw events in SQL, independently of the
// rollups: what tests compare the service's answers against. The rules are spelled here again
// on purpose (CONTRACT, "Analytics"): each event counts in the bucket of its occurred_at; a
// purchase counts only in its transaction's current version (the highest, the first stored
// among equals), with that version's amount; dimensions are the envelope's country, platform
// and os when strings, and for views the browser and referrer host; campaign, source and
// medium are the link's. A purchase's revenue is its amount converted into the project's
// reporting currency at the ECB rates of its occurred_at's UTC day (or the latest earlier day with
// one), rounded to the minor unit, halves away from zero; one without a rate counts only as
// unconverted. Its currency (upper case) is a dimension, by which revenue is the amounts as sent.
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
  purchases: "count(*) filter (where type = 'purchase' and conv is not null)",
  revenue: "coalesce(sum(conv) filter (where type = 'purchase'), 0)",
  custom: "count(*) filter (where type = 'custom')",
  unconverted_purchases: "count(*) filter (where type = 'purchase' and conv is null)",
  /** Not a metric: revenue by group_by=currency (each currency's own amounts). */
  own_revenue: "coalesce(sum(amount) filter (where type = 'purchase'), 0)",
};

/** ISO 4217 minor-unit digits of the currencies the tests use (2 for any other). */
const DIGITS = "case %s when 'JPY' then 0 when 'KWD' then 3 else 2 end";
/** A currency's rate per euro on the UTC day of f.occurred_at, or the latest earlier one. */
const RATE = `case when %s = 'EUR' then 1 else (
  select r.rate from fx_rates r
  where r.currency = %s and r.day <= (p.occurred_at at time zone 'UTC')::date
  order by r.day desc limit 1) end`;
const rateOf = (c: string) => RATE.replaceAll("%s", c);

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
  currency: "f.cur",
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
  const sums = [...q.metrics, "own_revenue"].map((m) => `${REFERENCE_METRICS[m]} as ${m}`)
    .join(", ");
  return await sql.begin(async (tx) => {
    await setTransactionTimeZone(tx, q.tz);
    return await tx.unsafe<ReferenceRow[]>(
      `with ev as (
        select occurred_at, link_id, type, name, event_id, body::json as b
        from analytics_events where environment_id = $1
      ), rc as (
        select p.reporting_currency as rc
        from environments e join projects p on p.id = e.project_id where e.id = $1
      ), current_purchases as (
        select distinct on (b -> 'purchase' ->> 'transaction_id', name) *
        from ev where type = 'purchase'
        order by b -> 'purchase' ->> 'transaction_id', name,
          (b -> 'purchase' ->> 'version')::int desc, event_id
      ), priced as (
        select p.*, upper(p.b -> 'purchase' ->> 'currency') as cur,
          (p.b -> 'purchase' ->> 'amount')::bigint as amount, rc.rc,
          ${rateOf("upper(p.b -> 'purchase' ->> 'currency')")} as rate_cur,
          ${rateOf("rc.rc")} as rate_rc
        from current_purchases p cross join rc
      ), f as (
        select occurred_at, link_id, type, name, b, (b ->> 'time_spent')::bigint as secs,
          0::bigint as amount, null::text as cur, null::numeric as conv
        from ev where type <> 'purchase'
        union all
        select occurred_at, link_id, type, name, b, 0, amount, cur,
          case when cur = rc then amount
            when rate_cur is null or rate_rc is null then null
            else round(amount * rate_rc * power(10::numeric, ${DIGITS.replace("%s", "rc")})
              / (rate_cur * power(10::numeric, ${DIGITS.replace("%s", "cur")}))) end
        from priced
      )
      select ${bucket} as bucket, ${key} as key, ${sums}
      from f left join links l on l.id = f.link_id
      where ${conditions.join(" and ")}
      group by 1, 2`,
      params as never[],
    );
  });
}
