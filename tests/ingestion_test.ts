import { assertError } from "./helpers/server.ts";
import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import { generateLink, ingest, sendEvents } from "./helpers/sdk.ts";
import {
  call,
  createFeedToken,
  createProject,
  LINK_BASE_URL,
  startTestServer,
} from "./helpers/server.ts";

const NOW = "2026-03-01T12:00:00.000Z";
const clock = new ManualClock(NOW);
const srv = await startTestServer({ clock });
Deno.test.afterAll(() => srv.close());

const project = await createProject(srv.url);
const linkPath = await generateLink(srv.url, project.key, "production", { title: "Attributed" });
const [linkRow] = await srv.sql<{ id: number }[]>`select id from links where path = ${linkPath}`;
const linkId = linkRow!.id;

const EVENT_ID = /^evt_[0-9A-HJKMNP-TV-Z]{26}$/;

interface StoredRow {
  event_id: string;
  client_id: string | null;
  type: string;
  name: string | null;
  occurred_at: Date;
  received_at: Date;
  link_id: number | null;
  body: string;
}

/** Stored events in arrival order: `evt_` ids are monotonic ULIDs handed out in batch order. */
async function storedEvents(environmentId: number): Promise<StoredRow[]> {
  return await srv.sql<StoredRow[]>`
    select event_id, client_id, type, name, occurred_at, received_at, link_id, body
    from analytics_events where environment_id = ${environmentId} order by event_id
  `;
}

async function countEvents(): Promise<number> {
  const [row] = await srv.sql<{ n: number }[]>`select count(*)::int as n from analytics_events`;
  return row!.n;
}

Deno.test("POST /api/v1/sdk/events answers 202 and stores each event with its feed envelope", async () => {
  const p = await createProject(srv.url, { name: "Envelope" });
  const path = await generateLink(srv.url, p.key, "production", { title: "L" });
  const [link] = await srv.sql<{ id: number }[]>`select id from links where path = ${path}`;
  const res = await sendEvents(srv.url, p.key, "production", [
    {
      id: "c-1",
      type: "install",
      occurred_at: "2026-03-01T10:00:00+02:00",
      link_path: path,
      device: { os: "iOS", model: "iPhone15,2" },
      user: { id: "u1", plan: "pro" },
      attribution: { campaign: "summer" },
      geo: { country: "de", city: "Berlin", ip: "203.0.113.7", region: "BE" },
      name: "ignored for installs",
      unknown: "dropped",
    },
    {
      type: "purchase",
      name: "purchase",
      occurred_at: "2026-03-01T11:00:00Z",
      purchase: {
        transaction_id: "t-1",
        version: 1,
        amount: 999,
        currency: "EUR",
        product_id: "pro_monthly",
        store: "app_store",
        extra: "dropped",
      },
    },
    { type: "custom", name: "level_up", occurred_at: "2026-03-01T11:30:00.123Z" },
    { type: "session", occurred_at: "2026-03-01T11:40:00Z", time_spent: 42 },
  ]);
  assert.equal(res.status, 202, res.text);
  assert.deepEqual(res.body, { accepted: 4, duplicates: 0 });

  const rows = await storedEvents(p.productionId);
  assert.equal(rows.length, 4);
  const bodies = rows.map((r) => JSON.parse(r.body));
  for (const [i, row] of rows.entries()) {
    assert.match(row.event_id, EVENT_ID);
    assert.equal(bodies[i].id, row.event_id);
    assert.equal(row.received_at.toISOString(), NOW);
  }
  // Monotonic ids: sortable in batch order.
  assert.deepEqual(rows.map((r) => r.event_id), rows.map((r) => r.event_id).toSorted());

  const project_ = { id: p.hashid, test: false };
  assert.deepEqual(bodies[0], {
    schema_version: 1,
    id: rows[0]!.event_id,
    type: "install",
    occurred_at: "2026-03-01T08:00:00.000Z",
    project: project_,
    device: { os: "iOS", model: "iPhone15,2" },
    user: { id: "u1", plan: "pro" },
    link: { id: link!.id, path, access_path: `${LINK_BASE_URL}/${path}` },
    // What the app sent, with how the event was attributed (docs/analytics.md).
    attribution: { campaign: "summer", link_path: path, method: "link_path" },
    geo: { country: "DE" },
  });
  assert.deepEqual(bodies[1], {
    schema_version: 1,
    id: rows[1]!.event_id,
    type: "purchase",
    name: "purchase",
    occurred_at: "2026-03-01T11:00:00.000Z",
    project: project_,
    purchase: {
      transaction_id: "t-1",
      version: 1,
      amount: 999,
      currency: "EUR",
      product_id: "pro_monthly",
      store: "app_store",
    },
  });
  assert.deepEqual(bodies[2], {
    schema_version: 1,
    id: rows[2]!.event_id,
    type: "custom",
    name: "level_up",
    occurred_at: "2026-03-01T11:30:00.123Z",
    project: project_,
  });
  assert.deepEqual(bodies[3], {
    schema_version: 1,
    id: rows[3]!.event_id,
    type: "session",
    occurred_at: "2026-03-01T11:40:00.000Z",
    project: project_,
    time_spent: 42,
  });
  // No IP address or city is stored anywhere.
  for (const row of rows) {
    assert.ok(!row.body.includes("203.0.113.7") && !row.body.includes("Berlin"));
  }
  assert.deepEqual(
    rows.map((r) => [r.client_id, r.type, r.name, r.occurred_at.toISOString(), r.link_id]),
    [
      ["c-1", "install", null, "2026-03-01T08:00:00.000Z", link!.id],
      [null, "purchase", "purchase", "2026-03-01T11:00:00.000Z", null],
      [null, "custom", "level_up", "2026-03-01T11:30:00.123Z", null],
      [null, "session", null, "2026-03-01T11:40:00.000Z", null],
    ],
  );
});

