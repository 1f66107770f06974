// GET /metrics on the internal listener (rest/internal.ts): Prometheus's text format, what it
// counts, and that no label carries a link path, a token or a key. `promtool check metrics`
// (Debian's prometheus package) lints each scrape; without promtool those checks are skipped,
// saying how to install it, unless REQUIRE_PROMTOOL is set (CI sets it): then they fail.
import assert from "node:assert/strict";
import { resolveConfig } from "../config.ts";
import { APPLICATION_NAME } from "../db/connect.ts";
import { createDatabase, dropDatabase } from "../db/databases.ts";
import { internalRoutes } from "../rest/internal.ts";
import { silentLogger } from "./helpers/clock.ts";
import { capture } from "./helpers/feed.ts";
import { listening, startService } from "./helpers/process.ts";
import { deliveryWorker, startReceiver } from "./helpers/receiver.ts";
import { generateLink, ingest, sdkHeaders } from "./helpers/sdk.ts";
import {
  ADMIN_TOKEN,
  adminHeaders,
  call,
  createFeedToken,
  createProject,
  CURSOR_SECRET,
  freePort,
  startTestServer,
} from "./helpers/server.ts";

const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148";
const INSTALL_PROMTOOL = "apt-get install -y prometheus";

function hasPromtool(): boolean {
  try {
    new Deno.Command("promtool", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync();
    return true;
  } catch {
    return false;
  }
}
const promtool = hasPromtool();
const promtoolRequired = Boolean(Deno.env.get("REQUIRE_PROMTOOL"));

/** `promtool check metrics` on the text: its complaints, [] when it passes. */
async function promtoolProblems(text: string): Promise<string[]> {
  const child = new Deno.Command("promtool", {
    args: ["check", "metrics"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text));
  await writer.close();
  const out = await child.output();
  const said = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return out.success ? [] : said.trim().split("\n");
}

/** Prometheus lines by name: each sample's labels and value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c) => (c === "n" ? "\n" : c));
    }
    samples.push({ name: m[1]!, labels, value: m[3] === "+Inf" ? Infinity : Number(m[3]) });
  }
  return samples;
}

/** The value of the one sample of `name` with these labels (0 when there is none). */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((s) =>
    s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)
  );
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)}: ${found.length} samples`);
  return found[0]?.value ?? 0;
}

Deno.test("GET /metrics: requests by route template, events, feed pages, deliveries, backlog, views, pool, memory; no client value in a label", async () => {
  const srv = await startTestServer({
    // Requests are counted only where the metrics are served; this server is not listening there.
    config: { DESTINATIONS_ALLOW_PRIVATE: "true", METRICS_PORT: "9464" },
  });
  const internalController = new AbortController();
  const internal = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: internalController.signal, onListen() {} },
    internalRoutes({
      sql: srv.sql,
      config: srv.config,
      clock: srv.clock,
      logger: silentLogger,
      adminTokenHash: "",
      cursorSecret: CURSOR_SECRET,
      views: srv.views,
      liveTails: srv.liveTails,
      database: {
        embedded: srv.db.embedded,
        poolMax: 4,
        applicationName: srv.db.embedded ? null : APPLICATION_NAME,
      },
    }).fetch,
  );
  const metricsUrl = `http://127.0.0.1:${internal.addr.port}`;
  const ok = startReceiver();
  const failing = startReceiver(() => new Response("no", { status: 500 }));
  const scrape = async () => {
    const res = await call(metricsUrl, "GET", "/metrics");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
    return res.text;
  };
  try {
    const before = parse(await scrape());
    const p = await createProject(srv.url);
    const path = await generateLink(srv.url, p.key, "production", {
      ios_custom_redirect: { url: "https://apps.apple.com/app/id1" },
    });
    const token = await createFeedToken(srv.url, p.productionId);

    // The SDK lookup, answered before hono (rest/sdk.ts), twice; a redirect of the link host.
    for (let i = 0; i < 2; i++) {
      const res = await call(srv.url, "GET", `/api/v1/sdk/link/${path}`, {
        headers: sdkHeaders(p.key, "production"),
      });
      assert.equal(res.status, 200);
    }
    const redirect = await call(srv.url, "GET", `/${path}`, { headers: { "User-Agent": IPHONE } });
    assert.equal(redirect.status, 302);
    await srv.views.flush();
    // A path no route takes.
    assert.equal((await call(srv.url, "GET", "/api/v1/no/such/route")).status, 404);
    await ingest(srv.url, p.key, "production", [
      { type: "open", occurred_at: new Date().toISOString(), link_path: path },
      { type: "open", occurred_at: new Date().toISOString() },
      { type: "install", occurred_at: new Date().toISOString(), link_path: path },
    ]);
    const page = await call(srv.url, "GET", `/api/v1/projects/${p.productionId}/event_stream`, {
      headers: { Authorization: `Bearer ${token.value}` },
    });
    assert.equal(page.status, 200);
    const served = page.body as { events: unknown[] };

    // Two destinations: one receiver answers 204, the other 500.
    const made = [];
    for (const url of [ok.url, failing.url]) {
      const res = await call(srv.url, "POST", `/api/v1/projects/${p.productionId}/destinations`, {
        headers: adminHeaders,
        body: { url },
      });
      assert.equal(res.status, 201, res.text);
      made.push(String(res.body.destination.id));
    }
    const [good, bad] = made as [string, string];
    await capture(srv.sql, p.productionId, p.hashid, ["open", "open", "install"], srv.clock);
    await deliveryWorker(srv).drain();
    srv.clock.advance(30_000);

    const text = await scrape();
    const after = parse(text);
    const delta = (name: string, labels: Record<string, string> = {}) =>
      value(after, name, labels) - value(before, name, labels);

    const route = "linkfeed_http_request_duration_seconds_count";
    assert.equal(
      delta(route, { route: "/api/v1/sdk/link/:link_path", method: "GET", status: "200" }),
      2,
    );
    assert.equal(delta(route, { route: "/:path", method: "GET", status: "302" }), 1);
    assert.equal(
      delta(route, { route: "/api/v1/admin/projects", method: "POST", status: "201" }),
      1,
    );
    assert.equal(delta(route, { route: "/api/v1/sdk/events", method: "POST", status: "202" }), 1);
    assert.equal(
      delta(route, {
        route: "/api/v1/projects/:project_id/event_stream",
        method: "GET",
        status: "200",
      }),
      1,
    );
    assert.equal(delta(route, { route: "unmatched", method: "GET", status: "404" }), 1);
    const lookup = { route: "/api/v1/sdk/link/:link_path", method: "GET", status: "200" };
    assert.equal(
      value(after, "linkfeed_http_request_duration_seconds_bucket", { ...lookup, le: "+Inf" }),
      value(after, route, lookup),
    );
    assert.ok(value(after, "linkfeed_http_request_duration_seconds_sum", lookup) > 0);

    assert.equal(delta("linkfeed_events_ingested_total", { type: "open" }), 2);
    assert.equal(delta("linkfeed_events_ingested_total", { type: "install" }), 1);
    assert.equal(delta("linkfeed_events_ingested_total", { type: "view" }), 1);
    assert.equal(delta("linkfeed_feed_pages_read_total"), 1);
    assert.equal(delta("linkfeed_feed_events_read_total"), served.events.length);

    assert.equal(
      value(after, "linkfeed_webhook_batches_delivered_total", { destination: good }),
      1,
    );
    assert.equal(value(after, "linkfeed_webhook_events_delivered_total", { destination: good }), 3);
    assert.equal(value(after, "linkfeed_webhook_attempts_failed_total", { destination: bad }), 1);
    assert.equal(value(after, "linkfeed_destination_backlog_events", { destination: good }), 0);
    assert.equal(value(after, "linkfeed_destination_lag_seconds", { destination: good }), 0);
    assert.equal(value(after, "linkfeed_destination_backlog_events", { destination: bad }), 3);
    assert.equal(value(after, "linkfeed_destination_lag_seconds", { destination: bad }), 30);
    assert.equal(value(after, "linkfeed_destination_paused", { destination: bad }), 0);
    assert.equal(value(after, "linkfeed_views_waiting"), 0);
    assert.equal(value(after, "linkfeed_db_pool_max_connections"), 4);
    assert.equal(value(after, "linkfeed_database_up"), 1);
    if (!srv.db.embedded) {
      assert.ok(value(after, "linkfeed_db_connections", { state: "active" }) >= 1, text);
    }
    assert.ok(value(after, "process_resident_memory_bytes") > 10 * 1024 * 1024);
    assert.ok(value(after, "deno_memory_heap_used_bytes") > 0);
    assert.ok(value(after, "process_cpu_seconds_total") > 0);

    // Nothing a client sent or holds is a label value: not the link's path, its key, the token.
    for (const secret of [path, p.key, token.value, ADMIN_TOKEN, "no/such/route"]) {
      assert.ok(!text.includes(secret), `${secret} appears in the metrics`);
    }
    if (promtool) assert.deepEqual(await promtoolProblems(text), []);

    // A deleted destination's series leave at the next scrape.
    const deleted = await call(
      srv.url,
      "DELETE",
      `/api/v1/projects/${p.productionId}/destinations/${bad}`,
      { headers: adminHeaders },
    );
    assert.equal(deleted.status, 204);
    const later = parse(await scrape());
    assert.deepEqual(later.filter((s) => s.labels.destination === bad), []);
    assert.ok(later.some((s) => s.labels.destination === good));

    // The internal routes are not the app's: the public port's /metrics is the link host's.
    const publicMetrics = await call(srv.url, "GET", "/metrics");
    assert.equal(publicMetrics.status, 404);
    assert.ok(!publicMetrics.text.includes("linkfeed_"));
  } finally {
    internalController.abort();
    await internal.finished;
    await ok.close();
    await failing.close();
    await srv.close();
  }
});

