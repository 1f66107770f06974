import type { Db, Sql } from "../db/connect.ts";
import { ApiError, notFound } from "./errors.ts";
import { projectHashid } from "./hashids.ts";
import { hashSecret, randomToken } from "./secrets.ts";

export type EnvironmentKind = "production" | "test";

export interface Project {
  id: string;
  name: string;
  enterprise: boolean;
  created_at: string;
  environments: Record<EnvironmentKind, { project_id: number }>;
}

/** One environment of a project: what SDK and feed requests act on. */
export interface Environment {
  id: number;
  kind: EnvironmentKind;
  projectId: number;
  hashid: string;
  enterprise: boolean;
}

interface ProjectRow {
  id: number;
  hashid: string;
  name: string;
  enterprise: boolean;
  created_at: Date;
  production_id: number;
  test_id: number;
}

const PROJECT_KEY_PREFIX = "pk_";

function newProjectKey(): string {
  return PROJECT_KEY_PREFIX + randomToken(32);
}

function toProject(row: ProjectRow): Project {
  return {
    id: row.hashid,
    name: row.name,
    enterprise: row.enterprise,
    created_at: row.created_at.toISOString(),
    environments: {
      production: { project_id: row.production_id },
      test: { project_id: row.test_id },
    },
  };
}

async function selectProject(db: Db, hashid: string): Promise<ProjectRow | undefined> {
  // Not a hashid at all (a NUL or an escape in the path): not found, before any query.
  if (!/^[A-Za-z0-9]{1,64}$/.test(hashid)) return undefined;
  const [row] = await db<ProjectRow[]>`
    select p.id, p.hashid, p.name, p.enterprise, p.created_at,
      (select id from environments where project_id = p.id and kind = 'production') as production_id,
      (select id from environments where project_id = p.id and kind = 'test') as test_id
    from projects p
    where p.hashid = ${hashid}
  `;
  return row;
}

export async function getProjectOrThrow(db: Db, hashid: string): Promise<Project> {
  const row = await selectProject(db, hashid);
  if (!row) throw notFound("project");
  return toProject(row);
}

/** Creates a project with both environments; the key is returned here and never again. */
export function createProject(
  sql: Sql,
  input: { name: string; enterprise: boolean },
): Promise<{ project: Project; projectKey: string }> {
  return sql.begin((tx) => insertProject(tx, input));
}

async function insertProject(
  db: Db,
  input: { name: string; enterprise: boolean },
): Promise<{ project: Project; projectKey: string }> {
  const projectKey = newProjectKey();
  const [inserted] = await db<{ id: number }[]>`
    insert into projects (hashid, name, enterprise, key_hash)
    values (${"pending-" + randomToken(12)}, ${input.name}, ${input.enterprise}, ${
    hashSecret(projectKey)
  })
    returning id
  `;
  const id = inserted!.id;
  const hashid = projectHashid(id);
  await db`update projects set hashid = ${hashid} where id = ${id}`;
  // One statement, production first, so its project_id is the lower of the two.
  await db`
    insert into environments (project_id, kind)
    values (${id}, 'production'), (${id}, 'test')
  `;
  return { project: await getProjectOrThrow(db, hashid), projectKey };
}

export async function updateProject(
  db: Db,
  hashid: string,
  changes: { name?: string | undefined; enterprise?: boolean | undefined },
): Promise<Project> {
  if (!(await selectProject(db, hashid))) throw notFound("project");
  const [row] = await db<{ hashid: string }[]>`
    update projects set
      name = coalesce(${changes.name ?? null}, name),
      enterprise = coalesce(${changes.enterprise ?? null}::boolean, enterprise),
      updated_at = now()
    where hashid = ${hashid}
    returning hashid
  `;
  if (!row) throw notFound("project");
  return getProjectOrThrow(db, hashid);
}

/** Replaces the project key; the old one stops authenticating with this statement's commit. */
export async function regenerateProjectKey(db: Db, hashid: string): Promise<string> {
  if (!(await selectProject(db, hashid))) throw notFound("project");
  const projectKey = newProjectKey();
  const [row] = await db`
    update projects set key_hash = ${hashSecret(projectKey)}, updated_at = now()
    where hashid = ${hashid}
    returning id
  `;
  if (!row) throw notFound("project");
  return projectKey;
}

/** Resolves a PROJECT-KEY and environment kind to the environment, or throws 401. */
export async function authenticateProjectKey(
  db: Db,
  projectKey: string | null | undefined,
  kind: EnvironmentKind,
): Promise<Environment> {
  if (!projectKey) {
    throw new ApiError("unauthorized", "PROJECT-KEY header is missing");
  }
  // The lookup goes by digest, so the comparison never touches the key itself.
  const [row] = await db<Environment[]>`
    select e.id, e.kind, p.id as "projectId", p.hashid, p.enterprise
    from projects p join environments e on e.project_id = p.id and e.kind = ${kind}
    where p.key_hash = ${hashSecret(projectKey)}
  `;
  if (!row) {
    throw new ApiError("unauthorized", "PROJECT-KEY does not match a project");
  }
  return row;
}

/** The environment behind a numeric project_id of the feed and admin paths, or 404. */
export async function getEnvironmentOrThrow(
  db: Db,
  projectId: string | number,
): Promise<Environment> {
  const id = typeof projectId === "number" ? projectId : parseEnvironmentId(projectId);
  const [row] = id === null ? [] : await db<Environment[]>`
    select e.id, e.kind, p.id as "projectId", p.hashid, p.enterprise
    from environments e join projects p on p.id = e.project_id
    where e.id = ${id}
  `;
  if (!row) throw notFound("project");
  return row;
}

/** A numeric project_id as written in a path, or null if it is not one. */
export function parseEnvironmentId(raw: string): number | null {
  if (!/^[1-9][0-9]{0,9}$/.test(raw)) return null;
  const n = Number(raw);
  return n <= 2_147_483_647 ? n : null;
}

/** Projects whose name or hashid contains `search` (every project without one), newest first. */
export async function listProjects(
  db: Db,
  options: { search?: string | undefined; limit?: number } = {},
): Promise<Project[]> {
  const search = options.search?.trim() ?? "";
  // The search is a substring, not a pattern: LIKE's own wildcards are escaped.
  const pattern = "%" + search.replace(/[\\%_]/g, (c) => "\\" + c) + "%";
  const rows = await db<ProjectRow[]>`
    select p.id, p.hashid, p.name, p.enterprise, p.created_at,
      (select id from environments where project_id = p.id and kind = 'production') as production_id,
      (select id from environments where project_id = p.id and kind = 'test') as test_id
    from projects p
    where ${search === ""} or p.name ilike ${pattern} or p.hashid = ${search}
    order by p.id desc
    limit ${options.limit ?? 200}
  `;
  return rows.map(toProject);
}