Deno.test("POST /api/v1/sdk/events with ENVIRONMENT development records in the test environment", async () => {
  const devPath = await generateLink(srv.url, project.key, "development");
  const res = await ingest(srv.url, project.key, "development", [
    { type: "open", occurred_at: NOW, link_path: devPath },
    { type: "open", occurred_at: NOW, link_path: linkPath },
  ]);
  assert.deepEqual(res, { accepted: 2, duplicates: 0 });
  const rows = await storedEvents(project.testId);
  const bodies = rows.map((r) => JSON.parse(r.body));
  assert.deepEqual(bodies.map((b) => b.project), [
    { id: project.hashid, test: true },
    { id: project.hashid, test: true },
  ]);
  // The production link is not a link of the test environment: kept, unattributed.
  assert.equal(bodies[0].link.path, devPath);
  assert.equal(bodies[1].link, undefined);
  assert.equal(rows[1]!.link_id, null);
});

Deno.test("POST /api/v1/sdk/events keeps events with an unknown link_path, unattributed", async () => {
  const before = await countEvents();
  const res = await ingest(srv.url, project.key, "production", [
    { type: "install", occurred_at: NOW, link_path: "no-such-link" },
  ]);
  assert.deepEqual(res, { accepted: 1, duplicates: 0 });
  assert.equal(await countEvents(), before + 1);
  const [row] = await srv.sql<StoredRow[]>`
    select link_id, body from analytics_events order by id desc limit 1
  `;
  assert.equal(row!.link_id, null);
  assert.equal(JSON.parse(row!.body).link, undefined);
});

