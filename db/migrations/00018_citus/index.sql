-- On a Citus cluster (the `citus` extension is present in this database, created before the
-- migrations ran: docs/SCALING.md, "Running on Citus"), the tables are spread over the workers.
-- On a plain PostgreSQL and the embedded PGlite this migration does nothing: the same set of
-- migrations serves all three, and the layout below is the only difference.
--
-- Distributed by environment (`environment_id`), co-located (shard n of each on the same
-- worker): what grows with events. An ingestion batch (history, idempotency keys, purchases,
-- rollups, counters, capture) then writes one worker's shards, and a feed page reads one.
--   feed_events, analytics_events, analytics_event_keys, purchase_versions, analytics_rollups,
--   analytics_margins, link_counters
-- Distributed by feed token (`token_id`): the rate-limit window and the live streams, read and
-- written per token.
--   feed_rate_hits, live_streams
-- Reference tables (a copy on every node): small or rarely written, and looked up by a value
-- that names no environment (a link's path, a key's hash, a session): their unique keys hold
-- across the installation as on one server, and the distributed tables' foreign keys to them
-- stay.
--   instance_settings, projects, environments, feed_tokens, destinations, links, accounts,
--   account_setup_links, project_members, dashboard_sessions, api_keys, audit_log,
--   admin_token_failures, password_signin_failures, oidc_logins, retired_link_paths
--
-- Uniqueness across the cluster: a distributed table's unique keys contain its distribution
-- column, and each of those is a per-environment rule already (client ids and batch keys:
-- analytics_event_keys (environment_id, client_id); purchase versions). Link paths, key hashes
-- and token hashes are unique in reference tables, enforced as on one server. Dropped here: the
-- keys a distributed table cannot keep and nothing relied on for uniqueness: link_counters'
-- primary key on link_id (a link's row is inserted once, with its link, in one transaction; the
-- key becomes (environment_id, link_id)), the history's and the live streams' on their generated
-- ids (now led by the distribution column; a sequence never repeats), and
-- the foreign keys between token-keyed and environment-keyed tables (Citus allows them only
-- towards a reference table or along the distribution column).
--
-- The feed's order on Citus: see feed_events_xid and feed_horizon(integer) below.
do $$
declare
  fk record;
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  -- DDL on distributed tables then writes in this same (migration) transaction: one connection
  -- per worker, or Citus refuses the later statements.
  perform set_config('citus.multi_shard_modify_mode', 'sequential', true);
  -- Triggers on distributed tables fire on the workers' shards (feed_events_xid,
  -- link_counters_environment); they only read reference tables there.
  perform set_config('citus.enable_unsafe_triggers', 'on', true);

  -- Citus serialises a row lock on a reference table with the modifications of any table that
  -- has a foreign key to it by one lock on the whole reference table: capture's FOR SHARE on the
  -- environment (services/feed/capture.ts) then waits for, and deadlocks with, concurrent
  -- ingestion whose history rows reference environments. Environments are never deleted, so
  -- these keys never acted; they go.
  for fk in
    select c.conname, c.conrelid::regclass as rel from pg_constraint c
    where c.contype = 'f' and c.confrelid = 'environments'::regclass
      and c.conrelid in ('feed_events'::regclass, 'analytics_events'::regclass,
        'analytics_event_keys'::regclass, 'purchase_versions'::regclass)
  loop
    execute format('alter table %s drop constraint %I', fk.rel, fk.conname);
  end loop;
  -- Before their tokens become a reference table: Citus would make them local tables it
  -- manages, whose keys can no longer be altered.
  alter table feed_rate_hits drop constraint feed_rate_hits_token_id_fkey;
  alter table live_streams drop constraint live_streams_token_id_fkey;
  alter table live_streams drop constraint live_streams_pkey;
  alter table live_streams add primary key (token_id, id);

  -- Referenced before referencing: each foreign key then points at a reference table already.
  perform create_reference_table('instance_settings');
  perform create_reference_table('projects');
  perform create_reference_table('environments');
  perform create_reference_table('feed_tokens');
  perform create_reference_table('destinations');
  perform create_reference_table('links');
  perform create_reference_table('retired_link_paths');
  perform create_reference_table('accounts');
  perform create_reference_table('account_setup_links');
  perform create_reference_table('project_members');
  perform create_reference_table('dashboard_sessions');
  perform create_reference_table('api_keys');
  perform create_reference_table('audit_log');
  perform create_reference_table('admin_token_failures');
  perform create_reference_table('password_signin_failures');
  perform create_reference_table('oidc_logins');

  alter table link_counters drop constraint link_counters_pkey;
  alter table analytics_events drop constraint analytics_events_pkey;
  perform create_distributed_table('feed_events', 'environment_id');
  perform create_distributed_table('analytics_events', 'environment_id',
    colocate_with => 'feed_events');
  perform create_distributed_table('analytics_event_keys', 'environment_id',
    colocate_with => 'feed_events');
  perform create_distributed_table('purchase_versions', 'environment_id',
    colocate_with => 'feed_events');
  perform create_distributed_table('analytics_rollups', 'environment_id',
    colocate_with => 'feed_events');
  perform create_distributed_table('analytics_margins', 'environment_id',
    colocate_with => 'feed_events');
  perform create_distributed_table('link_counters', 'environment_id',
    colocate_with => 'feed_events');
  -- Unique per link within its environment's shard (the link's environment never changes).
  alter table link_counters add primary key (environment_id, link_id);
  alter table analytics_events add primary key (environment_id, id, received_at);

  perform create_distributed_table('feed_rate_hits', 'token_id', colocate_with => 'none');
  perform create_distributed_table('live_streams', 'token_id', colocate_with => 'feed_rate_hits');
