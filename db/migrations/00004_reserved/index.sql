-- Placeholder: 00004 belongs to another branch. postgres-shift requires consecutive numbers, so
-- this keeps 00005 applicable on its own; drop this folder when the real 00004 is merged.
select 1;
