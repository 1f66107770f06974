-- Links that decide (CONTRACT.md, "Link rules, splits and passwords"): per link, its ordered
-- redirect rules and its top-level split (JSON, null when it has none), whether the hit's query
-- is forwarded and UTM parameters appended, and the hash of its password. The link host reads
-- them in the hit's one query (services/links/links.ts, getHostedLink). Every column is new and
-- nullable or defaulted, so upgrading a populated database changes no link's behaviour.
--
-- One column per ALTER TABLE, here and in later migrations: on Citus, an ALTER TABLE of several
-- subcommands within a file of several statements fails ("cannot insert multiple commands into a
-- prepared statement"), as Citus forwards the whole file's text to its workers.
alter table links add column if not exists rules jsonb;
alter table links add column if not exists split jsonb;
alter table links add column if not exists forward_query boolean not null default false;
alter table links add column if not exists append_utm boolean not null default false;
alter table links add column if not exists password_hash text;
-- What the link host reads of them: `[rules, split]` as JSON text, null when the link has
-- neither, written with them by the service (services/links/links.ts, manage.ts, csv.ts). The
-- hit's query then sends stored text as it is, instead of serialising two jsonb values on
-- every redirect.
alter table links add column if not exists routing text;

-- Wrong passwords per link and client address within the window
-- (services/links/password_limit.ts). The address is kept only as a hash of its limit key
-- (IPv4, or an IPv6 /64). Rows older than the window are pruned by the failures that follow.
-- On Citus a plain table of the coordinator, as feed_rate_hits (00019): its limit must be exact,
-- and every hit passes through the coordinator anyway.
create table if not exists link_password_failures (
  link_id integer not null,
  address_hash text not null,
  at timestamptz not null
);
create index if not exists link_password_failures_key on link_password_failures (link_id, address_hash, at);
create index if not exists link_password_failures_at on link_password_failures (at);

-- The project's QR logo (PUT /api/v1/admin/projects/:hashid/qr_logo): at most 256 KiB.
alter table projects add column if not exists qr_logo bytea;
alter table projects add column if not exists qr_logo_type text;

-- Which rule and which split variant decided a view (its attribution.rule and
-- attribution.variant; ingested events may carry them too), as analytics dimensions read with
-- link= (group_by=rule, group_by=variant) and by a split's results. Null: none decided.
alter table analytics_rollups add column if not exists rule text;
alter table analytics_rollups add column if not exists variant smallint;
alter table purchase_versions add column if not exists rule text;
alter table purchase_versions add column if not exists variant smallint;
