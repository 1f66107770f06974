// Attribution at ingestion (docs/analytics.md, "Attribution"): click ids, link paths and users,
// the envelope's record of each decision, and a randomized stream whose every attributed figure
// is recomputed from the stored history.
import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import { generateLink, ingest, metrics } from "./helpers/sdk.ts";
import { call, createProject, CURSOR_SECRET, startTestServer } from "./helpers/server.ts";
import { adminHeaders } from "./helpers/server.ts";
import { ClickIds } from "../services/attribution/click_ids.ts";
import { purgeExpired } from "../services/feed/retention.ts";

const NOW = "2026-06-01T12:00:00.000Z";
const DAY = 24 * 60 * 60 * 1000;
const clock = new ManualClock(NOW);
const srv = await startTestServer({ clock });
Deno.test.afterAll(() => srv.close());
const clickIds = new ClickIds(CURSOR_SECRET);

// deno-lint-ignore no-explicit-any
type Json = any;

interface Setup {
  key: string;
  hashid: string;
  env: number;
  links: { path: string; id: number }[];
}

async function setUp(nLinks = 2): Promise<Setup> {
  const p = await createProject(srv.url);
  const links = [];
  for (let i = 0; i < nLinks; i++) {
    const path = await generateLink(srv.url, p.key, "production", { title: `L${i}` });
    const [row] = await srv.sql<{ id: number }[]>`select id from links where path = ${path}`;
    links.push({ path, id: row!.id });
  }
  return { key: p.key, hashid: p.hashid, env: p.productionId, links };
}

/** Sets the project's attribution settings through the admin API. */
async function settings(
  s: Setup,
  body: { attribution_window_days?: number; attribution_model?: string },
) {
  const res = await call(srv.url, "PATCH", `/api/v1/admin/projects/${s.hashid}`, {
    headers: adminHeaders,
    body,
  });
  assert.equal(res.status, 200, res.text);
}

/** The stored envelopes of an environment, in storage order, by client id. */
async function envelopes(env: number): Promise<Map<string, Json>> {
  const rows = await srv.sql<{ client_id: string | null; body: string }[]>`
    select client_id, body from analytics_events where environment_id = ${env} order by event_id
  `;
  return new Map(rows.map((r, i) => [r.client_id ?? `#${i}`, JSON.parse(r.body)]));
}

function click(s: Setup, link: number, at: Date, env = s.env): string {
  return clickIds.mint({ environmentId: env, linkId: s.links[link]!.id, clickedAt: at });
}

const at = (ms: number) => new Date(Date.parse(NOW) + ms);

Deno.test("a click id attributes to its click's link, before link_path, within the window", async () => {
  const s = await setUp();
  const clicked = at(-2 * DAY);
  const id = click(s, 0, clicked);
  await ingest(srv.url, s.key, "production", [
    {
      id: "c1",
      type: "install",
      occurred_at: NOW,
      link_path: s.links[1]!.path,
      attribution: { click_id: id, campaign: "x" },
    },
  ]);
  const e = (await envelopes(s.env)).get("c1");
  assert.equal(e.link.path, s.links[0]!.path);
  assert.deepEqual(e.attribution, {
    click_id: id,
    campaign: "x",
    link_path: s.links[0]!.path,
    method: "click_id",
    clicked_at: clicked.toISOString(),
  });
  const [install] = await srv.sql`
    select link_id, seconds::int from attributed_installs where environment_id = ${s.env}
  `;
  assert.deepEqual({ ...install }, { link_id: s.links[0]!.id, seconds: 2 * 86400 });
});

Deno.test("an unknown, foreign or expired click id attributes nothing and is kept", async () => {
  const s = await setUp();
  const other = await setUp(1);
  const expired = click(s, 0, at(-31 * DAY));
  const foreign = click(other, 0, at(-DAY), other.env);
  const forged = click(s, 0, at(-DAY)).slice(0, -2) + "AA";
  await ingest(srv.url, s.key, "production", [
    { id: "a", type: "open", occurred_at: NOW, attribution: { click_id: expired } },
    { id: "b", type: "open", occurred_at: NOW, attribution: { click_id: foreign } },
    { id: "c", type: "open", occurred_at: NOW, attribution: { click_id: forged } },
    { id: "d", type: "open", occurred_at: NOW, attribution: { click_id: "nope" } },
    // Expired: the path still attributes.
    {
      id: "e",
      type: "open",
      occurred_at: NOW,
      link_path: s.links[1]!.path,
      attribution: { click_id: expired },
    },
  ]);
  const stored = await envelopes(s.env);
  for (const [k, id] of [["a", expired], ["b", foreign], ["c", forged], ["d", "nope"]]) {
    const e = stored.get(k!);
    assert.equal(e.link, undefined, k);
    assert.deepEqual(e.attribution, { click_id: id }, k);
  }
  assert.deepEqual(stored.get("e").attribution, {
    click_id: expired,
    link_path: s.links[1]!.path,
    method: "link_path",
  });
  // A 30-day window: the click 31 days back attributes once the window is 90 days.
  await settings(s, { attribution_window_days: 90 });
  await ingest(srv.url, s.key, "production", [
    { id: "f", type: "open", occurred_at: NOW, attribution: { click_id: expired } },
  ]);
  assert.equal((await envelopes(s.env)).get("f").attribution.method, "click_id");
});

