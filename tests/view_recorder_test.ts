import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import { createLink, getHostedLink } from "../services/links/links.ts";
import { createLogger } from "../infra/log.ts";
import { ViewRecorder } from "../services/link_host/view_recorder.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";
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

Deno.test("ViewRecorder: a view whose link was deleted before it was written is stored at once, counted nowhere, and the rest of its batch counts", async () => {
  const p = await createProject(srv.url);
  const host = { name: "lnk.example.test", isDefault: true };
  const [gone, kept] = await Promise.all([
    createLink(srv.sql, p.productionId, {}),
    createLink(srv.sql, p.productionId, {}),
  ]);
  // Both read as the link host reads them for a hit; then one is deleted before the write.
  const goneLink = (await getHostedLink(srv.sql, host, gone.path))!;
  const keptLink = (await getHostedLink(srv.sql, host, kept.path))!;
  const deleted = await call(
    srv.url,
    "DELETE",
    `/api/v1/projects/${p.productionId}/links/${gone.path}`,
    {
      headers: adminHeaders,
    },
  );
  assert.equal(deleted.status, 204, deleted.text);
  const lines: string[] = [];
  const logger = createLogger("info", (l) => lines.push(l));
  // A retry would wait a minute: the flush below gives up long before.
  const recorder = new ViewRecorder(
    srv.sql,
    { clock: new ManualClock(), linkBaseUrl: "http://x", logger },
    60_000,
  );
  recorder.record(goneLink, "ios");
  recorder.record(keptLink, "android");
  recorder.record(goneLink, "desktop");
  await recorder.flush(10_000);
  assert.equal(recorder.waiting, 0, lines.join("\n"));
  assert.deepEqual(lines, []);
  assert.equal((await linkMetrics(srv.url, p.key, kept.path)).total_views, 1);
  const rows = await srv.sql<{ link_id: number | null; path: string; platform: string }[]>`
    select link_id, body::jsonb #>> '{link,path}' as path, body::jsonb #>> '{device,platform}' as platform
    from analytics_events
    where environment_id = ${goneLink.environment_id} and type = 'view'
    order by platform`;
  // The history keeps the link as the view was recorded (migration 00031): its id names no link.
  assert.deepEqual([...rows], [
    { link_id: keptLink.id, path: kept.path, platform: "android" },
    { link_id: goneLink.id, path: gone.path, platform: "desktop" },
    { link_id: goneLink.id, path: gone.path, platform: "ios" },
  ]);
  const [counter] = await srv
    .sql`select count(*)::int as n from link_counters where link_id = ${goneLink.id}`;
  assert.equal(counter!.n, 0);
});

Deno.test("views lock a link before its counters, as its deletion does: a deletion while they are written does not deadlock", async () => {
  const p = await createProject(srv.url);
  const created = await createLink(srv.sql, p.productionId, {});
  const link =
    (await getHostedLink(srv.sql, { name: "lnk.example.test", isDefault: true }, created.path))!;
  // A deletion that has taken the link (as its DELETE does first) and is about to cascade to
  // the counters.
  let release!: () => void;
  const released = new Promise<void>((r) => release = r);
  let taken!: () => void;
  const isTaken = new Promise<void>((r) => taken = r);
  const deletion = srv.sql.begin(async (tx) => {
    await tx`select id from links where id = ${link.id} for update`;
    taken();
    await released;
    await tx`delete from links where id = ${link.id}`;
  });
  await isTaken;
  const lines: string[] = [];
  const recorder = new ViewRecorder(
    srv.sql,
    {
      clock: new ManualClock(),
      linkBaseUrl: "http://x",
      logger: createLogger("info", (l) => lines.push(l)),
    },
    60_000,
  );
  recorder.record(link, "ios");
  // The view's write waits for the link...
  for (let i = 0;; i++) {
    const [waiting] = await srv.sql`
      select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and query like '%with batch as%'`;
    if (waiting!.n > 0) break;
    assert.ok(i < 500, "the view's write never waited for the link");
    await new Promise((r) => setTimeout(r, 10));
  }
  // ...without holding its counters, which the deletion's cascade takes next.
  const counters = await srv.sql`
    select link_id from link_counters where link_id = ${link.id} for update nowait`
    .then(
      () => "free",
      (err) => (err as { code?: string }).code === "55P03" ? "held" : Promise.reject(err),
    );
  assert.equal(counters, "free");
  release();
  await deletion;
  await recorder.flush(10_000);
  assert.equal(recorder.waiting, 0, lines.join("\n"));
  assert.deepEqual(lines, []);
  const [view] = await srv.sql`
    select link_id, body::jsonb #>> '{link,path}' as path from analytics_events
    where environment_id = ${link.environment_id} and type = 'view'`;
  assert.deepEqual({ ...view }, { link_id: link.id, path: link.path });
  const [counter] = await srv
    .sql`select count(*)::int as n from link_counters where link_id = ${link.id}`;
  assert.equal(counter!.n, 0);
});
