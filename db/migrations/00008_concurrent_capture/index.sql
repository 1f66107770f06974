-- PLACEHOLDER on the `partitions` branch only: migration 00008 is the feed capture rewrite's
-- (db/migrations/00008_concurrent_capture, written on another branch). postgres-shift refuses a
-- gap in the numbering, so 00009 needs an 00008 here. On merge, take the feed capture's file and
-- drop this one; a database migrated with this placeholder never runs the real 00008.
select 1;