Deno.test("POST /api/v1/sdk/events: a client id is stored once per environment, in and across batches", async () => {
  const p = await createProject(srv.url, { name: "Idempotent" });
  const batch = [
    { id: "a", type: "open", occurred_at: NOW },
    { id: "b", type: "open", occurred_at: NOW },
    { id: "a", type: "install", occurred_at: NOW },
    { type: "open", occurred_at: NOW },
  ];
  assert.deepEqual(await ingest(srv.url, p.key, "production", batch), {
    accepted: 3,
    duplicates: 1,
  });
  assert.deepEqual(await ingest(srv.url, p.key, "production", batch), {
    accepted: 1,
    duplicates: 3,
  });
  // The other environment has its own ids.
  assert.deepEqual(await ingest(srv.url, p.key, "development", batch.slice(0, 2)), {
    accepted: 2,
    duplicates: 0,
  });
  const rows = await storedEvents(p.productionId);
  assert.deepEqual(rows.map((r) => [r.client_id, r.type]), [
    ["a", "open"],
    ["b", "open"],
    [null, "open"],
    [null, "open"],
  ]);
});

Deno.test("POST /api/v1/sdk/events: concurrent batches with the same ids store each id once", async () => {
  const p = await createProject(srv.url, { name: "Concurrent" });
  const path = await generateLink(srv.url, p.key, "production");
  const batch = (offset: number) =>
    Array.from({ length: 50 }, (_, i) => ({
      id: `k-${(i + offset) % 80}`,
      type: "open",
      occurred_at: NOW,
      link_path: path,
    }));
  const results = await Promise.all(
    [0, 10, 20, 30].map((o) => sendEvents(srv.url, p.key, "production", batch(o))),
  );
  for (const r of results) assert.equal(r.status, 202, r.text);
  const accepted = results.reduce((n, r) => n + r.body.accepted, 0);
  const duplicates = results.reduce((n, r) => n + r.body.duplicates, 0);
  assert.equal(accepted, 80);
  assert.equal(duplicates, 120);
  const [c] = await srv.sql`
    select total_opens from link_counters join links on links.id = link_id where path = ${path}
  `;
  assert.equal(Number(c!.total_opens), 80);
});

Deno.test("POST /api/v1/sdk/events: occurred_at may be up to 24 hours ahead of the clock", async () => {
  const ahead = new Date(Date.parse(NOW) + 24 * 3600_000).toISOString();
  assert.equal(
    (await ingest(srv.url, project.key, "production", [{ type: "open", occurred_at: ahead }]))
      .accepted,
    1,
  );
  const tooFar = new Date(Date.parse(NOW) + 24 * 3600_000 + 1000).toISOString();
  const res = await sendEvents(srv.url, project.key, "production", [
    { type: "open", occurred_at: NOW },
    { type: "open", occurred_at: tooFar },
  ]);
  assertError(res, 400, "invalid_field", /^events\[1\]\.occurred_at: .*24 hours/);
  // The rule follows the injected clock.
  clock.advance(3600_000);
  assert.equal(
    (await ingest(srv.url, project.key, "production", [{ type: "open", occurred_at: tooFar }]))
      .accepted,
    1,
  );
  clock.set(NOW);
});

