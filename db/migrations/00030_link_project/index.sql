-- Each link keeps its project's id beside its environment's. The link host's hit reads the link
-- and its project (the link domain that admits the host, the apps) in one query, and reached the
-- project through the environment: a third relation and its index opened, locked and descended
-- on every hit. Joined directly, the server's CPU per hit fell by about a sixth
-- (docs/SCALING.md, "The link's project on the link"). Ingestion's link lookup and the link
-- reads that answer with the link domain join the same way.
--
-- A link never changes environment and an environment never changes project, so the copy
-- cannot go stale; the foreign key on both columns together makes the database refuse a link
-- whose project is not its environment's, so no writer can store one that disagrees.
--
-- In a DO block, as in 00025: Citus takes these one by one from PL/pgSQL, not within a file of
-- several statements (both tables are reference tables there).
do $$
begin
  alter table environments add constraint environments_id_project_id_key unique (id, project_id);
  alter table links add column project_id integer;
  update links l set project_id = e.project_id from environments e where e.id = l.environment_id;
  alter table links alter column project_id set not null;
  alter table links add constraint links_environment_project_fkey
    foreign key (environment_id, project_id) references environments (id, project_id)
    on delete cascade;
end
$$;
