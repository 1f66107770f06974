// Each link's views per UTC day (analytics_link_days, migration 00033): how the funnel reads the
// views of given links (its top links, one link, a page of links in GraphQL) without reading
// every rollup row of each: a busy link has a rollup row for nearly every view (an hour of one
// link rarely sees one country, device and referrer twice), and a row a day here.
//
// The job that merges the rollups (./rollups.ts mergeRollups) adds the views of the rows it
// merges to their links' days in the same statement. So, in any one snapshot, a link's day holds
// exactly the views of its merged rollup rows of that day, and the rows not merged yet (the
// current hours, late events) are read from the rollups themselves. A range of whole hours is
// read as its whole UTC days (the link's days, and its rollup rows of those days not merged yet)
// and its edges (its rollup rows of the hours before the first UTC midnight and after the last).
import type postgres from "postgres";
import type { Db } from "../../db/connect.ts";
import { utcDaysOf } from "./rollups.ts";

type Fragment = postgres.PendingQuery<postgres.Row[]>;

/**
 * A select of (link_id, views): the views in [from, to) of each link of the environment whose id
 * is in `ids` (a fragment that is an int[] expression), one row for each such link with a
 * rollup row in the range. The same sums as the rollups' over the range.
 */
export function linkViewsSelect(
  tx: Db,
  environmentId: number,
  from: Date,
  to: Date,
  ids: Fragment,
): Fragment {
  const { days, first, last, headTo, tailFrom } = utcDaysOf(from, to);
  const env = environmentId;
  return tx`
    select link_id, sum(views) as views
    from (
      select link_id, views
      from analytics_link_days
      where ${days} and environment_id = ${env} and link_id = any(${ids})
        and day >= ${first} and day < ${last}
      union all
      -- The rollups' index of rows not merged: a few hours' rows, where by link it is every row.
      select link_id, views
      from analytics_rollups
      where ${days} and not merged and environment_id = ${env} and link_id = any(${ids})
        and hour >= ${first} and hour < ${last}
      union all
      select link_id, views
      from analytics_rollups
      where link_id = any(${ids}) and environment_id = ${env} and hour >= ${from}
        and hour < ${headTo}
      union all
      select link_id, views
      from analytics_rollups
      where ${days} and link_id = any(${ids}) and environment_id = ${env} and hour >= ${tailFrom}
        and hour < ${to}
    ) parts
    group by link_id`;
}
