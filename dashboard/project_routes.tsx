// GET/POST /dashboard and /dashboard/projects/… – the projects a session sees, a project's page
// (its environments and settings), creating and renaming projects and replacing a project key.
import type { Context, Hono } from "hono";
import { listQuery } from "../inputs/dashboard.ts";
import { authorizeProjectUpdate } from "../services/access/authorize.ts";
import type { AppDeps } from "../services/deps.ts";
import {
  createProject,
  getProjectOrThrow,
  listProjects,
  regenerateProjectKey,
  updateProject,
} from "../services/projects/projects.ts";
import { formText } from "./forms.ts";
import { nameInput, type PageKit } from "./kit.tsx";
import { ProjectPage, ProjectsPage, RegenerateKeyPage } from "./pages/projects.tsx";
import { auditOf, BASE, type DashboardEnv } from "./security.ts";

export function projectPages(app: Hono<DashboardEnv>, deps: AppDeps, kit: PageKit): void {
  const { sql } = deps;
  const { page } = kit;

  /** The projects the session sees: every one for the instance admin, a person's own. */
  const visibleProjects = (c: Context<DashboardEnv>, search?: string) => {
    const principal = c.get("session").principal;
    return listProjects(sql, {
      search,
      memberOf: principal.type === "account" ? principal.id : undefined,
    });
  };

  // GET /dashboard – projects, searched by name
  app.get("/", async (c) => {
    const query = listQuery.parse(c.req.query());
    const projects = await visibleProjects(c, query.q);
    return page(
      c,
      <ProjectsPage session={c.get("session")} projects={projects} search={query.q ?? ""} />,
    );
  });

  // POST /dashboard/projects – create a project; its key is shown on the answer, once
  app.post("/projects", async (c) => {
    const form = await c.req.parseBody();
    const name = nameInput.safeParse(formText(form, "name"));
    if (!name.success) {
      const projects = await visibleProjects(c);
      return page(
        c,
        <ProjectsPage
          session={c.get("session")}
          projects={projects}
          search=""
          name={formText(form, "name")}
          error={`Name ${name.error.issues[0]!.message}.`}
        />,
        400,
      );
    }
    const { project, projectKey } = await createProject(sql, {
      name: name.data,
      enterprise: formText(form, "enterprise") === "on",
    }, auditOf(c));
    return page(
      c,
      <ProjectPage
        session={c.get("session")}
        project={project}
        projectKey={projectKey}
        notice={`Project “${project.name}” created.`}
      />,
    );
  });

  // GET /dashboard/projects/:hashid – a project, its two environments and settings
  app.get("/projects/:hashid", async (c) => {
    const project = await getProjectOrThrow(sql, c.req.param("hashid"));
    const notice = c.req.query("saved") === "1" ? "Settings saved." : undefined;
    return page(
      c,
      <ProjectPage session={c.get("session")} project={project} {...notice && { notice }} />,
    );
  });

  // POST /dashboard/projects/:hashid – rename, Enterprise on or off
  app.post("/projects/:hashid", async (c) => {
    const hashid = c.req.param("hashid");
    const form = await c.req.parseBody();
    const name = nameInput.safeParse(formText(form, "name"));
    if (!name.success) {
      const project = await getProjectOrThrow(sql, hashid);
      return page(
        c,
        <ProjectPage
          session={c.get("session")}
          project={project}
          error={`Name ${name.error.issues[0]!.message}.`}
        />,
        400,
      );
    }
    // Only the instance admin's form has the Enterprise switch; a member's leaves it as it is.
    const changes = {
      name: name.data,
      enterprise: c.get("session").principal.type === "admin_token"
        ? formText(form, "enterprise") === "on"
        : undefined,
    };
    await authorizeProjectUpdate(sql, c.get("session").principal, hashid, changes);
    await updateProject(sql, hashid, changes, auditOf(c));
    return c.redirect(`${BASE}/projects/${encodeURIComponent(hashid)}?saved=1`, 303);
  });

  // GET /dashboard/projects/:hashid/regenerate-key – asks before replacing the key
  app.get("/projects/:hashid/regenerate-key", async (c) => {
    const project = await getProjectOrThrow(sql, c.req.param("hashid"));
    return page(c, <RegenerateKeyPage session={c.get("session")} project={project} />);
  });

  // POST /dashboard/projects/:hashid/regenerate-key – new key, shown once; the old one stops
  app.post("/projects/:hashid/regenerate-key", async (c) => {
    const hashid = c.req.param("hashid");
    const projectKey = await regenerateProjectKey(sql, hashid, auditOf(c));
    const project = await getProjectOrThrow(sql, hashid);
    return page(
      c,
      <ProjectPage
        session={c.get("session")}
        project={project}
        projectKey={projectKey}
        notice="The project key was replaced; the old one no longer works."
      />,
    );
  });
}
