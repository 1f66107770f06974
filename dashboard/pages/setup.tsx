import type { Account } from "../../services/access/accounts.ts";
import { PASSWORD_MIN_LENGTH } from "../../services/access/passwords.ts";
import { Field, Layout, Notice } from "../layout.tsx";
import { BASE } from "../security.ts";

/** An account's setup link: choose a password (or the link is unknown, used or expired). */
export function SetupPage(props: { token: string; account?: Account; error?: string }) {
  return (
    <Layout title="Set your password">
      <div class="signin card">
        <h1>Set your password</h1>
        {props.account
          ? (
            <div class="stack">
              <p class="muted">
                For <strong>{props.account.name}</strong> ({props.account.email}). At least{" "}
                {PASSWORD_MIN_LENGTH} characters; this link works once.
              </p>
              {props.error && <Notice kind="error">{props.error}</Notice>}
              <form method="post" action={`${BASE}/setup`}>
                <input type="hidden" name="token" value={props.token} />
                <input
                  type="hidden"
                  name="username"
                  value={props.account.email}
                  autocomplete="username"
                />
                <Field
                  label="Password"
                  name="password"
                  type="password"
                  required
                  autocomplete="new-password"
                />
                <Field
                  label="Password again"
                  name="confirm"
                  type="password"
                  required
                  autocomplete="new-password"
                />
                <button type="submit" class="button">Set password and sign in</button>
              </form>
            </div>
          )
          : (
            <Notice kind="error">
              This setup link is unknown, already used or expired. Ask your instance's admin for a
              new account link.
            </Notice>
          )}
      </div>
    </Layout>
  );
}
