// When a link has expired for the link host: by its date, or once max_views views were counted.
import type { Db } from "../../db/connect.ts";
import type { HostedLink } from "./links.ts";

/** Whether the link's date has passed at `now` (its views are checked by claimView). */
export function expiredByDate(link: Pick<HostedLink, "expires_at">, now: Date): boolean {
  return link.expires_at !== null && link.expires_at <= now;
}

/**
 * Claims one of a limited link's views, or answers false when none is left. One conditional
 * UPDATE: concurrent hits, on any instance, queue on the counter row and each re-checks the
 * count once it holds the row, so exactly max_views hits get true. Called only for links with
 * a limit: the others never reach it.
 */
export async function claimView(db: Db, linkId: number): Promise<boolean> {
  const rows = await db`
    update link_counters c set limited_views = c.limited_views + 1
    from links l
    where c.link_id = ${linkId} and l.id = c.link_id and c.limited_views < l.max_views
    returning 1
  `;
  return rows.length > 0;
}

/** Whether a limited link has views left, without taking one (a HEAD, a preview crawler). */
export async function hasViewsLeft(db: Db, linkId: number): Promise<boolean> {
  const rows = await db`
    select 1 from link_counters c join links l on l.id = c.link_id
    where c.link_id = ${linkId} and c.limited_views < l.max_views
  `;
  return rows.length > 0;
}