Deno.test("POST /api/v1/sdk/events rejects the whole batch with a 400 naming the event index and field", async () => {
  const ok = { type: "open", occurred_at: NOW };
  const purchase = {
    transaction_id: "t",
    version: 1,
    amount: 100,
    currency: "USD",
    product_id: "p",
    store: "play",
  };
  const cases: [unknown, RegExp][] = [
    [{}, /^events\[1\]\.type: /],
    [{ type: "view", occurred_at: NOW }, /^events\[1\]\.type: /],
    [{ type: "INSTALL", occurred_at: NOW }, /^events\[1\]\.type: /],
    [{ type: "open" }, /^events\[1\]\.occurred_at: /],
    [{ type: "open", occurred_at: "yesterday" }, /^events\[1\]\.occurred_at: /],
    [{ type: "open", occurred_at: "2026-02-30T00:00:00Z" }, /^events\[1\]\.occurred_at: /],
    [{ type: "open", occurred_at: "2026-03-01T12:00:00" }, /^events\[1\]\.occurred_at: /],
    [{ type: "open", occurred_at: 1767225600000 }, /^events\[1\]\.occurred_at: /],
    [{ type: "open", occurred_at: "1969-12-31T23:59:59Z" }, /^events\[1\]\.occurred_at: /],
    [{ type: "custom", occurred_at: NOW }, /^events\[1\]\.name: required for custom/],
    [{ type: "custom", name: "", occurred_at: NOW }, /^events\[1\]\.name: /],
    [{ type: "purchase", occurred_at: NOW, purchase }, /^events\[1\]\.name: required/],
    [{ type: "purchase", name: "purchase", occurred_at: NOW }, /^events\[1\]\.purchase: required/],
    [{ type: "session", occurred_at: NOW }, /^events\[1\]\.time_spent: required/],
    [{ type: "session", occurred_at: NOW, time_spent: -1 }, /^events\[1\]\.time_spent: /],
    [{ type: "session", occurred_at: NOW, time_spent: 1.5 }, /^events\[1\]\.time_spent: /],
    [{ type: "session", occurred_at: NOW, time_spent: "10" }, /^events\[1\]\.time_spent: /],
    [{ type: "session", occurred_at: NOW, time_spent: 1e300 }, /^events\[1\]\.time_spent: /],
    ...(["transaction_id", "version", "amount", "currency", "product_id", "store"] as const).map(
      (field): [unknown, RegExp] => [
        {
          type: "purchase",
          name: "purchase",
          occurred_at: NOW,
          purchase: { ...purchase, [field]: undefined },
        },
        new RegExp(`^events\\[1\\]\\.purchase\\.${field}: `),
      ],
    ),
    [
      { type: "purchase", name: "p", occurred_at: NOW, purchase: { ...purchase, version: 0 } },
      /^events\[1\]\.purchase\.version: /,
    ],
    [
      { type: "purchase", name: "p", occurred_at: NOW, purchase: { ...purchase, amount: 9.99 } },
      /^events\[1\]\.purchase\.amount: /,
    ],
    [
      { type: "purchase", name: "p", occurred_at: NOW, purchase: { ...purchase, amount: 1e20 } },
      /^events\[1\]\.purchase\.amount: /,
    ],
    [{ ...ok, id: "" }, /^events\[1\]\.id: /],
    [{ ...ok, id: "x".repeat(129) }, /^events\[1\]\.id: /],
    [{ ...ok, id: 5 }, /^events\[1\]\.id: /],
    [{ ...ok, id: "nul\u0000" }, /^events\[1\]\.id: /],
    [{ ...ok, link_path: 5 }, /^events\[1\]\.link_path: /],
    [{ ...ok, device: [1, 2] }, /^events\[1\]\.device: must be a JSON object/],
    [{ ...ok, device: "iPhone" }, /^events\[1\]\.device: /],
    [{ ...ok, user: { blob: "x".repeat(16 * 1024) } }, /^events\[1\]\.user: .*16384 bytes/],
    [{ ...ok, user: { blob: "é".repeat(8200) } }, /^events\[1\]\.user: .*16384 bytes/],
    [{ ...ok, attribution: { a: "\u0000" } }, /^events\[1\]\.attribution: /],
    [{ ...ok, geo: "DE" }, /^events\[1\]\.geo: /],
    [{ ...ok, geo: ["DE"] }, /^events\[1\]\.geo: /],
    [null, /^events\[1\]: /],
    [[], /^events\[1\]: /],
    ["open", /^events\[1\]: /],
  ];
  const before = await countEvents();
  for (const [event, message] of cases) {
    const res = await sendEvents(srv.url, project.key, "production", [ok, event, ok]);
    assertError(res, 400, "invalid_field", message);
  }
  // Exactly 16 KiB is allowed.
  const blob = "x".repeat(16 * 1024 - '{"blob":""}'.length);
  assert.equal(
    (await ingest(srv.url, project.key, "production", [{ ...ok, user: { blob } }])).accepted,
    1,
  );
  assert.equal(await countEvents(), before + 1);
});