Deno.test("a user's later events go to the first touch, or the last, within the window", async () => {
  for (const model of ["first_touch", "last_touch"] as const) {
    const s = await setUp(3);
    await settings(s, { attribution_model: model });
    const c0 = click(s, 0, at(-10 * DAY));
    await ingest(srv.url, s.key, "production", [
      {
        id: "i",
        type: "install",
        occurred_at: at(-10 * DAY).toISOString(),
        user: { id: "u" },
        attribution: { click_id: c0 },
      },
    ]);
    await ingest(srv.url, s.key, "production", [
      {
        id: "o",
        type: "open",
        occurred_at: at(-DAY).toISOString(),
        user: { id: "u" },
        link_path: s.links[1]!.path,
      },
      // The backend's purchase: only the user.
      {
        id: "p",
        type: "purchase",
        name: "purchase",
        occurred_at: NOW,
        user: { id: "u" },
        purchase: {
          transaction_id: "t1",
          version: 1,
          amount: 500,
          currency: "USD",
          product_id: "pro",
          store: "app_store",
        },
      },
      // Another user's purchase with no touch: unattributed.
      {
        id: "q",
        type: "purchase",
        name: "purchase",
        occurred_at: NOW,
        user: { id: "stranger" },
        purchase: {
          transaction_id: "t2",
          version: 1,
          amount: 700,
          currency: "USD",
          product_id: "pro",
          store: "app_store",
        },
      },
    ]);
    const stored = await envelopes(s.env);
    const p = stored.get("p");
    if (model === "first_touch") {
      assert.deepEqual(p.attribution, {
        link_path: s.links[0]!.path,
        method: "user",
        click_id: c0,
        clicked_at: at(-10 * DAY).toISOString(),
      });
    } else {
      assert.deepEqual(p.attribution, { link_path: s.links[1]!.path, method: "user" });
    }
    assert.equal(stored.get("q").attribution, undefined);
    const expected = model === "first_touch" ? 0 : 1;
    const m = await metrics(srv.url, s.key);
    const revenue = (i: number) => m.find((x) => x.path === s.links[i]!.path)!.total_revenue;
    assert.equal(revenue(expected), 500, model);
    assert.equal(revenue(1 - expected), 0, model);
    const [v] = await srv.sql`
      select user_id, link_id from purchase_versions
      where environment_id = ${s.env} and transaction_id = 't1'
    `;
    assert.deepEqual({ ...v }, { user_id: "u", link_id: s.links[expected]!.id });

    // Out of the window (30 days after the last touch): nothing.
    clock.set(at(30 * DAY));
    await ingest(srv.url, s.key, "production", [
      {
        id: "late",
        type: "custom",
        name: "x",
        occurred_at: at(30 * DAY).toISOString(),
        user: { id: "u" },
      },
    ]);
    clock.set(NOW);
    assert.equal((await envelopes(s.env)).get("late").attribution, undefined, model);
  }
});

Deno.test("touches earlier in a batch attribute later events of the batch", async () => {
  const s = await setUp();
  const c1 = click(s, 1, at(-60_000));
  await ingest(srv.url, s.key, "production", [
    { id: "p0", type: "custom", name: "before", occurred_at: NOW, user: { id: "n" } },
    {
      id: "i",
      type: "install",
      occurred_at: NOW,
      user: { id: "n" },
      attribution: { click_id: c1 },
    },
    { id: "p1", type: "custom", name: "after", occurred_at: NOW, user: { id: "n" } },
  ]);
  const stored = await envelopes(s.env);
  assert.equal(stored.get("p0").attribution, undefined);
  assert.equal(stored.get("p1").attribution.method, "user");
  assert.equal(stored.get("p1").attribution.click_id, c1);
  assert.equal(stored.get("p1").link.id, s.links[1]!.id);
});

