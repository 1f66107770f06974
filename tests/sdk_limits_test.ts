// The project key's writes are bounded (services/sdk_limits.ts): generate_link (REST and
// GraphQL) and events count per project key and per client address over a sliding minute in
// PostgreSQL; over a limit 503 rate_limited with Retry-After, nothing written, the refusal
// logged; limits set per project through the admin API; lookups and the link host unlimited.
// Time moves with the injectable clock only.
import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import { gql } from "./helpers/graphql.ts";
import { sdkHeaders } from "./helpers/sdk.ts";
import {
  adminHeaders,
  assertError,
  call,
  createProject,
  serveApp,
  startTestServer,
} from "./helpers/server.ts";
import { createLogger } from "../infra/log.ts";
import { purgeExpired } from "../services/feed/retention.ts";
import {
  DEFAULT_SDK_WRITES_PER_ADDRESS,
  DEFAULT_SDK_WRITES_PER_KEY,
} from "../services/projects/sdk_limits.ts";

const clock = new ManualClock("2026-05-01T10:00:00Z");
const lines: string[] = [];
const srv = await startTestServer({
  clock,
  // The client address is X-Forwarded-For's last entry, so one test plays several clients.
  config: { TRUST_PROXY: "true" },
  logger: createLogger("warn", (l) => lines.push(l)),
});
Deno.test.afterAll(() => srv.close());

const from = (address: string) => ({ "X-Forwarded-For": address });

async function limited(per_key: number, per_address: number) {
  const p = await createProject(srv.url, { name: "Limited" });
  const res = await call(srv.url, "PATCH", `/api/v1/admin/projects/${p.hashid}`, {
    headers: adminHeaders,
    body: { sdk_limits: { per_key, per_address } },
  });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body.project.sdk_limits, { per_key, per_address });
  return p;
}

function events(n: number) {
  return Array.from(
    { length: n },
    () => ({ type: "open", occurred_at: clock.now().toISOString() }),
  );
}

function send(key: string, n: number, address: string, environment = "production") {
  return call(srv.url, "POST", "/api/v1/sdk/events", {
    headers: { ...sdkHeaders(key, environment), ...from(address) },
    body: { events: events(n) },
  });
}

function generate(key: string, address: string) {
  return call(srv.url, "POST", "/api/v1/sdk/generate_link", {
    headers: { ...sdkHeaders(key, "production"), ...from(address) },
    body: { title: "t" },
  });
}

async function stored(hashid: string): Promise<number> {
  const [row] = await srv.sql<{ n: number }[]>`
    select count(*)::int as n from analytics_events a
      join environments e on e.id = a.environment_id
      join projects p on p.id = e.project_id
    where p.hashid = ${hashid}
  `;
  return row!.n;
}

Deno.test("a project has the default limits until it sets its own; null returns to them", async () => {
  const p = await createProject(srv.url);
  const get = () =>
    call(srv.url, "GET", `/api/v1/admin/projects/${p.hashid}`, { headers: adminHeaders });
  assert.deepEqual((await get()).body.project.sdk_limits, {
    per_key: DEFAULT_SDK_WRITES_PER_KEY,
    per_address: DEFAULT_SDK_WRITES_PER_ADDRESS,
  });
  const patch = (body: unknown) =>
    call(srv.url, "PATCH", `/api/v1/admin/projects/${p.hashid}`, { headers: adminHeaders, body });
  assert.equal((await patch({ sdk_limits: { per_address: 5000 } })).status, 200);
  assert.deepEqual((await get()).body.project.sdk_limits, {
    per_key: DEFAULT_SDK_WRITES_PER_KEY,
    per_address: 5000,
  });
  assert.equal((await patch({ sdk_limits: { per_address: null } })).status, 200);
  assert.equal((await get()).body.project.sdk_limits.per_address, DEFAULT_SDK_WRITES_PER_ADDRESS);
  // Below a full batch of events, not a whole number, or unknown: 400, nothing changed.
  for (const bad of [{ per_key: 999 }, { per_key: 1500.5 }, { per_key: "2000" }, { other: 1 }]) {
    assertError(await patch({ sdk_limits: bad }), 400, "invalid_field", /sdk_limits/);
  }
  assert.equal((await get()).body.project.sdk_limits.per_key, DEFAULT_SDK_WRITES_PER_KEY);
});

