-- The attributed link's id beside each captured event (it is also inside the envelope), so that a
-- GraphQL page can read its links while it parses the envelopes. Null for an event without a
-- link, and for the events captured before this column was added.
alter table feed_events add column link_id integer;
