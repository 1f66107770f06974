-- Feed positions that survive a move to another database (deno task restore and move,
-- services/feed/positions.ts).
--
-- A captured event's place in the feed is (xid, seq), xid being the id of the transaction that
-- captured it (00008), and readers serve only events below the horizon, the oldest transaction
-- still running. Transaction ids belong to one database cluster: restored into another one,
-- whose ids are usually far smaller, the restored events would sit above its horizon (unread
-- until its ids caught up) and the events it captures next would sort before them, behind every
-- cursor already issued (skipped). So a feed position is the transaction id plus an offset
-- kept by the database itself, feed_xid_offset(): 0 until a restore finds the restored
-- positions ahead of this cluster's ids, and sets it (once, in the restore's transaction) so
-- that every later transaction's position comes after all of them. The horizon adds the same
-- offset: it stays the position below which everything has ended.
--
-- IMMUTABLE and SQL: the planner inlines it as a constant into the column default and the
-- horizon, so capture and the feed page pay nothing for it. A restore replaces it before the
-- service runs on the database; a redefinition any later migration makes of feed_horizon() or
-- of the xid default must keep adding it.
--
-- Not on Citus, whose feed positions are the workers' own transaction ids (00018's trigger):
-- restore and move refuse a Citus cluster.
do $$
begin
  if exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  -- Kept when it exists already (a raised offset must never go back to 0).
  if to_regprocedure('feed_xid_offset()') is null then
    create function feed_xid_offset() returns bigint language sql immutable parallel safe
      as $f$ select 0::bigint $f$;
  end if;
  alter table feed_events alter column xid
    set default ((pg_current_xact_id()::text)::bigint + feed_xid_offset());
  create or replace function feed_horizon() returns bigint language sql stable as $f$
    select coalesce(
      (
        select min(x::text::bigint) from pg_snapshot_xip(pg_current_snapshot()) x
        where not exists (
          select 1 from pg_stat_activity a
          where a.backend_xid = xid(x) and a.datname is distinct from current_database()
        )
      ),
      (pg_snapshot_xmax(pg_current_snapshot())::text)::bigint
    ) + feed_xid_offset()
  $f$;
end
$$;