Deno.test("events over the per-address limit: 503 rate_limited with Retry-After, nothing stored, logged", async () => {
  const p = await limited(10_000, 2000);
  const a = "203.0.113.7";
  assert.equal((await send(p.key, 1000, a)).status, 202);
  assert.equal((await send(p.key, 1000, a)).status, 202);
  // The development environment shares the key's limits.
  const over = await send(p.key, 1, a, "development");
  assertError(over, 503, "rate_limited", /from this address/);
  // This minute's 2,000 must fade by one write's worth into the next minute: 60 s and a bit.
  assert.equal(over.headers.get("retry-after"), "61");
  assert.equal(await stored(p.hashid), 2000);
  // Another address of the same key is counted on its own; an IPv6 /64 is one address.
  assert.equal((await send(p.key, 1000, "2001:db8:1:2::1")).status, 202);
  assert.equal((await send(p.key, 1000, "2001:db8:1:2::ffff")).status, 202);
  assertError(await send(p.key, 1, "2001:db8:1:2:abcd::9"), 503, "rate_limited");
  assert.equal((await send(p.key, 1000, "2001:db8:1:3::1")).status, 202);
  // The refusals are in the log, counted, without the address.
  const logged = lines.map((l) => JSON.parse(l)).filter((l) =>
    l.msg === "sdk writes refused over the limit" && l.project === p.hashid
  );
  assert.deepEqual(logged.map((l) => [l.scope, l.limit, l.refused_this_minute]), [
    ["address", 2000, 1],
    ["address", 2000, 1],
  ]);
  assert.ok(!lines.some((l) => l.includes("203.0.113.7") || l.includes("2001:db8")));
  // Nor in the database: the address is counted under a keyed digest.
  const [kept] = await srv.sql<{ n: number }[]>`
    select count(*)::int as n from sdk_rate_counts
    where address like '%203.0.113%' or address like '%2001:db8%'`;
  assert.equal(kept!.n, 0);
  // Refused requests do not count: a minute later the address writes again.
  clock.advance(60_000);
  assertError(await send(p.key, 1000, a), 503, "rate_limited");
  clock.advance(60_000);
  assert.equal((await send(p.key, 1000, a)).status, 202);
});

Deno.test("the per-key limit holds across addresses and instances; a sliding minute, not a fixed one", async () => {
  clock.set("2026-05-01T11:00:30Z");
  const p = await limited(3000, 10_000);
  const other = serveApp(srv.db, { clock, config: { TRUST_PROXY: "true" } });
  try {
    assert.equal((await send(p.key, 1000, "198.51.100.1")).status, 202);
    assert.equal(
      (await call(other.url, "POST", "/api/v1/sdk/events", {
        headers: { ...sdkHeaders(p.key, "production"), ...from("198.51.100.2") },
        body: { events: events(1000) },
      })).status,
      202,
    );
    assert.equal((await send(p.key, 999, "198.51.100.3")).status, 202);
    // 2,999 written: a link still fits, a second one does not (on either instance).
    assert.equal((await generate(p.key, "198.51.100.4")).status, 200);
    const refused = await call(other.url, "POST", "/api/v1/sdk/generate_link", {
      headers: { ...sdkHeaders(p.key, "production"), ...from("198.51.100.5") },
      body: {},
    });
    assertError(refused, 503, "rate_limited", /for this project key/);
    // 30 s later the minute has turned, but the last 60 s still hold the 3,000 writes.
    clock.advance(30_000);
    const still = await generate(p.key, "198.51.100.6");
    assertError(still, 503, "rate_limited");
    assert.ok(Number(still.headers.get("retry-after")) >= 1);
    // Half of the previous minute has left the window: 1,500 of its writes still count.
    clock.advance(30_000);
    assert.equal((await send(p.key, 1000, "198.51.100.7")).status, 202);
    assertError(await send(p.key, 1000, "198.51.100.8"), 503, "rate_limited");
  } finally {
    await other.close();
  }
});

