import { assertError } from "./helpers/server.ts";
// Client input at the edges of what the service can store or serve: each gets a clear 4xx (or
// the documented answer), never a 500.
import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import { getHostedLink } from "../services/links/links.ts";
import { silentLogger } from "./helpers/clock.ts";
import { ViewRecorder } from "../services/link_host/view_recorder.ts";
import { gql } from "./helpers/graphql.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());
const project = await createProject(srv.url);
const sdk = { "PROJECT-KEY": project.key, "ENVIRONMENT": "production" };

Deno.test("redirect URLs are stored normalised, so any of them can go in a Location header", async () => {
  const made = await call(srv.url, "POST", "/api/v1/sdk/generate_link", {
    headers: sdk,
    body: { desktop_custom_redirect: { url: "https://例え.jp/日本?q=ä" } },
  });
  assert.equal(made.status, 200, made.text);
  const path = new URL(made.body.link).pathname.slice(1);
  const hit = await call(srv.url, "GET", `/${path}`, { headers: { "User-Agent": "Firefox" } });
  assert.equal(hit.status, 302);
  assert.equal(
    hit.headers.get("location"),
    "https://xn--r8jz45g.jp/%E6%97%A5%E6%9C%AC?q=%C3%A4",
  );
  for (
    const url of ["https://a.example/x\ny", "https://a.example/\u0000", "https://a.example/\ud800"]
  ) {
    assertError(
      await call(srv.url, "POST", "/api/v1/sdk/generate_link", {
        headers: sdk,
        body: { ios_custom_redirect: { url } },
      }),
      400,
      "invalid_field",
    );
    assertError(
      await call(srv.url, "POST", "/api/v1/sdk/generate_link", {
        headers: sdk,
        body: { image: url },
      }),
      400,
      "invalid_field",
    );
  }
});

Deno.test("admin: NUL characters in paths and names are a 404 or a 400, not a 500", async () => {
  for (
    const [method, path] of [
      ["GET", "/api/v1/admin/projects/%00"],
      ["PATCH", "/api/v1/admin/projects/%00"],
      ["POST", "/api/v1/admin/projects/%00/regenerate_key"],
    ] as const
  ) {
    assertError(
      await call(srv.url, method, path, {
        headers: adminHeaders,
        body: method === "GET" ? undefined : { enterprise: true },
      }),
      404,
      "not_found",
    );
  }
  assertError(
    await call(srv.url, "POST", "/api/v1/admin/projects", {
      headers: adminHeaders,
      body: { name: "a\u0000b" },
    }),
    400,
    "invalid_field",
  );
  assertError(
    await call(srv.url, "POST", `/api/v1/projects/${project.productionId}/event_stream_tokens`, {
      headers: adminHeaders,
      body: { name: "a\u0000b" },
    }),
    400,
    "invalid_field",
  );
  assertError(
    await call(srv.url, "POST", `/api/v1/projects/${project.productionId}/destinations`, {
      headers: adminHeaders,
      body: { url: "https://a.example/\u0000" },
    }),
    400,
    "invalid_field",
  );
});

Deno.test("export: dates PostgreSQL cannot hold are a 400 before the stream starts", async () => {
  const ranges: [string, string][] = [
    ["0000-01-01", "0000-01-15"],
    ["9999-12-31T00:00:00Z", "9999-12-31T23:59:59-05:00"],
  ];
  for (const [from, to] of ranges) {
    const res = await call(
      srv.url,
      "GET",
      `/api/v1/projects/${project.productionId}/export?from=${encodeURIComponent(from)}&to=${
        encodeURIComponent(to)
      }`,
      { headers: adminHeaders },
    );
    assertError(res, 400, "invalid_field");
  }
});

Deno.test("link host: paths of several segments, and the root, get the HTML 404", async () => {
  for (const path of ["/", "/abc/", "/abc/def"]) {
    const res = await call(srv.url, "GET", path);
    assert.equal(res.status, 404, path);
    assert.match(res.headers.get("content-type") ?? "", /text\/html/);
  }
  assertError(await call(srv.url, "GET", "/api/nothing/here"), 404, "not_found");
});

