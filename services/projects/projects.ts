import type { Db, Sql } from "../../db/connect.ts";
import { type AuditContext, recordAudit } from "../access/audit.ts";
import type { Apps } from "../link_host/apps.ts";
import { ApiError, isUniqueViolation, notFound } from "../errors.ts";
import { projectHashid } from "../../infra/hashids.ts";
import { hashSecret, plausibleSecret, randomToken } from "../../infra/secrets.ts";
import { type SdkLimits, sdkLimitsOf } from "./sdk_limits.ts";
import { setReportingCurrency } from "../fx/rates.ts";

export type EnvironmentKind = "production" | "test";

/** Which of a user's touches in the attribution window their events go to (docs/analytics.md). */
export const ATTRIBUTION_MODELS = ["first_touch", "last_touch"] as const;
export type AttributionModel = (typeof ATTRIBUTION_MODELS)[number];

export interface Project {
  id: string;
  name: string;
  enterprise: boolean;
  created_at: string;
  environments: Record<EnvironmentKind, { project_id: number }>;
  /** The host its links are served on; null: LINK_BASE_URL's. */
  link_domain: string | null;
  apps: Apps;
  /** What the project key may write a minute (services/sdk_limits.ts). */
  sdk_limits: SdkLimits;
  /** ISO 4217: the currency revenue is summed in (services/fx/rates.ts). */
  reporting_currency: string;
  /** How long a click or a user's touch attributes later events, 1 to 90 days. */
  attribution_window_days: number;
  /** Which of a user's touches in the window their events go to. */
  attribution_model: AttributionModel;
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
  link_domain: string | null;
  apps: Apps;
  sdk_writes_per_key: number | null;
  sdk_writes_per_address: number | null;
  reporting_currency: string;
  attribution_window_days: number;
  attribution_model: AttributionModel;
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
    link_domain: row.link_domain,
    apps: row.apps,
    sdk_limits: sdkLimitsOf(row),
    reporting_currency: row.reporting_currency,
    attribution_window_days: row.attribution_window_days,
    attribution_model: row.attribution_model,
  };
}

