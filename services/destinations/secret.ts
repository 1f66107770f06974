// Destination signing secrets. They are encrypted at rest, not hashed: an HMAC signature needs
// the key itself. AES-256-GCM, keyed by HKDF from the instance's CURSOR_SECRET (a separate
// purpose label, so the two uses never share a key); set CURSOR_SECRET in the environment and a
// database dump alone no longer reveals the secrets. The secret never reaches a log.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

const PREFIX = "whsec_";
const SEALED = "v1:";
/** The form a migration writes before any instance could encrypt (see 00004). */
const UNSEALED = "plain:";

/** A new Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return PREFIX + randomBytes(32).toString("base64");
}

function sealingKey(instanceSecret: string): Buffer {
  return Buffer.from(
    hkdfSync("sha256", instanceSecret, "link-event-feed", "destination-secret-v1", 32),
  );
}

export function sealSecret(instanceSecret: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", sealingKey(instanceSecret), iv);
  const data = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  return SEALED + Buffer.concat([iv, cipher.getAuthTag(), data]).toString("base64");
}

/** The secret back; throws when it was sealed under another instance secret. */
export function openSecret(instanceSecret: string, sealed: string): string {
  if (sealed.startsWith(UNSEALED)) return sealed.slice(UNSEALED.length);
  if (!sealed.startsWith(SEALED)) throw new Error("unknown sealed secret format");
  const raw = Buffer.from(sealed.slice(SEALED.length), "base64");
  const decipher = createDecipheriv("aes-256-gcm", sealingKey(instanceSecret), raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
}

export function isUnsealed(sealed: string): boolean {
  return sealed.startsWith(UNSEALED);
}
