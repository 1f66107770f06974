// Every dashboard page and form, role by role, in a real Chromium: a viewer, an editor, an admin
// and an owner of a project, and the instance admin, each signed in, open every page and must
// see exactly the controls their role may use, and be refused (403) the pages it does not open.
// What each role may do is read from the table in docs/access.md ("Who may do what"), the
// people's own documentation, not from services/access/permissions.ts: a control shown to the
// wrong role, or a doc that disagrees with the dashboard, fails here.
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { checkPage, launchBrowser, test } from "./helpers/browser.ts";
import { ManualClock } from "./helpers/clock.ts";
import { addPerson, type Person } from "./helpers/dashboard.ts";
import {
  ADMIN_TOKEN,
  adminHeaders,
  call,
  createProject,
  startTestServer,
} from "./helpers/server.ts";

const ROLES = ["viewer", "editor", "admin", "owner", "instance admin"] as const;
type Role = (typeof ROLES)[number];

/** docs/access.md's "Who may do what": each operation's text and the least role it needs. */
async function documentedTable(): Promise<Map<string, Role>> {
  const text = await Deno.readTextFile(new URL("../docs/access.md", import.meta.url));
  const section = text.split("## Who may do what")[1]!.split("\n## ")[0]!;
  const rows = section.split("\n").filter((l) => l.startsWith("|")).slice(2);
  const table = new Map<string, Role>();
  for (const row of rows) {
    const [operation, role] = row.split("|").slice(1, 3).map((c) => c.trim()) as [string, string];
    assert.ok((ROLES as readonly string[]).includes(role), `docs/access.md: role "${role}"`);
    table.set(operation, role as Role);
  }
  return table;
}

/** A row of the documented table, by its operation text (exactly as the doc words it). */
const READ_LINKS = "read links (the list and the CSV export)";
const ANALYTICS = "link metrics, events per day, analytics";
const WRITE_LINKS = "create, edit, activate, archive and import links";
const DELETE_LINKS = "delete links";
const EVENTS = "the history export, live events";
const PROJECT_AUDIT = "the project's audit log";
const ADMIN_THINGS =
  "feed tokens, destinations, API keys, the project key, the link domain and apps";
const SEE_PROJECT = "see the project and its settings";
const MEMBERS = "members with roles below owner";
const OWNERS = "owners, renaming or deleting the project";
const INSTANCE =
  "creating and listing every project, Enterprise, accounts, exchange rates, the instance's log";

interface Screen {
  /** Where it is, below the server's URL. */
  path: string;
  /** The operation that opens the page (a 403 for anyone below it). */
  opens: string;
  /** Each control on the page: a selector and the operation it performs. */
  controls: [string, string][];
  /** Checked for labels and overflow and shot at both widths, per role. */
  shoot?: string;
}

