// Accounts: people, created by the instance admin, who set their password through a one-time
// setup link (shown once, valid 7 days; no mail server needed).
import type { Db, Sql } from "../../db/connect.ts";
import type { Clock } from "../../infra/clock.ts";
import { ApiError, isUniqueViolation, notFound } from "../errors.ts";
import { hashSecret, plausibleSecret, randomToken } from "../../infra/secrets.ts";
import { type AuditContext, recordAudit } from "./audit.ts";
import { assertPasswordRules, hashPassword, verifyPassword } from "./passwords.ts";
import { actorOf } from "./principal.ts";
import {
  admitPasswordAttempt,
  forgetPasswordFailure,
  passwordRateLimited,
} from "./password_limit.ts";

export const SETUP_LINK_MS = 7 * 24 * 60 * 60_000;

export interface Account {
  id: number;
  email: string;
  name: string;
  created_at: string;
}

interface AccountRow {
  id: number;
  email: string;
  name: string;
  created_at: Date;
}

const toAccount = (r: AccountRow): Account => ({
  id: r.id,
  email: r.email,
  name: r.name,
  created_at: r.created_at.toISOString(),
});

/** An account id as written in a path, or null. */
export function parseAccountId(raw: string): number | null {
  return /^[1-9][0-9]{0,8}$/.test(raw) ? Number(raw) : null;
}

/** Creates an account and its setup link's token, returned here and never again. */
export async function createAccount(
  sql: Sql,
  clock: Clock,
  input: { email: string; name: string },
  audit: AuditContext,
): Promise<{ account: Account; setupToken: string }> {
  const now = clock.now();
  const setupToken = randomToken(32);
  try {
    return await sql.begin(async (tx) => {
      const [row] = await tx<AccountRow[]>`
        insert into accounts (email, name, created_at)
        values (${input.email}, ${input.name}, ${now})
        returning id, email, name, created_at
      `;
      await tx`
        insert into account_setup_links (token_hash, account_id, created_at, expires_at)
        values (${hashSecret(setupToken)}, ${row!.id}, ${now},
          ${new Date(now.getTime() + SETUP_LINK_MS)})
      `;
      await recordAudit(tx, audit, {
        action: "account.create",
        project: null,
        target: { type: "account", id: row!.id },
      });
      return { account: toAccount(row!), setupToken };
    });
  } catch (err) {
    if (isUniqueViolation(err, "accounts_email")) {
      throw new ApiError("conflict", "an account with this email already exists");
    }
    throw err;
  }
}

export async function listAccounts(db: Db): Promise<Account[]> {
  const rows = await db<AccountRow[]>`
    select id, email, name, created_at from accounts order by id
  `;
  return rows.map(toAccount);
}

/**
 * Removes an account: its sessions end (cascade), its memberships go, and the API keys it created
 * are revoked, all in one transaction, so its next request on any instance is refused. Refused
 * (409) while it is the only owner of a project that has other members.
 */
export function deleteAccount(
  sql: Sql,
  clock: Clock,
  accountId: string,
  audit: AuditContext,
): Promise<void> {
  const id = parseAccountId(accountId);
  return sql.begin(async (tx) => {
    const [account] = id === null
      ? []
      : await tx`select id from accounts where id = ${id} for update`;
    if (!account) throw notFound("account");
    const [soleOwner] = await tx<{ name: string }[]>`
      select p.name from project_members m join projects p on p.id = m.project_id
      where m.account_id = ${id} and m.role = 'owner'
        and not exists (select 1 from project_members o
          where o.project_id = m.project_id and o.role = 'owner' and o.account_id <> ${id})
        and exists (select 1 from project_members o
          where o.project_id = m.project_id and o.account_id <> ${id})
      limit 1
    `;
    if (soleOwner) {
      throw new ApiError(
        "conflict",
        `this account is the only owner of “${soleOwner.name}”: make another member owner first`,
      );
    }
    await tx`
      update api_keys set revoked_at = ${clock.now()}
      where created_by_account_id = ${id} and revoked_at is null
    `;
    await tx`delete from accounts where id = ${id}`;
    await recordAudit(tx, audit, {
      action: "account.delete",
      project: null,
      target: { type: "account", id: id! },
    });
  });
}

