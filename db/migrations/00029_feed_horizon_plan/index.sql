-- feed_horizon() (00008, with 00024's offset) as PL/pgSQL, the same expression: as a SQL
-- function it could not be inlined (it holds sub-selects), so PostgreSQL 15 planned its body
-- anew at every call, pg_stat_activity's view included: 0.34 ms a call against 0.05 ms for
-- the same expression run directly. PL/pgSQL keeps the plan for the session. Every feed read
-- calls it once (REST and GraphQL pages, destinations, the live tail, the horizon wait), so
-- that was about 0.3 ms of PostgreSQL's CPU a page, whatever the page's size.
--
-- Same answer: a STABLE function runs on its caller's snapshot, so pg_current_snapshot() is
-- the snapshot of the statement that reads the page, as before. The offset (feed_xid_offset(),
-- immutable) is folded into the kept plan as a constant; a restore that replaces it
-- invalidates that plan (PostgreSQL records the plan's dependency on the function), so the
-- next call plans again with the new offset.
--
-- On Citus the function is 00008's, without the offset (00024 is not run there), and
-- distributed (00018): the page's statement runs on the worker holding the feed's shard, and
-- calls it there. It becomes PL/pgSQL with that same body; Citus passes the replacement on to
-- every node.
do $$
begin
  if exists (select from pg_extension where extname = 'citus') then
    create or replace function feed_horizon() returns bigint language plpgsql stable as $f$
    begin
      return coalesce(
        (
          select min(x::text::bigint) from pg_snapshot_xip(pg_current_snapshot()) x
          where not exists (
            select 1 from pg_stat_activity a
            where a.backend_xid = xid(x) and a.datname is distinct from current_database()
          )
        ),
        (pg_snapshot_xmax(pg_current_snapshot())::text)::bigint
      );
    end
    $f$;
    return;
  end if;
  create or replace function feed_horizon() returns bigint language plpgsql stable as $f$
  begin
    return coalesce(
      (
        select min(x::text::bigint) from pg_snapshot_xip(pg_current_snapshot()) x
        where not exists (
          select 1 from pg_stat_activity a
          where a.backend_xid = xid(x) and a.datname is distinct from current_database()
        )
      ),
      (pg_snapshot_xmax(pg_current_snapshot())::text)::bigint
    ) + feed_xid_offset();
  end
  $f$;
end
$$;
