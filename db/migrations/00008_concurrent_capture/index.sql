-- Capture that does not serialise writers (services/feed_capture.ts), on partitioned storage.
--
-- A captured event's place in the feed is now (xid, seq): the id of the transaction that
-- captured it and a number from a sequence. Readers serve only events of transactions older
-- than their snapshot's xmin, all of which have ended, so nothing can appear behind a cursor
-- and writers no longer take turns on the environment row.
--
-- Events captured before this migration keep their seq with xid 0: they stay in their order,
-- before every later event, and a cursor issued before the change (a v1 cursor: a seq only)
-- reads on from the same place as (0, seq).

create sequence feed_events_seq;
select setval('feed_events_seq', greatest(coalesce((select max(seq) from feed_events), 0), 1));

alter table feed_events rename to feed_events_unpartitioned;
alter index feed_events_type rename to feed_events_unpartitioned_type;
alter index feed_events_received rename to feed_events_unpartitioned_received;

-- Partitioned by day (UTC) of received_at, as the analytics history is from 00009:
-- services/maintenance/partitions.ts creates the days ahead and retention drops an expired day whole. Rows
-- of a day without its partition land in the default partition; the background job moves them
-- out when it creates that day. The existing rows go into partitions of their days, created
-- here, so the default partition starts empty (attaching a day scans it).
create table feed_events (
  environment_id integer not null references environments (id) on delete cascade,
  -- pg_current_xact_id() of the capturing transaction (a 64-bit xid8, as bigint).
  xid bigint not null default (pg_current_xact_id()::text)::bigint,
  seq bigint not null default nextval('feed_events_seq'),
  type text not null,
  received_at timestamptz not null,
  -- The feed-event envelope, served as text without parsing.
  body text not null
) partition by range (received_at);
alter sequence feed_events_seq owned by feed_events.seq;
create table feed_events_default partition of feed_events default;

do $$
declare
  day date;
begin
  for day in
    select distinct (received_at at time zone 'UTC')::date from feed_events_unpartitioned
  loop
    -- The names and bounds services/maintenance/partitions.ts gives the days it creates.
    execute format(
      'create table %I partition of feed_events for values from (%L) to (%L)',
      'feed_events_p' || to_char(day, 'YYYYMMDD'),
      day::timestamp at time zone 'UTC',
      (day + 1)::timestamp at time zone 'UTC'
    );
  end loop;
end
$$;

insert into feed_events (environment_id, xid, seq, type, received_at, body)
select environment_id, 0, seq, type, received_at, body from feed_events_unpartitioned;
drop table feed_events_unpartitioned;

-- No unique key: one would have to include received_at. (xid, seq) is unique by construction.
create index feed_events_position on feed_events (environment_id, xid, seq);
create index feed_events_type on feed_events (environment_id, type, xid, seq);
-- On every day, unlike the analytics history: destinations look for expired events before
-- each batch (services/destination_drops.ts), also in the day the retention cutoff falls in.
create index feed_events_received on feed_events (received_at);

-- A destination's place and its batch in flight are positions too; existing ones are seqs of
-- the old numbering, so xid 0.
alter table destinations
  add column cursor_xid bigint not null default 0,
  add column batch_last_xid bigint;
update destinations set batch_last_xid = 0 where batch_last_seq is not null;

-- Numbering no longer goes through the environment row.
alter table environments drop column feed_seq;

-- Autovacuum analyses the partitions, never a partitioned table itself.
analyze feed_events;

-- The feed's horizon (services/feed.ts): every transaction of this database with a smaller id
-- has ended, so no captured event below it can still appear. The snapshot's xmin would be
-- that too, but it counts the writing transactions of every database on the server; the ones
-- known to belong to another database are left out here. A transaction that pg_stat_activity
-- no longer shows (it just ended), or whose backend this role may not see, is kept: the
-- horizon can lag, never run ahead. STABLE: it reads the calling statement's snapshot.
create function feed_horizon() returns bigint language sql stable as $$
  select coalesce(
    (
      select min(x::text::bigint) from pg_snapshot_xip(pg_current_snapshot()) x
      where not exists (
        select 1 from pg_stat_activity a
        where a.backend_xid = xid(x) and a.datname is distinct from current_database()
      )
    ),
    (pg_snapshot_xmax(pg_current_snapshot())::text)::bigint
  )
$$;
