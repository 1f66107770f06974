// The admin graph: `environment(projectId)` and what hangs below it (its project, its links as a
// Relay connection, one link, analytics), and the link mutations. The same services, checks and
// errors as the admin REST routes; every field is authorised by authorizeField.
import { DEFAULT_LIST_LIMIT, listLinksQuery, MAX_LIST_LIMIT } from "../inputs/links.ts";
import { ApiError } from "../services/errors.ts";
import {
  getManagedLinkOrThrow,
  type LinkOrderField,
  type LinkState,
  listLinks,
} from "../services/links/manage.ts";
import {
  type AttributionModel,
  type EnvironmentKind,
  getEnvironmentOrThrow,
  getProjectOrThrow,
  parseEnvironmentId,
  type Project,
  updateProject,
} from "../services/projects/projects.ts";
import {
  attributionSettings,
  reportingCurrency,
  sdkLimitsInput,
} from "../inputs/project_settings.ts";
import type { AdminField } from "../services/access/graphql_fields.ts";
import { authorizeField, graphqlAudit } from "./authorize.ts";
import type { GraphQLContext } from "./context.ts";
import { camelPath, withGraphQLNames } from "../graphql/errors.ts";
import { type LinkNode, linkNode } from "./nodes.ts";

export interface EnvironmentNode {
  /** The numeric environment id (REST's `project_id`), as an ID. */
  projectId: string;
  /** `production` or `test`. */
  name: EnvironmentKind;
  /** Not fields: what the fields below read by. */
  environmentId: number;
  hashid: string;
}

export interface ProjectNode {
  id: string;
  name: string;
  enterprise: boolean;
  createdAt: string;
  linkDomain: string | null;
  sdkLimits: { perKey: number; perAddress: number };
  reportingCurrency: string;
  attributionWindowDays: number;
  attributionModel: AttributionModel;
}

export interface LinkFilterArgs {
  q?: string | null;
  tag?: string | null;
  campaign?: string | null;
  source?: string | null;
  medium?: string | null;
  state?: LinkState | null;
  sdkGenerated?: boolean | null;
}

export interface LinkOrderArgs {
  field: LinkOrderField;
  direction: "asc" | "desc";
}

export interface LinkConnectionNode {
  edges: { cursor: string; node: LinkNode }[];
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
}

/** An environment id argument (`projectId`), or BAD_USER_INPUT naming it. */
export function environmentIdArg(projectId: string | number): number {
  const id = parseEnvironmentId(String(projectId));
  if (id === null) {
    throw new ApiError("invalid_field", "projectId must be a numeric project ID", {
      field: "projectId",
    });
  }
  return id;
}

/** Null instead of the errors that mean "not yours to see" or "not there". */
async function unlessHidden<T>(run: () => Promise<T>): Promise<T | null> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ApiError && (err.code === "not_found" || err.code === "forbidden")) {
      return null;
    }
    throw err;
  }
}

/** Query.environment: null when there is no such environment or the caller may not see it. */
export async function environmentById(
  ctx: GraphQLContext,
  projectId: string,
): Promise<EnvironmentNode | null> {
  const id = environmentIdArg(projectId);
  return await unlessHidden(async () => {
    await authorizeField(ctx, "Query.environment", id);
    const env = await getEnvironmentOrThrow(ctx.deps.sql, id);
    return { projectId: String(env.id), name: env.kind, environmentId: env.id, hashid: env.hashid };
  });
}

export async function environmentProject(
  ctx: GraphQLContext,
  env: EnvironmentNode,
): Promise<ProjectNode> {
  await authorizeField(ctx, "Environment.project", env.environmentId);
  return projectNode(await getProjectOrThrow(ctx.deps.sql, env.hashid));
}

function projectNode(p: Project): ProjectNode {
  return {
    id: p.id,
    name: p.name,
    enterprise: p.enterprise,
    createdAt: p.created_at,
    linkDomain: p.link_domain,
    sdkLimits: { perKey: p.sdk_limits.per_key, perAddress: p.sdk_limits.per_address },
    reportingCurrency: p.reporting_currency,
    attributionWindowDays: p.attribution_window_days,
    attributionModel: p.attribution_model,
  };
}

/**
 * As PATCH /api/v1/admin/projects/:hashid with `attribution_window_days` and
 * `attribution_model`, for the project of the environment `projectId`; each absent is kept.
 */
export async function setAttributionSettingsMutation(
  ctx: GraphQLContext,
  projectId: string | number,
  input: { windowDays?: number | null; model?: AttributionModel | null },
): Promise<ProjectNode> {
  const id = await authorizedEnvironment(ctx, projectId, "Mutation.setAttributionSettings");
  const NAMES: Record<string, string> = {
    attribution_window_days: "input.windowDays",
    attribution_model: "input.model",
  };
  const settings = await withGraphQLNames(
    (field) => NAMES[field] ?? `input.${camelPath(field)}`,
    () =>
      Promise.resolve().then(() =>
        attributionSettings.parse({
          attribution_window_days: input.windowDays ?? undefined,
          attribution_model: input.model ?? undefined,
        })
      ),
  );
  const { hashid } = await getEnvironmentOrThrow(ctx.deps.sql, id);
  const project = await updateProject(ctx.deps.sql, hashid, settings, await graphqlAudit(ctx));
  return projectNode(project);
}

