// The link counters (table link_counters): the one module that writes them. Every event that
// moves a counter does so in the transaction that stores it; metrics only read them.
import type { Db } from "../../db/connect.ts";
import type { EventType } from "../feed/envelope.ts";

/** A link's lifetime counters, as the metrics and the links export name them. */
export const LIFETIME_COUNTERS = [
  "total_views",
  "total_opens",
  "total_installs",
  "total_reinstalls",
  "total_time_spent",
  "total_reactivations",
  "total_app_opens",
  "total_user_referred",
  "total_revenue",
] as const;

/** Creates a new link's counters at zero, in the link's own transaction. */
export async function createLinkCounters(
  db: Db,
  linkId: number,
  environmentId: number,
): Promise<void> {
  await db`insert into link_counters (link_id, environment_id) values (${linkId}, ${environmentId})`;
}

type CounterName =
  | "views"
  | "opens"
  | "installs"
  | "reinstalls"
  | "reactivations"
  | "app_opens"
  | "user_referred";

/** Event types that count one on a link counter (session and purchase move sums instead). */
const COUNTED: Partial<Record<EventType, CounterName>> = {
  view: "views",
  open: "opens",
  install: "installs",
  reinstall: "reinstalls",
  reactivation: "reactivations",
  app_open: "app_opens",
  user_referred: "user_referred",
};

export type Deltas = Record<CounterName | "time_spent" | "revenue", number>;

export function emptyDeltas(): Deltas {
  return {
    views: 0,
    opens: 0,
    installs: 0,
    reinstalls: 0,
    reactivations: 0,
    app_opens: 0,
    user_referred: 0,
    time_spent: 0,
    revenue: 0,
  };
}

/** An event as the counters see it: its type, a session's seconds, and its link. */
export interface CountedEvent {
  type: EventType;
  time_spent?: number | null | undefined;
}

/**
 * Per-link counter deltas of newly stored events, revenue aside (services/events/record.ts adds it per
 * purchase version). CONTRACT's "how events move the link metrics" in one place.
 */
export function countEvents(
  events: readonly { event: CountedEvent; link: { id: number } | undefined }[],
): Map<number, Deltas> {
  const deltas = new Map<number, Deltas>();
  for (const { event, link } of events) {
    if (!link) continue;
    const counter = COUNTED[event.type];
    if (counter === undefined && event.type !== "session") continue;
    let d = deltas.get(link.id);
    if (!d) deltas.set(link.id, d = emptyDeltas());
    if (counter !== undefined) d[counter] += 1;
    else d.time_spent += event.time_spent ?? 0;
  }
  return deltas;
}

/** Adds (or with a negative amount, takes back) revenue on a link. */
export function addRevenue(deltas: Map<number, Deltas>, linkId: number, amount: number): void {
  let d = deltas.get(linkId);
  if (!d) deltas.set(linkId, d = emptyDeltas());
  d.revenue += amount;
}

/**
 * Moves the link counters in one UPDATE, after locking the rows in link order (so that
 * concurrent batches touching the same links queue instead of deadlocking). Sums saturate at
 * the bigint range rather than fail.
 */
export async function applyDeltas(
  db: Db,
  environmentId: number,
  deltas: Map<number, Deltas>,
): Promise<void> {
  if (deltas.size === 0) return;
  const ids = sortedIds(deltas);
  await db`
    -- The environment too: on Citus, the counters' shard (a row lock takes one shard).
    select link_id from link_counters
    where environment_id = ${environmentId} and link_id = any(${ids}::int[])
    order by link_id for update
  `;
  await moveCounters(db, environmentId, deltas, ids);
}

/**
 * applyDeltas as two CTEs of the statement that stores the events (services/events/record.ts), for a
 * batch that is stored whole or not at all: `counters_locked` locks the rows in link order, as
 * applyDeltas does, once the CTE named `inserted` has a row (the batch was stored) and after the
 * CTE `capturing` (the environment's capture lock, which every writer takes before the
 * counters), and `counters_moved` moves them. Nothing moves when `inserted` is empty. They
 * commit with the events, as applyDeltas's statements do.
 */
export function countersInStatement(db: Db, environmentId: number, deltas: Map<number, Deltas>) {
  const ids = sortedIds(deltas);
  return db`
    links_shared as (
      -- The links before their counters, the order a link's deletion takes them in (the link,
      -- then its cascade to the counters) and a batch with purchases too (their versions'
      -- foreign key, then applyDeltas): taken the other way round, a deletion while views were
      -- written deadlocked with them (seen: the DELETE answered 503).
      select id from links where id = any(${ids}::int[]) order by id for key share
    ), counters_locked as (
      select link_id from link_counters
      where environment_id = ${environmentId} and link_id in (select id from links_shared)
        and exists (select 1 from inserted) and (select count(*) from capturing) >= 0
      order by link_id for update
    ), counters_moved as (
      ${
    moveCounters(
      db,
      environmentId,
      deltas,
      ids,
      db`
        and c.link_id in (select link_id from counters_locked)
      `,
    )
  }
    )
  `;
}

function sortedIds(deltas: Map<number, Deltas>): number[] {
  return [...deltas.keys()].sort((a, b) => a - b);
}

/** The UPDATE that adds `deltas` to the counters of `ids` (and of `where`, when given). */
function moveCounters(
  db: Db,
  environmentId: number,
  deltas: Map<number, Deltas>,
  ids: number[],
  where = db``,
) {
  const col = (name: keyof Deltas) => ids.map((id) => deltas.get(id)![name]);
  return db`
    update link_counters c set
      total_views = c.total_views + d.views,
      total_opens = c.total_opens + d.opens,
      total_installs = c.total_installs + d.installs,
      total_reinstalls = c.total_reinstalls + d.reinstalls,
      total_reactivations = c.total_reactivations + d.reactivations,
      total_app_opens = c.total_app_opens + d.app_opens,
      total_user_referred = c.total_user_referred + d.user_referred,
      total_time_spent = least(c.total_time_spent::numeric + d.time_spent, 9223372036854775807)::bigint,
      total_revenue = greatest(-9223372036854775807,
        least(c.total_revenue::numeric + d.revenue, 9223372036854775807))::bigint
    from unnest(
      ${ids}::int[], ${col("views")}::bigint[], ${col("opens")}::bigint[],
      ${col("installs")}::bigint[], ${col("reinstalls")}::bigint[],
      ${col("reactivations")}::bigint[], ${col("app_opens")}::bigint[],
      ${col("user_referred")}::bigint[], ${col("time_spent")}::numeric[],
      ${col("revenue")}::numeric[]
    ) as d(link_id, views, opens, installs, reinstalls, reactivations, app_opens, user_referred,
      time_spent, revenue)
    where c.environment_id = ${environmentId} and c.link_id = d.link_id ${where}
  `;
}
