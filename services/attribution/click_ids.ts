// Click ids: what the link host mints for every counted view and the app sends back with its
// events (CONTRACT "Attribution"; docs/analytics.md).
//
// A click id carries what attributes an event to its click, signed, so that ingestion resolves
// it without a lookup and the redirect writes nothing more than its view: base64url of
// [version 1][environment id u32][link id u32][clicked_at ms u48][4 random bytes][MAC 12 bytes],
// 42 characters. The MAC is SHA-256 over a 32-byte key derived from the instance's cursor secret
// followed by the payload, truncated to 96 bits, so every instance over one database mints and
// checks alike. A keyed hash and not HMAC: a third of HMAC's cost on ingestion's path, and
// sound here because the payload has one fixed length (checked before the MAC) and the digest is
// truncated, which together rule out the length extension that HMAC's second pass guards against.
// Anything else — another instance's id, a forged or truncated one — is "unknown": kept in the
// event's attribution, attributing nothing.
import { createHash, createHmac, timingSafeEqual } from "node:crypto";

const VERSION = 1;
const PAYLOAD_BYTES = 19;
const MAC_BYTES = 12;
const KEY_BYTES = 32;
const ID_LENGTH = Math.ceil(((PAYLOAD_BYTES + MAC_BYTES) * 4) / 3);
/** The longest click id ingestion takes (CONTRACT: opaque, URL-safe, at most 64 characters). */
export const MAX_CLICK_ID_LENGTH = 64;
const PATTERN = /^[A-Za-z0-9_-]+$/;

/** What a click id says, once its MAC checks. */
export interface Click {
  environmentId: number;
  linkId: number;
  clickedAt: Date;
}

// Random bytes drawn from the CSPRNG 4 KiB at a time: one call per thousand click ids rather than
// one each (randomBytes(4) costs a few µs under Deno). Each byte is handed out once.
const randomPool = new Uint8Array(4096);
let randomAt = randomPool.length;

function randomFour(): Uint8Array {
  if (randomAt + 4 > randomPool.length) {
    crypto.getRandomValues(randomPool);
    randomAt = 0;
  }
  randomAt += 4;
  return randomPool.subarray(randomAt - 4, randomAt);
}

/** Mints and reads click ids under one instance's key. */
export class ClickIds {
  /**
   * The MAC's input, key then payload: 51 bytes, hashed at once. node:crypto's SHA-256 and not a
   * hash written here: one in plain JavaScript measured 1 µs a call against 4 µs (load 6), a
   * percent or two of a redirect, not worth owning a cryptographic primitive for.
   */
  readonly #input = new Uint8Array(KEY_BYTES + PAYLOAD_BYTES);

  constructor(cursorSecret: string) {
    // A key of its own, derived from the cursor secret: a click id's MAC can never pass for a
    // cursor's, nor the reverse.
    this.#input.set(createHmac("sha256", cursorSecret).update("linkfeed click id v1").digest());
  }

  mint(click: Click): string {
    const bytes = new Uint8Array(PAYLOAD_BYTES + MAC_BYTES);
    const view = new DataView(bytes.buffer);
    view.setUint8(0, VERSION);
    view.setUint32(1, click.environmentId);
    view.setUint32(5, click.linkId);
    const ms = click.clickedAt.getTime();
    view.setUint16(9, Math.floor(ms / 2 ** 32));
    view.setUint32(11, ms % 2 ** 32);
    bytes.set(randomFour(), 15);
    bytes.set(this.#mac(bytes.subarray(0, PAYLOAD_BYTES)), PAYLOAD_BYTES);
    // A view of the bytes, not a copy of them (a quarter of the cost).
    return Buffer.from(bytes.buffer, 0, bytes.length).toString("base64url");
  }

  /** The click a click id names, or null when it is not one of this instance's. */
  read(id: unknown): Click | null {
    if (typeof id !== "string" || id.length !== ID_LENGTH || !PATTERN.test(id)) return null;
    const bytes = Buffer.from(id, "base64url");
    if (bytes.length !== PAYLOAD_BYTES + MAC_BYTES || bytes[0] !== VERSION) return null;
    const mac = this.#mac(bytes.subarray(0, PAYLOAD_BYTES));
    if (!timingSafeEqual(mac, bytes.subarray(PAYLOAD_BYTES))) return null;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    return {
      environmentId: view.getUint32(1),
      linkId: view.getUint32(5),
      clickedAt: new Date(view.getUint16(9) * 2 ** 32 + view.getUint32(11)),
    };
  }

  #mac(payload: Uint8Array): Uint8Array {
    this.#input.set(payload, KEY_BYTES);
    return createHash("sha256").update(this.#input).digest().subarray(0, MAC_BYTES);
  }
}

let latest: { secret: string; ids: ClickIds } | undefined;

/**
 * The ClickIds of an instance's cursor secret, made once: deriving the key costs a MAC of its
 * own. One secret per instance, so one entry (tests that start instances with other secrets
 * replace it).
 */
export function clickIdsFor(cursorSecret: string): ClickIds {
  if (latest?.secret !== cursorSecret) {
    latest = { secret: cursorSecret, ids: new ClickIds(cursorSecret) };
  }
  return latest.ids;
}
