-- Each link's views per UTC day: how the funnel counts the views of its top links (and of a page
-- of links in GraphQL) without reading every rollup row of each link. At 10,000,000 events the
-- ten busiest links' 90 days were 300,000 rollup rows read through the index by link (87 ms);
-- their days are 900 rows.
--
-- Exact by construction, as the margins are (00015): the job that merges an hour's rollups
-- (services/analytics/rollups.ts mergeRollups) adds the views of the rows it merges to their
-- links' days in the same statement, so a link's day always holds exactly the views of its
-- merged rollup rows, and a reader adds the rows not merged yet from the rollups themselves.
-- Partitioned by month as the rollups, and kept and dropped with them, by the same months.
create table if not exists analytics_link_days (
  environment_id integer not null,
  link_id integer not null,
  -- The UTC midnight of the day.
  day timestamptz not null,
  views bigint not null,
  primary key (environment_id, link_id, day)
) partition by range (day);
create table if not exists analytics_link_days_default partition of analytics_link_days default;
-- What retention deletes from the default partition.
create index if not exists analytics_link_days_default_day on analytics_link_days_default (day);

-- The months the rollups have, named and bounded as services/maintenance/partitions.ts does; then
-- the days of the rollups merged so far (their views, as the merge sums them, clamped). In DO
-- blocks, as in 00025: Citus takes DDL on distributed tables one statement at a time from
-- PL/pgSQL, not within a file of several statements.
do $$
declare
  month timestamptz;
begin
  for month in
    select (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \(''([^'']+)''\)'))[1]::timestamptz
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'analytics_rollups'::regclass
      and pg_get_expr(c.relpartbound, c.oid) <> 'DEFAULT'
  loop
    execute format(
      'create table if not exists %I partition of analytics_link_days for values from (%L) to (%L)',
      'analytics_link_days_p' || to_char(month at time zone 'UTC', 'YYYYMM'),
      month,
      (month at time zone 'UTC' + interval '1 month') at time zone 'UTC'
    );
  end loop;
  if exists (select from pg_extension where extname = 'citus') then
    perform create_distributed_table('analytics_link_days', 'environment_id',
      colocate_with => 'feed_events');
  end if;
  insert into analytics_link_days (environment_id, link_id, day, views)
  select environment_id, link_id, date_trunc('day', hour, 'UTC'),
    greatest(-9223372036854775808, least(sum(views), 9223372036854775807))
  from analytics_rollups
  where merged and link_id is not null
  group by 1, 2, 3
  having sum(views) <> 0;
  -- Their statistics now: a month's days planned without them were read whole (59,000 rows of
  -- 10,000 links) for ten links' few.
  analyze analytics_link_days;
end
$$;
