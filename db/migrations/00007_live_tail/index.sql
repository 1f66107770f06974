-- Live tail: the streams open per feed token, counted here so that the limit (2 per token)
-- holds across instances. A stream's instance renews expires_at while the stream is open and
-- deletes the row when it ends; a killed instance's rows stop counting once they expire.
create table live_streams (
  id bigint generated always as identity primary key,
  token_id integer not null references feed_tokens (id) on delete cascade,
  expires_at timestamptz not null
);
create index live_streams_token on live_streams (token_id, expires_at);
