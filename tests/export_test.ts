import { assertError } from "./helpers/server.ts";
// GET /api/v1/projects/:project_id/export: the analytics history as NDJSON, its errors, the
// retention window, and that a paused download does not hold the database.
import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import { residentBytes, sampleMemory, sleep } from "./helpers/client.ts";
import { listening, startService } from "./helpers/process.ts";
import { createTestDatabase } from "./helpers/database.ts";
import { readAll } from "./helpers/feed.ts";
import { ingest } from "./helpers/sdk.ts";
import {
  ADMIN_TOKEN,
  adminHeaders,
  call,
  createFeedToken,
  createProject,
  startTestServer,
} from "./helpers/server.ts";

const NOW = "2026-03-20T12:00:00.000Z";
const clock = new ManualClock(NOW);
const srv = await startTestServer({ clock });
Deno.test.afterAll(() => srv.close());

function exportPath(projectId: number | string, query: Record<string, string | string[]>) {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const v of Array.isArray(value) ? value : [value]) q.append(name, v);
  }
  return `/api/v1/projects/${projectId}/export?${q}`;
}

async function exportLines(
  projectId: number,
  query: Record<string, string | string[]>,
): Promise<{ lines: string[]; headers: Headers }> {
  const res = await call(srv.url, "GET", exportPath(projectId, query), { headers: adminHeaders });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get("content-type"), "application/x-ndjson; charset=UTF-8");
  assert.ok(res.text === "" || res.text.endsWith("\n"));
  return { lines: res.text.split("\n").filter((l) => l !== ""), headers: res.headers };
}

const at = (iso: string) => new Date(iso).toISOString();

Deno.test("export: the whole history in [from, to), before and after capture, in occurred_at order", async () => {
  const p = await createProject(srv.url);
  // Before capture starts (no token yet): stored in the history, never in the feed.
  await ingest(srv.url, p.key, "production", [
    { type: "install", occurred_at: "2026-03-10T00:00:00Z" },
    { type: "open", occurred_at: "2026-03-05T00:00:00Z" },
    { type: "install", occurred_at: "2026-03-01T00:00:00Z" }, // == from: included
    { type: "install", occurred_at: "2026-02-28T23:59:59.999Z" }, // before from
  ]);
  const token = await createFeedToken(srv.url, p.productionId);
  await ingest(srv.url, p.key, "production", [
    {
      type: "purchase",
      name: "purchase",
      occurred_at: "2026-03-12T00:00:00Z",
      purchase: {
        transaction_id: "t1",
        version: 1,
        amount: 499,
        currency: "EUR",
        product_id: "pro",
        store: "app_store",
      },
    },
    { type: "install", occurred_at: "2026-03-15T00:00:00Z" }, // == to: excluded
  ]);
  // The other environment's history is not this export's.
  await ingest(srv.url, p.key, "development", [
    { type: "install", occurred_at: "2026-03-06T00:00:00Z" },
  ]);

  const { lines, headers } = await exportLines(p.productionId, {
    from: "2026-03-01T00:00:00Z",
    to: "2026-03-15T00:00:00Z",
  });
  const events = lines.map((l) => JSON.parse(l));
  assert.deepEqual(events.map((e) => [e.type, e.occurred_at]), [
    ["install", at("2026-03-01T00:00:00Z")],
    ["open", at("2026-03-05T00:00:00Z")],
    ["install", at("2026-03-10T00:00:00Z")],
    ["purchase", at("2026-03-12T00:00:00Z")],
  ]);
  for (const e of events) {
    assert.equal(e.schema_version, 1);
    assert.deepEqual(e.project, { id: p.hashid, test: false });
  }
  // 90 days (the default window) before NOW.
  assert.equal(headers.get("retained-since"), at("2025-12-20T12:00:00Z"));

  // A captured event's line is its feed envelope, byte for byte.
  const feed = await readAll(srv.url, p.productionId, token.value);
  assert.equal(feed.events.length, 2);
  const purchaseLine = lines.find((l) => l.includes('"type":"purchase"'))!;
  assert.deepEqual(JSON.parse(purchaseLine), feed.events[0]);
  const [stored] = await srv.sql<{ body: string }[]>`
    select body from analytics_events where event_id = ${feed.events[0]!.id}
  `;
  assert.equal(purchaseLine, stored!.body);

  // event_types[] filters; an offset other than Z and a bare date are ISO 8601 too.
  const filtered = await exportLines(p.productionId, {
    from: "2026-03-05T01:00:00+01:00",
    to: "2026-03-13",
    "event_types[]": ["purchase", "open", "purchase"],
  });
  assert.deepEqual(filtered.lines.map((l) => JSON.parse(l).type), ["open", "purchase"]);

  const test = await exportLines(p.testId, { from: "2026-03-01", to: "2026-03-20" });
  assert.equal(test.lines.length, 1);
  assert.equal(JSON.parse(test.lines[0]!).project.test, true);
});

