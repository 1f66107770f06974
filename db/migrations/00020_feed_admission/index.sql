-- A feed read's admission in one statement (services/feed/auth.ts, admitFeedRead): the token
-- authenticated, the project and Enterprise checked, the per-token rate limit counted under its
-- lock and, when `record`, the read's hit and the token's last-used minute written. The page
-- itself stays a statement of its own (services/feed/feed.ts), sent in the same round trip.
--
-- A rejection raises (SQLSTATE LF401 invalid or revoked token, LF403 another project or no
-- Enterprise, its DETAIL the token's environment and Enterprise as JSON, LF503 rate-limited, its
-- DETAIL the epoch milliseconds of the hit whose leaving frees a slot): the transaction is then
-- aborted, so the statements pipelined after it (the page) are not run, and nothing is written.
--
-- The lock (pg_advisory_xact_lock(4242002, token id), RATE_LOCK_NAMESPACE in
-- services/feed/rate_limit.ts) is held until the transaction ends. PL/pgSQL takes a new snapshot for
-- each statement of a volatile function, so the count, taken after the lock, sees every hit
-- committed by whoever held it before: the limit is exact across instances.
--
-- On Citus: feed_tokens, environments and projects are reference tables, feed_rate_hits a table
-- of the coordinator (00019); the function is not distributed and runs on the coordinator.
create function feed_admit(
  presented_hash text,
  wanted_environment integer,
  read_at timestamptz,
  since timestamptz,
  read_minute timestamptz,
  rate_limit integer,
  record boolean
) returns table (token_id integer, environment_id integer, enterprise boolean)
language plpgsql volatile as $$
declare
  reader record;
  hits integer;
  freeing timestamptz;
begin
  -- What the transaction writes (a hit, a last-used minute) may be lost in a crash without
  -- harm, so its commit does not wait for the WAL flush: a read is not a write.
  perform set_config('synchronous_commit', 'off', true);
  select t.id, t.environment_id, p.enterprise, t.last_used_at into reader
  from feed_tokens t
    join environments e on e.id = t.environment_id
    join projects p on p.id = e.project_id
  where t.token_hash = presented_hash and t.revoked_at is null;
  if not found then
    raise exception 'feed token is invalid or revoked' using errcode = 'LF401';
  end if;
  if wanted_environment is distinct from reader.environment_id or not reader.enterprise then
    raise exception 'feed token not authorised here' using errcode = 'LF403',
      detail = json_build_object('environmentId', reader.environment_id,
        'enterprise', reader.enterprise)::text;
  end if;
  perform pg_advisory_xact_lock(4242002, reader.id);
  -- Counting stops at the limit: that is all it needs.
  select count(*) into hits from (
    select 1 from feed_rate_hits h where h.token_id = reader.id and h.at > since limit rate_limit
  ) w;
  if hits >= rate_limit then
    -- A slot frees when the hit that would leave `rate_limit - 1` behind has left the window.
    select h.at into freeing from feed_rate_hits h
    where h.token_id = reader.id and h.at > since
    order by h.at offset hits - rate_limit limit 1;
    raise exception 'feed token rate-limited' using errcode = 'LF503',
      detail = (extract(epoch from freeing) * 1000)::bigint::text;
  end if;
  if record then
    delete from feed_rate_hits h where h.token_id = reader.id and h.at <= since;
    insert into feed_rate_hits (token_id, at) values (reader.id, read_at);
    -- The last-used stamp is kept to the minute: written once a minute, not on every read.
    if reader.last_used_at is null or reader.last_used_at < read_minute then
      update feed_tokens t set last_used_at = read_minute
      where t.id = reader.id and (t.last_used_at is null or t.last_used_at < read_minute);
    end if;
  end if;
  return query select reader.id, reader.environment_id, reader.enterprise;
end
$$;