function screens(hashid: string, envId: number, owner: Person, viewer: Person): Screen[] {
  const project = `/dashboard/projects/${hashid}`;
  const env = `/dashboard/environments/${envId}`;
  const link = `${env}/links/spring-sale`;
  const tabs = (): [string, string][] => [
    [`nav.tabs a[href='${env}/links']`, READ_LINKS],
    [`nav.tabs a[href='${env}/metrics']`, ANALYTICS],
    [`nav.tabs a[href='${env}/live']`, EVENTS],
    [`nav.tabs a[href='${env}/export']`, EVENTS],
    [`nav.tabs a[href='${env}/tokens']`, ADMIN_THINGS],
    [`nav.tabs a[href='${env}/destinations']`, ADMIN_THINGS],
    [`nav.tabs a[href='${env}/api-keys']`, ADMIN_THINGS],
  ];
  return [
    {
      path: "/dashboard",
      opens: SEE_PROJECT,
      controls: [
        [`a[href='${project}']`, SEE_PROJECT],
        ["form[action='/dashboard/projects']", INSTANCE],
        ["nav.top-nav a[href='/dashboard/accounts']", INSTANCE],
        ["nav.top-nav a[href='/dashboard/audit']", INSTANCE],
      ],
    },
    {
      path: project,
      opens: SEE_PROJECT,
      controls: [
        [`#env-production ~ ul a[href='${env}/links']`, READ_LINKS],
        [`#env-production ~ ul a[href='${env}/metrics']`, ANALYTICS],
        [`#env-production ~ ul a[href='${env}/live']`, EVENTS],
        [`#env-production ~ ul a[href='${env}/export']`, EVENTS],
        [`#env-production ~ ul a[href='${env}/tokens']`, ADMIN_THINGS],
        [`#env-production ~ ul a[href='${env}/destinations']`, ADMIN_THINGS],
        [`#env-production ~ ul a[href='${env}/api-keys']`, ADMIN_THINGS],
        [`a[href='${project}/members']`, MEMBERS],
        [`a[href='${project}/audit']`, PROJECT_AUDIT],
        [`form[action='${project}'] input[name=name]`, OWNERS],
        [`form[action='${project}'] input[name=enterprise]`, INSTANCE],
        [`a[href='${project}/regenerate-key']`, ADMIN_THINGS],
        [`form[action='${project}/apps'] input[name=link_domain]`, ADMIN_THINGS],
        [`form[action='${project}/sdk_limits'] input[name=per_key]`, ADMIN_THINGS],
      ],
      shoot: "project",
    },
    {
      path: `${env}/links`,
      opens: READ_LINKS,
      controls: [
        ...tabs(),
        [`a[href='${link}']`, READ_LINKS],
        [`a[href='${env}/links/export.csv']`, READ_LINKS],
        [`a[href='${env}/links/new']`, WRITE_LINKS],
        [`form[action='${env}/links/import']`, WRITE_LINKS],
      ],
      shoot: "links",
    },
    {
      path: link,
      opens: READ_LINKS,
      controls: [
        ["#link-url", READ_LINKS],
        [`a[href='${link}/qr.svg?download=1']`, READ_LINKS],
        [`a[href^='${link}/analytics.csv']`, ANALYTICS],
        [`a[href='${link}/edit']`, WRITE_LINKS],
        [`form[action='${link}/archive']`, WRITE_LINKS],
        [`form[action='${link}/active']`, WRITE_LINKS],
        [`a[href='${link}/delete']`, DELETE_LINKS],
      ],
      shoot: "link",
    },
    { path: `${env}/links/new`, opens: WRITE_LINKS, controls: [] },
    { path: `${link}/edit`, opens: WRITE_LINKS, controls: [] },
    { path: `${link}/delete`, opens: DELETE_LINKS, controls: [] },
    {
      path: `${env}/metrics`,
      opens: ANALYTICS,
      controls: [[`a[href^='${env}/metrics/analytics.csv']`, ANALYTICS]],
    },
    { path: `${env}/live`, opens: EVENTS, controls: [] },
    { path: `${env}/export`, opens: EVENTS, controls: [] },
    { path: `${env}/tokens`, opens: ADMIN_THINGS, controls: [] },
    { path: `${env}/destinations`, opens: ADMIN_THINGS, controls: [] },
    { path: `${env}/api-keys`, opens: ADMIN_THINGS, controls: [] },
    { path: `${project}/regenerate-key`, opens: ADMIN_THINGS, controls: [] },
    { path: `${project}/audit`, opens: PROJECT_AUDIT, controls: [] },
    {
      path: `${project}/members`,
      opens: MEMBERS,
      controls: [
        [`form[action='${project}/members'] input[name=email]`, MEMBERS],
        [`a[href='${project}/members/${viewer.accountId}/remove']`, MEMBERS],
        ["#f-role option[value=owner]", OWNERS],
        [`a[href='${project}/members/${owner.accountId}/remove']`, OWNERS],
      ],
      shoot: "members",
    },
    { path: `${project}/members/${viewer.accountId}/remove`, opens: MEMBERS, controls: [] },
    { path: `${project}/members/${owner.accountId}/remove`, opens: OWNERS, controls: [] },
    { path: "/dashboard/audit", opens: INSTANCE, controls: [] },
    {
      path: "/dashboard/accounts",
      opens: INSTANCE,
      controls: [[`a[href='/dashboard/accounts/${viewer.accountId}/remove']`, INSTANCE]],
    },
    { path: `/dashboard/accounts/${viewer.accountId}/remove`, opens: INSTANCE, controls: [] },
  ];
}

