-- One currency (issue 36): revenue in each project's reporting currency, converted at the European
-- Central Bank's daily reference rates (services/fx/). Depends on nothing after 00024.
--
-- How conversion stays exact: each purchase's current version keeps its currency and its amount
-- converted into the project's reporting currency (`converted`, null when no rate applies yet).
-- The link counters and the analytics rollups count `converted`, never the amount as sent.
-- Whatever changes a conversion (rates loaded, the reporting currency changed) rewrites
-- `converted` and appends the difference to the rollups and counters in the same transaction,
-- as a purchase correction does: every figure stays the sum of the current conversions.

-- The ECB's reference rates: units of `currency` per euro, per day the ECB published them.
create table if not exists fx_rates (
  currency text not null check (currency ~ '^[A-Z]{3}$' and currency <> 'EUR'),
  day date not null,
  rate numeric not null check (rate > 0),
  primary key (currency, day)
);

-- The daily fetch (services/fx/fetch.ts): at most one row, leased by the instance that fetches, so that
-- several instances do not all fetch. `next_at`: when the next fetch is due.
create table if not exists fx_fetch (
  id boolean primary key default true check (id),
  lease_owner text,
  lease_expires_at timestamptz,
  next_at timestamptz not null default '-infinity',
  last_day date
);
-- No row yet: the first claim makes it (a restore needs every table empty).

do $$
begin
  if exists (select from pg_extension where extname = 'citus') then
    perform create_reference_table('fx_rates');
  end if;
end
$$;

-- In a DO block, as in 00025: Citus takes these one by one from PL/pgSQL, not within a file of
-- several statements.
do $$
begin
  alter table projects add column if not exists reporting_currency text not null default 'USD';
  if not exists (
    select from pg_constraint where conname = 'projects_reporting_currency_check'
  ) then
    alter table projects add constraint projects_reporting_currency_check
      check (reporting_currency ~ '^[A-Z]{3}$');
  end if;

  alter table purchase_versions add column if not exists currency text;
  alter table purchase_versions add column if not exists converted bigint;

  -- `currency`: a purchase's currency (null on every other row); `amount`: purchases' amounts in
  -- their own currency (group_by=currency); `unconverted_purchases`: purchases no rate converts.
  alter table analytics_rollups add column if not exists currency text;
  alter table analytics_rollups add column if not exists amount bigint not null default 0;
  alter table analytics_rollups
    add column if not exists unconverted_purchases bigint not null default 0;
  alter table analytics_margins add column if not exists amount bigint not null default 0;
  alter table analytics_margins
    add column if not exists unconverted_purchases bigint not null default 0;
  drop index if exists analytics_margins_read;
  create index analytics_margins_read on analytics_margins (environment_id, dimension, daily, hour)
    include (value, views, opens, installs, reinstalls, reactivations, app_opens, user_referred,
      sessions, time_spent, purchases, revenue, custom, amount, unconverted_purchases);
end
$$;

-- Each current version's currency, from its event while the history keeps it (upper case, as
-- conversion compares codes).
with current as (
  select distinct on (e.environment_id, b.transaction_id, e.name)
    e.environment_id, b.transaction_id, e.name, b.currency
  from analytics_events e
  cross join lateral (
    select e.body::json -> 'purchase' ->> 'transaction_id' as transaction_id,
      (e.body::json -> 'purchase' ->> 'version')::int as version,
      upper(e.body::json -> 'purchase' ->> 'currency') as currency
  ) b
  join purchase_versions v on v.environment_id = e.environment_id
    and v.transaction_id = b.transaction_id and v.name = e.name and v.version = b.version
  where e.type = 'purchase'
  order by e.environment_id, b.transaction_id, e.name, e.event_id
)
update purchase_versions v set currency = c.currency
from current c
where v.environment_id = c.environment_id and v.transaction_id = c.transaction_id
  and v.name = c.name;

-- A project's reporting currency: the currency of most of its purchases (USD when it has none),
-- so that a project that sold in one currency keeps the same totals.
update projects p set reporting_currency = m.currency
from (
  select distinct on (e.project_id) e.project_id, v.currency
  from purchase_versions v join environments e on e.id = v.environment_id
  where v.version > 0 and v.currency ~ '^[A-Z]{3}$'
  group by e.project_id, v.currency
  order by e.project_id, count(*) desc, v.currency
) m
where p.id = m.project_id;

-- A version whose event is gone has an unknown currency: it was summed as its project's, and
-- stays so. Versions in the reporting currency convert to themselves; the others have no rate
-- until rates are loaded (the fetch, `deno task fx` or the admin API then converts them).
update purchase_versions v set
  currency = coalesce(v.currency, p.reporting_currency),
  converted = case when coalesce(v.currency, p.reporting_currency) = p.reporting_currency
    then v.amount end
from environments e join projects p on p.id = e.project_id
where e.id = v.environment_id;

-- The rollups: each current version moves from the currency-less row it was counted in to a row
-- of its currency, with its conversion (or as unconverted). Appended like any correction; the
-- merge folds them (services/analytics/rollups.ts).
insert into analytics_rollups (
  environment_id, hour, link_id, country, platform, os, event_name, rule, variant, currency,
  purchases, revenue, amount, unconverted_purchases
)
select v.environment_id, v.hour, v.link_id, v.country, v.platform, v.os, v.name, v.rule,
  v.variant, x.currency, sum(x.purchases), sum(x.revenue), sum(x.amount), sum(x.unconverted)
from purchase_versions v
cross join lateral (values
  (null::text, -1, -v.amount, 0::bigint, 0),
  (v.currency, case when v.converted is null then 0 else 1 end, coalesce(v.converted, 0),
    v.amount, case when v.converted is null then 1 else 0 end)
) as x(currency, purchases, revenue, amount, unconverted)
where v.version > 0 and v.hour is not null
group by v.environment_id, v.hour, v.link_id, v.country, v.platform, v.os, v.name, v.rule,
  v.variant, x.currency;

-- The link counters count conversions: the unconverted amounts leave them.
update link_counters c set total_revenue = greatest(-9223372036854775807,
  least(c.total_revenue::numeric - d.amount, 9223372036854775807))::bigint
from (
  select environment_id, link_id, sum(amount) as amount
  from purchase_versions
  where version > 0 and converted is null and link_id is not null
  group by environment_id, link_id
) d
where c.environment_id = d.environment_id and c.link_id = d.link_id;
