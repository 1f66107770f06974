// Passwords, hashed with scrypt from the platform (node:crypto): memory-hard, so guessing costs
// memory as well as time, and no package to keep up to date. Parameters follow OWASP's
// recommendation N=2^15, r=8, p=3 (32 MiB and about as much work as N=2^17, p=1); they are kept
// in each hash, so raising them later leaves existing passwords working.
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { ApiError } from "../errors.ts";

export const PASSWORD_MIN_LENGTH = 12;
/** Longer input is refused before hashing: nothing an attacker sends is hashed unbounded. */
export const PASSWORD_MAX_LENGTH = 1024;

const LOG2_N = 15;
const R = 8;
const P = 3;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
// Two hashes at a time (the service is given few cores; each takes 128·N·r bytes), so a flood of
// sign-ins queues instead of taking the process's memory.
const MAX_CONCURRENT = 2;

let running = 0;
const waiting: (() => void)[] = [];

async function derive(
  password: string,
  salt: Buffer,
  params: { log2N: number; r: number; p: number },
  keyBytes: number,
): Promise<Buffer> {
  if (running >= MAX_CONCURRENT) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    const N = 2 ** params.log2N;
    return await new Promise<Buffer>((resolve, reject) =>
      scrypt(password, salt, keyBytes, {
        N,
        r: params.r,
        p: params.p,
        maxmem: 256 * N * params.r,
      }, (err, key) => (err ? reject(err) : resolve(key)))
    );
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** 400 invalid_field unless `password` has 12 to 1024 characters. */
export function assertPasswordRules(password: string, field = "password"): void {
  if (password.length < PASSWORD_MIN_LENGTH) {
    throw new ApiError(
      "invalid_field",
      `${field}: must be at least ${PASSWORD_MIN_LENGTH} characters`,
      { field },
    );
  }
  if (password.length > PASSWORD_MAX_LENGTH) {
    throw new ApiError(
      "invalid_field",
      `${field}: must be at most ${PASSWORD_MAX_LENGTH} characters`,
      { field },
    );
  }
}

/** `scrypt$<log2 N>$<r>$<p>$<salt>$<key>`, salt and key in base64url. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, { log2N: LOG2_N, r: R, p: P }, KEY_BYTES);
  return `scrypt$${LOG2_N}$${R}$${P}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

// Checked when an email matches no account, so that answer takes as long as a wrong password.
const DUMMY_HASH = `scrypt$${LOG2_N}$${R}$${P}$${"A".repeat(22)}$${"A".repeat(43)}`;

/** Whether `password` matches `stored` (null: compared with a dummy, and false). */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  if (password.length === 0 || password.length > PASSWORD_MAX_LENGTH) return false;
  const parts = (stored ?? DUMMY_HASH).split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [log2N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (!(log2N >= 10 && log2N <= 20 && r >= 1 && r <= 32 && p >= 1 && p <= 16)) return false;
  const expected = Buffer.from(parts[5]!, "base64url");
  const key = await derive(
    password,
    Buffer.from(parts[4]!, "base64url"),
    { log2N, r, p },
    expected.length,
  );
  return stored !== null && key.length === expected.length && timingSafeEqual(key, expected);
}
