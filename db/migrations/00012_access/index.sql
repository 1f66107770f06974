-- Team access: API keys of one environment (more arrives with the audit log and accounts).

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
