import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import { createLink, getHostedLink } from "../services/links/links.ts";
import { createLogger } from "../infra/log.ts";
import { ViewRecorder } from "../services/link_host/view_recorder.ts";
import { call, createProject, startTestServer } from "./helpers/server.ts";
import { linkMetrics } from "./helpers/sdk.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());

Deno.test("link host: 200 concurrent hits on one link record exactly 200 views", async () => {
  const p = await createProject(srv.url);
  const link = await createLink(srv.sql, p.productionId, {
    ios_custom_redirect: { url: "https://apps.example.com/app" },
  });
  const hits = await Promise.all(
    Array.from(
      { length: 200 },
      () => call(srv.url, "GET", `/${link.path}`, { headers: { "User-Agent": "iPhone" } }),
    ),
  );
  assert.ok(hits.every((h) => h.status === 302));
  await srv.views.flush();
  assert.equal((await linkMetrics(srv.url, p.key, link.path)).total_views, 200);
  const [n] = await srv.sql`
    select count(*)::int as n from analytics_events where link_id = ${link.id} and type = 'view'`;
  assert.equal(n!.n, 200);
});

Deno.test("ViewRecorder keeps views while the database is away and writes them when it is back", async () => {
  const p = await createProject(srv.url);
  const created = await createLink(srv.sql, p.productionId, {});
  const link =
    (await getHostedLink(srv.sql, { name: "lnk.example.test", isDefault: true }, created.path))!;
  const lines: string[] = [];
  const logger = createLogger("info", (l) => lines.push(l));
  // The first two transactions fail as a lost connection would; then the database is back.
  let failures = 2;
  const flaky = new Proxy(srv.sql, {
    get(target, key, receiver) {
      if (key === "begin" && failures > 0) {
        failures--;
        return () => Promise.reject(Object.assign(new Error("gone"), { code: "ECONNRESET" }));
      }
      return Reflect.get(target, key, receiver);
    },
  });
  const recorder = new ViewRecorder(
    flaky,
    { clock: new ManualClock(), linkBaseUrl: "http://x", logger },
    0,
  );
  recorder.record(link, "ios");
  recorder.record(link, "android");
  await recorder.flush();
  assert.equal(failures, 0);
  assert.equal(lines.filter((l) => l.includes("views not recorded yet, retrying")).length, 2);
  assert.equal((await linkMetrics(srv.url, p.key, link.path)).total_views, 2);
});

Deno.test("ViewRecorder: a batch that committed but whose answer was lost is not counted twice when retried", async () => {
  const p = await createProject(srv.url);
  const created = await createLink(srv.sql, p.productionId, {});
  const link =
    (await getHostedLink(srv.sql, { name: "lnk.example.test", isDefault: true }, created.path))!;
  const lines: string[] = [];
  const logger = createLogger("info", (l) => lines.push(l));
  // The first transaction commits, then its connection drops before the answer arrives: the
  // recorder cannot tell it from one that failed, and retries.
  let lost = 1;
  const lossy = new Proxy(srv.sql, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (key !== "begin" || lost === 0) return value;
      return async (...args: unknown[]) => {
        await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        lost--;
        throw Object.assign(new Error("write CONNECTION_CLOSED"), { code: "CONNECTION_CLOSED" });
      };
    },
  });
  const recorder = new ViewRecorder(
    lossy,
    { clock: new ManualClock(), linkBaseUrl: "http://x", logger },
    0,
  );
  recorder.record(link, "ios");
  recorder.record(link, "android");
  recorder.record(link, "desktop");
  await recorder.flush();
  assert.equal(lost, 0);
  assert.equal(lines.filter((l) => l.includes("views not recorded yet, retrying")).length, 1);
  assert.equal((await linkMetrics(srv.url, p.key, link.path)).total_views, 3);
  const [n] = await srv.sql`
    select count(*)::int as n from analytics_events where link_id = ${link.id} and type = 'view'`;
  assert.equal(n!.n, 3);
});
