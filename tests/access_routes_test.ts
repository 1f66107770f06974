// The permission table drives the routes: every registered route has an entry, every entry is a
// registered route, and every route the table gives an operation refuses a caller without
// credentials (so the route does consult the table).
import assert from "node:assert/strict";
import { isOperation, PERMISSIONS, SCOPES } from "../services/access/permissions.ts";
import { ROUTE_ACCESS, routeAccess } from "../services/access/routes.ts";
import { ADMIN_TOKEN_WINDOW_MS } from "../services/access/admin_token_limit.ts";
import { ManualClock } from "./helpers/clock.ts";
import { assertError, call, startTestServer } from "./helpers/server.ts";

// Each wrong token counts towards the admin-token limit: the clock moves every earlier failure
// out of the window before the next route is tried.
const clock = new ManualClock("2026-05-01T08:00:00Z");
const srv = await startTestServer({ clock });
Deno.test.afterAll(() => srv.close());

/** The app's routes, without middleware (registered as ALL on a wildcard). */
function registeredRoutes(): { method: string; path: string }[] {
  const seen = new Map<string, { method: string; path: string }>();
  for (const r of srv.app.routes) {
    if (r.method === "ALL") continue;
    seen.set(`${r.method} ${r.path}`, { method: r.method, path: r.path });
  }
  return [...seen.values()];
}

/** A concrete path for a route pattern: numeric ids, a well-formed hashid, a link path. */
function concrete(path: string): string {
  return path
    .replace(/:project_id/, "1")
    .replace(/:hashid/, "abcdef1234")
    .replace(/:(token_id|destination_id|account_id|key_id|id)/, "1")
    .replace(/:(link_path|path)/, "somepath")
    .replace(/:name/, "app.css")
    .replace(/\*$/, "anything");
}

Deno.test("every registered route has an entry in the access table, and every entry a route", () => {
  const routes = registeredRoutes();
  const missing = routes.filter((r) => routeAccess(r.method, r.path) === undefined)
    .map((r) => `${r.method} ${r.path}`);
  assert.deepEqual(missing, [], "routes without an entry in services/access/routes.ts");
  const registered = new Set(routes.map((r) => `${r.method} ${r.path}`));
  const stale = Object.keys(ROUTE_ACCESS).filter((k) => !registered.has(k));
  assert.deepEqual(stale, [], "entries of services/access/routes.ts that no route has");
});

Deno.test("every operation of the table is a real one, and every scope is used", () => {
  for (const access of Object.values(ROUTE_ACCESS)) {
    assert.ok(
      isOperation(access) ||
        ["public", "sdk", "feed", "graphql", "sign_in", "signed_in", "mcp"].includes(access),
      access,
    );
  }
  const used = new Set(Object.values(PERMISSIONS).map((p) => p.scope));
  for (const scope of SCOPES) assert.ok(used.has(scope), scope);
});

Deno.test("every admin API route the table guards answers 401 without credentials", async () => {
  const guarded = registeredRoutes().filter((r) =>
    r.path.startsWith("/api/v1/") && isOperation(routeAccess(r.method, r.path)!)
  );
  assert.ok(guarded.length >= 15, `only ${guarded.length} guarded routes`);
  for (const r of guarded) {
    const body = r.method === "GET" ? undefined : {};
    const res = await call(srv.url, r.method, concrete(r.path), { body });
    assertError(res, 401, "unauthorized");
    clock.advance(ADMIN_TOKEN_WINDOW_MS + 1000);
    const wrong = await call(srv.url, r.method, concrete(r.path), {
      body,
      headers: { Authorization: "Bearer not-the-admin-token-0000" },
    });
    assertError(wrong, 401, "unauthorized");
  }
});

Deno.test("every dashboard route the table guards sends a browser without a session to sign in", async () => {
  const guarded = registeredRoutes().filter((r) =>
    r.path.startsWith("/dashboard") && routeAccess(r.method, r.path) !== "sign_in"
  );
  assert.ok(guarded.length >= 30, `only ${guarded.length} guarded dashboard routes`);
  for (const r of guarded) {
    const res = await fetch(srv.url + concrete(r.path), {
      method: r.method,
      redirect: "manual",
      headers: r.method === "GET" ? {} : { "Content-Type": "application/x-www-form-urlencoded" },
      body: r.method === "GET" ? undefined : "",
    });
    await res.body?.cancel();
    assert.equal(res.status, 303, `${r.method} ${r.path}`);
    assert.match(res.headers.get("Location") ?? "", /\/dashboard\/sign-in/);
  }
});