Deno.test("concurrent batches of one new user attribute all of its events to one first touch", async () => {
  for (let round = 0; round < 5; round++) {
    const s = await setUp(2);
    const user = { id: `new-${round}` };
    const batch = (link: number) => [
      {
        id: `i${link}`,
        type: "install",
        occurred_at: NOW,
        user,
        attribution: { click_id: click(s, link, at(-1000)) },
      },
      { id: `e${link}`, type: "custom", name: "x", occurred_at: NOW, user },
    ];
    // Both installs occur at the same instant: the first stored is the first touch, and every
    // user-attributed event (in either batch) must name it.
    await Promise.all([0, 1].map((l) => ingest(srv.url, s.key, "production", batch(l))));
    const stored = await envelopes(s.env);
    const [first] = await srv.sql<{ link_id: number }[]>`
      select link_id from attribution_touches where environment_id = ${s.env}
      order by occurred_at, event_id limit 1
    `;
    for (const k of ["e0", "e1"]) {
      const e = stored.get(k);
      assert.equal(e.attribution.method, "user");
      assert.equal(e.link.id, first!.link_id, `round ${round}, ${k}`);
    }
  }
});

Deno.test("a user whose click ids turn out not to settle its events is attributed by its touches", async () => {
  // Users whose every event carries a click id of at most the longest window are not locked or
  // probed: their clicks decide. When the project's window is shorter, or the click's link is
  // gone, the batch is stored again with their touches read, and nothing is stored twice.
  const s = await setUp(3);
  await settings(s, { attribution_window_days: 7 });
  await ingest(srv.url, s.key, "production", [
    {
      id: "t-u",
      type: "install",
      occurred_at: NOW,
      user: { id: "u" },
      link_path: s.links[1]!.path,
    },
    {
      id: "t-v",
      type: "install",
      occurred_at: NOW,
      user: { id: "v" },
      link_path: s.links[1]!.path,
    },
  ]);
  const deleted = await call(
    srv.url,
    "DELETE",
    `/api/v1/projects/${s.env}/links/${s.links[2]!.path}`,
    { headers: adminHeaders },
  );
  assert.equal(deleted.status, 204, deleted.text);
  const later = at(DAY);
  const res = await ingest(srv.url, s.key, "production", [
    // A click 10 days old: within the longest window, outside this project's 7 days.
    {
      id: "old",
      type: "open",
      occurred_at: later.toISOString(),
      user: { id: "u" },
      attribution: { click_id: click(s, 0, at(-9 * DAY)) },
    },
    // A click on the deleted link.
    {
      id: "gone",
      type: "open",
      occurred_at: later.toISOString(),
      user: { id: "v" },
      attribution: { click_id: click(s, 2, at(-DAY)) },
    },
    // A click that settles its new user.
    {
      id: "fresh",
      type: "install",
      occurred_at: later.toISOString(),
      user: { id: "w" },
      attribution: { click_id: click(s, 0, at(0)) },
    },
  ]);
  assert.equal(res.accepted, 3);
  const stored = await envelopes(s.env);
  assert.equal(stored.size, 5);
  for (const k of ["old", "gone"]) {
    const e = stored.get(k);
    assert.equal(e.attribution.method, "user", k);
    assert.equal(e.link.path, s.links[1]!.path, k);
  }
  assert.equal(stored.get("fresh").attribution.method, "click_id");
  assert.equal(stored.get("fresh").link.path, s.links[0]!.path);
  const [touches] = await srv.sql<{ n: number }[]>`
    select count(*)::int as n from attribution_touches where environment_id = ${s.env}`;
  assert.equal(touches!.n, 3);
});