Deno.test("POST /api/v1/sdk/events: a purchase missing several of its six fields is one 400 naming them all", async () => {
  const cases: [Record<string, unknown>, string][] = [
    [
      { transaction_id: "t", amount: 100, product_id: "p" },
      "events[1].purchase: version, currency and store are required",
    ],
    [
      {},
      "events[1].purchase: transaction_id, version, amount, currency, product_id and store are required",
    ],
    [
      { transaction_id: "t", version: 1, amount: 100, currency: "EUR" },
      "events[1].purchase: product_id and store are required",
    ],
    // One missing field reads as any field's error; a present but wrong value is named alone.
    [
      { transaction_id: "t", version: 1, amount: 100, currency: "EUR", product_id: "p" },
      "events[1].purchase.store: is required",
    ],
    [
      { transaction_id: "t", version: "1", amount: 100, currency: "EUR", product_id: "p" },
      "events[1].purchase.version: must be a number, not a string",
    ],
  ];
  const before = await countEvents();
  for (const [purchase, message] of cases) {
    const event = { type: "purchase", name: "purchase", occurred_at: NOW, purchase };
    const ok = { type: "open", occurred_at: NOW };
    const res = await sendEvents(srv.url, project.key, "production", [ok, event]);
    assertError(res, 400, "invalid_field");
    assert.equal((res.body as { error: { message: string } }).error.message, message);
  }
  assert.equal(await countEvents(), before, "nothing stored");
});

Deno.test("POST /api/v1/sdk/events: geo keeps only an ISO 3166-1 alpha-2 country", async () => {
  const p = await createProject(srv.url, { name: "Geo" });
  const geos = [
    { country: "fr", city: "Paris", ip: "198.51.100.1", lat: 48.8 },
    { country: "XX" },
    { country: "FRA" },
    { country: 7 },
    { city: "Paris" },
    {},
  ];
  await ingest(
    srv.url,
    p.key,
    "production",
    geos.map((geo) => ({ type: "open", occurred_at: NOW, geo })),
  );
  const bodies = (await storedEvents(p.productionId)).map((r) => JSON.parse(r.body));
  assert.deepEqual(bodies.map((b) => b.geo), [
    { country: "FR" },
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
  ]);
  assert.ok(bodies.every((b) => !JSON.stringify(b).includes("Paris")));
});

Deno.test("POST /api/v1/sdk/events: hostile bodies are 400 or 413, never 500", async () => {
  const raw = (body: string) =>
    call(srv.url, "POST", "/api/v1/sdk/events", {
      headers: { "PROJECT-KEY": project.key, ENVIRONMENT: "production" },
      raw: body,
    });
  const before = await countEvents();
  for (
    const body of ["null", "[]", "{}", '"events"', "1e999", '{"events": null}', '{"events": {}}']
  ) {
    assertError(await raw(body), 400, "invalid_field", /^(body|events): /);
  }
  assertError(await raw(""), 400, "invalid_field", /^events: /);
  assertError(await raw('{"events": []}'), 400, "invalid_field", /^events: .*at least one/);
  for (const body of ["{", '{"events": [', "\u0000", "[".repeat(200_000)]) {
    assertError(await raw(body), 400, "malformed_json");
  }
  const deep = "[".repeat(20_000) + "]".repeat(20_000);
  assertError(
    await raw(`{"events": [{"type": "open", "occurred_at": "${NOW}", "device": {"a": ${deep}}}]}`),
    400,
    "invalid_field",
    /^events\[0\]\.device: .*nested/,
  );
  assertError(
    await raw(`{"events": [{"type": "open", "occurred_at": "${NOW}", "time_spent": 1e400}]}`),
    400,
    "invalid_field",
  );
  const tooMany = Array.from({ length: 1001 }, () => ({ type: "open", occurred_at: NOW }));
  assertError(
    await sendEvents(srv.url, project.key, "production", tooMany),
    400,
    "invalid_field",
    /^events: .*at most 1000/,
  );
  const huge = Array.from({ length: 1000 }, () => ({
    type: "open",
    occurred_at: NOW,
    user: { pad: "x".repeat(1100) },
  }));
  assertError(await sendEvents(srv.url, project.key, "production", huge), 413, "payload_too_large");
  assert.equal(await countEvents(), before);
});