async function selectProject(db: Db, hashid: string): Promise<ProjectRow | undefined> {
  // Not a hashid at all (a NUL or an escape in the path): not found, before any query.
  if (!/^[A-Za-z0-9]{1,64}$/.test(hashid)) return undefined;
  const [row] = await db<ProjectRow[]>`
    select p.id, p.hashid, p.name, p.enterprise, p.created_at, p.link_domain, p.apps,
      p.sdk_writes_per_key, p.sdk_writes_per_address, p.reporting_currency,
      p.attribution_window_days, p.attribution_model,
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
  audit: AuditContext,
): Promise<{ project: Project; projectKey: string }> {
  return sql.begin(async (tx) => {
    const created = await insertProject(tx, input);
    await recordAudit(tx, audit, {
      action: "project.create",
      project: { hashid: created.project.id },
      target: { type: "project", id: created.project.id },
    });
    return created;
  });
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

/**
 * Changes a project. For `link_domain` and each of `apps.ios`/`apps.android`: absent leaves it,
 * null removes it, a value replaces it. `defaultHost` is LINK_BASE_URL's host, which no project
 * may claim (its domain-less links are served there).
 */
export async function updateProject(
  sql: Sql,
  hashid: string,
  changes: {
    name?: string | undefined;
    enterprise?: boolean | undefined;
    link_domain?: string | null | undefined;
    apps?: { ios?: Apps["ios"] | null; android?: Apps["android"] | null } | undefined;
    /** Each: absent leaves it, null returns to the default, a number sets it. */
    sdk_limits?: { per_key?: number | null; per_address?: number | null } | undefined;
    /** Reconverts every purchase of the project when it changes. */
    reporting_currency?: string | undefined;
    /** Events ingested from then on are attributed under the new window and model. */
    attribution_window_days?: number | undefined;
    attribution_model?: AttributionModel | undefined;
  },
  audit: AuditContext,
  options: { defaultHost?: string } = {},
): Promise<Project> {
  if (changes.link_domain != null && changes.link_domain === options.defaultHost) {
    throw new ApiError(
      "invalid_field",
      "link_domain: is LINK_BASE_URL's host, where projects without a link domain are served",
    );
  }
  try {
    return await sql.begin(async (tx) => {
      // Row lock first: two concurrent changes to different apps must not undo each other.
      if (/^[A-Za-z0-9]{1,64}$/.test(hashid)) {
        await tx`select 1 from projects where hashid = ${hashid} for update`;
      }
      const current = await selectProject(tx, hashid);
      if (!current) throw notFound("project");
      const apps: Apps = { ...current.apps };
      for (const platform of ["ios", "android"] as const) {
        const value = changes.apps?.[platform];
        if (value === null) delete apps[platform];
        else if (value !== undefined) (apps as Record<string, unknown>)[platform] = value;
      }
      const linkDomain = changes.link_domain === undefined
        ? current.link_domain
        : changes.link_domain;
      await tx`
        update projects set
          name = coalesce(${changes.name ?? null}, name),
          enterprise = coalesce(${changes.enterprise ?? null}::boolean, enterprise),
          attribution_window_days = coalesce(
            ${changes.attribution_window_days ?? null}::smallint, attribution_window_days),
          attribution_model = coalesce(${
        changes.attribution_model ?? null
      }::text, attribution_model),
          link_domain = ${linkDomain},
          apps = ${tx.json(apps as never)},
          sdk_writes_per_key = ${limit(changes.sdk_limits?.per_key, current.sdk_writes_per_key)},
          sdk_writes_per_address = ${
        limit(changes.sdk_limits?.per_address, current.sdk_writes_per_address)
      },
          updated_at = now()
        where id = ${current.id}
      `;
      if (changes.reporting_currency !== undefined) {
        await setReportingCurrency(tx, current.id, changes.reporting_currency);
      }
      await recordAudit(tx, audit, {
        action: "project.update",
        project: { hashid },
        target: { type: "project", id: hashid },
      });
      return getProjectOrThrow(tx, hashid);
    });
  } catch (err) {
    // Two projects claiming one domain at once: the unique index decides, the loser gets a 400.
    if (isUniqueViolation(err, "projects_link_domain_key")) {
      throw new ApiError("invalid_field", "link_domain: is already used by another project");
    }
    throw err;
  }
}

/** A PATCH of one limit: absent keeps `current`, null the default, a number itself. */
function limit(change: number | null | undefined, current: number | null): number | null {
  return change === undefined ? current : change;
}

/** Replaces the project key; the old one stops authenticating with this statement's commit. */
export function regenerateProjectKey(
  sql: Sql,
  hashid: string,
  audit: AuditContext,
): Promise<string> {
  return sql.begin(async (tx) => {
    if (!(await selectProject(tx, hashid))) throw notFound("project");
    const projectKey = newProjectKey();
    const [row] = await tx`
      update projects set key_hash = ${hashSecret(projectKey)}, updated_at = now()
      where hashid = ${hashid}
      returning id
    `;
    if (!row) throw notFound("project");
    await recordAudit(tx, audit, {
      action: "project.regenerate_key",
      project: { hashid },
      target: { type: "project", id: hashid },
    });
    return projectKey;
  });
}

/** The 401 of a PROJECT-KEY that matches no project (every SDK path answers the same). */
export function wrongProjectKey(): ApiError {
  return new ApiError("unauthorized", "PROJECT-KEY does not match a project");
}

/**
 * The Enterprise rule: the feed, and everything that reads it (feed tokens, the live tail), is an
 * Enterprise feature; a project that loses Enterprise stops being readable at once. `what` names
 * the feature in the 402's message.
 */
export function assertEnterprise(project: { enterprise: boolean }, what: string): void {
  if (!project.enterprise) {
    throw new ApiError("enterprise_required", `${what} needs Enterprise access on this project`);
  }
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
  if (!plausibleSecret(projectKey)) throw wrongProjectKey();
  // The lookup goes by digest, so the comparison never touches the key itself.
  const [row] = await db<Environment[]>`
    select e.id, e.kind, p.id as "projectId", p.hashid, p.enterprise
    from projects p join environments e on e.project_id = p.id and e.kind = ${kind}
    where p.key_hash = ${hashSecret(projectKey)}
  `;
  if (!row) throw wrongProjectKey();
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
  options: {
    search?: string | undefined;
    limit?: number;
    /** Only the projects this account is a member of. */
    memberOf?: number | undefined;
  } = {},
): Promise<Project[]> {
  const search = options.search?.trim() ?? "";
  // The search is a substring, not a pattern: LIKE's own wildcards are escaped.
  const pattern = "%" + search.replace(/[\\%_]/g, (c) => "\\" + c) + "%";
  const rows = await db<ProjectRow[]>`
    select p.id, p.hashid, p.name, p.enterprise, p.created_at, p.link_domain, p.apps,
      p.sdk_writes_per_key, p.sdk_writes_per_address, p.reporting_currency,
      p.attribution_window_days, p.attribution_model,
      (select id from environments where project_id = p.id and kind = 'production') as production_id,
      (select id from environments where project_id = p.id and kind = 'test') as test_id
    from projects p
    where (${search === ""} or p.name ilike ${pattern} or p.hashid = ${search})
      and (${options.memberOf ?? null}::int is null or exists (
        select 1 from project_members m
        where m.project_id = p.id and m.account_id = ${options.memberOf ?? null}))
    order by p.id desc
    limit ${options.limit ?? 200}
  `;
  return rows.map(toProject);
}

/**
 * Whether `domain` is the link domain of some project: what a reverse proxy asks before it
 * obtains a certificate for a host on demand (rest/internal.ts, /internal/tls/allowed). Link
 * domains are stored lower-case without a trailing dot; `domain` is compared the same way.
 */
export async function isLinkDomain(db: Db, domain: string): Promise<boolean> {
  const name = domain.trim().toLowerCase().replace(/\.$/, "");
  if (name === "" || name.length > 253) return false;
  const rows = await db`select 1 from projects where link_domain = ${name} limit 1`;
  return rows.length > 0;
}
