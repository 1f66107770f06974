// `deno task start` run as a self-hoster runs it: the real task of deno.json, so the process has
// the task's permission flags and no more (the rest of the suite runs the server in-process, with
// the test task's). Its webhook receivers are HTTPS, with certificates of throwaway CAs made by
// openssl and trusted the two ways an operator can: DENO_CERT and NODE_EXTRA_CA_CERTS. Then each
// other surface that needs a permission at run time is called once: the database (the embedded
// one's files, or PostgreSQL with DATABASE_URL), DNS, static assets, GraphQL, the link host and
// the feed, the GeoIP database (GEOIP_DATABASE) giving the link host's view its country; and the
// feed and admin tasks run with their own flags too.
import assert from "node:assert/strict";
import { lookup } from "node:dns/promises";
import { Webhook } from "standardwebhooks";
import { createTestDatabase } from "./helpers/database.ts";
import { buildCountryDatabase } from "./helpers/mmdb.ts";
import { call } from "./helpers/server.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const ADMIN_TOKEN = "start-task-admin-token-0123456789abcdefgh";
const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
/** Generous: a cold embedded start on a loaded 2-core machine takes several seconds. */
const READY_MS = 120_000;
const DELIVERY_MS = 60_000;

async function run(
  args: string[],
  options: { command?: string; cwd?: string; env?: Record<string, string> } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(options.command ?? Deno.execPath(), {
    args,
    cwd: options.cwd ?? ROOT,
    env: options.env,
    clearEnv: options.env !== undefined,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

interface TestCa {
  /** The CA's certificate (a PEM file): what the service is told to trust. */
  caFile: string;
  /** A server certificate it signed (localhost, 127.0.0.1 and ::1) and its key, as PEM. */
  cert: string;
  key: string;
}

/** A throwaway CA and one server certificate it signed, both valid for two days. */
async function makeCa(dir: string, name: string): Promise<TestCa> {
  const openssl = async (...args: string[]) => {
    const r = await run(args, { command: "openssl", cwd: dir });
    if (r.code !== 0) throw new Error(`openssl ${args.join(" ")}: ${r.stderr}`);
  };
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  const ca = `${dir}/${name}-ca`;
  const server = `${dir}/${name}`;
  await openssl(
    "req",
    "-x509",
    ...ec,
    "-days",
    "2",
    "-subj",
    `/CN=${name} test CA`,
    "-keyout",
    `${ca}.key`,
    "-out",
    `${ca}.pem`,
  );
  await openssl(
    "req",
    ...ec,
    "-subj",
    "/CN=localhost",
    "-keyout",
    `${server}.key`,
    "-out",
    `${server}.csr`,
  );
  await Deno.writeTextFile(
    `${server}.ext`,
    [
      "basicConstraints = critical, CA:FALSE",
      "keyUsage = critical, digitalSignature",
      "extendedKeyUsage = serverAuth",
      "subjectAltName = DNS:localhost, IP:127.0.0.1, IP:::1",
    ].join("\n"),
  );
  const serial = "0x" + [...crypto.getRandomValues(new Uint8Array(16))]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
  await openssl(
    "x509",
    "-req",
    "-in",
    `${server}.csr`,
    "-CA",
    `${ca}.pem`,
    "-CAkey",
    `${ca}.key`,
    "-set_serial",
    serial,
    "-days",
    "2",
    "-extfile",
    `${server}.ext`,
    "-out",
    `${server}.pem`,
  );
  return {
    caFile: `${ca}.pem`,
    cert: await Deno.readTextFile(`${server}.pem`),
    key: await Deno.readTextFile(`${server}.key`),
  };
}

interface Delivery {
  headers: Record<string, string>;
  body: string;
}

/** An HTTPS webhook receiver: records every request and answers 204. */
function httpsReceiver(hostname: string, ca: TestCa) {
  const controller = new AbortController();
  const received: Delivery[] = [];
  let arrived: (() => void)[] = [];
  const server = Deno.serve({
    hostname,
    port: 0,
    cert: ca.cert,
    key: ca.key,
    signal: controller.signal,
    onListen() {},
  }, async (request) => {
    const headers: Record<string, string> = {};
    request.headers.forEach((v, k) => (headers[k] = v));
    received.push({ headers, body: await request.text() });
    for (const wake of arrived) wake();
    arrived = [];
    return new Response(null, { status: 204 });
  });
  return {
    port: server.addr.port,
    received,
    /** The first request `match` accepts, once it has arrived (at most DELIVERY_MS from now). */
    async waitFor(what: string, match: (d: Delivery) => boolean): Promise<Delivery> {
      const deadline = Date.now() + DELIVERY_MS;
      for (;;) {
        const found = received.find(match);
        if (found) return found;
        const left = deadline - Date.now();
        if (left <= 0) {
          throw new Error(`no ${what} within ${DELIVERY_MS} ms (${received.length} requests)`);
        }
        let timer: ReturnType<typeof setTimeout> | undefined;
        await new Promise<void>((resolve) => {
          arrived.push(resolve);
          timer = setTimeout(resolve, left);
        });
        clearTimeout(timer);
      }
    },
    async close() {
      controller.abort();
      await server.finished;
    },
  };
}

/** The delivery's Standard Webhooks signature, checked with the destination's secret. */
function assertSigned(secret: string, delivery: Delivery): void {
  assert.match(secret, /^whsec_/);
  // Throws when the signature, the id or the timestamp (±5 min of now) is wrong.
  new Webhook(secret).verify(delivery.body, delivery.headers);
}

/** `deno task start` in its own process group, with exactly `env`. */
function startTask(env: Record<string, string>) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "start"],
    cwd: ROOT,
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
    // A process group of its own: `deno task` runs `deno run` as its child, and both must stop.
    detached: true,
  }).spawn();
  let out = "";
  let err = "";
  const pump = async (stream: ReadableStream<Uint8Array>, sink: (s: string) => void) => {
    const text = new TextDecoder();
    for await (const chunk of stream) sink(text.decode(chunk, { stream: true }));
  };
  const pumped = Promise.all([
    pump(child.stdout, (s) => (out += s)),
    pump(child.stderr, (s) => (err += s)),
  ]);
  // Resolves once every process of the group has closed the pipes.
  const status = child.status.then(async (s) => {
    await pumped;
    return s;
  });
  let ended = false;
  status.then(() => (ended = true));
  const signal = (name: Deno.Signal) => {
    try {
      Deno.kill(-child.pid, name);
    } catch { /* the group is gone */ }
  };
  const output = () => `--- stdout\n${out}\n--- stderr\n${err}`;
  return {
    output,
    /** The URL it serves on, once its /readyz answers 200. */
    async ready(): Promise<string> {
      const deadline = Date.now() + READY_MS;
      while (!ended && Date.now() < deadline) {
        const port = /"msg":"listening","url":"http:\/\/[^"]*:(\d+)"/.exec(out)?.[1];
        if (port) {
          const base = `http://127.0.0.1:${port}`;
          const res = await fetch(`${base}/readyz`).catch(() => null);
          await res?.body?.cancel();
          if (res?.status === 200) return base;
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      throw new Error(`deno task start: ${ended ? "exited" : "not ready in time"}\n${output()}`);
    },
    /** SIGTERM to the whole group (a clean shutdown), SIGKILL if it is still there after 30 s. */
    async stop(): Promise<Deno.CommandStatus> {
      if (!ended) signal("SIGTERM");
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        status,
        new Promise<void>((resolve) => {
          timer = setTimeout(() => {
            signal("SIGKILL");
            resolve();
          }, 30_000);
        }),
      ]);
      clearTimeout(timer);
      return await status;
    },
  };
}