/**
 * As PATCH /api/v1/admin/projects/:hashid with `reporting_currency`, for the project of the
 * environment `projectId`: every purchase of the project is reconverted.
 */
export async function setReportingCurrencyMutation(
  ctx: GraphQLContext,
  projectId: string | number,
  currency: string,
): Promise<ProjectNode> {
  const id = await authorizedEnvironment(ctx, projectId, "Mutation.setReportingCurrency");
  const parsed = await withGraphQLNames(
    () => "currency",
    () => Promise.resolve().then(() => reportingCurrency.parse(currency)),
  );
  const { hashid } = await getEnvironmentOrThrow(ctx.deps.sql, id);
  const project = await updateProject(
    ctx.deps.sql,
    hashid,
    { reporting_currency: parsed },
    await graphqlAudit(ctx),
  );
  return projectNode(project);
}

/**
 * As PATCH /api/v1/admin/projects/:hashid with `sdk_limits`, for the project of the environment
 * `projectId`: each limit absent is kept, null returns to the default.
 */
export async function setSdkLimitsMutation(
  ctx: GraphQLContext,
  projectId: string | number,
  input: { perKey?: number | null; perAddress?: number | null },
): Promise<ProjectNode> {
  const id = await authorizedEnvironment(ctx, projectId, "Mutation.setSdkLimits");
  const limits = await withGraphQLNames(
    (field) => `input.${camelPath(field)}`,
    () =>
      Promise.resolve().then(() =>
        sdkLimitsInput.parse({ per_key: input.perKey, per_address: input.perAddress })
      ),
  );
  const { hashid } = await getEnvironmentOrThrow(ctx.deps.sql, id);
  const project = await updateProject(
    ctx.deps.sql,
    hashid,
    { sdk_limits: limits },
    await graphqlAudit(ctx),
  );
  return projectNode(project);
}

/** LinkFilter's fields in the list's errors: `filter.q`, `filter.sdkGenerated`. */
const filterName = (field: string) => `filter.${camelPath(field)}`;

/** Environment.links: REST's list (same filters, orders and cursors) as a Relay connection. */
export async function environmentLinks(
  ctx: GraphQLContext,
  env: EnvironmentNode,
  args: {
    first?: number | null;
    after?: string | null;
    filter?: LinkFilterArgs | null;
    orderBy?: LinkOrderArgs | null;
  },
): Promise<LinkConnectionNode> {
  await authorizeField(ctx, "Environment.links", env.environmentId);
  const first = args.first ?? DEFAULT_LIST_LIMIT;
  if (!(first >= 1 && first <= MAX_LIST_LIMIT)) {
    throw new ApiError("invalid_limit", `first must be an integer from 1 to ${MAX_LIST_LIMIT}`, {
      field: "first",
    });
  }
  const f = args.filter ?? {};
  const filters = await withGraphQLNames(
    filterName,
    () =>
      Promise.resolve().then(() =>
        listLinksQuery.parse({
          q: f.q,
          tag: f.tag,
          campaign: f.campaign,
          source: f.source,
          medium: f.medium,
          state: f.state,
          sdk_generated: f.sdkGenerated == null ? undefined : String(f.sdkGenerated),
        })
      ),
  );
  const order = args.orderBy
    ? { field: args.orderBy.field, desc: args.orderBy.direction === "desc" }
    : filters.order;
  const { sql, clock, config } = ctx.deps;
  const now = clock.now();
  const page = await listLinks(sql, env.environmentId, {
    ...filters,
    order,
    limit: first,
    after: args.after === "" || args.after == null ? undefined : args.after,
  }, now);
  const edges = page.links.map((row, i) => ({
    cursor: page.cursors[i]!,
    node: linkNode(row, config.linkBaseUrl, now),
  }));
  return {
    edges,
    pageInfo: {
      hasNextPage: page.next_after !== null,
      hasPreviousPage: false,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  };
}

/** Environment.link: the managed link at `path`, or null. */
export async function environmentLink(
  ctx: GraphQLContext,
  env: EnvironmentNode,
  path: string,
): Promise<LinkNode | null> {
  await authorizeField(ctx, "Environment.link", env.environmentId);
  const { sql, clock, config } = ctx.deps;
  return await unlessHidden(async () =>
    linkNode(
      await getManagedLinkOrThrow(sql, env.environmentId, path),
      config.linkBaseUrl,
      clock.now(),
    )
  );
}

/** Authorises a mutation on the environment of its `projectId` argument. */
export async function authorizedEnvironment(
  ctx: GraphQLContext,
  projectId: string | number,
  field: AdminField,
): Promise<number> {
  const id = environmentIdArg(projectId);
  await authorizeField(ctx, field, id);
  return id;
}