Deno.test("export: thousands of events with equal occurred_at cross batches exactly once", async () => {
  const p = await createProject(srv.url);
  const sent: string[] = [];
  for (let batch = 0; batch < 3; batch++) {
    const events = Array.from({ length: 900 }, (_, i) => {
      const id = `c${batch}-${i}`;
      sent.push(id);
      // Three timestamps only: most rows tie on occurred_at, across batch boundaries.
      return { id, type: "custom", name: id, occurred_at: `2026-03-0${1 + (i % 3)}T00:00:00Z` };
    });
    await ingest(srv.url, p.key, "production", events);
  }
  const { lines } = await exportLines(p.productionId, { from: "2026-03-01", to: "2026-03-04" });
  const names = lines.map((l) => JSON.parse(l).name as string);
  assert.equal(names.length, sent.length);
  assert.deepEqual([...new Set(names)].sort(), [...sent].sort());
  const times = lines.map((l) => JSON.parse(l).occurred_at as string);
  assert.deepEqual(times, [...times].sort());
});

Deno.test("export: errors in order 401, 400 naming the parameter, 404; nothing is streamed", async () => {
  const p = await createProject(srv.url);
  const ok = { from: "2026-03-01T00:00:00Z", to: "2026-03-02T00:00:00Z" };
  const get = (
    projectId: number | string,
    query: Record<string, string | string[]>,
    headers = adminHeaders,
  ) => call(srv.url, "GET", exportPath(projectId, query), { headers });

  assertError(await get(p.productionId, ok, {} as typeof adminHeaders), 401, "unauthorized");
  assertError(
    await get(p.productionId, ok, { Authorization: "Bearer nope-nope-nope-nope" }),
    401,
    "unauthorized",
  );
  // A feed token is not an admin token.
  const token = await createFeedToken(srv.url, p.productionId);
  assertError(
    await get(p.productionId, ok, { Authorization: `Bearer ${token.value}` }),
    401,
    "unauthorized",
  );

  const cases: [Record<string, string | string[]>, string, RegExp][] = [
    [{ to: ok.to }, "invalid_field", /^from: required/],
    [{ from: ok.from }, "invalid_field", /^to: required/],
    [{ from: "", to: ok.to }, "invalid_field", /^from: required/],
    [{ from: "yesterday", to: ok.to }, "invalid_field", /^from: must be an ISO 8601/],
    [{ from: "2026-03-01T00:00:00", to: ok.to }, "invalid_field", /^from: must be an ISO 8601/],
    [{ from: "1740787200", to: ok.to }, "invalid_field", /^from: must be an ISO 8601/],
    [{ from: ok.from, to: "2026-13-01" }, "invalid_field", /^to: must be an ISO 8601/],
    [{ from: ok.from, to: ok.from }, "invalid_field", /^to: must be later than from/],
    [{ from: ok.to, to: ok.from }, "invalid_field", /^to: must be later than from/],
    [
      { from: "2026-02-01T00:00:00Z", to: "2026-03-04T00:00:00.001Z" },
      "invalid_field",
      /^to: must be at most 31 days after from/,
    ],
    [{ ...ok, "event_types[]": ["install", "bogus"] }, "invalid_event_type", /event_types\[\]/],
  ];
  for (const [query, code, message] of cases) {
    const res = await get(p.productionId, query);
    assertError(res, 400, code, message);
  }
  // Exactly 31 days is allowed.
  assert.equal(
    (await get(p.productionId, { from: "2026-02-01T00:00:00Z", to: "2026-03-04T00:00:00Z" }))
      .status,
    200,
  );
  for (const id of ["999999", "0", "abc", "-1"]) {
    assertError(await get(id, ok), 404, "not_found");
  }
  // Parameters are checked before the project.
  assertError(await get("999999", { from: "x", to: ok.to }), 400, "invalid_field");
});

