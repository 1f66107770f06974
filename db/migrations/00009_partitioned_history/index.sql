-- The analytics history, partitioned by day (UTC) of received_at. services/maintenance/partitions.ts creates
-- the days ahead and retention drops an expired day whole instead of deleting its rows one by
-- one. Rows of a day without a partition (a clock far from today) land in the default partition;
-- the background job moves them out when it creates their day.
--
-- The existing rows are moved here, each into the partition of its day (one is created for every
-- day that has rows), so the default partition starts empty: attaching a day scans the default
-- partition under an exclusive lock, so it must stay small. Days already outside the retention
-- window are dropped by the first retention pass after the upgrade.
--
-- Measured on the development machine (2 cores, PostgreSQL 15): see docs/operations.md, "What
-- changed in this version" (bench/retention.ts measures it again).

alter table analytics_events rename to analytics_events_unpartitioned;
-- Index names are per schema: the new table takes them. The old table is read once, in full.
alter table analytics_events_unpartitioned drop constraint analytics_events_pkey;
alter table analytics_events_unpartitioned drop constraint analytics_events_event_id_key;
drop index analytics_events_client_id, analytics_events_occurred, analytics_events_received;

-- PostgreSQL 15 allows no identity column on a partitioned table: a sequence default instead,
-- going on from the old identity (renamed to the usual name once the old table is gone).
create sequence analytics_events_id_seq_new as bigint;
select setval('analytics_events_id_seq_new', last_value, is_called) from analytics_events_id_seq;

create table analytics_events (
  id bigint not null default nextval('analytics_events_id_seq_new'),
  environment_id integer not null,
  -- Server-assigned `evt_…` id delivered to consumers: random and never looked up, so no index.
  event_id text not null,
  -- The client's idempotency key, when it sent one (unique through analytics_event_keys).
  client_id text,
  type text not null,
  name text,
  occurred_at timestamptz not null,
  received_at timestamptz not null,
  link_id integer,
  -- The feed-event envelope, ready to serve as it is.
  body text not null
) partition by range (received_at);
alter sequence analytics_events_id_seq_new owned by analytics_events.id;
create table analytics_events_default partition of analytics_events default;

do $$
declare
  day date;
begin
  for day in
    select distinct (received_at at time zone 'UTC')::date from analytics_events_unpartitioned
  loop
    -- The names and bounds services/maintenance/partitions.ts gives the days it creates.
    execute format(
      'create table %I partition of analytics_events for values from (%L) to (%L)',
      'analytics_events_p' || to_char(day, 'YYYYMMDD'),
      day::timestamp at time zone 'UTC',
      (day + 1)::timestamp at time zone 'UTC'
    );
  end loop;
end
$$;

insert into analytics_events (
  id, environment_id, event_id, client_id, type, name, occurred_at, received_at, link_id, body
)
select id, environment_id, event_id, client_id, type, name, occurred_at, received_at, link_id, body
from analytics_events_unpartitioned;

-- Client ids stay unique per environment across partitions: a unique index on a partitioned
-- table must contain the partition key, so they are kept here, written by the same statement as
-- the events (services/events/record.ts) and purged with the same retention.
create table analytics_event_keys (
  environment_id integer not null,
  client_id text not null,
  received_at timestamptz not null
);
insert into analytics_event_keys (environment_id, client_id, received_at)
select environment_id, client_id, received_at
from analytics_events_unpartitioned
where client_id is not null;

-- Indexes and keys after the rows: one build each instead of upkeep row by row.
alter table analytics_events add primary key (id, received_at);
create index analytics_events_occurred on analytics_events (environment_id, occurred_at);
-- received_at is looked up only in the default partition (moving a day out, deleting expired
-- rows); a day partition is dropped whole and needs no such index.
create index analytics_events_default_received on analytics_events_default (received_at);
alter table analytics_events
  add constraint analytics_events_environment_id_fkey
    foreign key (environment_id) references environments (id) on delete cascade,
  add constraint analytics_events_link_id_fkey
    foreign key (link_id) references links (id) on delete set null;

alter table analytics_event_keys
  add primary key (environment_id, client_id),
  add foreign key (environment_id) references environments (id) on delete cascade;
create index analytics_event_keys_received on analytics_event_keys (received_at);

drop table analytics_events_unpartitioned;
alter sequence analytics_events_id_seq_new rename to analytics_events_id_seq;

-- Autovacuum analyses the partitions, never a partitioned table itself.
analyze analytics_events;
analyze analytics_event_keys;
