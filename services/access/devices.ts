// Device cookies (OWASP's "slow down online guessing attacks with device cookies"): a browser in
// which a person signed in with their password receives a signed cookie naming that account. Its
// later password attempts for that account count under the device instead of the account
// (services/access/password_limit.ts), so someone guessing at the account from elsewhere, however
// many addresses they use, cannot keep its person out of a browser they already signed in from.
// The cookie is no credential: the password is still needed, and a stolen cookie buys only its own
// 10 attempts per 15 minutes. Signed with a key derived from the cursor secret (shared by every
// instance), so it needs no storage; it names the account by a hash of its email.
import { createHmac, timingSafeEqual } from "node:crypto";
import { hashSecret } from "../../infra/secrets.ts";

export const DEVICE_COOKIE = "dashboard_device";
/** How long a device cookie is honoured after the sign-in that set it. */
export const DEVICE_COOKIE_MS = 180 * 24 * 60 * 60_000;

function deviceKey(secret: string): Buffer {
  return createHmac("sha256", secret).update("dashboard-device-cookie").digest();
}

function emailTag(email: string): string {
  return hashSecret(email.trim().toLowerCase()).slice(0, 32);
}

function mac(secret: string, body: string): string {
  return createHmac("sha256", deviceKey(secret)).update(body).digest("base64url");
}

/** A new device cookie's value for the account with `email`, issued at `now`. */
export function deviceCookieFor(secret: string, email: string, now: Date): string {
  const body = `${emailTag(email)}.${Math.floor(now.getTime() / 1000)}`;
  return `${body}.${mac(secret, body)}`;
}

/**
 * The key a device's attempts count under, when `cookie` is a device cookie of ours for the
 * account with `email` and not older than DEVICE_COOKIE_MS; else null.
 */
export function verifiedDevice(
  secret: string,
  cookie: string | undefined,
  email: string,
  now: Date,
): string | null {
  const m = /^([0-9a-f]{32})\.([0-9]{1,12})\.([A-Za-z0-9_-]{43})$/.exec(cookie ?? "");
  if (!m || m[1] !== emailTag(email)) return null;
  const issued = Number(m[2]) * 1000;
  if (issued > now.getTime() + 60_000 || now.getTime() - issued > DEVICE_COOKIE_MS) return null;
  const expected = Buffer.from(mac(secret, `${m[1]}.${m[2]}`));
  const presented = Buffer.from(m[3]!);
  if (expected.length !== presented.length || !timingSafeEqual(expected, presented)) return null;
  return m[3]!;
}