Deno.test("export: the retention window goes by reception, like the purge; an older from is allowed", async () => {
  const p = await createProject(srv.url);
  // Received at NOW, whatever their occurred_at.
  await ingest(srv.url, p.key, "production", [
    { type: "install", occurred_at: "2026-03-18T00:00:00Z" },
    { type: "open", occurred_at: "2026-03-19T00:00:00Z" },
  ]);
  const range = { from: "2026-03-01T00:00:00Z", to: "2026-03-25T00:00:00Z" };
  try {
    // 89 days on, the window starts a day before NOW: both events are still retained, though
    // they occurred before the window's start (an occurred_at clamp would lose them).
    clock.advance(89 * 86_400_000);
    const within = await exportLines(p.productionId, range);
    assert.equal(within.lines.length, 2);
    assert.equal(within.headers.get("retained-since"), at("2026-03-19T12:00:00Z"));
    // 91 days on they are outside the window, purged or not.
    clock.advance(2 * 86_400_000);
    assert.deepEqual((await exportLines(p.productionId, range)).lines, []);
  } finally {
    clock.set(NOW);
  }
});

Deno.test("export: a paused download holds no connection; other requests go on (embedded: one connection)", async () => {
  const p = await createProject(srv.url);
  const events = Array.from({ length: 1000 }, (_, i) => ({
    type: "install",
    occurred_at: new Date(Date.parse("2026-03-02T00:00:00Z") + i * 1000).toISOString(),
    device: { model: "x".repeat(200) },
  }));
  for (let i = 0; i < 4; i++) await ingest(srv.url, p.key, "production", events);
  const res = await fetch(
    srv.url + exportPath(p.productionId, { from: "2026-03-01", to: "2026-03-03" }),
    { headers: adminHeaders },
  );
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  const first = await reader.read();
  assert.ok(first.value && first.value.length > 0);
  // The download is paused: the database must still answer everyone else.
  const started = performance.now();
  for (let i = 0; i < 5; i++) {
    const other = await call(srv.url, "GET", `/api/v1/admin/projects/${p.hashid}`, {
      headers: adminHeaders,
    });
    assert.equal(other.status, 200);
    await ingest(srv.url, p.key, "production", [
      { type: "open", occurred_at: "2026-03-10T00:00:00Z" },
    ]);
  }
  assert.ok(performance.now() - started < 10_000);
  let bytes = first.value.length;
  let lines = new TextDecoder().decode(first.value).split("\n").length - 1;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    bytes += value.length;
    lines += new TextDecoder().decode(value).split("\n").length - 1;
  }
  assert.equal(lines, 4000);
  assert.ok(bytes > 4000 * 200);
});

Deno.test("export: a download abandoned halfway leaves the server answering", async () => {
  const p = await createProject(srv.url);
  const events = Array.from({ length: 1000 }, (_, i) => ({
    type: "open",
    occurred_at: new Date(Date.parse("2026-03-03T00:00:00Z") + i).toISOString(),
  }));
  for (let i = 0; i < 3; i++) await ingest(srv.url, p.key, "production", events);
  const controller = new AbortController();
  const res = await fetch(
    srv.url + exportPath(p.productionId, { from: "2026-03-01", to: "2026-03-04" }),
    { headers: adminHeaders, signal: controller.signal },
  );
  const reader = res.body!.getReader();
  await reader.read();
  controller.abort();
  await reader.closed.catch(() => {});
  const after = await exportLines(p.productionId, { from: "2026-03-01", to: "2026-03-04" });
  assert.equal(after.lines.length, 3000);
});

const BIG_EXPORT_ROWS = 500_000;
/** How much the server's RSS may grow while the consumer of the export stalls. */
const STALLED_CEILING = 48 * 1024 * 1024;
/**
 * How much it may grow over the whole export under a fast consumer. This is garbage the
 * runtime collects lazily (V8's young generation grows with the allocation rate; postgres.js
 * allocates per socket read), and it levels off; buffering the export would need its whole
 * size on top of that.
 */
const STREAMING_CEILING = 160 * 1024 * 1024;

