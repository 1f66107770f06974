-- OpenID Connect sign-ins under way (services/access/oidc.ts): one row from the moment the
-- dashboard sends a browser to the provider until the provider sends it back, on whichever
-- instance. The row is known by the SHA-256 of a random value that only the browser's cookie
-- holds; the login's state, nonce and PKCE verifier are derived from that value, so none of them
-- is stored. A row is used once (deleted as the callback reads it) and refused after expires_at.
-- `address` is the client's address as the sign-in limits key it (an IPv6 address by its /64): starts
-- are unauthenticated, so pending logins are capped per address and in all (services/access/oidc.ts).
create table oidc_logins (
  key_hash text primary key,
  address text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null
);
create index oidc_logins_expires_at on oidc_logins (expires_at);
create index oidc_logins_address on oidc_logins (address, expires_at);
