import { Field, Layout, Notice } from "../layout.tsx";
import { BASE } from "../security.ts";

export function SignInPage(props: { error?: string | undefined; expired?: boolean }) {
  return (
    <Layout title="Sign in">
      <div class="signin card">
        <h1>Sign in</h1>
        <p class="muted">
          Use this instance's admin token: the <code>ADMIN_TOKEN</code>{" "}
          you configured, or the one the server printed at its first start.
        </p>
        <div class="stack">
          {props.expired && !props.error && (
            <Notice kind="error">Your session has ended. Sign in again to continue.</Notice>
          )}
          {props.error && <Notice kind="error">{props.error}</Notice>}
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
        </div>
      </div>
    </Layout>
  );
}