async function signIn(page: Page, base: string, who: Person | null): Promise<void> {
  await page.goto(`${base}/dashboard/sign-in`);
  if (who) {
    await page.fill("#f-email", who.email);
    await page.fill("#f-password", who.password);
    await page.click("text=Sign in with email");
  } else {
    await page.fill("#f-token", ADMIN_TOKEN);
    await page.click("#admin-token-sign-in button[type=submit]");
  }
  await page.waitForURL(`${base}/dashboard`);
}

test({
  name: "dashboard roles in Chromium: each role sees exactly the controls docs/access.md gives it",
  async fn() {
    const documented = await documentedTable();
    const least = (operation: string): Role => {
      const role = documented.get(operation);
      assert.ok(role, `docs/access.md has no row "${operation}"`);
      return role;
    };
    const may = (role: Role, operation: string) =>
      ROLES.indexOf(role) >= ROLES.indexOf(least(operation));

    const srv = await startTestServer({ clock: new ManualClock("2026-06-15T12:00:00.000Z") });
    const browser = await launchBrowser();
    try {
      const p = await createProject(srv.url, { name: "Acme Mobile" });
      // Another project, which no member sees.
      await createProject(srv.url, { name: "Someone else's" });
      const made = await call(srv.url, "POST", `/api/v1/projects/${p.productionId}/links`, {
        headers: adminHeaders,
        body: { path: "spring-sale", title: "Spring sale", desktop_url: "https://example.com/" },
      });
      assert.equal(made.status, 201, made.text);
      const person = (name: string, role: string) =>
        addPerson(srv.url, {
          email: `${name.toLowerCase()}@acme.example`,
          name,
          project: p.hashid,
          role,
        });
      // The first member is an owner; then one of each other role.
      const people: Record<Exclude<Role, "instance admin">, Person> = {
        owner: await person("Olivia", "owner"),
        admin: await person("Adam", "admin"),
        editor: await person("Edith", "editor"),
        viewer: await person("Vic", "viewer"),
      };
      const all = screens(p.hashid, p.productionId, people.owner, people.viewer);

      for (const role of ROLES) {
        const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
        const page = await context.newPage();
        const errors: string[] = [];
        page.on("pageerror", (e) => errors.push(e.message));
        await signIn(page, srv.url, role === "instance admin" ? null : people[role]);
        const wrong: string[] = [];
        for (const screen of all) {
          const res = await page.goto(srv.url + screen.path);
          const opens = may(role, screen.opens);
          if (res?.status() !== (opens ? 200 : 403)) {
            wrong.push(`${screen.path}: ${res?.status()}, expected ${opens ? 200 : 403}`);
          }
          for (const [selector, operation] of screen.controls) {
            const shown = await page.locator(selector).count() > 0;
            const expected = opens && may(role, operation);
            if (shown !== expected) {
              wrong.push(
                `${screen.path}: ${selector} (${operation}) ${shown ? "shown" : "missing"}`,
              );
            }
          }
          if (screen.shoot && opens) {
            await checkPage(page, `roles-${role.replace(" ", "-")}-${screen.shoot}`);
          }
        }
        // A member's project list holds their project only.
        if (role !== "instance admin") {
          await page.goto(`${srv.url}/dashboard`);
          assert.deepEqual(await page.locator(".list .title").allTextContents(), ["Acme Mobile"]);
        }
        assert.deepEqual(wrong, [], `${role}: controls that disagree with docs/access.md`);
        assert.deepEqual(errors, [], `${role}: script errors`);
        await context.close();
      }
    } finally {
      await browser.close();
      await srv.close();
    }
  },
});
