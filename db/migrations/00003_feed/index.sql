-- The captured feed and the feed rate-limit window.

-- Captured events in arrival order. `seq` comes from environments.feed_seq.
create table feed_events (
  environment_id integer not null references environments (id) on delete cascade,
  seq bigint not null,
  type text not null,
  received_at timestamptz not null,
  -- The feed-event envelope, served as text without parsing.
  body text not null,
  primary key (environment_id, seq)
);
create index feed_events_type on feed_events (environment_id, type, seq);
create index feed_events_received on feed_events (received_at);

-- One row per admitted feed read; the sliding 60 s window is counted from here, so the limit
-- holds across instances.
create table feed_rate_hits (
  token_id integer not null references feed_tokens (id) on delete cascade,
  at timestamptz not null
);
create index feed_rate_hits_token_at on feed_rate_hits (token_id, at);
