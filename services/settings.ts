import type { Db } from "../db/connect.ts";

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
