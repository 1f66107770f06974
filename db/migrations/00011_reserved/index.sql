-- Placeholder: migration 00011 is another branch's (the lead merges it in place of this file).
select 1;
