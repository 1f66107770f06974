-- Drop accounting from each destination's own position (services/destinations/drops.ts).
--
-- What the last accounting of a destination established: no event of its types with a position
-- after (drops_checked_xid, drops_checked_seq) and an xid below drops_checked_horizon was
-- received before drops_checked_cutoff. The next accounting then reads only what could have
-- expired since: the events received from that cutoff to the new one (through the received_at
-- index), and the events of xids at or after that horizon, in the days that can hold expired
-- events (through the position index). Null until a destination's first accounting, which
-- reads its pending events of those days.
alter table destinations
  add column drops_checked_xid bigint,
  add column drops_checked_seq bigint,
  add column drops_checked_cutoff timestamptz,
  add column drops_checked_horizon bigint;
