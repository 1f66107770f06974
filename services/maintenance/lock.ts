// One transaction-scoped advisory lock serialises the background maintenance of every instance:
// retention batches, partition creation and partition drops. Each piece of work is its own short
// transaction that takes the lock first, so instances take turns piece by piece and a process
// that dies releases it with its connection.
import type { Db, Sql } from "../../db/connect.ts";

/**
 * pg_try_advisory_xact_lock key; any constant shared by every instance. It was the retention
 * purge's own key before partitions, so an instance of the previous version still running during
 * an upgrade takes turns with the new ones.
 */
export const MAINTENANCE_LOCK_KEY = 4_242_003;

/** Runs `work` in a transaction holding the maintenance lock; null when another instance holds it. */
export function asMaintainer<T>(sql: Sql, work: (tx: Db) => Promise<T>): Promise<T | null> {
  return sql.begin(async (tx) => {
    const [lock] = await tx<{ locked: boolean }[]>`
      select pg_try_advisory_xact_lock(${MAINTENANCE_LOCK_KEY}) as locked
    `;
    return lock!.locked ? await work(tx) : null;
  }) as Promise<T | null>;
}