Deno.test({
  name: `promtool is installed (${INSTALL_PROMTOOL}), or the metrics checks skip it`,
  ignore: promtool || !promtoolRequired,
  fn() {
    assert.fail(`REQUIRE_PROMTOOL is set and promtool is missing: ${INSTALL_PROMTOOL}`);
  },
});

Deno.test("main.ts: METRICS_PORT serves /metrics apart from PORT; unset, nothing more listens", async () => {
  const base = Deno.env.get("DATABASE_URL");
  const dataDir = await Deno.makeTempDir();
  const metricsPort = freePort();
  const name = `t_metrics_${Date.now().toString(36)}`;
  const env: Record<string, string> = base
    ? { DATABASE_URL: await createDatabase(base, name), ADMIN_TOKEN }
    : { DATA_DIR: dataDir, ADMIN_TOKEN };
  const p = startService({ ...env, METRICS_PORT: String(metricsPort) });
  try {
    const url = await listening(p, 120_000);
    assert.equal((await call(url, "GET", "/healthz")).status, 200);
    const scraped = await call(`http://127.0.0.1:${metricsPort}`, "GET", "/metrics");
    assert.equal(scraped.status, 200);
    assert.match(
      scraped.text,
      /^linkfeed_http_request_duration_seconds_count\{route="\/healthz",method="GET",status="200"\} 1$/m,
    );
    assert.match(scraped.text, /^linkfeed_database_up 1$/m);
    if (promtool) assert.deepEqual(await promtoolProblems(scraped.text), []);
    assert.equal((await call(url, "GET", "/metrics")).status, 404);
    const other = await call(`http://127.0.0.1:${metricsPort}`, "GET", "/api/v1/sdk/link/x");
    assert.equal(other.status, 404);
  } finally {
    await p.stop();
  }
  // Without METRICS_PORT the port stays free.
  const q = startService(env);
  try {
    await listening(q, 120_000);
    const refused = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then(
      (r) => (r.body?.cancel(), `answered ${r.status}`),
      () => "refused",
    );
    assert.equal(refused, "refused");
  } finally {
    await q.stop();
    await Deno.remove(dataDir, { recursive: true });
    if (base) await dropDatabase(base, name);
  }
});

Deno.test("config: METRICS_PORT is a port, unset by default, and not PORT", () => {
  assert.equal(resolveConfig({}).metricsPort, null);
  assert.equal(resolveConfig({ METRICS_PORT: "9464" }).metricsPort, 9464);
  for (
    const [env, message] of [
      [{ METRICS_PORT: "x" }, /^METRICS_PORT: must be a port number/],
      [{ METRICS_PORT: "8000" }, /^METRICS_PORT: must differ from PORT/],
      [{ PORT: "9000", METRICS_PORT: "9000" }, /^METRICS_PORT: must differ from PORT/],
    ] as const
  ) {
    assert.throws(() => resolveConfig(env), (err: Error) => message.test(err.message));
  }
});
