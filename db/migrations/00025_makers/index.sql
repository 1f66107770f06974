-- Who made each API key, feed token and destination, and whom it belongs to (issue 32).
--
-- made_by_*: the direct maker, as the audit log names an actor (a person's account, an API key,
-- or the admin token), with its name at the time. owner_type and created_by_account_id: the
-- person behind the chain (a key made by a key made by Ada belongs to Ada), or the instance admin
-- ('admin_token') when the chain starts at the admin token. An API key is held to its owner's
-- role on every request, and revoked with their membership or account; feed tokens and
-- destinations are integrations that outlive the person (docs/access.md, "When someone leaves").
-- owner_type null: made before this migration, by a maker no record names.
-- In a DO block: Citus refuses these statements on its reference tables within a file of
-- several statements ("cannot insert multiple commands into a prepared statement"), but takes
-- them one by one from PL/pgSQL. A CHECK is added apart from its column: Citus adds no column
-- with a constraint.
do $$
begin
  alter table api_keys add column made_by_type text;
  alter table api_keys add constraint api_keys_made_by_type_check
    check (made_by_type in ('account', 'api_key', 'admin_token'));
  alter table api_keys add column made_by_id integer;
  alter table api_keys add column made_by_name text;
  alter table api_keys add column owner_type text;
  alter table api_keys add constraint api_keys_owner_type_check
    check (owner_type in ('account', 'admin_token'));

  -- No foreign key to accounts: what a person made keeps naming them after the account goes (the
  -- instance admin's "revoke everything this person made" works by the id, as the audit log does).
  alter table feed_tokens add column made_by_type text;
  alter table feed_tokens add constraint feed_tokens_made_by_type_check
    check (made_by_type in ('account', 'api_key', 'admin_token'));
  alter table feed_tokens add column made_by_id integer;
  alter table feed_tokens add column made_by_name text;
  alter table feed_tokens add column owner_type text;
  alter table feed_tokens add constraint feed_tokens_owner_type_check
    check (owner_type in ('account', 'admin_token'));
  alter table feed_tokens add column created_by_account_id integer;
  create index feed_tokens_owner on feed_tokens (created_by_account_id)
    where created_by_account_id is not null and revoked_at is null;

  alter table destinations add column made_by_type text;
  alter table destinations add constraint destinations_made_by_type_check
    check (made_by_type in ('account', 'api_key', 'admin_token'));
  alter table destinations add column made_by_id integer;
  alter table destinations add column made_by_name text;
  alter table destinations add column owner_type text;
  alter table destinations add constraint destinations_owner_type_check
    check (owner_type in ('account', 'admin_token'));
  alter table destinations add column created_by_account_id integer;
  create index destinations_owner on destinations (created_by_account_id)
    where created_by_account_id is not null;

  create index api_keys_owner on api_keys (created_by_account_id)
    where created_by_account_id is not null and revoked_at is null;
end
$$;

-- Backfill from the audit log, whose creation entry (written in the creation's own transaction
-- since 00014) names each maker. A key made by a key had no creator recorded: its owner is
-- found by following its makers back to a person or the admin token.
update api_keys k set made_by_type = a.actor_type, made_by_id = a.actor_id,
  made_by_name = a.actor_name
from audit_log a
where a.action = 'api_key.create' and a.target_type = 'api_key' and a.target_id = k.id::text;
-- A key its person made, even without an entry: created_by_account_id said so (the account is
-- gone when it is null, and the key was revoked with it).
update api_keys k set made_by_type = 'account', made_by_id = k.created_by_account_id,
  made_by_name = a.name
from accounts a
where k.made_by_type is null and a.id = k.created_by_account_id;

-- Owners: a key made by a person or the admin token is theirs (created_by_account_id already
-- names the person, null once their account was removed); a key made by a key is its maker's
-- owner's, resolved a level of the chain at a time. Plain statements, no recursive or
-- data-modifying CTE, so that Citus runs them on its reference tables as PostgreSQL does.
update api_keys set owner_type = made_by_type where made_by_type in ('account', 'admin_token');
do $$
begin
  loop
    update api_keys k set owner_type = p.owner_type,
      created_by_account_id = p.created_by_account_id
    from api_keys p
    where k.made_by_type = 'api_key' and k.owner_type is null and p.id = k.made_by_id
      and p.owner_type is not null;
    exit when not found;
  end loop;
end
$$;

-- The safe rule for what cannot be traced: a key whose chain does not end at a person or the
-- admin token, or ends at a person whose account is gone, is revoked now (its maker, or their
-- maker, left or is unknown), with an entry in the audit log. Make a new key to replace one.
insert into audit_log (at, project_id, actor_type, actor_id, actor_name, action, target_type,
  target_id, detail, request_id)
select now(), e.project_id, 'admin_token', null, 'upgrade (migration 00025)', 'api_key.revoke',
  'api_key', k.id::text, null, null
from api_keys k join environments e on e.id = k.environment_id
where k.revoked_at is null
  and (k.owner_type is null or (k.owner_type = 'account' and k.created_by_account_id is null))
order by k.id;
update api_keys set revoked_at = now()
where revoked_at is null
  and (owner_type is null or (owner_type = 'account' and created_by_account_id is null));

-- Feed tokens and destinations: their makers from the same entries; the owner of one made by a
-- key is that key's owner. One made before the audit log (00014) keeps an unknown maker, and is
-- not revoked: integrations outlive the people who set them up.
update feed_tokens t set made_by_type = a.actor_type, made_by_id = a.actor_id,
  made_by_name = a.actor_name
from audit_log a
where a.action = 'feed_token.create' and a.target_type = 'feed_token'
  and a.target_id = t.id::text;
update destinations d set made_by_type = a.actor_type, made_by_id = a.actor_id,
  made_by_name = a.actor_name
from audit_log a
where a.action = 'destination.create' and a.target_type = 'destination'
  and a.target_id = d.id::text;

update feed_tokens set owner_type = made_by_type,
  created_by_account_id = case when made_by_type = 'account' then made_by_id end
where made_by_type in ('account', 'admin_token');
update feed_tokens t set owner_type = k.owner_type, created_by_account_id = k.created_by_account_id
from api_keys k
where t.made_by_type = 'api_key' and k.id = t.made_by_id;
update destinations set owner_type = made_by_type,
  created_by_account_id = case when made_by_type = 'account' then made_by_id end
where made_by_type in ('account', 'admin_token');
update destinations d set owner_type = k.owner_type, created_by_account_id = k.created_by_account_id
from api_keys k
where d.made_by_type = 'api_key' and k.id = d.made_by_id;
