import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { LRUCache } from "lru-cache";

/** A random URL-safe string carrying `bytes` bytes of entropy from the system CSPRNG. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

/**
 * Secrets are stored as SHA-256 digests. They are long random values, not passwords, so a fast
 * hash is enough and lets a lookup go through a unique index on the digest.
 */
export function hashSecret(secret: string): string {
  let digest = digests.get(secret);
  if (digest === undefined) {
    digest = createHash("sha256").update(secret).digest("hex");
    digests.set(secret, digest);
  }
  return digest;
}

// Digests of recently presented secrets: a digest never changes, so nothing here can make a
// revoked token or a replaced key work (that is decided by the lookup of the digest, on every
// request); it only spares the hashing on the hot SDK paths. Bounded; never logged.
const digests = new LRUCache<string, string>({ max: 10_000 });

/** Constant-time comparison of a presented secret with a stored digest. */
export function secretMatches(presented: string, storedHash: string): boolean {
  const a = Buffer.from(hashSecret(presented), "hex");
  const b = Buffer.from(storedHash, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}
