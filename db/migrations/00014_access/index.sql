-- Team access: API keys of one environment, the audit log, accounts and project members.

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
  -- Figures beside the target, e.g. an import's {"count": 120}; null for most actions.
  detail jsonb,
  request_id text
);
create index audit_log_project on audit_log (project_id, id) where project_id is not null;

-- People. A password is kept as its scrypt hash (services/access/passwords.ts), set through a
-- one-time setup link; an account without one cannot sign in with a password yet.
create table accounts (
  id serial primary key,
  email text not null,
  name text not null,
  password_hash text,
  created_at timestamptz not null
);
create unique index accounts_email on accounts (lower(email));

-- A setup link is known by the SHA-256 of its token; it works once, until expires_at.
create table account_setup_links (
  token_hash text primary key,
  account_id integer not null references accounts (id) on delete cascade,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  used_at timestamptz
);
create index account_setup_links_account on account_setup_links (account_id);

-- A person's role on a project (both its environments).
create table project_members (
  project_id integer not null references projects (id) on delete cascade,
  account_id integer not null references accounts (id) on delete cascade,
  role text not null check (role in ('viewer', 'editor', 'admin', 'owner')),
  primary key (project_id, account_id)
);
create index project_members_account on project_members (account_id);

-- A session is the instance admin's (account_id null, signed in with the admin token) or a
-- person's; removing the account ends its sessions with it.
alter table dashboard_sessions
  add column account_id integer references accounts (id) on delete cascade;

-- The person who created a key: the key never does more than their role allows, and stops when
-- they leave the project (revoked with their membership or account).
alter table api_keys add column created_by_account_id integer references accounts (id)
  on delete set null;

-- Failed password sign-ins, counted per client address over a sliding window
-- (services/access/password_limit.ts). Kept apart from admin_token_failures: a wrong password is
-- not a guess at the admin token, and must not use up the admin token's allowance.
create table password_signin_failures (
  address text not null,
  at timestamptz not null
);
create index password_signin_failures_address_at on password_signin_failures (address, at);
create index password_signin_failures_at on password_signin_failures (at);