end
$$;

-- A captured event's transaction id, on a Citus cluster. Its feed is ordered by (xid, seq) and a
-- page serves only events of transactions below the horizon (services/feed/feed.ts): this holds
-- when the xid and the horizon come from the same server. On Citus, a column default is
-- evaluated on the coordinator, but the row is written, and the page read, on the worker that
-- holds the environment's shard; the coordinator's xid would say nothing about the worker's
-- snapshot. So this trigger, fired on the shard, replaces the xid with the worker transaction's
-- own, and the page computes its horizon on that same worker (feed_horizon(integer), below, and
-- the page query, routed whole to the shard). Same server, same argument as on one PostgreSQL:
-- every worker transaction below the worker's horizon has ended (committed, aborted, or still
-- prepared: a prepared transaction of two-phase commit stays in the snapshot's running list until
-- COMMIT PREPARED), so no event can later appear behind a position a page has served.
-- Not created on a plain PostgreSQL: the default is that server's xid already.
do $$
begin
  if not exists (select from pg_extension where extname = 'citus') then
    return;
  end if;
  perform set_config('citus.enable_unsafe_triggers', 'on', true);
  create function feed_events_xid() returns trigger language plpgsql as $f$
  begin
    new.xid := (pg_current_xact_id()::text)::bigint;
    return new;
  end
  $f$;
  create trigger feed_events_xid before insert on feed_events
    for each row execute function feed_events_xid();
  -- The horizon of the node that holds `environment_id`'s feed: a call `select
  -- feed_horizon(id)` is delegated to that worker (distribution_arg_name), and runs there.
  perform create_distributed_function('feed_horizon()');
end
$$;

-- The horizon of an environment's feed (services/feed/feed.ts, waitForHorizon). Citus delegates
-- a statement that is only the call, `select feed_horizon($1)`: a cast around it (`::text`) makes
-- it run on the coordinator instead; bigint comes back as text through the driver anyway. On one
-- server its own horizon; on Citus the function is distributed by its argument, so the call runs on the
-- worker holding that environment's feed, where its xids are assigned.
-- PL/pgSQL, not SQL: PostgreSQL inlines a SQL function into the calling query, and Citus then sees
-- feed_horizon() instead of a call it can delegate (it ran on the coordinator).
create function feed_horizon(environment_id integer) returns bigint language plpgsql stable as $$
begin
  return feed_horizon();
end
$$;

do $$
begin
  if exists (select from pg_extension where extname = 'citus') then
    perform create_distributed_function('feed_horizon(integer)', 'environment_id',
      colocate_with => 'feed_events', force_delegation => true);
  end if;
end
$$;
