-- Limits on what the public project key may write (services/sdk_limits.ts): links through
-- generate_link and events through /events, counted per project key and per client address in
-- PostgreSQL, so that they hold however many instances serve the key.
--
-- A project's own limits, writes (a link or an event each) a minute; null: the defaults.
alter table projects add column if not exists sdk_writes_per_key integer;
alter table projects add column if not exists sdk_writes_per_address integer;

-- One row per project, scope (address '': the whole key; else a digest of the client's address,
-- an IPv6 one as its /64, keyed with the instance's secret: no address is stored), minute and
-- slot. The slot is the writing connection's (its backend pid
-- modulo 64): connections never wait for each other's row, and a window's count is the sum of
-- its slots. Rows of past windows are purged by the retention pass (services/feed/retention.ts).
create table if not exists sdk_rate_counts (
  project_id integer not null,
  address text not null,
  window_start timestamptz not null,
  slot smallint not null,
  hits integer not null default 0,
  refused integer not null default 0,
  primary key (project_id, address, window_start, slot)
);
create index if not exists sdk_rate_counts_window on sdk_rate_counts (window_start);

-- An SDK write's admission in one statement: the key authenticated (no row: 401), the project's
-- limits read, then per key and per address a sliding minute (the previous minute's count
-- weighted by how much of it is still inside the last 60 s, plus this minute's). Within both,
-- the write's `weight` is counted and the environment returned with refused_scope null; over
-- either, nothing is counted but the refusal, and the row says which limit, the wait in
-- seconds until the write would fit, and how many writes that scope has had refused this
-- minute. Counts read and written by concurrent writes may overlap: a limit is held to within
-- the writes in flight, which is what a limit against abuse needs.
--
-- What it writes may be lost in a crash without harm, so its commit does not wait for the WAL
-- flush. On Citus: projects and environments are reference tables, sdk_rate_counts a table of
-- the coordinator (created after 00018 distributed the others); the function runs there.
create or replace function sdk_admit(
  presented_hash text,
  wanted_kind text,
  client text,
  at timestamptz,
  weight integer,
  default_per_key integer,
  default_per_address integer
) returns table (
  id integer,
  kind text,
  project_id integer,
  hashid text,
  enterprise boolean,
  refused_scope text,
  refused_limit integer,
  retry_after integer,
  refused_count integer
)
language plpgsql volatile as $$
declare
  env record;
  win timestamptz := to_timestamp(floor(extract(epoch from at) / 60) * 60);
  elapsed double precision;
  my_slot smallint := (pg_backend_pid() % 64)::smallint;
  scope text;
  lim integer;
  cur bigint;
  prev bigint;
  wait double precision;
  total integer;
begin
  perform set_config('synchronous_commit', 'off', true);
  select e.id, e.kind::text as kind, p.id as project_id, p.hashid, p.enterprise,
    coalesce(p.sdk_writes_per_key, default_per_key) as per_key,
    coalesce(p.sdk_writes_per_address, default_per_address) as per_address
  into env
  from projects p join environments e on e.project_id = p.id and e.kind::text = wanted_kind
  where p.key_hash = presented_hash;
  if not found then
    return;
  end if;
  elapsed := extract(epoch from at - win);
  foreach scope in array array['', client] loop
    lim := case when scope = '' then env.per_key else env.per_address end;
    select coalesce(sum(c.hits) filter (where c.window_start = win), 0),
      coalesce(sum(c.hits) filter (where c.window_start = win - interval '60 seconds'), 0)
    into cur, prev
    from sdk_rate_counts c
    where c.project_id = env.project_id and c.address = scope
      and c.window_start >= win - interval '60 seconds' and c.window_start <= win;
    if prev * (1 - elapsed / 60) + cur + weight > lim then
      -- The wait: within this minute while the previous one's share fades, else into the next
      -- minute while this one's fades (a limit is never below the largest write).
      if cur + weight <= lim then
        wait := 60 * (1 - (lim - cur - weight)::double precision / prev) - elapsed;
      else
        wait := (60 - elapsed) + 60 * (1 - (lim - weight)::double precision / cur);
      end if;
      insert into sdk_rate_counts as c (project_id, address, window_start, slot, refused)
      values (env.project_id, scope, win, my_slot, 1)
      on conflict on constraint sdk_rate_counts_pkey do update set refused = c.refused + 1;
      select sum(c.refused)::integer into total from sdk_rate_counts c
      where c.project_id = env.project_id and c.address = scope and c.window_start = win;
      return query select env.id, env.kind, env.project_id, env.hashid, env.enterprise,
        case when scope = '' then 'key' else 'address' end, lim,
        greatest(1, ceil(wait))::integer, total;
      return;
    end if;
  end loop;
  insert into sdk_rate_counts as c (project_id, address, window_start, slot, hits)
  values (env.project_id, '', win, my_slot, weight), (env.project_id, client, win, my_slot, weight)
  on conflict on constraint sdk_rate_counts_pkey do update set hits = c.hits + excluded.hits;
  return query select env.id, env.kind, env.project_id, env.hashid, env.enterprise,
    null::text, null::integer, null::integer, null::integer;
end
$$;
