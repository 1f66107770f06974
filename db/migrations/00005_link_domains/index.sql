-- A project's own link domain and its apps (CONTRACT.md, "Link domains and app association").
-- Links keep no copy of the domain: their access_path is derived from the project when read.

-- Lower-case host name, unique across the instance: the link host resolves a request's Host to
-- at most one project. Null: the project's links are served on LINK_BASE_URL's host.
alter table projects add column link_domain text unique;
-- {"ios": {...}, "android": {...}}, each validated by services/link_host/apps.ts before it is stored.
alter table projects add column apps jsonb not null default '{}';
