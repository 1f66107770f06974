-- Links that can be managed (services/links/): archive, expiry and visit limits, paths that are
-- never given twice, and the indexes of the admin list's orders.

alter table links
  add column archived boolean not null default false,
  add column expires_at timestamptz,
  -- Null: no limit. The link host claims a slot per counted view (link_counters.limited_views).
  add column max_views integer check (max_views > 0),
  add column expired_url text;

-- Views claimed against max_views, one conditional UPDATE per counted view of a limited link
-- (services/links/expiry.ts). Apart from total_views, which the view recorder moves behind the
-- response: a limit must be decided before the answer goes out.
alter table link_counters add column limited_views bigint not null default 0;

-- The environment beside each counter row, so the list ordered by views reads one index of an
-- environment's counters in order instead of sorting all of them.
alter table link_counters add column environment_id integer;
update link_counters c set environment_id = l.environment_id from links l where l.id = c.link_id;
alter table link_counters alter column environment_id set not null;
-- services/links/counters.ts gives it; a row inserted without it (older tools, the benchmark's
-- seed) takes its link's.
create function link_counters_environment() returns trigger language plpgsql as $$
begin
  if new.environment_id is null then
    select environment_id into new.environment_id from links where id = new.link_id;
  end if;
  return new;
end
$$;
create trigger link_counters_environment before insert on link_counters
  for each row execute function link_counters_environment();
create index link_counters_views on link_counters (environment_id, total_views, link_id);

-- Paths of deleted links: never given to another link, so that a printed link never leads to
-- someone else's content.
create table retired_link_paths (
  path text primary key,
  retired_at timestamptz not null default now()
);

-- The admin list's orders (with id as the tie-break of its cursor).
create index links_environment_created on links (environment_id, created_at, id);
create index links_environment_updated on links (environment_id, updated_at, id);
