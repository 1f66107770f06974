-- The environment's funnel reads its installs and their median seconds from click to install per
-- UTC day (services/attribution/install_days.ts): at 10,000,000 events a 90-day funnel sorted
-- 700,000 attributed installs for the median (230 ms), where the days hold a few hundred rows
-- each.

-- Per environment, UTC day and bucket of seconds (-1: installs without a click), how many
-- attributed installs occurred. Written only by the fold (install_days.ts foldInstalls), from the
-- queue below.
create table if not exists attributed_install_days (
  environment_id integer not null,
  day timestamptz not null,
  bucket smallint not null,
  installs bigint not null,
  primary key (environment_id, day, bucket)
);

-- The installs not folded into their day yet: written by the statement that stores each install,
-- beside its row in attributed_installs, and deleted by the fold in the statement that adds them
-- to their days, so that any one snapshot sees each install in the queue or in its day, once.
create table if not exists attributed_install_queue (
  environment_id integer not null,
  occurred_at timestamptz not null,
  bucket smallint
);

-- In DO blocks, as in 00025: Citus takes DDL on distributed tables one statement at a time from
-- PL/pgSQL, not within a file of several statements.
do $$
begin
  if exists (select from pg_extension where extname = 'citus') then
    perform create_distributed_table('attributed_install_days', 'environment_id',
      colocate_with => 'feed_events');
    perform create_distributed_table('attributed_install_queue', 'environment_id',
      colocate_with => 'feed_events');
  end if;
end
$$;

-- Each attributed install with a click falls in a bucket of its seconds (the CASE below, which
-- install_days.ts BUCKET_SQL repeats: a migration keeps the formula it was written with).
-- Buckets follow the seconds' order, one second wide below 120 s and 1 to 8 % of their seconds
-- above, so the install at the median's rank is found by reading its bucket's rows only, through
-- the index below. The installs stored before are bucketed and folded here.
do $$
begin
  alter table attributed_installs add column if not exists bucket smallint;
  update attributed_installs set bucket = case
      when seconds < 120 then seconds
      when seconds < 1200 then 120 + (seconds - 120) / 10
      when seconds < 12000 then 228 + (seconds - 1200) / 100
      when seconds < 120000 then 336 + (seconds - 12000) / 1000
      when seconds < 1200000 then 444 + (seconds - 120000) / 10000
      else 552 + least((seconds - 1200000) / 100000, 10000)
    end
  where seconds is not null;
  create index if not exists attributed_installs_bucket
    on attributed_installs (environment_id, bucket, seconds) include (occurred_at)
    where bucket is not null;
  insert into attributed_install_days (environment_id, day, bucket, installs)
  select environment_id, date_trunc('day', occurred_at, 'UTC'), coalesce(bucket, -1), count(*)
  from attributed_installs
  group by 1, 2, 3;
end
$$;

-- The funnel's purchases of given links (its top links' distinct buyers, a link's funnel, a page
-- of links' in GraphQL): read from the index instead of a scan of the range's purchases (55 ms
-- for ten links at 10,000,000 events; 3.5 ms from the index).
do $$
begin
  create index if not exists purchase_versions_funnel_link
    on purchase_versions (environment_id, link_id, hour) include (user_id, converted)
    where version > 0 and converted is not null and link_id is not null;
end
$$;