/** What a child process needs from this one to find Deno's cache; nothing else is passed on. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" };
  for (const name of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

Deno.test("deno task start, with the task's own permissions: HTTPS webhooks to a private CA are delivered signed, and every surface answers", async (t) => {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  const task: string = config.tasks.start;
  assert.match(task, /^(\w+=\S+ )*deno run .*\bmain\.ts$/);
  assert.doesNotMatch(task, /(^|\s)(-A|--allow-all)(\s|$)/, "the start task grants no blanket -A");
  // dev, admin and feed have the same permissions: what passes here holds for them too.
  const flags = (command: string) => command.split(/\s+/).filter((a) => a.startsWith("--allow-"));
  for (const name of ["dev", "admin", "feed"]) {
    assert.deepEqual(flags(config.tasks[name]), flags(task), `the ${name} task's permissions`);
  }

  const dir = await Deno.makeTempDir({ prefix: "start_task_" });
  const db = Deno.env.get("DATABASE_URL") ? await createTestDatabase({ migrate: false }) : null;
  const [denoCert, nodeExtra, untrusted] = await Promise.all([
    makeCa(dir, "deno-cert"),
    makeCa(dir, "node-extra"),
    makeCa(dir, "untrusted"),
  ]);
  // One receiver behind a host name, reached through the service's DNS lookup (the same system
  // resolver as this one, whose first answer it connects to); one behind an IP address.
  const localhost = (await lookup("localhost", { verbatim: true })).address;
  const byName = httpsReceiver(localhost, denoCert);
  const byAddress = httpsReceiver("127.0.0.1", nodeExtra);
  const stranger = httpsReceiver("127.0.0.1", untrusted);
  // This test's visits come from loopback: the database places them in New Zealand.
  await Deno.writeFile(
    `${dir}/country.mmdb`,
    buildCountryDatabase({ "127.0.0.0/8": "NZ", "::1/128": "NZ" }),
  );
  const env = {
    ...baseEnv(),
    PORT: "0",
    ADMIN_TOKEN,
    DESTINATIONS_ALLOW_PRIVATE: "true",
    // The two ways to trust a private CA for webhook receivers (docs/operations.md).
    DENO_CERT: denoCert.caFile,
    NODE_EXTRA_CA_CERTS: nodeExtra.caFile,
    GEOIP_DATABASE: `${dir}/country.mmdb`,
    ...(db ? { DATABASE_URL: db.url } : { DATA_DIR: `${dir}/data` }),
  };
  const service = startTask(env);
  try {
    const base = await service.ready();

    const created = await call(base, "POST", "/api/v1/admin/projects", {
      headers: admin,
      body: { name: "start task", enterprise: true },
    });
    assert.equal(created.status, 201, created.text);
    const projectId: number = created.body.project.environments.production.project_id;
    const sdk = { "PROJECT-KEY": created.body.project.project_key, ENVIRONMENT: "production" };
    const destinations = [
      { receiver: byName, url: `https://localhost:${byName.port}/hook`, secret: "", id: 0 },
      { receiver: byAddress, url: `https://127.0.0.1:${byAddress.port}/hook`, secret: "", id: 0 },
    ];
    for (const d of destinations) {
      const res = await call(base, "POST", `/api/v1/projects/${projectId}/destinations`, {
        headers: admin,
        body: { url: d.url },
      });
      assert.equal(res.status, 201, res.text);
      d.id = res.body.destination.id;
      d.secret = res.body.destination.secret;
    }

    await t.step("the test route reaches each HTTPS receiver with a signed delivery", async () => {
      for (const d of destinations) {
        const res = await call(
          base,
          "POST",
          `/api/v1/projects/${projectId}/destinations/${d.id}/test`,
          { headers: admin },
        );
        assert.equal(res.status, 200, `${d.url}: ${res.text}\n${service.output()}`);
        assert.deepEqual([res.body.status, res.body.error], [204, null], d.url);
        const delivery = await d.receiver.waitFor(
          "test delivery",
          (r) => JSON.parse(r.body).test === true,
        );
        assertSigned(d.secret, delivery);
      }
    });

    await t.step(
      "a certificate of a CA nobody trusts fails the test route, unanswered",
      async () => {
        const res = await call(base, "POST", `/api/v1/projects/${projectId}/destinations`, {
          headers: admin,
          body: { url: `https://127.0.0.1:${stranger.port}/hook`, event_types: ["install"] },
        });
        assert.equal(res.status, 201, res.text);
        const test = await call(
          base,
          "POST",
          `/api/v1/projects/${projectId}/destinations/${res.body.destination.id}/test`,
          { headers: admin },
        );
        assert.equal(test.status, 200, test.text);
        assert.equal(test.body.status, null);
        assert.match(test.body.error, /^network: UNABLE_TO_VERIFY_LEAF_SIGNATURE$/);
        assert.equal(stranger.received.length, 0);
      },
    );

    await t.step("an ingested event reaches each HTTPS receiver, signed", async () => {
      const res = await call(base, "POST", "/api/v1/sdk/events", {
        headers: sdk,
        body: {
          events: [{
            id: "start-task-1",
            type: "custom",
            name: "start-task",
            occurred_at: new Date().toISOString(),
          }],
        },
      });
      assert.equal(res.status, 202, res.text);
      for (const d of destinations) {
        const delivery = await d.receiver.waitFor(
          "event delivery",
          (r) =>
            (JSON.parse(r.body).events ?? []).some((e: { name?: string }) =>
              e.name === "start-task"
            ),
        );
        assertSigned(d.secret, delivery);
      }
    });

    await t.step("pages, documents, GraphQL, the link host and the feed answer", async () => {
      const pages: [string, RegExp][] = [
        ["/healthz", /"ok"/],
        ["/openapi.json", /"openapi"/],
        ["/docs", /<html/i],
        ["/graphql", /<html/i],
        ["/dashboard/sign-in", /<form/i],
      ];
      for (const [path, body] of pages) {
        const res = await call(base, "GET", path, { headers: { Accept: "text/html" } });
        assert.equal(res.status, 200, `${path}: ${res.text.slice(0, 300)}`);
        assert.match(res.text, body, path);
      }
      const stylesheet = /href="(\/dashboard\/assets\/[^"]+\.css[^"]*)"/.exec(
        (await call(base, "GET", "/dashboard/sign-in")).text,
      )?.[1];
      assert.ok(stylesheet, "the sign-in page links its stylesheet");
      assert.equal((await call(base, "GET", stylesheet)).status, 200);

      const generated = await call(base, "POST", "/api/v1/sdk/generate_link", {
        headers: sdk,
        body: { title: "start task" },
      });
      assert.equal(generated.status, 200, generated.text);
      const path = new URL(generated.body.link).pathname.slice(1);
      const visit = await call(base, "GET", `/${path}`, { headers: { Accept: "text/html" } });
      assert.equal(visit.status, 200, visit.text.slice(0, 300));
      // The view is written behind the answer: its country, once it is there.
      const deadline = Date.now() + DELIVERY_MS;
      let countries: unknown = null;
      while (Date.now() < deadline) {
        const res = await call(
          base,
          "GET",
          `/api/v1/projects/${projectId}/analytics?metrics=views&group_by=country&link=${path}`,
          { headers: admin },
        );
        assert.equal(res.status, 200, res.text);
        countries = res.body.groups.map((g: { key: string | null }) => g.key);
        if ((countries as unknown[]).length > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.deepEqual(countries, ["NZ"], service.output());

      const graphql = await call(base, "POST", "/graphql", {
        headers: sdk,
        body: {
          query: "query ($p: String!) { link(path: $p) { path title } }",
          variables: { p: path },
        },
      });
      assert.equal(graphql.status, 200, graphql.text);
      assert.deepEqual(graphql.body, { data: { link: { path, title: "start task" } } });

      const token = await call(base, "POST", `/api/v1/projects/${projectId}/event_stream_tokens`, {
        headers: admin,
        body: { name: "start-task" },
      });
      assert.equal(token.status, 201, token.text);
      const feed = await call(base, "GET", `/api/v1/projects/${projectId}/event_stream`, {
        headers: { Authorization: `Bearer ${token.body.token.value}` },
      });
      assert.equal(feed.status, 200, feed.text);
      assert.ok(feed.body.events.some((e: { name?: string }) => e.name === "start-task"));

      // The feed task, with its own flags, reads the same feed to the end.
      const cli = await run(
        [
          "task",
          "feed",
          "--",
          "--url",
          base,
          "--project-id",
          String(projectId),
          "--cursor-file",
          `${dir}/feed.cursor`,
        ],
        { env: { ...baseEnv(), FEED_TOKEN: token.body.token.value } },
      );
      assert.equal(cli.code, 0, cli.stderr);
      assert.match(cli.stdout, /"name":"start-task"/);
    });

    await t.step("SIGTERM stops it cleanly, and nothing lacked a permission", async () => {
      const status = await service.stop();
      const output = service.output();
      assert.equal(status.code, 0, output);
      assert.match(output, /"msg":"shutting down"/, output);
      assert.doesNotMatch(output, /NotCapable|Requires \w+ access/, output);
    });

    await t.step("the admin task, with its own flags, opens the same database", async () => {
      const cli = await run(["task", "admin", "list-tokens", "--project-id", String(projectId)], {
        env,
      });
      assert.equal(cli.code, 0, cli.stderr);
      assert.match(cli.stdout, /"name": "start-task"/);
      assert.doesNotMatch(cli.stderr, /NotCapable|Requires \w+ access/, cli.stderr);
    });
  } finally {
    await service.stop();
    await byName.close();
    await byAddress.close();
    await stranger.close();
    await db?.close();
    await Deno.remove(dir, { recursive: true });
  }
});
