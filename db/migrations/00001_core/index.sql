-- Projects, their two environments, instance settings, and what starts feed capture
-- (feed tokens and destinations).

create table instance_settings (
  key text primary key,
  value text not null
);

create table projects (
  id integer generated always as identity primary key,
  hashid text not null unique,
  name text not null,
  enterprise boolean not null default false,
  -- SHA-256 (hex) of the project key; the key itself is shown once and never stored.
  key_hash text not null unique,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- The numeric `project_id` of the feed API is an environment's id.
create table environments (
  id integer generated always as identity primary key,
  project_id integer not null references projects (id) on delete cascade,
  kind text not null check (kind in ('production', 'test')),
  -- Non-null while the feed captures events (from the first token or destination on).
  capture_started_at timestamptz,
  -- Last feed sequence number handed out. Capturing transactions update this row, so they
  -- serialise per environment and commit in sequence order (see services/feed_capture.ts).
  feed_seq bigint not null default 0,
  unique (project_id, kind)
);

create table feed_tokens (
  id integer generated always as identity primary key,
  environment_id integer not null references environments (id) on delete cascade,
  name text not null,
  token_hash text not null unique,
  hint text not null,
  created_at timestamptz not null,
  last_used_at timestamptz,
  revoked_at timestamptz
);
create index feed_tokens_active on feed_tokens (environment_id) where revoked_at is null;

create table destinations (
  id integer generated always as identity primary key,
  environment_id integer not null references environments (id) on delete cascade,
  url text not null,
  created_at timestamptz not null
);
create index destinations_environment on destinations (environment_id);