Deno.test("GraphQL generateLink counts as REST's does; lookups, metrics and the link host are not limited", async () => {
  clock.set("2026-05-01T12:00:00Z");
  const p = await limited(1000, 1000);
  assert.equal((await send(p.key, 999, "192.0.2.1")).status, 202);
  const mutation = 'mutation { generateLink(input: { title: "g" }) { url link { path } } }';
  const headers = { ...sdkHeaders(p.key, "production"), ...from("192.0.2.2") };
  const first = await gql(srv.url, mutation, { headers });
  assert.equal(first.errors, undefined, JSON.stringify(first.errors));
  const path = first.data.generateLink.link.path;
  const second = await gql(srv.url, mutation, { headers });
  assert.equal(second.errors?.[0]?.extensions?.code, "RATE_LIMITED");
  assert.ok(second.errors[0].extensions.retryAfter >= 1);
  assertError(await generate(p.key, "192.0.2.3"), 503, "rate_limited");
  // Reads go on: the lookup, GraphQL's link, metrics and the link host.
  for (let i = 0; i < 3; i++) {
    const lookup = await call(srv.url, "GET", `/api/v1/sdk/link/${path}`, { headers });
    assert.equal(lookup.status, 200);
    assert.equal(
      (await gql(srv.url, `{ link(path: "${path}") { path } }`, { headers })).data
        .link.path,
      path,
    );
    assert.equal(
      (await call(srv.url, "GET", "/api/v1/sdk/metrics_for_project", { headers })).status,
      200,
    );
    const host = await call(srv.url, "GET", `/${path}`, {
      headers: { "User-Agent": "Mozilla/5.0" },
    });
    assert.equal(host.status, 200);
  }
  // A wrong key is still 401, a bad ENVIRONMENT 400: refused before any count.
  assertError(
    await call(srv.url, "POST", "/api/v1/sdk/events", {
      headers: sdkHeaders("pk_wrongwrongwrongwrongwrongwrongwrong", "production"),
      body: { events: events(1) },
    }),
    401,
    "unauthorized",
  );
  assertError(await send(p.key, 1, "192.0.2.9", "test"), 400, "invalid_environment");
});

Deno.test("the retention pass drops the counts of past minutes", async () => {
  clock.set("2026-05-01T13:00:00Z");
  const p = await limited(10_000, 10_000);
  assert.equal((await send(p.key, 10, "192.0.2.50")).status, 202);
  const count = async () =>
    (await srv.sql<{ n: number }[]>`select count(*)::int as n from sdk_rate_counts`)[0]!.n;
  assert.ok(await count() > 0);
  const kept = await purgeExpired(srv.sql, new Date("2026-05-01T13:01:30Z"), 90);
  assert.ok(kept.sdkRateCounts === undefined || kept.sdkRateCounts >= 0);
  const recent = (await srv.sql<{ n: number }[]>`
    select count(*)::int as n from sdk_rate_counts where window_start >= '2026-05-01T13:00:00Z'
  `)[0]!.n;
  assert.ok(recent > 0, "the last two minutes are kept");
  await purgeExpired(srv.sql, new Date("2026-05-01T13:03:00Z"), 90);
  assert.equal(await count(), 0);
});

Deno.test("GraphQL: a project's limits are read on Project.sdkLimits and set with setSdkLimits", async () => {
  const p = await createProject(srv.url);
  const headers = adminHeaders;
  const set = await gql(
    srv.url,
    `mutation($id: ID!) { setSdkLimits(projectId: $id, input: { perKey: 50000, perAddress: null }) {
      id sdkLimits { perKey perAddress } } }`,
    { headers, variables: { id: String(p.testId) } },
  );
  assert.equal(set.errors, undefined, JSON.stringify(set.errors));
  assert.deepEqual(set.data.setSdkLimits, {
    id: p.hashid,
    sdkLimits: { perKey: 50_000, perAddress: DEFAULT_SDK_WRITES_PER_ADDRESS },
  });
  const read = await gql(
    srv.url,
    `query($id: ID!) { environment(projectId: $id) { project { sdkLimits { perKey } } } }`,
    { headers, variables: { id: String(p.productionId) } },
  );
  assert.equal(read.data.environment.project.sdkLimits.perKey, 50_000);
  const rest = await call(srv.url, "GET", `/api/v1/admin/projects/${p.hashid}`, { headers });
  assert.equal(rest.body.project.sdk_limits.per_key, 50_000);
  const bad = await gql(
    srv.url,
    `mutation($id: ID!) { setSdkLimits(projectId: $id, input: { perKey: 10 }) { id } }`,
    { headers, variables: { id: String(p.testId) } },
  );
  assert.equal(bad.errors?.[0]?.extensions?.code, "BAD_USER_INPUT");
  assert.match(bad.errors[0].message, /input\.perKey/);
});
