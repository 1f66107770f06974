-- Analytics rollups: what the analytics query (services/analytics/) reads instead of raw events.
-- One row holds, for an environment, an hour (UTC), a link (null: unattributed) and one value of
-- each dimension, the counts of each metric and the sums of time spent and revenue.
--
-- Exact by construction, written in the transaction that stores the events:
-- - The statement that stores a batch (services/events/record.ts) also appends the rollup rows of the
--   events it actually inserted (duplicates by client id are never inserted, so never counted).
--   One transaction: a crash before its commit leaves neither the events nor their counts, and
--   after it both. Nothing catches up later, so there is no watermark to lose.
-- - Rows are only ever appended (no upsert): concurrent batches never wait on each other's
--   rows nor deadlock on them. The background job merges the rows of past hours into one per
--   key (services/analytics/rollups.ts), in one statement each time: a reader sums whichever
--   rows there are and gets the same figure before and after.
-- - Purchases follow the metrics' correction rule: only the highest version of a
--   (transaction_id, name) counts, in the bucket of the event that carried it. purchase_versions
--   keeps that bucket (below), so a correction appends -1 purchase and -amount to the old
--   bucket and +1 and +amount to the new, in the statement that records the new version.
--
-- Partitioned by month (UTC) of `hour`, dropped whole once older than ANALYTICS_ROLLUP_DAYS, like
-- the history (services/maintenance/partitions.ts). No foreign keys: environments and links are never
-- deleted, and a key check per appended row would cost every batch.

create table analytics_rollups (
  environment_id integer not null,
  hour timestamptz not null,
  link_id integer,
  country text,
  platform text,
  os text,
  browser text,
  referrer text,
  -- A custom event's or a purchase's name.
  event_name text,
  views bigint not null default 0,
  opens bigint not null default 0,
  installs bigint not null default 0,
  reinstalls bigint not null default 0,
  reactivations bigint not null default 0,
  app_opens bigint not null default 0,
  user_referred bigint not null default 0,
  sessions bigint not null default 0,
  time_spent bigint not null default 0,
  purchases bigint not null default 0,
  revenue bigint not null default 0,
  custom bigint not null default 0,
  -- False for rows appended by ingestion, true once merged into one row per key.
  merged boolean not null default false
) partition by range (hour);
create table analytics_rollups_default partition of analytics_rollups default;

-- Where the current version of each purchase counts (null when its event was no longer kept at
-- the upgrade: a later correction then only adds the new version).
alter table purchase_versions
  add column hour timestamptz,
  add column country text,
  add column platform text,
  add column os text;

with current as (
  select distinct on (e.environment_id, b.transaction_id, e.name)
    e.environment_id, b.transaction_id, e.name, e.occurred_at, b.body
  from analytics_events e
  cross join lateral (
    select e.body::json as body, e.body::json -> 'purchase' ->> 'transaction_id' as transaction_id,
      (e.body::json -> 'purchase' ->> 'version')::int as version
  ) b
  join purchase_versions v on v.environment_id = e.environment_id
    and v.transaction_id = b.transaction_id and v.name = e.name and v.version = b.version
  where e.type = 'purchase'
  order by e.environment_id, b.transaction_id, e.name, e.event_id
)
update purchase_versions v set
  hour = date_trunc('hour', c.occurred_at, 'UTC'),
  country = c.body -> 'geo' ->> 'country',
  platform = case when json_typeof(c.body -> 'device' -> 'platform') = 'string'
    then c.body -> 'device' ->> 'platform' end,
  os = case when json_typeof(c.body -> 'device' -> 'os') = 'string'
    then c.body -> 'device' ->> 'os' end
from current c
where v.environment_id = c.environment_id and v.transaction_id = c.transaction_id
  and v.name = c.name;

-- The history still kept, rolled up: every event but purchases (counted per current version).
create temporary table rollup_backfill on commit drop as
select e.environment_id, date_trunc('hour', e.occurred_at, 'UTC') as hour, e.link_id,
  b.body -> 'geo' ->> 'country' as country,
  case when json_typeof(b.body -> 'device' -> 'platform') = 'string'
    then b.body -> 'device' ->> 'platform' end as platform,
  case when json_typeof(b.body -> 'device' -> 'os') = 'string'
    then b.body -> 'device' ->> 'os' end as os,
  case when e.type = 'view' and json_typeof(b.body -> 'device' -> 'browser') = 'string'
    then b.body -> 'device' ->> 'browser' end as browser,
  case when e.type = 'view' and json_typeof(b.body -> 'attribution' -> 'referrer_host') = 'string'
    then b.body -> 'attribution' ->> 'referrer_host' end as referrer,
  e.name as event_name,
  count(*) filter (where e.type = 'view') as views,
  count(*) filter (where e.type = 'open') as opens,
  count(*) filter (where e.type = 'install') as installs,
  count(*) filter (where e.type = 'reinstall') as reinstalls,
  count(*) filter (where e.type = 'reactivation') as reactivations,
  count(*) filter (where e.type = 'app_open') as app_opens,
  count(*) filter (where e.type = 'user_referred') as user_referred,
  count(*) filter (where e.type = 'session') as sessions,
  coalesce(sum((b.body -> 'time_spent')::text::bigint) filter (where e.type = 'session'), 0)
    as time_spent,
  0::bigint as purchases,
  0::bigint as revenue,
  count(*) filter (where e.type = 'custom') as custom
from analytics_events e
cross join lateral (select e.body::json as body) b
where e.type <> 'purchase'
group by 1, 2, 3, 4, 5, 6, 7, 8, 9
union all
select environment_id, hour, link_id, country, platform, os, null, null, name,
  0, 0, 0, 0, 0, 0, 0, 0, 0, count(*), sum(amount), 0
from purchase_versions
where hour is not null
group by environment_id, hour, link_id, country, platform, os, name;

-- A partition for every month that has rows, named and bounded as services/maintenance/partitions.ts does,
-- so the default partition starts empty.
do $$
declare
  month date;
begin
  for month in
    select distinct date_trunc('month', hour, 'UTC')::date from rollup_backfill
  loop
    execute format(
      'create table %I partition of analytics_rollups for values from (%L) to (%L)',
      'analytics_rollups_p' || to_char(month, 'YYYYMM'),
      month::timestamp at time zone 'UTC',
      (month + interval '1 month')::timestamp at time zone 'UTC'
    );
  end loop;
end
$$;

insert into analytics_rollups (
  environment_id, hour, link_id, country, platform, os, browser, referrer, event_name, views,
  opens, installs, reinstalls, reactivations, app_opens, user_referred, sessions, time_spent,
  purchases, revenue, custom, merged
)
select environment_id, hour, link_id, country, platform, os, browser, referrer, event_name,
  sum(views), sum(opens), sum(installs), sum(reinstalls), sum(reactivations), sum(app_opens),
  sum(user_referred), sum(sessions), sum(time_spent), sum(purchases), sum(revenue), sum(custom),
  true
from rollup_backfill
group by environment_id, hour, link_id, country, platform, os, browser, referrer, event_name;

-- An environment's hours (every query names its environment and a range of hours), one link's
-- hours, and the rows the job has yet to merge.
create index analytics_rollups_environment_hour on analytics_rollups (environment_id, hour);
create index analytics_rollups_link_hour on analytics_rollups (link_id, hour)
  where link_id is not null;
create index analytics_rollups_unmerged on analytics_rollups (hour) where not merged;
create index analytics_rollups_default_hour on analytics_rollups_default (hour);

analyze analytics_rollups;
