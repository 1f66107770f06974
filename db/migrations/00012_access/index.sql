-- Team access: API keys of one environment and the audit log (accounts arrive next).

-- An API key (`sk_…`) is known by the SHA-256 (hex) of its value; the value is never stored.
-- Revocation and expiry are read on every request, so they hold on every instance at once.
create table api_keys (
  id serial primary key,
  environment_id integer not null references environments (id) on delete cascade,
  name text not null,
  scopes text[] not null,
  key_hash text not null unique,
  hint text not null,
  created_at timestamptz not null,
  expires_at timestamptz,
  last_used_at timestamptz,
  revoked_at timestamptz
);
create index api_keys_environment on api_keys (environment_id, id) where revoked_at is null;

-- The audit log: one row per change, written in the change's own transaction (a rolled-back
-- change leaves none). Who acted, what they did to what; never a secret value. project_id has no
-- foreign key: the log outlives what it names.
create table audit_log (
  id bigserial primary key,
  at timestamptz not null default now(),
  project_id integer,
  actor_type text not null check (actor_type in ('account', 'api_key', 'admin_token')),
  actor_id integer,
  actor_name text not null,
  action text not null,
  target_type text not null,
  target_id text not null,
  request_id text
);
create index audit_log_project on audit_log (project_id, id) where project_id is not null;
