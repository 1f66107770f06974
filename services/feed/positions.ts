// Feed positions across databases (migration 00024): a backup records a bound above every
// position its database issued, and a restore makes every position the new database issues come
// after it, so a cursor issued before the move reads on without a gap or a repeat.
import type { Db } from "../../db/connect.ts";

/**
 * Above every feed position this database has issued or will issue to a transaction already
 * started: the next transaction id, plus the offset. Read inside a backup's snapshot.
 */
export async function feedPositionBound(db: Db): Promise<string> {
  // A database of a version before migration 00024 has no offset: it is 0 there.
  const [has] = await db<{ offset: boolean }[]>`
    select to_regprocedure('feed_xid_offset()') is not null as offset
  `;
  const [row] = has!.offset
    ? await db<{ bound: string }[]>`
      select ((pg_snapshot_xmax(pg_current_snapshot())::text)::bigint + feed_xid_offset())::text
        as bound
    `
    : await db<{ bound: string }[]>`
      select pg_snapshot_xmax(pg_current_snapshot())::text as bound
    `;
  return row!.bound;
}

export interface Alignment {
  /** The offset now in force. */
  offset: string;
  /** Whether this call raised it. */
  raised: boolean;
}

/**
 * Inside a restore's transaction, once the rows are in: raises this database's offset
 * (feed_xid_offset()) so that every transaction after this one gets a position above `bound`
 * and above every position stored (the feed's events, the destinations' places, batches and
 * drop accounting). It only ever raises it, and only when this cluster's transaction ids are
 * behind what was restored: a restore into the same cluster, or a busier one, changes nothing.
 * The transaction's commit makes it take effect, for every connection planned after it.
 */
export async function alignFeedPositions(db: Db, bound: string): Promise<Alignment> {
  const [row] = await db<{ needed: string; current: string; offset: string }[]>`
    select
      greatest(
        ${bound}::bigint,
        coalesce((select max(xid) from feed_events), 0) + 1,
        coalesce((
          select max(greatest(cursor_xid, coalesce(batch_last_xid, 0),
            coalesce(drops_checked_xid, 0), coalesce(drops_checked_horizon, 0)))
          from destinations
        ), 0) + 1
      )::text as needed,
      (pg_current_xact_id()::text)::bigint::text as current,
      feed_xid_offset()::text as offset
  `;
  const current = BigInt(row!.current);
  const existing = BigInt(row!.offset);
  // Transactions after this one have ids above `current`: from `needed - current` on, their
  // positions (id + offset) are all above `needed`.
  const wanted = BigInt(row!.needed) - current;
  if (wanted <= existing) return { offset: String(existing), raised: false };
  await setOffset(db, wanted);
  return { offset: String(wanted), raised: true };
}

async function setOffset(db: Db, offset: bigint): Promise<void> {
  // A function body takes no parameters: the value, a bigint, is written out in digits.
  await db.unsafe(`
    create or replace function feed_xid_offset() returns bigint language sql immutable
      parallel safe as $f$ select ${offset.toString()}::bigint $f$
  `);
}
