-- The rows ingestion writes per event no longer check that their environment exists: the
-- history (analytics_events), the captured feed (feed_events), the events' idempotency keys
-- (analytics_event_keys) and the purchases' versions (purchase_versions). Each check was a
-- lookup of the environment's row, with a lock on it, for every row stored: about 9 µs of the
-- server's CPU a view in batches of 200 (docs/SCALING.md, "The history's keys to its
-- environment"). The batch's environment is the one its credentials named, read in the same
-- request, and environments are never deleted, so these keys never acted (their ON DELETE
-- CASCADE included); a capturing batch also holds its environment's row locked while it
-- writes (services/feed/capture.ts). On Citus they were dropped by 00018 for another reason,
-- so this loop finds nothing there. The keys to links stay: a deleted link's id is cleared from
-- the history by its ON DELETE SET NULL, and a batch that names a link deleted meanwhile fails
-- on it and is stored again without it (services/events/record.ts).
do $$
declare
  fk record;
begin
  for fk in
    select c.conname, c.conrelid::regclass as rel from pg_constraint c
    where c.contype = 'f' and c.confrelid = 'environments'::regclass
      and c.conrelid in ('feed_events'::regclass, 'analytics_events'::regclass,
        'analytics_event_keys'::regclass, 'purchase_versions'::regclass)
  loop
    execute format('alter table %s drop constraint %I', fk.rel, fk.conname);
  end loop;
end
$$;
