// The dashboard's chart: an environment's recorded events per day and type, from the analytics
// history, counted by PostgreSQL.
import type { Db } from "../../db/connect.ts";
import { FEED_EVENT_TYPES } from "../feed/envelope.ts";
import { getEnvironmentOrThrow } from "../projects/projects.ts";

export const MAX_CHART_DAYS = 90;

export interface DayCounts {
  /** YYYY-MM-DD, a UTC day. */
  date: string;
  /** Every event type, zero included, so clients draw without filling gaps. */
  counts: Record<string, number>;
  total: number;
}

/**
 * The last `days` UTC days up to and including today (as the clock says), oldest first, each
 * with its count of events by type, by when they occurred. Days without events are there with
 * zeros: generate_series makes the days, and one grouped scan of the occurred_at index counts.
 */
export async function eventsPerDay(
  db: Db,
  projectId: string | number,
  options: { now: Date; days: number },
): Promise<DayCounts[]> {
  const env = await getEnvironmentOrThrow(db, projectId);
  const today = new Date(options.now);
  today.setUTCHours(0, 0, 0, 0);
  const first = new Date(today.getTime() - (options.days - 1) * 86_400_000);
  const end = new Date(today.getTime() + 86_400_000);
  const rows = await db<{ date: string; type: string | null; n: number }[]>`
    with days as (
      select to_char(d, 'YYYY-MM-DD') as date
      from generate_series(${first}::timestamptz at time zone 'UTC',
        ${today}::timestamptz at time zone 'UTC', interval '1 day') d
    ), counts as (
      -- Grouped by the date value, formatted after: to_char on every row took 1.6x as long
      -- (300,000 events: 380 ms against 230 ms).
      select to_char(day, 'YYYY-MM-DD') as date, type, n from (
        select (occurred_at at time zone 'UTC')::date as day, type, count(*)::int as n
        from analytics_events
        where environment_id = ${env.id} and occurred_at >= ${first} and occurred_at < ${end}
        group by 1, 2
      ) grouped
    )
    select days.date, counts.type, coalesce(counts.n, 0) as n
    from days left join counts using (date)
    order by days.date, counts.type
  `;
  const byDate = new Map<string, DayCounts>();
  for (const row of rows) {
    let day = byDate.get(row.date);
    if (!day) {
      day = {
        date: row.date,
        counts: Object.fromEntries(FEED_EVENT_TYPES.map((t) => [t, 0])),
        total: 0,
      };
      byDate.set(row.date, day);
    }
    if (row.type !== null) {
      day.counts[row.type] = row.n;
      day.total += row.n;
    }
  }
  return [...byDate.values()];
}
