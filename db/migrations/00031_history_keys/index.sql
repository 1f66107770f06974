-- The rows ingestion writes per event no longer check foreign keys that never act, or act at a
-- cost out of proportion: each check is a lookup of the referenced row, locked, for every row
-- stored (docs/SCALING.md, "The history's keys").
--
-- To environments, from the history (analytics_events), the captured feed (feed_events), the
-- events' idempotency keys (analytics_event_keys) and the purchases' versions
-- (purchase_versions): about 9 µs of the server's CPU a view in batches of 200. A batch's
-- environment is the one its credentials named, read in the same request, and environments are
-- never deleted, so these keys never acted (their ON DELETE CASCADE included); deleting a
-- project, once the service does, has to remove these rows itself, a batch at a time as
-- retention does. A capturing batch also holds its environment's row locked while it writes
-- (services/feed/capture.ts). On Citus these were dropped by 00018 already.
--
-- To links, from the history: about 8 µs a view more, and the ON DELETE SET NULL made a link's
-- deletion scan the whole history in the DELETE's transaction (13.5 s at 10,000,000 events;
-- nothing indexes the history by link). Nothing reads the history's link_id: the analytics read
-- the rollups, the exports and the feed the envelopes, each of which keeps its link as it was
-- recorded. So the history keeps the id too, as the rollups, the feed's rows and the attribution
-- tables already did: after the link's deletion it names no link. The purchases' key to links
-- stays: purchases are a small share of the events, and their versions a small table to clear.
do $$
declare
  fk record;
begin
  for fk in
    select c.conname, c.conrelid::regclass as rel from pg_constraint c
    where c.contype = 'f'
      and ((c.confrelid = 'environments'::regclass
          and c.conrelid in ('feed_events'::regclass, 'analytics_events'::regclass,
            'analytics_event_keys'::regclass, 'purchase_versions'::regclass))
        or (c.confrelid = 'links'::regclass and c.conrelid = 'analytics_events'::regclass))
      -- A partition's copy of a key goes with its parent's.
      and c.conparentid = 0
  loop
    execute format('alter table %s drop constraint %I', fk.rel, fk.conname);
  end loop;
end
$$;
