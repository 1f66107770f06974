// GraphiQL (GET /graphql) and the API reference (GET /docs) in a real Chromium on a closed
// network: every request that is not to the test server is aborted and recorded, and the pages
// must render and work without one.
import assert from "node:assert/strict";
import type { BrowserContext, Page } from "playwright-core";
import {
  launchBrowser,
  screenshot,
  SCREENSHOT_DIR,
  SKIP_BROWSER_TESTS,
  test,
} from "./helpers/browser.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";
import { generateLink } from "./helpers/sdk.ts";

const srv = await startTestServer();
const browser = SKIP_BROWSER_TESTS ? undefined : await launchBrowser();
Deno.test.afterAll(async () => {
  await browser?.close();
  await srv.close();
});

/** A page whose only network is the test server; `outside` lists what it tried to reach. */
async function closedNetworkPage(): Promise<
  { context: BrowserContext; page: Page; outside: string[]; errors: string[] }
> {
  assert.ok(browser, "Chromium is required (apt-get install chromium)");
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const outside: string[] = [];
  const errors: string[] = [];
  await context.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === "127.0.0.1" || url.hostname === "localhost") return route.continue();
    outside.push(url.href);
    return route.abort("internetdisconnected");
  });
  const page = await context.newPage();
  page.on("pageerror", (err) => errors.push(String(err)));
  page.on("console", (msg) => {
    if (msg.type() === "error") errors.push(msg.text());
  });
  return { context, page, outside, errors };
}

/** The editor closes brackets as text arrives: drop whatever it added after the cursor. */
async function deleteAutoClosed(page: Page): Promise<void> {
  await page.keyboard.press("ControlOrMeta+Shift+End");
  await page.keyboard.press("Delete");
}

