-- Analytics margins: the merged rollups of each environment and hour summed over links and over
-- every dimension but one, a row per value of that one (and a row of the hour's totals); and the
-- same per UTC day, summing the day's hourly margins. A query with no filter and no breakdown,
-- or a breakdown by country, platform, OS, browser, referrer or event name, reads these: a few
-- dozen rows an hour, or a day, for the environment, where the rollups hold about a row per
-- event once links are many (an hour of 10,000 links rarely sees one link, one country and one
-- device twice). A bucket that holds most of a UTC day takes the day's row and corrects it by
-- the hours it does not hold (services/analytics/query.ts).
--
-- Exact by construction: the job that merges an hour's rollups (services/analytics/rollups.ts)
-- replaces that hour's margins, computed from the same rows, and its day's, in the same
-- statement. So at every moment an hour's margins sum exactly its merged rollup rows and a day's
-- its hours' margins, and a query adds the rows not yet merged (the current hour, late events)
-- from the rollups themselves. Kept and dropped with the rollups, by month.

create table analytics_margins (
  environment_id integer not null,
  hour timestamptz not null,
  -- 'total', or the dimension this row is one value of.
  dimension text not null,
  -- The value (null: unknown, as in the rollups; always null for 'total').
  value text,
  -- True for a UTC day's row (`hour` its midnight), false for an hour's.
  daily boolean not null default false,
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
  custom bigint not null default 0
) partition by range (hour);
create table analytics_margins_default partition of analytics_margins default;

-- The months the rollups have, named and bounded as services/maintenance/partitions.ts does.
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
      'create table %I partition of analytics_margins for values from (%L) to (%L)',
      'analytics_margins_p' || to_char(month at time zone 'UTC', 'YYYYMM'),
      month,
      (month at time zone 'UTC' + interval '1 month') at time zone 'UTC'
    );
  end loop;
end
$$;

-- A query reads one dimension of one environment over a range of hours, and only from the index.
create index analytics_margins_read on analytics_margins (environment_id, dimension, daily, hour)
  include (value, views, opens, installs, reinstalls, reactivations, app_opens, user_referred,
    sessions, time_spent, purchases, revenue, custom);
-- What retention deletes from the default partition, and what a merge replaces.
create index analytics_margins_default_hour on analytics_margins_default (hour);
create index analytics_margins_hour on analytics_margins (environment_id, hour);

-- The merged rollups so far, as the merge job computes margins (sums clamped as it clamps them).
insert into analytics_margins (
  environment_id, hour, dimension, value, views, opens, installs, reinstalls, reactivations,
  app_opens, user_referred, sessions, time_spent, purchases, revenue, custom
)
select r.environment_id, r.hour, d.dimension, d.value,
  greatest(-9223372036854775808, least(sum(r.views), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(r.opens), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(r.installs), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(r.reinstalls), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(r.reactivations), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(r.app_opens), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(r.user_referred), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(r.sessions), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(r.time_spent), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(r.purchases), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(r.revenue), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(r.custom), 9223372036854775807))
from analytics_rollups r
cross join lateral (values ('total', null), ('country', r.country), ('platform', r.platform),
  ('os', r.os), ('browser', r.browser), ('referrer', r.referrer), ('event_name', r.event_name))
  as d(dimension, value)
where r.merged
group by r.environment_id, r.hour, d.dimension, d.value
having sum(r.views) <> 0 or sum(r.opens) <> 0 or sum(r.installs) <> 0 or sum(r.reinstalls) <> 0 or
  sum(r.reactivations) <> 0 or sum(r.app_opens) <> 0 or sum(r.user_referred) <> 0 or
  sum(r.sessions) <> 0 or sum(r.time_spent) <> 0 or sum(r.purchases) <> 0 or sum(r.revenue) <> 0 or
  sum(r.custom) <> 0;

-- And each day's, from its hours.
insert into analytics_margins (
  environment_id, hour, dimension, value, daily, views, opens, installs, reinstalls,
  reactivations, app_opens, user_referred, sessions, time_spent, purchases, revenue, custom
)
select environment_id, date_trunc('day', hour, 'UTC'), dimension, value, true,
  greatest(-9223372036854775808, least(sum(views), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(opens), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(installs), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(reinstalls), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(reactivations), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(app_opens), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(user_referred), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(sessions), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(time_spent), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(purchases), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(revenue), 9223372036854775807)),
  greatest(-9223372036854775808, least(sum(custom), 9223372036854775807))
from analytics_margins
where not daily
group by environment_id, date_trunc('day', hour, 'UTC'), dimension, value
having sum(views) <> 0 or sum(opens) <> 0 or sum(installs) <> 0 or sum(reinstalls) <> 0 or
  sum(reactivations) <> 0 or sum(app_opens) <> 0 or sum(user_referred) <> 0 or sum(sessions) <> 0
  or sum(time_spent) <> 0 or sum(purchases) <> 0 or sum(revenue) <> 0 or sum(custom) <> 0;

analyze analytics_margins;
