-- The dashboard: its sign-in sessions, the sign-in attempts counted per client address, and an
-- index for the links people make there.

-- A session is known by the SHA-256 (hex) of its cookie value; the value itself is never stored.
-- last_seen_at moves with every request, and a session idle for 12 hours is expired.
create table dashboard_sessions (
  token_hash text primary key,
  created_at timestamptz not null,
  last_seen_at timestamptz not null
);
create index dashboard_sessions_last_seen on dashboard_sessions (last_seen_at);

-- One row per failed sign-in; the window is counted here so the limit holds across instances.
create table dashboard_signin_failures (
  address text not null,
  at timestamptz not null
);
create index dashboard_signin_failures_address_at on dashboard_signin_failures (address, at);

-- The dashboard lists only the links it made (generate_link's never appear there), newest first.
create index links_dashboard on links (environment_id, id) where not sdk_generated;