Deno.test("POST /api/v1/sdk/events: 1000 events in one batch, in order, with link attribution", async () => {
  const p = await createProject(srv.url, { name: "Bulk" });
  const paths = await Promise.all(
    [0, 1, 2].map(() => generateLink(srv.url, p.key, "production")),
  );
  const events = Array.from({ length: 1000 }, (_, i) => ({
    id: `bulk-${i}`,
    type: "open",
    occurred_at: NOW,
    link_path: paths[i % 3],
    user: { n: i },
  }));
  assert.deepEqual(await ingest(srv.url, p.key, "production", events), {
    accepted: 1000,
    duplicates: 0,
  });
  const rows = await storedEvents(p.productionId);
  assert.deepEqual(rows.map((r) => JSON.parse(r.body).user.n), events.map((_, i) => i));
  const totals = await srv.sql<{ path: string; total_opens: string }[]>`
    select l.path, c.total_opens from links l join link_counters c on c.link_id = l.id
    where l.environment_id = ${p.productionId} order by l.id
  `;
  const byPath = new Map(totals.map((t) => [t.path, Number(t.total_opens)]));
  assert.deepEqual(paths.map((path) => byPath.get(path)), [334, 333, 333]);
});

Deno.test("POST /api/v1/sdk/events appends newly stored events to a capturing feed, duplicates not", async () => {
  const p = await createProject(srv.url, { name: "Capture" });
  await ingest(srv.url, p.key, "production", [{ id: "before", type: "open", occurred_at: NOW }]);
  await createFeedToken(srv.url, p.productionId);
  const res = await ingest(srv.url, p.key, "production", [
    { id: "before", type: "open", occurred_at: NOW },
    { id: "x1", type: "install", occurred_at: NOW },
    { id: "x1", type: "install", occurred_at: NOW },
    { type: "custom", name: "c", occurred_at: NOW },
  ]);
  assert.deepEqual(res, { accepted: 2, duplicates: 2 });
  const feed = await srv.sql<{ xid: string; seq: string; type: string; body: string }[]>`
    select xid, seq, type, body from feed_events where environment_id = ${p.productionId}
    order by xid, seq
  `;
  const stored = await storedEvents(p.productionId);
  assert.deepEqual(feed.map((f) => [f.type, f.body]), [
    ["install", stored[1]!.body],
    ["custom", stored[2]!.body],
  ]);
  // One transaction, numbered in the batch's order.
  assert.equal(feed[0]!.xid, feed[1]!.xid);
  assert.equal(Number(feed[1]!.seq), Number(feed[0]!.seq) + 1);
  // The test environment does not capture.
  await ingest(srv.url, p.key, "development", [{ type: "open", occurred_at: NOW }]);
  const [n] = await srv
    .sql`select count(*)::int as n from feed_events where environment_id = ${p.testId}`;
  assert.equal(n!.n, 0);
});

Deno.test("analytics_events rows reference the attributed link id", async () => {
  await ingest(srv.url, project.key, "production", [
    { type: "reinstall", occurred_at: NOW, link_path: linkPath },
  ]);
  const [row] = await srv.sql<StoredRow[]>`
    select link_id from analytics_events where type = 'reinstall' order by id desc limit 1
  `;
  assert.equal(row!.link_id, linkId);
});

Deno.test("POST /api/v1/sdk/events reads null optional fields as absent", async () => {
  const p = await createProject(srv.url, { name: "Nulls" });
  const res = await ingest(srv.url, p.key, "production", [{
    id: null,
    type: "open",
    name: null,
    occurred_at: NOW,
    link_path: null,
    time_spent: null,
    device: null,
    user: null,
    attribution: null,
    geo: null,
    purchase: null,
  }]);
  assert.deepEqual(res, { accepted: 1, duplicates: 0 });
  const [row] = await storedEvents(p.productionId);
  const body = JSON.parse(row!.body);
  assert.deepEqual(Object.keys(body), ["schema_version", "id", "type", "occurred_at", "project"]);
  assert.equal(row!.client_id, null);
});