Deno.test("GraphQL: variables of the wrong type are BAD_USER_INPUT, not an internal error", async () => {
  const mutation = `mutation($i: GenerateLinkInput!) { generateLink(input: $i) { url } }`;
  for (const data of ["x", [1]]) {
    const r = await gql(srv.url, mutation, { headers: sdk, variables: { i: { data } } });
    assert.equal(r.errors?.[0].extensions.code, "BAD_USER_INPUT", JSON.stringify(r.errors));
  }
  const res = await call(srv.url, "GET", "/graphql?query=%7B__typename%7D&variables=%7Bbad", {
    headers: { Accept: "application/json" },
  });
  assert.ok(res.status < 500, `${res.status} ${res.text}`);
  assert.ok(!res.text.includes("INTERNAL_SERVER_ERROR"), res.text);
});

Deno.test("ViewRecorder.flush(timeout) returns at its timeout while the database stays away", async () => {
  const created = await call(srv.url, "POST", "/api/v1/sdk/generate_link", {
    headers: sdk,
    body: {},
  });
  const link = (await getHostedLink(
    srv.sql,
    { name: "lnk.example.test", isDefault: true },
    new URL(created.body.link).pathname.slice(1),
  ))!;
  // A database that does not answer: the first write waits until the test lets it fail; every
  // later one fails at once.
  const refused = () => Object.assign(new Error("gone"), { code: "ECONNREFUSED" });
  let letFail!: () => void;
  const away = new Promise<never>((_, reject) => (letFail = () => reject(refused())));
  away.catch(() => {}); // handled by the write that awaits it, whenever that comes
  let attempts = 0;
  const dead = new Proxy(srv.sql, {
    get(target, key, receiver) {
      if (key === "begin") return () => ++attempts === 1 ? away : Promise.reject(refused());
      return Reflect.get(target, key, receiver);
    },
  });
  const recorder = new ViewRecorder(
    dead,
    { clock: new ManualClock(), linkBaseUrl: "http://x", logger: silentLogger },
    1,
  );
  recorder.record(link, "ios");
  const timeoutMs = 100;
  const started = performance.now();
  // A flush that ignored its timeout would wait for the write: the guard fails it instead.
  let guard: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    recorder.flush(timeoutMs).then(() => "returned"),
    new Promise((r) => (guard = setTimeout(() => r("still waiting"), 5_000))),
  ]);
  clearTimeout(guard);
  const took = performance.now() - started;
  try {
    assert.equal(outcome, "returned");
    // It returned by its timeout, not because the write was over: that is still waiting.
    assert.ok(took >= timeoutMs - 5, `returned after ${took} ms`);
    assert.equal(attempts, 1);
  } finally {
    letFail();
  }
  // Once the database refuses, the batch is retried, then dropped: the recorder is idle again.
  await recorder.flush();
  assert.equal(attempts, 30);
});

Deno.test({
  name: "ingestion: concurrent batches carrying the same ids in opposite orders both succeed",
  // PGlite runs one transaction at a time: there is nothing to race there.
  ignore: !Deno.env.get("DATABASE_URL"),
  async fn() {
    const { serveApp } = await import("./helpers/server.ts");
    const other = serveApp(srv.db, { clock: srv.clock });
    try {
      const at = srv.clock.now().toISOString();
      for (let round = 0; round < 6; round++) {
        const events = Array.from({ length: 200 }, (_, i) => ({
          id: `race-${round}-${i}`,
          type: "open",
          occurred_at: at,
        }));
        const [a, b] = await Promise.all([
          call(srv.url, "POST", "/api/v1/sdk/events", { headers: sdk, body: { events } }),
          call(other.url, "POST", "/api/v1/sdk/events", {
            headers: sdk,
            body: { events: [...events].reverse() },
          }),
        ]);
        assert.equal(a.status, 202, a.text);
        assert.equal(b.status, 202, b.text);
        assert.equal(a.body.accepted + b.body.accepted, 200);
        assert.equal(a.body.duplicates + b.body.duplicates, 200);
      }
    } finally {
      await other.close();
    }
  },
});
