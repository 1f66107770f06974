// What the dashboard's page modules share: the page renderer, the environment loader, the name
// field of projects and tokens, and the wording of service messages. routes.tsx makes one kit
// and lends it to each area.
import type { Context } from "hono";
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { text } from "../inputs/common.ts";
import type { AppDeps } from "../services/deps.ts";
import { accessPath } from "../services/links/links.ts";
import {
  type Environment,
  getEnvironmentOrThrow,
  getProjectOrThrow,
} from "../services/projects/projects.ts";
import type { Session } from "../services/access/sessions.ts";
import type { DashboardEnv } from "./security.ts";

/** A project's or feed token's name, as its form takes it. */
export const nameInput = text(200).trim().min(1, "must not be empty");

export type Node = HtmlEscapedString | Promise<HtmlEscapedString>;
export type PageStatus = 200 | 400 | 401 | 403 | 404 | 409 | 500 | 503;

/** An environment's page context: who is signed in, the environment and its project's name. */
export interface EnvContext {
  session: Session;
  env: Environment;
  projectName: string;
  /**
   * The URL people open for the link at `path`: on the project's link domain when it has one,
   * as the API's `access_path` and the QR code give it.
   */
  linkUrl: (path: string) => string;
}

export interface PageKit {
  page(c: Context, node: Node, status?: PageStatus): Response | Promise<Response>;
  /** The environment of the route's :project_id, or a 404. */
  loadEnv(c: Context<DashboardEnv>): Promise<EnvContext>;
}

/** A whole HTML document. */
export function page(c: Context, node: Node, status: PageStatus = 200) {
  return c.html(html`<!doctype html>${node}`, status);
}

export function pageKit(deps: AppDeps): PageKit {
  return {
    page,
    async loadEnv(c) {
      const env = await getEnvironmentOrThrow(deps.sql, c.req.param("project_id") ?? "");
      const project = await getProjectOrThrow(deps.sql, env.hashid);
      const linkUrl = (path: string) =>
        accessPath(deps.config.linkBaseUrl, { path, link_domain: project.link_domain });
      return { session: c.get("session"), env, projectName: project.name, linkUrl };
    },
  };
}

/** A service's message as a sentence: capitalised, with one full stop. */
export function sentence(message: string): string {
  const text = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** "1 link", "2,000 links". */
export function formatCount(n: number, noun: string): string {
  return `${n.toLocaleString("en-US")} ${noun}${n === 1 ? "" : "s"}`;
}
