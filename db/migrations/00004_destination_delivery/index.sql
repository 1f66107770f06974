-- Push destinations deliver: their filter, signing secret, place in the feed, the batch in
-- flight, retry state, what was dropped, and the lease that lets one instance deliver each.

alter table destinations
  -- Sorted, deduplicated feed event types; empty means every type.
  add column event_types text[] not null default '{}',
  -- The whsec_ signing secret, sealed (AES-256-GCM, services/destination_secret.ts). Signing
  -- needs the secret itself, so it cannot be hashed. A rotation keeps the old one for 24 h.
  add column secret_sealed text,
  add column previous_secret_sealed text,
  add column previous_secret_expires_at timestamptz,
  add column paused boolean not null default false,
  -- The last feed seq this destination is done with (delivered, filtered out or dropped).
  add column cursor_seq bigint not null default 0,
  -- The batch in flight: its webhook-id and the last seq it covers; retries send the same.
  add column batch_id text,
  add column batch_last_seq bigint,
  add column attempts integer not null default 0,
  add column next_attempt_at timestamptz,
  -- First failure since the last success; `failing` one hour after it.
  add column failing_since timestamptz,
  add column last_attempt_at timestamptz,
  add column last_success_at timestamptz,
  add column last_error text,
  -- Events that left the feed's seven days before they could be delivered.
  add column dropped bigint not null default 0,
  add column lease_owner text,
  add column lease_expires_at timestamptz;

-- Destinations of before this change start after what was captured before they were created.
update destinations d set cursor_seq = coalesce(
  (select max(f.seq) from feed_events f
    where f.environment_id = d.environment_id and f.received_at < d.created_at),
  (select min(f.seq) - 1 from feed_events f where f.environment_id = d.environment_id),
  (select e.feed_seq from environments e where e.id = d.environment_id)
);

-- They get a random secret here (gen_random_uuid draws from PostgreSQL's strong random source,
-- 244 random bits from two). Nobody has seen it: the first instance to start seals it, and
-- their admins obtain a secret with rotate_secret. 'plain:' marks it as not yet sealed.
update destinations set secret_sealed = 'plain:whsec_' || encode(
  decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'),
  'base64'
);

alter table destinations alter column secret_sealed set not null;
