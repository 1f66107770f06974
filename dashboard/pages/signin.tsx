import { Field, Layout, Notice } from "../layout.tsx";
import { BASE } from "../security.ts";

/**
 * People first: email and password, then the OpenID Connect provider when one is configured;
 * the instance admin's token last, as the break-glass way in.
 */
export function SignInPage(
  props: {
    error?: string | undefined;
    expired?: boolean;
    email?: string | undefined;
    /** The provider's name when OpenID Connect sign-in is on. */
    oidcName?: string | undefined;
  },
) {
  return (
    <Layout title="Sign in">
      <div class="signin card">
        <h1>Sign in</h1>
        <div class="stack">
          {props.expired && !props.error && (
            <Notice kind="error">Your session has ended. Sign in again to continue.</Notice>
          )}
          {props.error && <Notice kind="error">{props.error}</Notice>}
          <form method="post" action={`${BASE}/sign-in`} id="password-sign-in">
            <Field
              label="Email"
              name="email"
              type="email"
              required
              value={props.email}
              autocomplete="username"
            />
            <Field
              label="Password"
              name="password"
              type="password"
              required
              autocomplete="current-password"
            />
            <button type="submit" class="button">Sign in with email</button>
          </form>
          {props.oidcName && (
            <div class="signin-sso">
              <p class="signin-or" aria-hidden="true">or</p>
              <a class="button secondary signin-wide" href={`${BASE}/sign-in/oidc`}>
                Sign in with {props.oidcName}
              </a>
            </div>
          )}
          <section class="signin-admin" aria-labelledby="admin-token-heading">
            <h2 id="admin-token-heading">Instance admin</h2>
            <p class="muted">
              With this instance's admin token: the <code>ADMIN_TOKEN</code>{" "}
              you configured, or the one the server printed at its first start.
            </p>
            <form method="post" action={`${BASE}/sign-in`} id="admin-token-sign-in">
              <Field
                label="Admin token"
                name="token"
                type="password"
                required
                autocomplete="current-password"
              />
              <button type="submit" class="button secondary">Sign in with the admin token</button>
            </form>
          </section>
        </div>
      </div>
    </Layout>
  );
}

/** After an OpenID Connect sign-in: on to the dashboard (see the callback route for why). */
export function SignedInPage(props: { name: string }) {
  return (
    <Layout title="Signed in" refreshTo={BASE}>
      <div class="signin card">
        <h1>Signed in</h1>
        <div class="stack">
          <p>Welcome, {props.name}.</p>
          <p>
            <a class="button" href={BASE}>Continue to the dashboard</a>
          </p>
        </div>
      </div>
    </Layout>
  );
}
