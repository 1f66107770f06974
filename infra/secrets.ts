import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { ByteCache, stringBytes } from "./byte_cache.ts";

/** A random URL-safe string carrying `bytes` bytes of entropy from the system CSPRNG. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

/**
 * The longest secret any door takes. The service issues 43 to 47 characters (project keys, feed
 * tokens, session cookies, a generated admin token) and a configured ADMIN_TOKEN is at most
 * this long (config.ts): anything longer is refused as a wrong secret before it is hashed,
 * cached or sent to the database, so an unauthenticated request cannot make the process work
 * or keep memory in proportion to what it sends.
 */
export const MAX_SECRET_LENGTH = 256;

/** Whether `value` is a secret that could be one of ours: present and not too long. */
export function plausibleSecret(value: string | null | undefined): value is string {
  return typeof value === "string" && value.length > 0 && value.length <= MAX_SECRET_LENGTH;
}

/**
 * Secrets are stored as SHA-256 digests. They are long random values, not passwords, so a fast
 * hash is enough and lets a lookup go through a unique index on the digest.
 */
export function hashSecret(secret: string): string {
  let digest = digests.get(secret);
  if (digest === undefined) {
    digest = createHash("sha256").update(secret).digest("hex");
    // Only what a door could accept is kept (callers refuse longer values first).
    if (secret.length <= MAX_SECRET_LENGTH) digests.set(secret, digest);
  }
  return digest;
}

// Digests of recently presented secrets: a digest never changes, so nothing here can make a
// revoked token or a replaced key work (that is decided by the lookup of the digest, on every
// request); it only spares the hashing on the hot SDK paths. 4 MiB hold about 16,000 issued
// secrets; never logged.
const digests = new ByteCache<string, string>({
  name: "secret digests",
  maxBytes: 4 * 1024 * 1024,
  sizeOf: (digest, secret) => stringBytes(secret.length) + stringBytes(digest.length) + 64,
});

/** Constant-time comparison of a presented secret with a stored digest. */
export function secretMatches(presented: string, storedHash: string): boolean {
  if (!plausibleSecret(presented)) return false;
  const a = Buffer.from(hashSecret(presented), "hex");
  const b = Buffer.from(storedHash, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}