Deno.test("a user whose link paths name no link is attributed by its touches, read after all", async () => {
  // A user all of whose events name a link path is presumed settled by them: neither locked nor
  // probed. A path that names no link leaves its event to the user's touches: they are read
  // then, in the same transaction (x); or, where the batch also stores a touch for that user
  // (y), which needed the user's lock before the read, the batch is stored again with every
  // user locked and read. Nothing is stored twice.
  const s = await setUp(2);
  await ingest(
    srv.url,
    s.key,
    "production",
    ["x", "y"].map((u) => ({
      id: `t-${u}`,
      type: "install",
      occurred_at: NOW,
      user: { id: u },
      link_path: s.links[1]!.path,
    })),
  );
  const later = at(DAY).toISOString();
  const res = await ingest(srv.url, s.key, "production", [
    { id: "x1", type: "open", occurred_at: later, user: { id: "x" }, link_path: "no-such-link" },
    { id: "y1", type: "open", occurred_at: later, user: { id: "y" }, link_path: "no-such-link" },
    { id: "y2", type: "open", occurred_at: later, user: { id: "y" }, link_path: s.links[0]!.path },
  ]);
  assert.equal(res.accepted, 3);
  const stored = await envelopes(s.env);
  assert.equal(stored.size, 5);
  for (const k of ["x1", "y1"]) {
    const e = stored.get(k);
    assert.equal(e.attribution.method, "user", k);
    assert.equal(e.link.path, s.links[1]!.path, k);
    // The envelope's attribution names the link that decided, not the path the app sent.
    assert.equal(e.attribution.link_path, s.links[1]!.path, k);
  }
  assert.equal(stored.get("y2").attribution.method, "link_path");
  assert.equal(stored.get("y2").link.path, s.links[0]!.path);
  const [touches] = await srv.sql<{ n: number }[]>`
    select count(*)::int as n from attribution_touches where environment_id = ${s.env}`;
  assert.equal(touches!.n, 3);
});

// ---------------------------------------------------------------------------------------------
// The randomized stream: every attributed figure equals a count over the stored history.

/** A small deterministic PRNG (mulberry32), so a failure can be replayed from its seed. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Sent {
  id: string;
  type: string;
  occurred_at: string;
  link_path?: string;
  user?: { id: string };
  attribution?: { click_id: string };
  name?: string;
  purchase?: Json;
}

/** The rules, written again from docs/analytics.md, over the events in the order they were sent. */
function reference(
  sent: readonly Sent[],
  s: Setup,
  windowDays: number,
  model: "first_touch" | "last_touch",
) {
  const window = windowDays * DAY;
  const byPath = new Map(s.links.map((l) => [l.path, l]));
  const byId = new Map(s.links.map((l) => [l.id, l]));
  const touches = new Map<string, { at: number; seq: number; path: string; click?: string }[]>();
  const out = new Map<string, { path: string; method: string; click?: string } | undefined>();
  sent.forEach((e, seq) => {
    const t = Date.parse(e.occurred_at);
    const c = e.attribution ? clickIds.read(e.attribution.click_id) : null;
    let d: { path: string; method: string; click?: string } | undefined;
    if (c && c.environmentId === s.env && t - c.clickedAt.getTime() <= window) {
      d = { path: byId.get(c.linkId)!.path, method: "click_id", click: e.attribution!.click_id };
    } else if (e.link_path && byPath.has(e.link_path)) {
      d = { path: e.link_path, method: "link_path" };
    } else if (e.user) {
      const mine = (touches.get(e.user.id) ?? []).filter((x) => x.at >= t - window);
      mine.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const x = model === "first_touch" ? mine[0] : mine.at(-1);
      if (x) d = { path: x.path, method: "user", ...(x.click ? { click: x.click } : {}) };
    }
    if (d && d.method !== "user" && e.user) {
      const list = touches.get(e.user.id) ?? [];
      list.push({ at: t, seq, path: d.path, ...(d.click ? { click: d.click } : {}) });
      touches.set(e.user.id, list);
    }
    out.set(e.id, d);
  });
  return out;
}