test("GraphiQL renders offline and runs a query", async () => {
  const project = await createProject(srv.url, { name: "Browser" });
  const path = await generateLink(srv.url, project.key, "production", {
    title: "Offline & <sale>",
  });
  const { context, page, outside, errors } = await closedNetworkPage();
  try {
    const res = await page.goto(`${srv.url}/graphql`);
    assert.equal(res?.status(), 200);
    assert.match(res!.headers()["content-security-policy"] ?? "", /default-src 'self'/);
    await page.locator(".graphiql-query-editor .monaco-editor").first().waitFor();
    assert.equal(await page.title(), "Link and event feed");
    // It opens on the admin graph: a links screen with each link's counters and series.
    const editor = page.locator(".graphiql-query-editor .monaco-editor").first();
    await editor.getByText("query LinksScreen").waitFor();
    await screenshot(page, "graphiql-default-query");

    // The request headers the SDK needs, then the query, typed as a user would.
    await page.getByRole("button", { name: /headers/i }).click();
    await page.locator('.monaco-editor[data-uri$="headers.json"]').click();
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.insertText(
      JSON.stringify({ "PROJECT-KEY": project.key, ENVIRONMENT: "production" }),
    );
    await deleteAutoClosed(page);
    await page.locator(".graphiql-query-editor .monaco-editor").first().click();
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.insertText(`{ link(path: ${JSON.stringify(path)}) { path title } }`);
    await deleteAutoClosed(page);
    // GraphiQL has taken the edit once the default query's name is gone from its tab too.
    await page.getByText("LinksScreen").waitFor({ state: "detached" });
    const answered = page.waitForResponse((r) =>
      r.url().endsWith("/graphql") && r.request().method() === "POST"
    );
    await page.locator(".graphiql-execute-button").click();
    assert.equal((await answered).status(), 200);
    const result = page.locator(".graphiql-response");
    await result.getByText("Offline & <sale>").waitFor();
    // Monaco renders spaces as no-break spaces.
    const shown = JSON.parse((await result.innerText()).replace(/\u00a0/g, " "));
    assert.deepEqual(shown, { data: { link: { path, title: "Offline & <sale>" } } });
    await screenshot(page, "graphiql-offline");

    assert.deepEqual(outside, [], "GraphiQL tried to reach the network");
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test("GraphiQL in a browser signed in to the dashboard runs as the member, a mutation included", async () => {
  const project = await createProject(srv.url, { name: "Session" });
  const person = async (email: string, role: string) => {
    const made = await call(srv.url, "POST", "/api/v1/admin/accounts", {
      headers: adminHeaders,
      body: { email, name: email.split("@")[0] },
    });
    await call(
      srv.url,
      "PUT",
      `/api/v1/admin/projects/${project.hashid}/members/${made.body.account.id}`,
      { headers: adminHeaders, body: { role } },
    );
    return made.body.setup_url as string;
  };
  await person("owner@example.test", "owner");
  const setupUrl = await person("editor@example.test", "editor");
  const { context, page, outside, errors } = await closedNetworkPage();
  try {
    // The editor sets a password, which signs them in (the dashboard's own pages).
    await page.goto(setupUrl);
    await page.fill("input[name=password]", "browser password 0123");
    await page.fill("input[name=confirm]", "browser password 0123");
    await page.click("button[type=submit]");
    await page.waitForURL(/\/dashboard$/);

    await page.goto(`${srv.url}/graphql`);
    await page.locator(".graphiql-query-editor .monaco-editor").first().waitFor();
    // A mutation and a query typed as a user would, with no header pasted anywhere.
    await page.locator(".graphiql-query-editor .monaco-editor").first().click();
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.insertText(
      `mutation { createLink(projectId: "${project.productionId}", input: { title: "From GraphiQL", path: "from-graphiql" }) { path title state } }`,
    );
    await deleteAutoClosed(page);
    await page.getByText("LinksScreen").waitFor({ state: "detached" });
    const answered = page.waitForResponse((r) =>
      r.url().endsWith("/graphql") && r.request().method() === "POST"
    );
    await page.locator(".graphiql-execute-button").click();
    const response = await answered;
    assert.equal(response.status(), 200);
    // The browser sent the cookie and GraphiQL the session's token; no Authorization.
    const sent = await response.request().allHeaders();
    assert.match(sent["cookie"] ?? "", /dashboard_session=/);
    assert.match(sent["x-csrf-token"] ?? "", /^[A-Za-z0-9_-]{43}$/);
    assert.equal(sent["authorization"], undefined);
    const result = page.locator(".graphiql-response");
    await result.getByText("ACTIVE").waitFor();
    const shown = JSON.parse((await result.innerText()).replace(/\u00a0/g, " "));
    assert.deepEqual(shown, {
      data: { createLink: { path: "from-graphiql", title: "From GraphiQL", state: "ACTIVE" } },
    });
    await screenshot(page, "graphiql-session-mutation");
    const [entry] = await srv.sql`
      select actor_type, actor_name, action from audit_log order by id desc limit 1`;
    assert.deepEqual({ ...entry }, {
      actor_type: "account",
      actor_name: "editor",
      action: "link.create",
    });
    assert.deepEqual(outside, [], "GraphiQL tried to reach the network");
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test("the API reference at /docs renders /openapi.json offline", async () => {
  const { context, page, outside, errors } = await closedNetworkPage();
  try {
    const res = await page.goto(`${srv.url}/docs`);
    assert.equal(res?.status(), 200);
    assert.match(res!.headers()["content-security-policy"] ?? "", /default-src 'self'/);
    // Redoc's menu lists the operations; one of them, opened, shows its path.
    await page.getByText("Read the event feed", { exact: false }).first().waitFor({
      timeout: 20_000,
    });
    const text = await page.locator("#reference").innerText();
    assert.match(text, /generate_link/);
    assert.match(text, /event_stream/);
    // The first screen only: the whole reference is some 17,000 pixels tall.
    await Deno.mkdir(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: `${SCREENSHOT_DIR}/api-reference-offline.png` });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: `${SCREENSHOT_DIR}/api-reference-phone.png` });

    assert.deepEqual(outside, [], "the reference tried to reach the network");
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});
