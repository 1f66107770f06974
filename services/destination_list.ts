// The dashboard's read of an environment's push destinations (registration and removal stay in
// destinations.ts, which owns the table's writes).
import type { Db } from "../db/connect.ts";
import type { Destination } from "./destinations.ts";
import { getEnvironmentOrThrow } from "./projects.ts";

/** The environment's destinations, oldest first. */
export async function listDestinations(
  db: Db,
  projectId: string | number,
): Promise<Destination[]> {
  const env = await getEnvironmentOrThrow(db, projectId);
  const rows = await db<{ id: number; url: string; created_at: Date }[]>`
    select id, url, created_at from destinations where environment_id = ${env.id} order by id
  `;
  return rows.map((r) => ({ id: r.id, url: r.url, created_at: r.created_at.toISOString() }));
}
