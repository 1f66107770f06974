import type { Sql } from "../db/connect.ts";
import type { Clock } from "./clock.ts";
import { notFound } from "./errors.ts";
import { startCapture, stopCaptureIfIdle } from "./feed_capture.ts";
import { getEnvironmentOrThrow } from "./projects.ts";

export interface Destination {
  id: number;
  url: string;
  created_at: string;
}

/** Registers a push destination; like a feed token, it starts the environment's capture. */
export function createDestination(
  sql: Sql,
  clock: Clock,
  projectId: string,
  url: string,
): Promise<Destination> {
  return sql.begin(async (tx) => {
    const env = await getEnvironmentOrThrow(tx, projectId);
    const now = clock.now();
    const [row] = await tx<{ id: number; url: string; created_at: Date }[]>`
      insert into destinations (environment_id, url, created_at)
      values (${env.id}, ${url}, ${now})
      returning id, url, created_at
    `;
    await startCapture(tx, env.id, now);
    return { id: row!.id, url: row!.url, created_at: row!.created_at.toISOString() };
  });
}

export function deleteDestination(
  sql: Sql,
  projectId: string,
  destinationId: string,
): Promise<void> {
  return sql.begin(async (tx) => {
    const env = await getEnvironmentOrThrow(tx, projectId);
    const id = /^[0-9]{1,9}$/.test(destinationId) ? Number(destinationId) : null;
    const [row] = id === null ? [] : await tx`
      delete from destinations where id = ${id} and environment_id = ${env.id}
      returning id
    `;
    if (!row) throw notFound("destination");
    await stopCaptureIfIdle(tx, env.id);
  });
}