/** The account a setup link is for, while it is unused and unexpired; null otherwise. */
export async function setupLinkAccount(
  db: Db,
  clock: Clock,
  token: string | undefined,
): Promise<Account | null> {
  if (!plausibleSecret(token)) return null;
  const [row] = await db<AccountRow[]>`
    select a.id, a.email, a.name, a.created_at
    from account_setup_links l join accounts a on a.id = l.account_id
    where l.token_hash = ${hashSecret(token)} and l.used_at is null
      and l.expires_at > ${clock.now()}
  `;
  return row ? toAccount(row) : null;
}

/**
 * Sets the account's password through its setup link, which then stops working (as do the
 * account's other links). Returns the account; 404 for a link unknown, used or expired.
 */
export async function completeSetup(
  sql: Sql,
  clock: Clock,
  token: string,
  password: string,
  requestId: string | null,
): Promise<Account> {
  assertPasswordRules(password);
  // The link is checked before hashing, so unknown links cost no hashing.
  if (!(await setupLinkAccount(sql, clock, token))) throw setupLinkGone();
  const passwordHash = await hashPassword(password);
  return await sql.begin(async (tx) => {
    const now = clock.now();
    const [link] = await tx<{ account_id: number }[]>`
      update account_setup_links set used_at = ${now}
      where token_hash = ${hashSecret(token)} and used_at is null and expires_at > ${now}
      returning account_id
    `;
    if (!link) throw setupLinkGone();
    await tx`
      update account_setup_links set used_at = ${now}
      where account_id = ${link.account_id} and used_at is null
    `;
    const [row] = await tx<AccountRow[]>`
      update accounts set password_hash = ${passwordHash} where id = ${link.account_id}
      returning id, email, name, created_at
    `;
    const account = toAccount(row!);
    await recordAudit(tx, {
      actor: actorOf({ type: "account", id: account.id, name: account.name, email: account.email }),
      requestId,
      at: now,
    }, {
      action: "account.set_password",
      project: null,
      target: { type: "account", id: account.id },
    });
    return account;
  });
}

function setupLinkGone(): ApiError {
  return new ApiError("not_found", "this setup link is unknown, already used or expired");
}

/** The account with this email (any case), or null. */
export async function findAccountByEmail(db: Db, email: string): Promise<Account | null> {
  const trimmed = email.trim();
  if (trimmed.length === 0 || trimmed.length > 320) return null;
  const [row] = await db<AccountRow[]>`
    select id, email, name, created_at from accounts where lower(email) = lower(${trimmed})
  `;
  return row ? toAccount(row) : null;
}

/**
 * Changes a signed-in person's password, given the current one. Their other sessions end (the one
 * in use, `keepSessionToken`, stays): a password changed because it leaked shuts the door. A
 * wrong current password counts as a failed sign-in, under the same limits per address and per
 * account (password_limit.ts): a stolen session cannot be used to guess the password.
 */
export async function changePassword(
  sql: Sql,
  clock: Clock,
  account: { id: number; name: string; email: string },
  input: {
    current: string;
    next: string;
    keepSessionToken: string;
    address: string;
    /** A verified device cookie of this account (devices.ts), if the browser has one. */
    device?: string | null;
  },
  requestId: string | null,
): Promise<void> {
  assertPasswordRules(input.next, "new password");
  const now = clock.now();
  const attempt = { address: input.address, email: account.email, device: input.device };
  const limited = await sql.begin((tx) => admitPasswordAttempt(tx, attempt, now));
  if (limited) throw passwordRateLimited(limited);
  const [row] = await sql<{ password_hash: string | null }[]>`
    select password_hash from accounts where id = ${account.id}
  `;
  if (!row || !(await verifyPassword(input.current, row.password_hash))) {
    throw new ApiError("invalid_field", "current password: is not your password", {
      field: "current password",
    });
  }
  const passwordHash = await hashPassword(input.next);
  await sql.begin(async (tx) => {
    await forgetPasswordFailure(tx, attempt, now);
    await tx`update accounts set password_hash = ${passwordHash} where id = ${account.id}`;
    await tx`
      delete from dashboard_sessions
      where account_id = ${account.id} and token_hash <> ${hashSecret(input.keepSessionToken)}
    `;
    await recordAudit(tx, {
      actor: actorOf({ type: "account", ...account }),
      requestId,
      at: clock.now(),
    }, {
      action: "account.set_password",
      project: null,
      target: { type: "account", id: account.id },
    });
  });
}