Deno.test("a randomized stream's attributed figures equal counts over the stored events", async () => {
  for (const seed of [1, 2, 3]) {
    const rnd = prng(seed);
    const s = await setUp(4);
    const model = seed % 2 === 0 ? "last_touch" : "first_touch";
    const windowDays = 7;
    await settings(s, { attribution_model: model, attribution_window_days: windowDays });
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
    const users = ["u1", "u2", "u3", "u4", "u5", "u6"];
    const clicks: { id: string; at: number }[] = [];
    const sent: Sent[] = [];
    const versions = new Map<string, number>();
    let n = 0;
    for (let batch = 0; batch < 12; batch++) {
      const events: Sent[] = [];
      for (let k = 0; k < 8; k++) {
        // Mostly in order, sometimes late (up to 10 days back), across 20 days.
        const t = Date.parse(NOW) + batch * DAY * 1.5 - (rnd() < 0.2 ? rnd() * 10 * DAY : 0);
        const occurred_at = new Date(Math.floor(t)).toISOString();
        const r = rnd();
        const id = `s${seed}-${n++}`;
        if (r < 0.25) {
          const at_ = t - rnd() * 9 * DAY;
          const c = { id: click(s, Math.floor(rnd() * 4), new Date(Math.floor(at_))), at: at_ };
          clicks.push(c);
          events.push({
            id,
            type: "install",
            occurred_at,
            user: { id: pick(users) },
            attribution: { click_id: rnd() < 0.9 ? c.id : "unknown-click" },
          });
        } else if (r < 0.4) {
          events.push({
            id,
            type: "open",
            occurred_at,
            ...(rnd() < 0.7 ? { user: { id: pick(users) } } : {}),
            link_path: rnd() < 0.8 ? pick(s.links).path : "no-such-link",
          });
        } else if (r < 0.8) {
          // A purchase, or a correction of an earlier one (a higher version, maybe another user).
          const correcting = versions.size > 0 && rnd() < 0.3;
          const tx = correcting ? pick([...versions.keys()]) : `t${n}`;
          const version = (versions.get(tx) ?? 0) + 1;
          versions.set(tx, version);
          events.push({
            id,
            type: "purchase",
            name: "purchase",
            occurred_at,
            user: { id: pick(users) },
            purchase: {
              transaction_id: tx,
              version,
              amount: 100 + Math.floor(rnd() * 900),
              currency: "USD",
              product_id: "p",
              store: "app_store",
            },
          });
        } else {
          events.push({ id, type: "custom", name: "c", occurred_at, user: { id: pick(users) } });
        }
      }
      clock.set(new Date(Date.parse(NOW) + batch * DAY * 1.5 + 1000));
      await ingest(srv.url, s.key, "production", events);
      sent.push(...events);
    }
    clock.set(NOW);

    // 1. Each stored decision is the rules' decision.
    const stored = await envelopes(s.env);
    const expected = reference(sent, s, windowDays, model);
    let attributed = 0;
    for (const e of sent) {
      const got = stored.get(e.id);
      const want = expected.get(e.id);
      assert.equal(got.attribution?.method, want?.method, `seed ${seed}, ${e.id}`);
      assert.equal(got.link?.path, want?.path, `seed ${seed}, ${e.id}`);
      if (want?.click) assert.equal(got.attribution.click_id, want.click);
      if (want) attributed++;
    }
    assert.ok(attributed > sent.length / 3, `seed ${seed}: ${attributed} attributed`);

    // 2. The figures, counted again over the stored envelopes: installs, current purchase
    // versions and their revenue per link, and purchasers.
    const count = new Map<string, { installs: number; revenue: number }>();
    const current = new Map<string, Json>();
    for (const e of stored.values()) {
      if (e.type === "install" && e.link) {
        const c = count.get(e.link.path) ?? { installs: 0, revenue: 0 };
        c.installs++;
        count.set(e.link.path, c);
      }
      if (e.type === "purchase") {
        const old = current.get(e.purchase.transaction_id);
        if (!old || e.purchase.version > old.purchase.version) {
          current.set(e.purchase.transaction_id, e);
        }
      }
    }
    for (const e of current.values()) {
      if (!e.link) continue;
      const c = count.get(e.link.path) ?? { installs: 0, revenue: 0 };
      c.revenue += e.purchase.amount;
      count.set(e.link.path, c);
    }
    const m = await metrics(srv.url, s.key);
    for (const l of s.links) {
      const item = m.find((x) => x.path === l.path)!;
      const c = count.get(l.path) ?? { installs: 0, revenue: 0 };
      assert.equal(item.total_installs, c.installs, `seed ${seed}, installs of ${l.path}`);
      assert.equal(item.total_revenue, c.revenue, `seed ${seed}, revenue of ${l.path}`);
      const [row] = await srv.sql<{ n: number }[]>`
        select count(*)::int as n from attributed_installs
        where environment_id = ${s.env} and link_id = ${l.id}
      `;
      assert.equal(row!.n, c.installs);
    }
    const purchasers = new Map<string, Set<string>>();
    for (const e of current.values()) {
      if (!e.link || !e.user) continue;
      const set = purchasers.get(e.link.path) ?? new Set();
      set.add(e.user.id);
      purchasers.set(e.link.path, set);
    }
    const rows = await srv.sql<{ path: string; n: number }[]>`
      select l.path, count(distinct v.user_id)::int as n
      from purchase_versions v join links l on l.id = v.link_id
      where v.environment_id = ${s.env} and v.version > 0 and v.user_id is not null
      group by l.path
    `;
    assert.deepEqual(
      Object.fromEntries(rows.map((r) => [r.path, r.n])),
      Object.fromEntries([...purchasers].map(([p, set]) => [p, set.size])),
    );

    // 3. The funnel over the whole stream: per link, the same installs, purchases, revenue and
    // purchasers; in total, each purchaser once.
    const qs = new URLSearchParams({
      from: new Date(Date.parse(NOW) - 40 * DAY).toISOString(),
      to: new Date(Date.parse(NOW) + 40 * DAY).toISOString(),
      group_by: "link",
      limit: "10",
    });
    const res = await call<Json>(
      srv.url,
      "GET",
      `/api/v1/projects/${s.env}/analytics/funnel?${qs}`,
      { headers: adminHeaders },
    );
    assert.equal(res.status, 200, res.text);
    const purchasesOf = (path: string) =>
      [...current.values()].filter((e) => e.link?.path === path).length;
    for (const l of s.links) {
      const c = count.get(l.path) ?? { installs: 0, revenue: 0 };
      const g = res.body.groups.find((x: Json) => x.key === l.path)?.totals ??
        { installs: 0, purchases: 0, revenue: 0, purchasers: 0 };
      assert.deepEqual(
        [g.installs, g.purchases, g.revenue, g.purchasers],
        [c.installs, purchasesOf(l.path), c.revenue, purchasers.get(l.path)?.size ?? 0],
        `seed ${seed}, funnel of ${l.path}`,
      );
    }
    const everyone = new Set(
      [...current.values()].filter((e) => e.link && e.user).map((e) => e.user.id),
    );
    assert.equal(res.body.totals.purchasers, everyone.size, `seed ${seed}, purchasers`);
    assert.equal(
      res.body.totals.installs,
      [...count.values()].reduce((n, c) => n + c.installs, 0),
    );
  }
});

