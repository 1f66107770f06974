import { Field, Layout, Notice } from "../layout.tsx";
import { BASE } from "../security.ts";

export function SignInPage(
  props: { error?: string | undefined; expired?: boolean; email?: string | undefined },
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
          <p class="muted">
            With this instance's admin token: the <code>ADMIN_TOKEN</code>{" "}
            you configured, or the one the server printed at its first start.
          </p>
          <form method="post" action={`${BASE}/sign-in`}>
            <Field
              label="Admin token"
              name="token"
              type="password"
              required
              autocomplete="current-password"
            />
            <button type="submit" class="button">Sign in</button>
          </form>
          <h2>Or with your account</h2>
          <form method="post" action={`${BASE}/sign-in`}>
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
        </div>
      </div>
    </Layout>
  );
}
