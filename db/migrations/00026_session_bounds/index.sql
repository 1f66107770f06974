-- A dashboard session made with the admin token remembers which token made it: a fingerprint
-- derived from the token's digest (services/access/sessions.ts), never the token or its digest.
-- Every request compares it with the instance's current token, so a changed ADMIN_TOKEN ends
-- those sessions on their next request, on every instance. People's sessions leave it null.
-- Admin-token sessions made before this migration have none and end at their next request: sign
-- in again. (The absolute lifetime of every session is counted from created_at, already here.)
alter table dashboard_sessions add column admin_token_fingerprint text;