Deno.test("retention deletes touches past the longest window and installs past the rollups'", async () => {
  const s = await setUp(1);
  const c = click(s, 0, at(-1000));
  await ingest(srv.url, s.key, "production", [
    {
      id: "old",
      type: "install",
      occurred_at: NOW,
      user: { id: "r" },
      attribution: { click_id: c },
    },
  ]);
  const count = async () => {
    const [row] = await srv.sql<{ touches: number; installs: number }[]>`
      select (select count(*)::int from attribution_touches where environment_id = ${s.env})
          as touches,
        (select count(*)::int from attributed_installs where environment_id = ${s.env})
          as installs
    `;
    return { ...row };
  };
  assert.deepEqual(await count(), { touches: 1, installs: 1 });
  // 89 days on, both are kept; 91 days on, the touch goes; past the rollups' days, the install.
  await purgeExpired(srv.sql, at(89 * DAY), 400, { rollupDays: 100 });
  assert.deepEqual(await count(), { touches: 1, installs: 1 });
  const r = await purgeExpired(srv.sql, at(91 * DAY), 400, { rollupDays: 100 });
  assert.ok((r.attribution ?? 0) >= 1);
  assert.deepEqual(await count(), { touches: 0, installs: 1 });
  await purgeExpired(srv.sql, at(101 * DAY), 400, { rollupDays: 100 });
  assert.deepEqual(await count(), { touches: 0, installs: 0 });
});

Deno.test("a batch spanning a first touch's window edge finds each event's own first touch", async () => {
  const s = await setUp(2);
  await settings(s, { attribution_window_days: 7 });
  const touch = (id: string, link: number, day: number) => ({
    id,
    type: "open",
    occurred_at: at(day * DAY).toISOString(),
    user: { id: "edge" },
    link_path: s.links[link]!.path,
  });
  await ingest(srv.url, s.key, "production", [touch("t0", 0, -9), touch("t1", 1, -4)]);
  // One batch: at day -3 the first touch in the window is t0 (day -9 is 6 days back); at day 0
  // it is t1 (t0 is 9 days back).
  await ingest(srv.url, s.key, "production", [
    {
      id: "a",
      type: "custom",
      name: "x",
      occurred_at: at(-3 * DAY).toISOString(),
      user: { id: "edge" },
    },
    { id: "b", type: "custom", name: "x", occurred_at: NOW, user: { id: "edge" } },
  ]);
  const stored = await envelopes(s.env);
  assert.equal(stored.get("a").link.path, s.links[0]!.path);
  assert.equal(stored.get("b").link.path, s.links[1]!.path);
});
