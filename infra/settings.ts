import type { Db } from "../db/connect.ts";
import { randomToken } from "./secrets.ts";

/**
 * Returns the instance setting `key`, creating it with `make()` if absent. Race-safe across
 * instances: the first insert wins and everyone reads the winner's value.
 */
export async function getOrCreateSetting(
  db: Db,
  key: string,
  make: () => string,
): Promise<{ value: string; created: boolean }> {
  const candidate = make();
  const inserted = await db<{ value: string }[]>`
    insert into instance_settings (key, value) values (${key}, ${candidate})
    on conflict (key) do nothing
    returning value
  `;
  if (inserted.length > 0) return { value: candidate, created: true };
  const [row] = await db<{ value: string }[]>`
    select value from instance_settings where key = ${key}
  `;
  return { value: row!.value, created: false };
}

/**
 * The cursor HMAC key: CURSOR_SECRET when configured, else one generated once and kept in the
 * database, so that every instance over it signs and checks cursors alike.
 */
export async function resolveCursorSecret(db: Db, configured: string | null): Promise<string> {
  if (configured) return configured;
  return (await getOrCreateSetting(db, "cursor_secret", () => randomToken(32))).value;
}
