-- Links, their lifetime counters, and the analytics history that moves them.

create table links (
  id integer generated always as identity primary key,
  environment_id integer not null references environments (id) on delete cascade,
  -- Unique across the instance: the link host resolves /<path> with no other context.
  path text not null unique,
  title text not null default '',
  subtitle text not null default '',
  image text,
  data jsonb not null default '{}',
  tags jsonb not null default '[]',
  ios_custom_redirect jsonb not null default '{}',
  android_custom_redirect jsonb not null default '{}',
  desktop_custom_redirect jsonb not null default '{}',
  show_preview_ios boolean not null default false,
  show_preview_android boolean not null default false,
  tracking_campaign text,
  tracking_source text,
  tracking_medium text,
  sdk_generated boolean not null default true,
  generated_from_platform text not null default 'API',
  active boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index links_environment_active on links (environment_id, id) where active;

-- Kept apart from links so that counting an event does not rewrite the wide link row.
create table link_counters (
  link_id integer primary key references links (id) on delete cascade,
  total_views bigint not null default 0,
  total_opens bigint not null default 0,
  total_installs bigint not null default 0,
  total_reinstalls bigint not null default 0,
  total_time_spent bigint not null default 0,
  total_reactivations bigint not null default 0,
  total_app_opens bigint not null default 0,
  total_user_referred bigint not null default 0,
  total_revenue bigint not null default 0
);

-- The analytics history: every recorded event, within the analytics retention window.
create table analytics_events (
  id bigint generated always as identity primary key,
  environment_id integer not null references environments (id) on delete cascade,
  -- Server-assigned `evt_…` id delivered to consumers.
  event_id text not null unique,
  -- The client's idempotency key, when it sent one.
  client_id text,
  type text not null,
  name text,
  occurred_at timestamptz not null,
  received_at timestamptz not null,
  link_id integer references links (id) on delete set null,
  -- The feed-event envelope, ready to serve as it is.
  body text not null
);
create unique index analytics_events_client_id on analytics_events (environment_id, client_id)
  where client_id is not null;
create index analytics_events_occurred on analytics_events (environment_id, occurred_at);
create index analytics_events_received on analytics_events (received_at);

-- The highest purchase version seen per (transaction_id, name): revenue counts only that one.
create table purchase_versions (
  environment_id integer not null references environments (id) on delete cascade,
  transaction_id text not null,
  name text not null,
  version integer not null,
  amount bigint not null,
  link_id integer references links (id) on delete set null,
  primary key (environment_id, transaction_id, name)
);
