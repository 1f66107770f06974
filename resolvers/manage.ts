// createLink, updateLink, deleteLink: the admin REST routes' operations (POST, PATCH and DELETE
// /api/v1/projects/:project_id/links), through the same input schemas and services, so a
// mutation changes exactly what its route changes. Errors name the argument as sent
// (`input.expiresAt: …`).
import { createManagedLinkBody, patchLinkBody } from "../inputs/links.ts";
import { createManagedLink, deleteLink, updateLink } from "../services/links/manage.ts";
import type { GraphQLContext } from "./context.ts";
import { graphqlAudit } from "./authorize.ts";
import { authorizedEnvironment } from "./environment.ts";
import { camelPath, withGraphQLNames } from "../graphql/errors.ts";
import { type LinkNode, linkNode } from "./nodes.ts";

interface RedirectArg {
  url?: string | null;
  openAppIfInstalled?: boolean | null;
}

/** CreateLinkInput and UpdateLinkInput as Pothos hands them over. */
export type LinkInputArgs = Record<string, unknown> & {
  iosCustomRedirect?: RedirectArg | null;
  androidCustomRedirect?: RedirectArg | null;
  desktopCustomRedirect?: RedirectArg | null;
};

const REDIRECTS = new Set(["iosCustomRedirect", "androidCustomRedirect", "desktopCustomRedirect"]);

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * The input as the REST body it stands for: snake_case names, redirects' `openAppIfInstalled`
 * as `open_app_if_installed`, times as ISO text. Absent fields stay absent and nulls stay null
 * (on an update, null clears).
 */
function restBody(input: LinkInputArgs): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(input)) {
    if (value === undefined) continue;
    if (REDIRECTS.has(name) && value !== null) {
      const r = value as RedirectArg;
      body[snake(name)] = {
        url: r.url ?? undefined,
        open_app_if_installed: r.openAppIfInstalled ?? undefined,
      };
    } else {
      body[snake(name)] = value instanceof Date ? value.toISOString() : value;
    }
  }
  return body;
}

/** REST's body paths as the input's: `ios_custom_redirect.url` → `input.iosCustomRedirect.url`. */
const inputName = (field: string) => (field === "body" ? "input" : `input.${camelPath(field)}`);

export async function createLinkMutation(
  ctx: GraphQLContext,
  projectId: string | number,
  input: LinkInputArgs,
): Promise<LinkNode> {
  const environmentId = await authorizedEnvironment(ctx, projectId, "Mutation.createLink");
  const body = await withGraphQLNames(
    inputName,
    () => Promise.resolve().then(() => createManagedLinkBody.parse(restBody(input))),
  );
  const { sql, config, clock } = ctx.deps;
  const row = await withGraphQLNames(
    inputName,
    async () => createManagedLink(sql, environmentId, body, "api", await graphqlAudit(ctx)),
  );
  return linkNode(row, config.linkBaseUrl, clock.now());
}

export async function updateLinkMutation(
  ctx: GraphQLContext,
  projectId: string | number,
  path: string,
  input: LinkInputArgs,
): Promise<LinkNode> {
  const environmentId = await authorizedEnvironment(ctx, projectId, "Mutation.updateLink");
  const patch = await withGraphQLNames(
    inputName,
    () => Promise.resolve().then(() => patchLinkBody.parse(restBody(input))),
  );
  const { sql, config, clock } = ctx.deps;
  const row = await updateLink(sql, environmentId, path, patch, await graphqlAudit(ctx));
  return linkNode(row, config.linkBaseUrl, clock.now());
}

export async function deleteLinkMutation(
  ctx: GraphQLContext,
  projectId: string | number,
  path: string,
): Promise<boolean> {
  const environmentId = await authorizedEnvironment(ctx, projectId, "Mutation.deleteLink");
  await deleteLink(ctx.deps.sql, environmentId, path, await graphqlAudit(ctx));
  return true;
}
