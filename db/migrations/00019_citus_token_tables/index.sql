-- On a Citus cluster: the rate-limit window (feed_rate_hits) and the live streams (live_streams)
-- become plain tables of the coordinator again (00018 had distributed them by token).
--
-- Why: both are limits that must be exact (services/feed/rate_limit.ts, services/feed/live_tail.ts). A
-- request counts a token's rows and adds its own under a lock held until its transaction ends.
-- On one server the new row is committed before the lock is released. Distributed, the row is
-- committed on a worker, and when that commit fails or is left to Citus's recovery (a worker
-- stopped at the wrong moment, a prepared transaction not yet committed there) the coordinator's
-- transaction may still commit and answer: the next request under the lock does not see the
-- row, and one read too many is admitted (seen in the soak with a worker restarted: 41 reads in
-- a window of 40). On the coordinator the count, the row and the lock are in one local
-- transaction again, exact whatever a worker does. They hold a minute of reads and the open
-- streams per token: small, and every request passes through the coordinator anyway.
-- On a plain PostgreSQL and the embedded PGlite this migration does nothing.
do $$
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  perform set_config('citus.multi_shard_modify_mode', 'sequential', true);
  -- Citus cannot undistribute a table with an identity column: the live streams (open streams,
  -- an hour at most each) are copied into a new table, ids and all, which takes the old name.
  create table live_streams_local (
    id bigint generated always as identity primary key,
    token_id integer not null,
    expires_at timestamptz not null
  );
  insert into live_streams_local (id, token_id, expires_at) overriding system value
    select id, token_id, expires_at from live_streams;
  perform setval(pg_get_serial_sequence('live_streams_local', 'id'),
    coalesce((select max(id) from live_streams_local), 0) + 1, false);
  drop table live_streams;
  alter table live_streams_local rename to live_streams;
  alter index live_streams_local_pkey rename to live_streams_pkey;
  create index live_streams_token on live_streams (token_id, expires_at);
  perform undistribute_table('feed_rate_hits');
end
$$;