Deno.test({
  name:
    "export: 500,000 events (~150 MB) stream from a separate process under a flat memory ceiling",
  // PGlite would take minutes to fill; the streaming code is the same on both databases.
  ignore: !Deno.env.get("DATABASE_URL"),
  async fn() {
    const db = await createTestDatabase();
    const sql = db.pool(1);
    // A capped heap: a server that buffered the export would die rather than merely grow, and
    // the collector runs before garbage piles up, so the RSS measured is what streaming holds.
    const svc = startService({ DATABASE_URL: db.url, ADMIN_TOKEN }, {
      v8Flags: ["--max-old-space-size=96"],
    });
    try {
      const url = await listening(svc);
      const p = await createProject(url);
      const started = performance.now();
      // ~300-byte envelopes, as ingestion would store them, 10 types' worth of variety.
      await sql`
        insert into analytics_events (environment_id, event_id, type, occurred_at, received_at, body)
        select ${p.productionId}, e.id, e.type, e.at, now(),
          json_build_object(
            'schema_version', 1, 'id', e.id, 'type', e.type,
            'occurred_at', to_char(e.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'project', json_build_object('id', ${p.hashid}::text, 'test', false),
            'device', json_build_object('model', 'Pixel 8', 'os', 'android',
              'app_version', '3.12.' || (g % 40)),
            'attribution', json_build_object('campaign', 'spring_sale', 'source', 'mail'),
            'geo', json_build_object('country', 'DE')
          )::text
        from generate_series(1, ${BIG_EXPORT_ROWS}::int) g,
          lateral (select 'evt_big' || lpad(g::text, 19, '0') as id,
            (array['install','open','app_open','session','view'])[1 + g % 5] as type,
            timestamptz '2026-03-01T00:00:00Z' + g * interval '1 second' as at) e
      `;
      await sql`analyze analytics_events`;
      const inserted = performance.now() - started;

      const baseline = await residentBytes(svc.pid);
      const sampler = sampleMemory(svc.pid, 25);
      const res = await fetch(
        url + exportPath(p.productionId, {
          from: "2026-03-01T00:00:00Z",
          to: "2026-03-31T00:00:00Z",
        }),
        { headers: adminHeaders },
      );
      assert.equal(res.status, 200);
      const reader = res.body!.getReader();
      let bytes = 0;
      let lines = 0;
      const take = (chunk: Uint8Array) => {
        bytes += chunk.length;
        for (const b of chunk) if (b === 10) lines++;
      };
      // A stalled consumer: a server that did not wait for it would race through the range
      // (the whole export takes a few seconds) and hold it in memory.
      take((await reader.read()).value!);
      // At least 3 s and 60 samples, however slowly a loaded machine takes them.
      await Promise.all([sleep(3000), sampler.reached(60)]);
      const stalled = await sampler.stop();
      // Then slowly for a while, then as fast as it goes.
      const sampler2 = sampleMemory(svc.pid, 25);
      for (let pauses = 0;;) {
        const { value, done } = await reader.read();
        if (done) break;
        take(value);
        if (bytes < 30_000_000 && bytes > pauses * 1_000_000) {
          pauses++;
          // Each pause lasts until the sampler has looked again, so the slow part is sampled
          // about 30 times whatever the machine's load.
          await Promise.all([sleep(40), sampler2.reached(pauses)]);
        }
      }
      const streaming = await sampler2.stop();
      const peak = Math.max(stalled.peak, streaming.peak);
      const streamed = performance.now() - started - inserted;
      const mb = (n: number) => Math.round(n / 1024 / 1024);
      // deno-lint-ignore no-console
      console.log(
        `export of ${lines} lines, ${mb(bytes)} MB: insert ${Math.round(inserted)} ms, ` +
          `stream ${Math.round(streamed)} ms; server RSS baseline ${mb(baseline)} MB, ` +
          `peak while stalled ${mb(stalled.peak)} MB, peak ${mb(peak)} MB`,
      );
      assert.equal(lines, BIG_EXPORT_ROWS);
      assert.ok(bytes > BIG_EXPORT_ROWS * 280, `${bytes} bytes`);
      assert.ok(stalled.samples > 50 && streaming.samples > 20);
      assert.ok(
        stalled.peak - baseline < STALLED_CEILING,
        `grew ${mb(stalled.peak - baseline)} MB while the consumer stalled`,
      );
      assert.ok(peak - baseline < STREAMING_CEILING, `grew ${mb(peak - baseline)} MB`);
    } finally {
      await svc.stop();
      await db.close();
    }
  },
});
