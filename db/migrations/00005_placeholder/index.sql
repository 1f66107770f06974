-- Placeholder so this branch's numbering is consecutive (postgres-shift requires it): the real
-- 00005 migration lands from another branch; drop this folder when merging.
select 1;
