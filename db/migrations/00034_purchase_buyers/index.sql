-- The funnel's purchasers: the distinct buyers of a range's attributed purchases, read in the
-- buyers' order from this index (byte order, as the funnel tells users apart) and counted a group
-- at a time, where count(distinct) sorted every purchase of the range, spilling to disk (68 ms
-- for 139,658 purchases at 10,000,000 events; 33 to 59 ms from the index). Partial as the funnel
-- reads: the counted purchases only, with their converted amount. In a DO block, as 00025 and
-- later.
do $$
begin
  create index if not exists purchase_versions_funnel_buyer
    on purchase_versions (environment_id, user_id collate "C", hour) include (converted)
    where version > 0 and converted is not null and link_id is not null;
end
$$;
