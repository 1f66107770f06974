-- feed_admit (00020) also answers "is this token still allowed to read this environment?" for
-- the live tail's open streams (services/feed/live_tail.ts): with a null rate_limit it checks the
-- token, the environment and Enterprise as before and neither takes the rate limit's lock nor
-- counts. Every transport's feed admission is then this one function.
create or replace function feed_admit(
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
  if rate_limit is not null then
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
